// SPDX-License-Identifier: GPL-3.0-or-later
// The "Learning rate" tab of Model anatomy (see learning_rate_tab.h).
#include "anatomy/learning_rate_tab.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "anatomy/anatomy_util.h"
#include "shell/studio_state.h"
#include "ts/train/schedule.h"
#include "widgets/plot_style.h"

namespace ts::ui {

using anatomy::note;

QList<QPair<int, int>> LearningRateTab::noamComparisons() { return {{512, 4000}, {512, 8000}, {256, 4000}}; }

LearningRateTab::LearningRateTab(const StudioState* state, QWidget* parent) : QWidget(parent), state_(state) {
  setObjectName(QStringLiteral("learningRateTab"));
  auto* layout = new QVBoxLayout(this);
  auto* controls = new QHBoxLayout;
  steps_ = new QSpinBox(this);
  steps_->setObjectName(QStringLiteral("lrSteps"));
  steps_->setRange(100, 1000000);
  steps_->setSingleStep(1000);
  steps_->setValue(20000);
  steps_->setToolTip(
      tr("Optimizer steps drawn. The linear and cosine schedules decay to train.max_steps "
         "when it is set, otherwise to this number."));
  controls->addWidget(new QLabel(tr("Steps shown:"), this));
  controls->addWidget(steps_);
  controls->addStretch(1);
  layout->addLayout(controls);
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("lrSummary"));
  summary_->setWordWrap(true);
  layout->addWidget(summary_);
  plot_ = new QCustomPlot(this);
  plot_->setObjectName(QStringLiteral("lrPlot"));
  plot_->setMinimumSize(260, 200);
  style_plot(plot_);
  plot_->xAxis->setLabel(tr("Step"));
  plot_->yAxis->setLabel(tr("Learning rate"));
  legend_above_plot(plot_, 2);  // inside, it hid the configuration's curve
  layout->addWidget(plot_, 1);
  layout->addWidget(note(tr("Noam: lr = factor · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) rises linearly for "
                            "warmup steps, peaks there, then decays as 1/√step. The dashed curves are the "
                            "Annotated Transformer's comparison (factor 1)."),
                         this));
  connect(steps_, &QSpinBox::valueChanged, this, &LearningRateTab::redraw);
}

void LearningRateTab::redraw() {
  const ExperimentConfig& config = state_->config();
  const int steps = steps_->value();
  const std::int64_t total = config.train.max_steps > 0 ? config.train.max_steps : steps;

  // About 4000 samples per curve, plus every curve's warmup step so the peaks are drawn exactly.
  const int stride = std::max(1, steps / 4000);
  std::set<int> sample{1, steps};
  for (int s = stride; s <= steps; s += stride) sample.insert(s);
  if (config.train.warmup > 0 && config.train.warmup <= steps) sample.insert(config.train.warmup);
  for (const auto& [d, warmup] : noamComparisons())
    if (warmup <= steps) sample.insert(warmup);
  QVector<double> keys(sample.begin(), sample.end());

  plot_->clearGraphs();
  auto add = [&](const QString& name, const TrainConfig& tc, int d_model, int index, Qt::PenStyle style) {
    QVector<double> values;
    values.reserve(keys.size());
    for (double s : keys) values << learning_rate(tc, static_cast<std::int64_t>(s), total, d_model);
    QCPGraph* graph = plot_->addGraph();
    graph->setName(name);
    graph->setPen(QPen(series_color(index), index == 0 ? 2.2 : 1.4, style));
    graph->setData(keys, values, true);
  };
  add(tr("This configuration: %1, d_model %2, warmup %3, lr %4")
          .arg(QString::fromLatin1(lr_schedule_name(config.train.schedule)))
          .arg(config.model.d_model)
          .arg(config.train.warmup)
          .arg(config.train.lr),
      config.train, config.model.d_model, 0, Qt::SolidLine);
  int index = 1;
  for (const auto& [d, warmup] : noamComparisons()) {
    TrainConfig tc;
    tc.schedule = LrSchedule::kNoam;
    tc.lr = 1.0;
    tc.warmup = warmup;
    add(tr("Noam d_model %1, warmup %2").arg(d).arg(warmup), tc, d, index++, Qt::DashLine);
  }
  plot_->rescaleAxes();
  plot_->yAxis->setRangeLower(0);
  plot_->replot();

  // The peak of this configuration's curve, read off the drawn data.
  double peak = 0, peak_step = 1;
  for (auto it = plot_->graph(0)->data()->constBegin(); it != plot_->graph(0)->data()->constEnd(); ++it)
    if (it->value > peak) {
      peak = it->value;
      peak_step = it->key;
    }
  QString summary = tr("This configuration peaks at %1 (step %2).").arg(peak, 0, 'g', 4).arg(peak_step);
  const bool decays = config.train.schedule == LrSchedule::kLinear || config.train.schedule == LrSchedule::kCosine;
  if (decays && config.train.budget_minutes > 0 && config.train.max_steps <= 0)
    summary += QLatin1Char(' ') +
               tr("With a time budget (%1) it reaches zero at the deadline, however many steps the run makes there: "
                  "drawn here as if that were step %L2 (Steps shown). The Training panel draws a run's own curve.")
                   .arg(QString::fromStdString(minutes_text(config.train.budget_minutes)))
                   .arg(total);
  summary_->setText(summary);
}

}  // namespace ts::ui
