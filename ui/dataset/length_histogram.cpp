// SPDX-License-Identifier: GPL-3.0-or-later
// A sentence-length histogram of the Dataset panel (see length_histogram.h).
#include "dataset/length_histogram.h"

#include <algorithm>

#include <QPen>
#include <QSharedPointer>
#include <QVector>

#include "widgets/plot_style.h"

namespace ts::ui {

LengthHistogram::LengthHistogram(const QString& object_name, int color, const QFont& title_font,
                                 const QColor& title_color, QWidget* parent)
    : QCustomPlot(parent) {
  setObjectName(object_name);
  setMinimumSize(180, 160);
  style_plot(this);
  plotLayout()->insertRow(0);
  auto* title = new QCPTextElement(this, QString(), title_font);
  title->setTextColor(title_color);
  plotLayout()->addElement(0, 0, title);
  xAxis->setLabel(tr("tokens per sentence"));
  yAxis->setLabel(tr("sentences"));
  // Lengths and counts are whole numbers: no 2.5-token ticks.
  for (QCPAxis* axis : {xAxis, yAxis}) {
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    ticker->setTickCount(5);
    axis->setTicker(ticker);
  }
  auto* bars = new QCPBars(xAxis, yAxis);
  bars->setWidth(1.0);
  QColor fill = series_color(color);
  bars->setPen(QPen(fill.darker(130)));
  fill.setAlpha(170);
  bars->setBrush(fill);
  setToolTip(
      tr("How many sentences have each length in tokens, over the whole corpus. "
         "Drag to pan, wheel to zoom."));
}

void LengthHistogram::setHistogram(const std::vector<std::size_t>& histogram, const QString& title) {
  auto* bars = qobject_cast<QCPBars*>(plottable(0));
  QVector<double> keys, values;
  std::size_t total = 0;
  double peak = 0;
  for (std::size_t n = 0; n < histogram.size(); ++n) {
    if (histogram[n] == 0) continue;
    keys << static_cast<double>(n);
    values << static_cast<double>(histogram[n]);
    total += histogram[n];
    peak = std::max(peak, static_cast<double>(histogram[n]));
  }
  bars->setData(keys, values, true);
  // Show up to the 99.5th percentile so a few absurdly long lines do not squeeze the rest;
  // dragging reaches the tail.
  std::size_t seen = 0, upper = histogram.empty() ? 1 : histogram.size() - 1;
  for (std::size_t n = 0; n < histogram.size(); ++n) {
    seen += histogram[n];
    if (static_cast<double>(seen) >= 0.995 * static_cast<double>(total)) {
      upper = n;
      break;
    }
  }
  xAxis->setRange(-0.5, static_cast<double>(upper) + 1.5);
  yAxis->setRange(0, std::max(1.0, peak * 1.08));
  if (auto* text = qobject_cast<QCPTextElement*>(plotLayout()->element(0, 0))) text->setText(title);
  replot(QCustomPlot::rpQueuedReplot);
}

void LengthHistogram::clearHistogram() {
  if (auto* bars = qobject_cast<QCPBars*>(plottable(0))) bars->data()->clear();
  replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace ts::ui
