// SPDX-License-Identifier: GPL-3.0-or-later
// A bucket analysis as grouped bars and a table (see bucket_view.h).
#include "compare/bucket_view.h"

#include <algorithm>

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "widgets/plot_style.h"
#include "widgets/qt_text.h"

namespace ts::ui {

BucketView::BucketView(const QString& object_name, QWidget* parent) : QWidget(parent) {
  setObjectName(object_name);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  stack_ = new QStackedWidget(this);
  outer->addWidget(stack_);
  placeholder_ = new QLabel(tr("Check one or more systems on the left and press Compare: the chart and its numbers "
                               "appear here."),
                            stack_);
  placeholder_->setObjectName(object_name + QStringLiteral("Placeholder"));
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setWordWrap(true);
  placeholder_->setForegroundRole(QPalette::PlaceholderText);
  content_ = new QWidget(stack_);
  stack_->addWidget(placeholder_);
  stack_->addWidget(content_);
  auto* layout = new QVBoxLayout(content_);
  layout->setContentsMargins(0, 4, 0, 0);
  title_ = new QLabel(content_);
  title_->setObjectName(object_name + QStringLiteral("Title"));
  title_->setWordWrap(true);
  layout->addWidget(title_);

  plot_ = new QCustomPlot(content_);
  plot_->setObjectName(object_name + QStringLiteral("Chart"));
  plot_->setMinimumHeight(180);
  style_plot(plot_);
  // The legend in a row of its own under the chart: inside, it would hide the bars of a bucket.
  plot_->legend->setVisible(true);
  auto* legend_row = new QCPLayoutGrid;
  plot_->plotLayout()->addElement(1, 0, legend_row);
  legend_row->setMargins(QMargins(5, 0, 5, 5));
  legend_row->addElement(0, 0, plot_->legend);
  plot_->legend->setFillOrder(QCPLegend::foColumnsFirst);
  plot_->plotLayout()->setRowStretchFactor(1, 0.001);
  group_ = new QCPBarsGroup(plot_);  // bars leave it when they are deleted
  group_->setSpacingType(QCPBarsGroup::stAbsolute);
  group_->setSpacing(1);
  plot_->setToolTip(
      tr("One bar per system in each bucket; the table below gives the numbers. Drag to pan, wheel to zoom."));

  table_ = new QTableWidget(content_);
  table_->setObjectName(object_name + QStringLiteral("Table"));
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setWordWrap(false);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);

  auto* split = new QSplitter(Qt::Vertical, content_);
  split->addWidget(plot_);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setChildrenCollapsible(false);
  layout->addWidget(split, 1);
  stack_->setCurrentWidget(placeholder_);
}

bool BucketView::showsPlaceholder() const { return stack_->currentWidget() == placeholder_; }

void BucketView::clearTable() {
  stack_->setCurrentWidget(placeholder_);
  title_->clear();
  plot_->clearPlottables();
  plot_->replot(QCustomPlot::rpQueuedReplot);
  table_->clear();
  table_->setRowCount(0);
  table_->setColumnCount(0);
}

void BucketView::setTable(const BucketTable& t, const QStringList& names, bool counts_are_values) {
  clearTable();
  stack_->setCurrentWidget(content_);
  title_->setText(q(t.title));
  const int buckets = static_cast<int>(t.labels.size()), systems = static_cast<int>(names.size());

  // The bars: bucket b at x = b + 1, the systems side by side within it.
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int b = 0; b < buckets; ++b) ticker->addTick(b + 1, q(t.labels[static_cast<std::size_t>(b)]));
  plot_->xAxis->setTicker(ticker);
  plot_->xAxis->setSubTicks(false);
  plot_->xAxis->setTickLength(0, 4);
  plot_->yAxis->setLabel(q(t.value));
  double peak = 0;
  for (int s = 0; s < systems; ++s) {
    auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
    bars->setName(names[s]);
    bars->setWidth(0.8 / std::max(1, systems));
    QColor fill = series_color(s);
    bars->setPen(QPen(fill.darker(130)));
    fill.setAlpha(190);
    bars->setBrush(fill);
    bars->setBarsGroup(group_);
    QVector<double> keys, values;
    for (int b = 0; b < buckets; ++b) {
      const auto bi = static_cast<std::size_t>(b), si = static_cast<std::size_t>(s);
      if (si >= t.values[bi].size()) continue;
      keys << b + 1;
      values << t.values[bi][si];
      peak = std::max(peak, t.values[bi][si]);
    }
    bars->setData(keys, values, true);
  }
  plot_->xAxis->setRange(0.4, buckets + 0.6);
  plot_->yAxis->setRange(0, peak > 0 ? peak * 1.15 : 1.0);
  plot_->replot(QCustomPlot::rpQueuedReplot);

  // The table: a row per bucket, a column per system.
  table_->setRowCount(buckets);
  table_->setColumnCount(systems);
  table_->setHorizontalHeaderLabels(names);
  QStringList labels;
  for (const auto& l : t.labels) labels << q(l);
  table_->setVerticalHeaderLabels(labels);
  for (int b = 0; b < buckets; ++b) {
    for (int s = 0; s < systems; ++s) {
      const auto bi = static_cast<std::size_t>(b), si = static_cast<std::size_t>(s);
      const double value = si < t.values[bi].size() ? t.values[bi][si] : 0.0;
      const long count = si < t.counts[bi].size() ? t.counts[bi][si] : 0;
      QString text;
      if (counts_are_values)
        text = QString::number(count);
      else if (count == 0)
        text = QStringLiteral("–");
      else
        text = QStringLiteral("%1 (%2)").arg(value, 0, 'f', t.value == "F-measure" ? 3 : 2).arg(count);
      auto* item = new QTableWidgetItem(text);
      item->setData(Qt::UserRole, value);
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      if (!counts_are_values)
        item->setToolTip(tr("%1: %2 %3 over %4 %5")
                             .arg(names[s], q(t.value))
                             .arg(value, 0, 'f', 3)
                             .arg(count)
                             .arg(t.value == "F-measure" ? tr("reference words") : tr("sentences")));
      table_->setItem(b, s, item);
    }
  }
  table_->resizeColumnsToContents();
}

}  // namespace ts::ui
