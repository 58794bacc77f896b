// SPDX-License-Identifier: GPL-3.0-or-later
// The probe panel's alignment strip (see probe_alignment_chart.h).
#include "attention_over_training/probe_alignment_chart.h"

#include <algorithm>

#include "widgets/plot_style.h"

namespace ts::ui {

ProbeAlignmentChart::ProbeAlignmentChart(QWidget* parent) : QCustomPlot(parent) {
  setObjectName(QStringLiteral("probeAlignmentChart"));
  setMinimumHeight(170);
  setToolTip(
      tr("Sharpness: mean over output tokens of their largest attention weight (1 = each looks at "
         "one input token). Entropy: mean row entropy divided by its maximum (1 = uniform)."));
  style_plot(this);
  setInteractions(QCP::Interactions());  // a summary strip: nothing to drag
  xAxis->setLabel(tr("step"));
  yAxis->setRange(0, 1.05);
  yAxis->setLabel(tr("0 … 1"));
  legend->setVisible(true);
  QFont legend_font = legend->font();
  legend_font.setPointSizeF(legend_font.pointSizeF() * 0.85);
  legend->setFont(legend_font);
  // The legend in a row of its own above the plot, so it never hides the latest points.
  plotLayout()->insertRow(0);
  plotLayout()->addElement(0, 0, legend);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setBorderPen(Qt::NoPen);
  plotLayout()->setRowStretchFactor(0, 0.001);
  const QStringList names = {tr("sharpness (mean row max)"), tr("entropy (normalised)")};
  for (int i = 0; i < 2; ++i) {
    auto* g = addGraph();
    g->setName(names[i]);
    g->setPen(QPen(series_color(i), 2));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
  }
  marker_ = new QCPItemStraightLine(this);
  marker_->setPen(QPen(palette().color(QPalette::Highlight), 1.5, Qt::DashLine));
  marker_->setSelectable(false);
  marker_->setVisible(false);
}

void ProbeAlignmentChart::setSeries(const QVector<double>& steps, const QVector<double>& sharpness,
                                    const QVector<double>& entropy) {
  graph(0)->setData(steps, sharpness, /*alreadySorted=*/true);
  graph(1)->setData(steps, entropy, /*alreadySorted=*/true);
  if (steps.isEmpty()) {
    xAxis->setRange(0, 1);
  } else {
    const double lo = steps.first(), hi = steps.last();
    const double pad = std::max(1.0, (hi - lo) * 0.04);
    xAxis->setRange(lo - pad, hi + pad);
  }
  yAxis->setRange(0, 1.05);
  replot(QCustomPlot::rpQueuedReplot);
}

void ProbeAlignmentChart::showMarker(double step) {
  marker_->point1->setCoords(step, 0);
  marker_->point2->setCoords(step, 1);
  marker_->setVisible(true);
  replot(QCustomPlot::rpQueuedReplot);
}

void ProbeAlignmentChart::hideMarker() {
  marker_->setVisible(false);
  replot(QCustomPlot::rpQueuedReplot);
}

double ProbeAlignmentChart::markerStep() const { return marker_->point1->key(); }

}  // namespace ts::ui
