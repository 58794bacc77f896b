// SPDX-License-Identifier: GPL-3.0-or-later
#include "history/history_chart.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <qcustomplot.h>

#include "history/history_util.h"
#include "widgets/plot_style.h"

namespace ts::ui {

using history_util::known_metrics;
using history_util::metric_label;
using history_util::q;
using history_util::run_label;

namespace {

int metric_rank(const std::string& name) {
  const auto& list = known_metrics();
  for (std::size_t i = 0; i < list.size(); ++i)
    if (name == list[i].first) return static_cast<int>(i);
  return static_cast<int>(list.size());
}

}  // namespace

HistoryChart::HistoryChart(QWidget* parent) : QWidget(parent) {
  auto* chart_layout = new QVBoxLayout(this);
  chart_layout->setContentsMargins(0, 0, 0, 0);
  auto* chart_bar = new QHBoxLayout;
  auto* metric_label_widget = new QLabel(tr("Metric:"), this);
  metric_combo_ = new QComboBox(this);
  metric_combo_->setObjectName(QStringLiteral("historyMetric"));
  metric_combo_->setToolTip(tr("The metric drawn for every selected run, against the training step"));
  metric_combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  metric_label_widget->setBuddy(metric_combo_);
  auto* log_scale = new QCheckBox(tr("Log scale"), this);
  log_scale->setObjectName(QStringLiteral("historyLogScale"));
  log_scale->setToolTip(tr("Logarithmic y axis (useful for losses and perplexity)"));
  chart_bar->addWidget(metric_label_widget);
  chart_bar->addWidget(metric_combo_);
  chart_bar->addWidget(log_scale);
  chart_bar->addStretch(1);
  chart_layout->addLayout(chart_bar);
  plot_ = new QCustomPlot(this);
  plot_->setObjectName(QStringLiteral("historyChart"));
  plot_->setMinimumSize(260, 180);
  plot_->setToolTip(tr("Drag to pan, wheel to zoom, double-click to fit"));
  style_plot(plot_);
  plot_->xAxis->setLabel(tr("step"));
  QFont legend_font = plot_->font();
  legend_font.setPointSizeF(legend_font.pointSizeF() * 0.9);
  plot_->legend->setFont(legend_font);
  // Above the curves, three runs a row: inside, at the top right, it sat on a rising BLEU curve's end.
  legend_above_plot(plot_, 3);
  plot_->legend->setVisible(false);
  hint_ = new QCPItemText(plot_);
  hint_->position->setType(QCPItemPosition::ptAxisRectRatio);
  hint_->position->setCoords(0.5, 0.5);
  hint_->setClipToAxisRect(false);
  QColor hint_color = palette().color(QPalette::WindowText);
  hint_color.setAlpha(150);
  hint_->setColor(hint_color);
  chart_layout->addWidget(plot_, 1);
  connect(metric_combo_, &QComboBox::currentIndexChanged, this, [this] {
    preferred_metric_ = metric();
    user_zoomed_ = false;
    Q_EMIT redrawRequested(true);
  });
  connect(log_scale, &QCheckBox::toggled, this, [this](bool on) {
    plot_->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (on)
      plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    else
      plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    Q_EMIT redrawRequested(true);
  });
  connect(plot_, &QCustomPlot::mousePress, this, [this] { user_zoomed_ = true; });
  connect(plot_, &QCustomPlot::mouseWheel, this, [this] { user_zoomed_ = true; });
  connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] {
    user_zoomed_ = false;
    Q_EMIT redrawRequested(true);
  });

  series_watcher_ = new QFutureWatcher<HistorySeriesBatch>(this);
  connect(series_watcher_, &QFutureWatcherBase::finished, this, &HistoryChart::seriesLoaded);
}

HistoryChart::~HistoryChart() { series_watcher_->waitForFinished(); }

void HistoryChart::updateMetricChoices(const std::vector<RunInfo>& runs, const RunStore* store) {
  std::set<std::string> names;
  if (store) {
    for (const auto& r : runs) {
      try {
        for (auto& n : store->metric_names(r.id)) names.insert(n);
      } catch (const std::exception&) {}
    }
  }
  if (names.empty())  // nothing recorded (yet): offer the usual metrics so the choice persists
    for (const auto& m : known_metrics()) names.insert(m.first);
  std::vector<std::string> ordered(names.begin(), names.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const std::string& a, const std::string& b) { return metric_rank(a) < metric_rank(b); });
  QStringList wanted;
  for (const auto& n : ordered) wanted << q(n);
  QStringList current;
  for (int i = 0; i < metric_combo_->count(); ++i) current << metric_combo_->itemData(i).toString();
  if (wanted != current) {
    const QSignalBlocker block(metric_combo_);
    metric_combo_->clear();
    for (const QString& n : wanted) metric_combo_->addItem(metric_label(n), n);
  }
  int index = metric_combo_->findData(preferred_metric_);
  if (index < 0) index = 0;
  if (metric_combo_->currentIndex() != index) {
    const QSignalBlocker block(metric_combo_);
    metric_combo_->setCurrentIndex(index);
  }
}

QString HistoryChart::metric() const { return metric_combo_->currentData().toString(); }

bool HistoryChart::setMetric(const QString& name) {
  preferred_metric_ = name;
  const int index = metric_combo_->findData(name);
  if (index < 0) return false;
  metric_combo_->setCurrentIndex(index);  // redraws through currentIndexChanged
  return true;
}

