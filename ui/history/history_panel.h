// SPDX-License-Identifier: GPL-3.0-or-later
// The Run history panel: every run of the SQLite store in a sortable, filterable table; overlay of
// the selected runs' curves, config diff, reload a checkpoint, rename/tag/delete, export.
//
// The store is read on the GUI thread through its own connection with a short busy timeout: reads
// are small and WAL lets them proceed while a training run (in this process or another) commits.
// While a listed run is running the panel re-reads every 2 s, keeping the selection.
//
// Its parts: the run list (run_table_model.h), the chart (history_chart.h), the Configuration
// and Checkpoints tabs (run_config_view.h, run_checkpoint_table.h). The panel's own code is
// spread by role: history_panel.cpp (layout, store, refresh and selection),
// history_panel_actions.cpp (the toolbar's actions and the run operations) and
// history_panel_export.cpp (CSV, report and chart export).
#pragma once

#include <memory>
#include <vector>

#include <QList>
#include <QString>
#include <QFutureWatcher>
#include <QWidget>

#include "ts/store/run_store.h"

class QAction;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QPushButton;
class QSplitter;
class QTabWidget;
class QTableView;
class QTimer;
class QToolBar;
class QWidget;

namespace ts::ui {

class StudioState;
class TranslationService;
class RunTableModel;
class RunFilterProxy;
class HistoryChart;
class RunConfigView;
class RunCheckpointTable;
struct ModelInfo;

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
  /// `kind` is the run's (language-model checkpoints go to the language-model window).
  bool loadCheckpointFile(const QString& path, RunKind kind = RunKind::kTranslation);
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

  QCustomPlot* chart() const;
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
  /// Makes the actions, the toolbar that shows them and their export menu.
  void buildToolbar();
  /// Opens the history read-only (the panel reads on the GUI thread, and a reader never writes).
  bool openStore();
  /// A store that writes, for the user's edits (rename, tag, delete): opened for each edit, so the
  /// panel's own store stays read-only. Throws StoreError.
  std::unique_ptr<RunStore> writableStore() const;
  /// Off the GUI thread, with a store that writes: upgrades an older database and closes the runs
  /// whose training process died (recovering what they left); refreshes when it changed anything.
  void startMaintenance(const QString& path);
  void onMaintenanceDone();
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
  QAction *load_, *replay_, *rename_, *tag_, *untag_, *delete_, *export_csv_, *export_report_, *export_chart_,
      *refresh_;
  QTableView* table_;
  HistoryChart* chart_;
  QTabWidget* details_tabs_;
  RunConfigView* config_;
  RunCheckpointTable* checkpoints_;
  QLabel* message_;
  bool no_runs_message_ = false;  // message_ says the database does not exist yet
  QSplitter *vertical_, *bottom_;
  QTimer* poll_;
  QString details_signature_;
  bool polling_ = false;  // the refresh in progress comes from the poll timer
  /// What the maintenance off the GUI thread did: runs closed, or the error that stopped it.
  struct Maintenance {
    int closed = 0;
    QString error;
  };
  QFutureWatcher<Maintenance>* maintenance_;
  QString maintained_path_;  // the database maintained once since the panel opened it

  bool restoring_selection_ = false;
  bool columns_fitted_ = false;  // widths fitted to the contents once (or restored from settings)
  bool auto_selected_ = false;   // the selection is the default (newest run), not the user's
  QString pending_load_;         // checkpoint sent to the service, awaiting its answer
};

}  // namespace ts::ui
