// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers shared by the tabs of the Model anatomy panel (see anatomy_util.h).
#include "anatomy/anatomy_util.h"

#include <QLabel>

#include "anatomy/anatomy_panel.h"
#include "widgets/plot_style.h"

namespace ts::ui::anatomy {

QCPColorMap* make_heatmap(QCustomPlot* plot, const QString& scaleLabel) {
  style_plot(plot);
  plot->setMinimumSize(260, 200);
  for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
    axis->grid()->setVisible(false);
    // Whole-number ticks: rows and columns are indices (never "2.5").
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    axis->setTicker(ticker);
    axis->setSubTicks(false);
  }
  plot->yAxis->setRangeReversed(true);
  auto* map = new QCPColorMap(plot->xAxis, plot->yAxis);
  map->setInterpolate(false);  // one flat colour per cell: each cell is one entry
  map->setTightBoundary(false);
  auto* scale = new QCPColorScale(plot);
  plot->plotLayout()->addElement(0, 1, scale);
  scale->setType(QCPAxis::atRight);
  scale->axis()->setLabel(scaleLabel);
  const QColor fg = plot->palette().color(QPalette::WindowText);
  scale->axis()->setBasePen(QPen(fg));
  scale->axis()->setTickPen(QPen(fg));
  scale->axis()->setSubTickPen(QPen(fg));
  scale->axis()->setTickLabelColor(fg);
  scale->axis()->setLabelColor(fg);
  map->setColorScale(scale);
  map->setGradient(viridis_gradient());    // after setColorScale, which hands the scale's gradient to the map
  auto* group = new QCPMarginGroup(plot);  // the scale lines up with the axis rect
  plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  return map;
}

void set_text_ticks(QCPAxis* axis, const QStringList& labels) {
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int i = 0; i < labels.size(); ++i) ticker->addTick(i, labels[i]);
  axis->setTicker(ticker);
  axis->setSubTicks(false);
}

QLabel* note(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  label->setTextFormat(Qt::PlainText);
  return label;
}

QString no_model_message() {
  return AnatomyPanel::tr("Load a checkpoint or start training to see the model's positions and embeddings.");
}

}  // namespace ts::ui::anatomy
