// SPDX-License-Identifier: GPL-3.0-or-later
// The attention explorer's per-head summary: one sortable row per layer and head of the kind shown
// (what the head mostly looks at, how strongly, its entropies, and for cross-attention its
// monotonicity). Making a row current asks the panel to open that head large.
#pragma once

#include <vector>

#include <QTableView>

#include "ts/analysis/attention_stats.h"

class QSortFilterProxyModel;
class QStandardItemModel;

namespace ts::ui {

class AttentionSummaryTable : public QTableView {
  Q_OBJECT
 public:
  explicit AttentionSummaryTable(QWidget* parent = nullptr);

  /// One row per head of `summaries` ([layer][head + 1]; index 0, the head average, has no row).
  /// The monotonicity column is shown for cross-attention only.
  void setSummaries(const std::vector<std::vector<HeadSummary>>& summaries, bool cross);
  /// Makes the row of (layer, head) current; no row is current for a head average (-1).
  void setCurrentHead(int layer, int head);

 Q_SIGNALS:
  /// The current row changed to the head (layer, head), by the user or by setCurrentHead.
  void currentHeadChanged(int layer, int head);

 private:
  QStandardItemModel* items_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
};

}  // namespace ts::ui
