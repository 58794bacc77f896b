// SPDX-License-Identifier: GPL-3.0-or-later
#include "language_model/lm_loss_chart.h"

#include <algorithm>
#include <cmath>

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "widgets/plot_style.h"

namespace ts::ui {

LmLossChart::LmLossChart(QWidget* parent) : QWidget(parent) {
  plot_ = new QCustomPlot;
  plot_->setObjectName(QStringLiteral("lmLossPlot"));
  style_plot(plot_);
  plot_->xAxis->setLabel(tr("step"));
  plot_->yAxis->setLabel(tr("loss (nats per token)"));
  plot_->legend->setVisible(true);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  plot_->setMinimumHeight(260);
  baseline_line_ = new QCPItemStraightLine(plot_);
  baseline_line_->setPen(QPen(palette().color(QPalette::WindowText), 1.5, Qt::DashDotLine));
  baseline_line_->setVisible(false);
  baseline_text_ = new QCPItemText(plot_);
  baseline_text_->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
  baseline_text_->position->setTypeY(QCPItemPosition::ptPlotCoords);
  baseline_text_->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
  baseline_text_->setColor(palette().color(QPalette::WindowText));
  baseline_text_->setVisible(false);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  auto* title =
      new QLabel(tr("<b>Loss</b> — thin: every step; solid: train estimate; dashed: val estimate; "
                    "dash-dot: the bigram table"));
  title->setWordWrap(true);
  auto* clear = new QPushButton(tr("Clear chart"));
  clear->setObjectName(QStringLiteral("lmClearChart"));
  clear->setToolTip(tr("Removes the curves of earlier runs (the running one stays)."));
  connect(clear, &QPushButton::clicked, this, &LmLossChart::clearRequested);
  auto* save = new QPushButton(tr("Save image…"));
  connect(save, &QPushButton::clicked, this, [this] {
    const auto path = QFileDialog::getSaveFileName(this, tr("Save chart"), QStringLiteral("lm-loss.png"),
                                                   tr("Images (*.png *.pdf *.jpg)"));
    QString error;
    if (!path.isEmpty() && !export_plot(plot_, path, &error)) Q_EMIT saveFailed(error);
  });
  bar->addWidget(title, 1);
  bar->addWidget(clear);
  bar->addWidget(save);
  layout->addLayout(bar);
  layout->addWidget(plot_, 1);
}

QString LmLossChart::addRun(const QString& name) {
  Curve c;
  c.label = QStringLiteral("%1 · %2").arg(curves_.size() + 1).arg(name);
  const QColor color = series_color(curves_.size());
  QColor faint = color;
  faint.setAlpha(70);
  c.step = plot_->addGraph();
  c.step->setPen(QPen(faint, 1));
  c.step->setName(c.label + tr(" · step"));
  c.step->removeFromLegend();
  c.train = plot_->addGraph();
  c.train->setPen(QPen(color, 2));
  c.train->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
  c.train->setName(c.label + tr(" · train"));
  c.val = plot_->addGraph();
  c.val->setPen(QPen(color, 2, Qt::DashLine));
  c.val->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, 6));
  c.val->setName(c.label + tr(" · val"));
  curves_ << c;
  plot_->replot();
  return c.label;
}

void LmLossChart::addStepLoss(double step, double loss) {
  if (!curves_.isEmpty()) curves_.back().step->addData(step, loss);
}

void LmLossChart::addEstimate(double step, double train_loss, double val_loss) {
  if (curves_.isEmpty()) return;
  if (train_loss >= 0) curves_.back().train->addData(step, train_loss);
  curves_.back().val->addData(step, val_loss);
}

void LmLossChart::removeCurve(const Curve& c) {
  plot_->removeGraph(c.step);
  plot_->removeGraph(c.train);
  plot_->removeGraph(c.val);
}

void LmLossChart::dropEmptyLastRun() {
  if (!curves_.isEmpty() && curves_.back().step->dataCount() == 0 && curves_.back().val->dataCount() == 0) {
    removeCurve(curves_.takeLast());
    plot_->replot();
  }
}

void LmLossChart::removeRuns(bool keep_last) {
  const int keep = keep_last ? 1 : 0;
  while (curves_.size() > keep) removeCurve(curves_.takeFirst());
  plot_->rescaleAxes();
}

void LmLossChart::rescale() { plot_->rescaleAxes(); }

void LmLossChart::showBaseline(double b, double uniform_loss, double max_steps) {
  const bool show = std::isfinite(b);
  baseline_line_->setVisible(show);
  baseline_text_->setVisible(show);
  if (show) {
    baseline_line_->point1->setCoords(0, b);
    baseline_line_->point2->setCoords(1, b);
    baseline_text_->position->setCoords(0.01, b);
    baseline_text_->setText(tr("bigram table %1").arg(b, 0, 'f', 3));
    auto range = plot_->yAxis->range();
    if (plot_->graphCount() == 0 ||
        !std::any_of(curves_.begin(), curves_.end(), [](const Curve& c) { return c.step->dataCount() > 0; }))
      range = QCPRange(b * 0.8, uniform_loss * 1.05);
    range.expand(b * 0.95);
    range.expand(b * 1.05);
    plot_->yAxis->setRange(range);
    if (plot_->xAxis->range().upper <= 1) plot_->xAxis->setRange(0, std::max<double>(1, max_steps));
  }
  plot_->replot();
}

QString LmLossChart::curveLabel(int run) const {
  return run >= 0 && run < curves_.size() ? curves_[run].label : QString();
}

QVector<QPointF> LmLossChart::curvePoints(int run, const QString& series) const {
  QVector<QPointF> points;
  if (run < 0 || run >= curves_.size()) return points;
  const auto& c = curves_[run];
  QCPGraph* g = series == QLatin1String("step") ? c.step : series == QLatin1String("train") ? c.train : c.val;
  for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) points << QPointF(it->key, it->value);
  return points;
}

}  // namespace ts::ui