QString HistoryChart::draw(const std::vector<RunInfo>& runs, const RunStore* store, bool any_runs, bool rescale) {
  plot_->clearGraphs();
  chart_steps_.clear();
  const QString name = metric();
  QString error;
  for (std::size_t i = 0; i < runs.size() && store; ++i) {
    std::vector<MetricPoint> points;
    try {
      points = store->metric(runs[i].id, name.toStdString());
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    chart_steps_[runs[i].id] = runs[i].steps;
    if (points.empty()) continue;
    QVector<double> x(static_cast<int>(points.size())), y(static_cast<int>(points.size()));
    for (std::size_t p = 0; p < points.size(); ++p) {
      x[static_cast<int>(p)] = static_cast<double>(points[p].step);
      y[static_cast<int>(p)] = points[p].value;
    }
    QCPGraph* graph = plot_->addGraph();
    graph->setName(run_label(runs[i]));
    graph->setProperty("runId", QVariant::fromValue<qint64>(runs[i].id));
    graph->setPen(QPen(series_color(static_cast<int>(i)), 1.6));
    // Sparse series (validation metrics) read better with their points marked.
    if (points.size() <= 40) graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    // Steps come sorted from the store: QCustomPlot then samples long series per pixel.
    graph->setData(x, y, true);
  }
  plot_->yAxis->setLabel(metric_label(name));
  plot_->legend->setVisible(plot_->graphCount() > 0);
  if (plot_->graphCount() == 0) {
    if (runs.empty())
      hint_->setText(any_runs ? tr("Select one or more runs to compare their curves")
                              : tr("No runs recorded yet: train a model and it appears here"));
    else
      hint_->setText(tr("No %1 recorded for the selected runs").arg(metric_label(name)));
    hint_->setVisible(true);
  } else {
    hint_->setVisible(false);
  }
  fit(rescale);
  plot_->replot(QCustomPlot::rpQueuedReplot);
  return error;
}

void HistoryChart::fit(bool force) {
  if (force || !user_zoomed_) {
    if (plot_->graphCount() > 0) {
      plot_->rescaleAxes();
      // A little room above and below so lines do not sit on the frame.
      const QCPRange y = plot_->yAxis->range();
      if (plot_->yAxis->scaleType() == QCPAxis::stLinear) {
        const double pad = y.size() > 0 ? y.size() * 0.05 : std::max(1e-6, std::abs(y.center()) * 0.05);
        plot_->yAxis->setRange(y.lower - pad, y.upper + pad);
      }
      int max_points = 0;  // over all graphs
      for (int i = 0; i < plot_->graphCount(); ++i) max_points = std::max(max_points, plot_->graph(i)->data()->size());
      // End markers stay whole; a single point gets a range around it.
      const QCPRange x = plot_->xAxis->range();
      const double x_pad = max_points == 1 && x.size() == 0 ? 1.0 : x.size() * 0.03;
      plot_->xAxis->setRange(x.lower - x_pad, x.upper + x_pad);
    } else {
      plot_->xAxis->setRange(0, 1);
      plot_->yAxis->setRange(plot_->yAxis->scaleType() == QCPAxis::stLogarithmic ? 0.1 : 0, 1);
    }
  }
}

void HistoryChart::poll(const std::vector<RunInfo>& runs, const RunStore& store) {
  std::vector<const RunInfo*> moved;
  for (const auto& r : runs) {
    const auto it = chart_steps_.find(r.id);
    if (r.status == RunStatus::kRunning || it == chart_steps_.end() || it->second != r.steps) moved.push_back(&r);
  }
  if (moved.empty()) return;
  if (series_watcher_->isRunning()) {
    series_dirty_ = true;
    return;
  }
  series_dirty_ = false;
  std::vector<qint64> ids;
  for (const RunInfo* r : moved) {
    chart_steps_[r->id] = r->steps;
    ids.push_back(r->id);
  }
  const std::string path = store.path(), name = metric().toStdString();
  series_watcher_->setFuture(QtConcurrent::run([reader = reader_, path, ids, name]() {
    HistorySeriesBatch batch;
    batch.metric = QString::fromStdString(name);
    try {
      if (!reader->store || reader->path != path) {
        reader->store.reset();
        reader->store = std::make_unique<RunStore>(path, RunStore::kReaderBusyTimeoutMs, StoreAccess::kReadOnly);
        reader->path = path;
      }
      for (qint64 id : ids) {
        const auto points = reader->store->metric(id, name);
        HistorySeries s;
        s.run = id;
        s.x.resize(static_cast<int>(points.size()));
        s.y.resize(static_cast<int>(points.size()));
        for (std::size_t p = 0; p < points.size(); ++p) {
          s.x[static_cast<int>(p)] = static_cast<double>(points[p].step);
          s.y[static_cast<int>(p)] = points[p].value;
        }
        batch.series.push_back(std::move(s));
      }
    } catch (const std::exception& e) {
      batch.error = QString::fromUtf8(e.what());
      reader->store.reset();
    }
    return batch;
  }));
}

bool HistoryChart::applyLoadedSeries(const QList<qint64>& selected) {
  const HistorySeriesBatch batch = series_watcher_->result();
  if (batch.metric != metric() || !batch.error.isEmpty()) return false;
  bool new_curve = false;
  for (const auto& s : batch.series) {
    QCPGraph* graph = nullptr;
    for (int i = 0; i < plot_->graphCount() && !graph; ++i)
      if (plot_->graph(i)->property("runId").toLongLong() == s.run) graph = plot_->graph(i);
    if (!graph) {
      new_curve = new_curve || (!s.x.isEmpty() && selected.contains(s.run));  // first points of a live run
      continue;
    }
    graph->setData(s.x, s.y, true);
    graph->setScatterStyle(s.x.size() <= 40 ? QCPScatterStyle(QCPScatterStyle::ssDisc, 5) : QCPScatterStyle());
  }
  if (new_curve) return true;
  fit(false);
  plot_->replot(QCustomPlot::rpQueuedReplot);
  return false;
}

}  // namespace ts::ui
