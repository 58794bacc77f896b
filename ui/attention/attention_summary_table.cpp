// SPDX-License-Identifier: GPL-3.0-or-later
// The attention explorer's per-head summary table (see attention_summary_table.h).
#include "attention/attention_summary_table.h"

#include <QHeaderView>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>

#include "attention/attention_util.h"

namespace ts::ui {

using attention_util::percent;
using attention_util::plain_tooltip;

namespace {

constexpr int kLayerRole = Qt::UserRole + 1;
constexpr int kHeadRole = Qt::UserRole + 2;

QStandardItem* number_item(const QString& text, double sort_value) {
  auto* item = new QStandardItem(text);
  item->setData(sort_value, Qt::UserRole);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  item->setEditable(false);
  return item;
}

}  // namespace

AttentionSummaryTable::AttentionSummaryTable(QWidget* parent) : QTableView(parent) {
  items_ = new QStandardItemModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(items_);
  proxy_->setSortRole(Qt::UserRole);
  setObjectName(QStringLiteral("attentionSummary"));
  setModel(proxy_);
  setSortingEnabled(true);
  sortByColumn(0, Qt::AscendingOrder);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setSelectionMode(QAbstractItemView::SingleSelection);
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  verticalHeader()->hide();
  horizontalHeader()->setStretchLastSection(true);
  setAlternatingRowColors(true);
  connect(selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
    if (!current.isValid()) return;
    const QModelIndex first = proxy_->index(current.row(), 0);
    Q_EMIT currentHeadChanged(first.data(kLayerRole).toInt(), first.data(kHeadRole).toInt());
  });
}

void AttentionSummaryTable::setSummaries(const std::vector<std::vector<HeadSummary>>& summaries, bool cross) {
  items_->clear();
  items_->setHorizontalHeaderLabels({tr("Layer"), tr("Head"), tr("Pattern"), tr("Strength"), tr("Entropy (nats)"),
                                     tr("Normalised entropy"), tr("Monotonicity")});
  const QStringList tips = {
      tr("Layer (1 = first)"),
      tr("Head"),
      tr("What the head mostly looks at"),
      tr("Mean weight the pattern explains (for “broad”: the normalised entropy)"),
      tr("Mean entropy of the rows, in nats"),
      tr("Entropy divided by its maximum, log(number of keys): 0 = one key, 1 = uniform"),
      tr("Cross-attention: share of steps whose aligned source position does not move backwards")};
  for (int c = 0; c < tips.size(); ++c) items_->setHeaderData(c, Qt::Horizontal, tips[c], Qt::ToolTipRole);
  for (std::size_t l = 0; l < summaries.size(); ++l) {
    for (std::size_t h = 1; h < summaries[l].size(); ++h) {
      const HeadSummary& s = summaries[l][h];
      auto* layer = number_item(QString::number(l + 1), static_cast<double>(l + 1));
      auto* head = number_item(QString::number(h), static_cast<double>(h));
      layer->setData(static_cast<int>(l), kLayerRole);
      layer->setData(static_cast<int>(h) - 1, kHeadRole);
      const QString name = QString::fromStdString(attention_pattern_name(s.pattern));
      auto* pattern = new QStandardItem(name);
      pattern->setData(name, Qt::UserRole);
      pattern->setToolTip(plain_tooltip(QString::fromStdString(s.description)));
      pattern->setEditable(false);
      // Where the rows have no peak to follow (spread out, parked on </s>) the figure means nothing.
      const bool follows_peak = s.pattern == AttentionPattern::Alignment || s.pattern == AttentionPattern::Reordering ||
                                s.pattern == AttentionPattern::Mixed;
      auto* monotone = cross && follows_peak && s.monotonicity >= 0
                           ? number_item(percent(s.monotonicity), s.monotonicity)
                           : number_item(QStringLiteral("–"), -1);
      items_->appendRow({layer, head, pattern, number_item(percent(s.strength), s.strength),
                         number_item(QString::number(s.mean_entropy, 'f', 2), s.mean_entropy),
                         number_item(QString::number(s.normalized_entropy, 'f', 2), s.normalized_entropy), monotone});
    }
  }
  setColumnHidden(6, !cross);
  resizeColumnsToContents();
}

void AttentionSummaryTable::setCurrentHead(int layer, int head) {
  // The head average has no row: no current row either, so clicking any row selects it again.
  selectionModel()->setCurrentIndex(QModelIndex(), QItemSelectionModel::Clear);
  for (int r = 0; r < proxy_->rowCount(); ++r) {
    const QModelIndex index = proxy_->index(r, 0);
    if (index.data(kLayerRole).toInt() == layer && index.data(kHeadRole).toInt() == head) {
      selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
      scrollTo(index);
      break;
    }
  }
}

}  // namespace ts::ui
