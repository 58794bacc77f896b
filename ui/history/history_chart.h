// SPDX-License-Identifier: GPL-3.0-or-later
// The Run history panel's chart: the chosen metric of every selected run against the training
// step, one line per run, under a metric choice and a log-scale switch. It keeps the user's zoom
// while a live run's curves grow, and re-reads those curves off the GUI thread.
//
// It holds neither the selection nor the store: the panel passes them to each call, and redraws
// (draw()) when the chart asks for it (redrawRequested) after the metric, the scale or the zoom
// changed here.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <QFutureWatcher>
#include <QList>
#include <QString>
#include <QVector>
#include <QWidget>

#include "ts/store/run_store.h"

class QComboBox;
class QCPItemText;
class QCustomPlot;

namespace ts::ui {

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

class HistoryChart : public QWidget {
  Q_OBJECT
 public:
  explicit HistoryChart(QWidget* parent = nullptr);
  /// Waits for a read in flight.
  ~HistoryChart() override;

  QCustomPlot* plot() const { return plot_; }
  /// The chosen metric's store name ("train_loss", "bleu", ...).
  QString metric() const;
  /// Chooses the metric by its store name (redrawing through redrawRequested); false when it is
  /// not offered. It becomes the preferred metric either way.
  bool setMetric(const QString& name);
  /// The metric chosen whenever it is offered (the panel keeps it in the settings).
  QString preferredMetric() const { return preferred_metric_; }
  void setPreferredMetric(const QString& name) { preferred_metric_ = name; }
  /// Offers the metrics recorded for `runs` (the usual ones when none, or no store), choosing the
  /// preferred one where it is offered.
  void updateMetricChoices(const std::vector<RunInfo>& runs, const RunStore* store);

  /// Redraws the chosen metric of `runs` (the selection, in table order) from `store`, which may be
  /// null. `any_runs`: whether the history lists any run at all (for the hint shown without
  /// curves). Fits the axes with `rescale`, else only unless the user zoomed. Returns the store's
  /// error, if any.
  QString draw(const std::vector<RunInfo>& runs, const RunStore* store, bool any_runs, bool rescale);
  /// Re-reads, off the GUI thread, the curves of `runs` that moved since they were drawn;
  /// seriesLoaded() follows. While a read is in flight it only notes that one is due (pollPending).
  void poll(const std::vector<RunInfo>& runs, const RunStore& store);
  /// Puts the curves the last poll read in place and fits the chart. True when one of `selected`
  /// got its first points: then the chart needs a full draw().
  bool applyLoadedSeries(const QList<qint64>& selected);
  /// A poll came while a read was in flight: poll again once it is loaded.
  bool pollPending() const { return series_dirty_; }
  /// Forgets the user's zoom: the next fit follows the data again.
  void forgetUserZoom() { user_zoomed_ = false; }

 Q_SIGNALS:
  /// The metric, the scale or the zoom changed here: the panel calls draw() with its selection.
  void redrawRequested(bool rescale);
  /// A poll's read finished: the panel calls applyLoadedSeries() with its selection.
  void seriesLoaded();

 private:
  /// Fits the axes to the data unless the user zoomed (or always with `force`).
  void fit(bool force);

  QComboBox* metric_combo_;
  QCustomPlot* plot_;
  QCPItemText* hint_ = nullptr;
  QFutureWatcher<HistorySeriesBatch>* series_watcher_;
  std::shared_ptr<HistoryReader> reader_ = std::make_shared<HistoryReader>();
  bool series_dirty_ = false;             // a poll came while a read was in flight
  std::map<qint64, qint64> chart_steps_;  // each drawn run's step count when its curve was read
  bool user_zoomed_ = false;              // keep the user's zoom when a live run's curves move
  QString preferred_metric_;
};

}  // namespace ts::ui
