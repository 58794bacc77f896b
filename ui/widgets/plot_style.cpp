// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/plot_style.h"

#include <QFileInfo>
#include <QPalette>

#include <qcustomplot.h>

namespace ts::ui {

void style_plot(QCustomPlot* plot) {
  const QPalette pal = plot->palette();
  const QColor fg = pal.color(QPalette::WindowText);
  const QColor bg = pal.color(QPalette::Base);
  QColor grid = fg;
  grid.setAlpha(40);
  plot->setBackground(bg);
  for (QCPAxis* axis : {plot->xAxis, plot->yAxis, plot->xAxis2, plot->yAxis2}) {
    axis->setBasePen(QPen(fg));
    axis->setTickPen(QPen(fg));
    axis->setSubTickPen(QPen(fg));
    axis->setTickLabelColor(fg);
    axis->setLabelColor(fg);
    axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    axis->grid()->setSubGridVisible(false);
  }
  plot->legend->setBrush(QBrush(bg));
  plot->legend->setBorderPen(QPen(grid));
  plot->legend->setTextColor(fg);
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->setNoAntialiasingOnDrag(true);
}

void legend_above_plot(QCustomPlot* plot, int columns) {
  auto* legend = plot->legend;
  legend->setVisible(true);
  plot->axisRect()->insetLayout()->take(legend);  // where QCustomPlot puts it (false when moved already)
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, legend);
  legend->setWrap(columns);  // 0: no wrapping
  legend->setFillOrder(QCPLegend::foColumnsFirst);
  legend->setBorderPen(Qt::NoPen);
  legend->setBrush(Qt::NoBrush);
  legend->setMargins(QMargins(4, 2, 4, 0));
  plot->plotLayout()->setRowSpacing(0);
  plot->plotLayout()->setRowStretchFactor(0, 0.001);  // as tall as its text, the axis rect takes the rest
}

QColor series_color(int i) {
  // Tableau-like palette: distinct, colour-blind friendly enough, readable on light and dark.
  static const QColor colors[] = {
      QColor(31, 119, 180), QColor(255, 127, 14),  QColor(44, 160, 44),   QColor(214, 39, 40),  QColor(148, 103, 189),
      QColor(140, 86, 75),  QColor(227, 119, 194), QColor(127, 127, 127), QColor(188, 189, 34), QColor(23, 190, 207)};
  return colors[((i % 10) + 10) % 10];
}

QColor confidence_color(double p) {
  const double t = p < 0 ? 0.0 : p > 1 ? 1.0 : p;                      // NaN stays red
  return QColor::fromHsvF(static_cast<float>(t / 3.0), 0.55f, 0.97f);  // hue 0° (red) to 120° (green)
}

QCPColorGradient viridis_gradient() {
  QCPColorGradient g;
  g.clearColorStops();
  g.setColorStopAt(0.00, QColor(68, 1, 84));
  g.setColorStopAt(0.25, QColor(59, 82, 139));
  g.setColorStopAt(0.50, QColor(33, 145, 140));
  g.setColorStopAt(0.75, QColor(94, 201, 98));
  g.setColorStopAt(1.00, QColor(253, 231, 37));
  g.setColorInterpolation(QCPColorGradient::ciRGB);
  return g;
}

bool export_plot(QCustomPlot* plot, const QString& path, QString* error) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  bool ok = false;
  if (suffix == QLatin1String("png"))
    ok = plot->savePng(path, 0, 0, 2.0);
  else if (suffix == QLatin1String("pdf"))
    ok = plot->savePdf(path);
  else if (suffix == QLatin1String("jpg") || suffix == QLatin1String("jpeg"))
    ok = plot->saveJpg(path, 0, 0, 2.0);
  else if (suffix == QLatin1String("bmp"))
    ok = plot->saveBmp(path, 0, 0, 2.0);
  else {
    if (error) *error = QObject::tr("%1: unsupported image type (use .png, .pdf, .jpg or .bmp)").arg(path);
    return false;
  }
  if (!ok && error) *error = QObject::tr("%1: could not be written").arg(path);
  return ok;
}

}  // namespace ts::ui
