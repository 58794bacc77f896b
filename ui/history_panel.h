// SPDX-License-Identifier: GPL-3.0-or-later
// The Run history panel: every run of the SQLite store in a sortable, filterable table; overlay of
// the selected runs' curves, config diff, reload a checkpoint, rename/tag/delete, export.
//
// The store is read on the GUI thread through its own connection with a short busy timeout: reads
// are small and WAL lets them proceed while a training run (in this process or another) commits.
// While a listed run is running the panel re-reads every 2 s, keeping the selection.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <QFutureWatcher>
#include <QList>
#include <QString>
#include <QVector>
#include <QWidget>

#include "ts/store/run_store.h"

class QAction;
class QCheckBox;
class QComboBox;
class QCPItemText;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QPushButton;
class QSplitter;
class QTabWidget;
class QTableView;
class QTableWidget;
class QTimer;
class QToolBar;
class QTreeWidget;
class QWidget;

namespace ts::ui {

class StudioState;
class TranslationService;
class RunTableModel;
class RunFilterProxy;
struct ModelInfo;

/// One metric series read off the GUI thread (the live run's curve while polling).
struct HistorySeries {
  qint64 run = 0;
  QVector<double> x, y;
};
struct HistorySeriesBatch {
  QString metric;
  std::vector<HistorySeries> series;
  QString error;
};
/// The background reader's own connection, used by one task at a time.
struct HistoryReader {
  std::string path;
  std::unique_ptr<RunStore> store;
};

class HistoryPanel : public QWidget {
  Q_OBJECT
 public:
  HistoryPanel(StudioState* state, TranslationService* service, QWidget* parent = nullptr);
  ~HistoryPanel() override;

  // For tests and scripting: the same operations as the buttons, without dialogs.
  /// Selects exactly these runs (those not listed, e.g. filtered out, are ignored).
  void selectRuns(const QList<qint64>& ids);
  void selectRun(qint64 id) { selectRuns({id}); }
  /// Selected run ids in table order.
  QList<qint64> selectedRunIds() const;
  /// Renames the single selected run. False (and a message) when not exactly one is selected.
  bool renameSelected(const QString& name);
  bool tagSelected(const QString& tag);
  bool untagSelected(const QString& tag);
  /// Deletes the selected runs; `confirm` asks first. A running run is refused with a message.
  bool deleteSelected(bool confirm);
  /// Loads the best (else the last) checkpoint of the selected run into the translation service.
  bool loadSelectedCheckpoint();
  /// Loads a given checkpoint file (from the checkpoint list).
  /// `kind` is the run's ("language-model" checkpoints go to the language-model window).
  bool loadCheckpointFile(const QString& path, const QString& kind = QString());
  /// All metrics of the selected runs: run_id,run_name,step,metric,value,time.
  bool exportMetricsCsv(const QString& path, QString* error = nullptr);
  /// The selected run as a self-contained HTML report (ts/store/html_report.h): config, curves,
  /// BLEU/chrF, sample translations and attention, to share.
  bool exportReport(const QString& path, QString* error = nullptr);
  /// The overlay chart as PNG or PDF (by suffix).
  bool exportChart(const QString& path, QString* error = nullptr);
  /// Chooses the chart's metric by its store name ("train_loss", "bleu", ...).
  bool setMetric(const QString& name);
  QString metric() const;

  QCustomPlot* chart() const { return chart_; }
  QTableView* table() const { return table_; }
  /// The last message shown to the user (action results and errors).
  QString message() const;
  /// True when the store is open.
  bool storeOpen() const { return store_ != nullptr; }

 public Q_SLOTS:
  /// Re-reads the run list from the store (after a run started or ended).
  void refresh();

 Q_SIGNALS:
  /// A checkpoint was sent to the translation service (the main window may show the Translate panel).
  void checkpointRequested(const QString& path);
  /// A language-model run's checkpoint was asked for: the main window opens it in the LM window.
  void languageModelCheckpointRequested(const QString& path);
  /// The user asked to replay how the run's probe sentence attention changed over training.
  void probeReplayRequested(qint64 run_id);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void buildUi();
  bool openStore();
  void showStoreError(const QString& message);
  void setMessage(const QString& text, bool error = false);
  void onSelectionChanged();
  void updateActions();
  void updateMetricChoices();
  /// Rebuilds the chart from the store (selection or metric changed).
  void updateChart(bool rescale);
  /// Re-reads, off the GUI thread, the curves of selected runs that moved since they were drawn.
  void pollChart();
  void onSeriesLoaded();
  /// Fits the axes to the data unless the user zoomed (or always with `force`).
  void fitChart(bool force);
  QString detailsSignature() const;
  void updateDetails();
  void updateCheckpoints();
  void showContextMenu(const QPoint& pos);
  void renameWithDialog();
  void tagWithDialog();
  void untagWithDialog();
  void exportCsvWithDialog();
  void exportReportWithDialog();
  void exportChartWithDialog();
  void rename(qint64 id, const QString& name);
  void saveSettings() const;
  std::vector<RunInfo> selectedRuns() const;
  /// The checkpoint "Load" uses for a run: newest "best", else newest "last", else newest any.
  std::optional<CheckpointRow> preferredCheckpoint(qint64 run_id) const;
  /// Newest registration per file, best/last first.
  std::vector<CheckpointRow> currentCheckpoints(qint64 run_id) const;

  StudioState* state_;
  TranslationService* service_;
  std::unique_ptr<RunStore> store_;
  QString store_error_;

  RunTableModel* model_;
  RunFilterProxy* proxy_;
  QWidget* error_bar_;
  QLabel* error_label_;
  QPushButton* retry_;
  QLineEdit* filter_;
  QLabel* count_label_;
  QToolBar* toolbar_;
  QAction *load_, *replay_, *rename_, *tag_, *untag_, *delete_, *export_csv_, *export_report_, *export_chart_, *refresh_;
  QTableView* table_;
  QComboBox* metric_combo_;
  QCustomPlot* chart_;
  QCPItemText* chart_hint_ = nullptr;
  QTabWidget* details_tabs_;
  QTreeWidget* config_tree_;
  QCheckBox* config_all_;
  QLabel* config_note_;
  QTableWidget* checkpoints_;
  QLabel* message_;
  QSplitter *vertical_, *bottom_;
  QTimer* poll_;
  QFutureWatcher<HistorySeriesBatch>* series_watcher_;
  std::shared_ptr<HistoryReader> reader_ = std::make_shared<HistoryReader>();
  bool series_dirty_ = false;     // a poll came while a read was in flight
  std::map<qint64, qint64> chart_steps_;  // each drawn run's step count when its curve was read
  QString details_signature_;
  bool polling_ = false;          // the refresh in progress comes from the poll timer

  bool restoring_selection_ = false;
  bool columns_fitted_ = false;  // widths fitted to the contents once (or restored from settings)
  bool auto_selected_ = false;   // the selection is the default (newest run), not the user's
  bool user_zoomed_ = false;     // keep the user's zoom when a live run's curves move
  QString pending_load_;          // checkpoint sent to the service, awaiting its answer
  QString preferred_metric_;
};

}  // namespace ts::ui
