// SPDX-License-Identifier: GPL-3.0-or-later
// Where each candidate of a beam search tree goes, before anything is drawn: which nodes are shown
// (pruned ones only on request), their column (the decoding step) and their row. Two layouts: the
// tree (each leaf on its own row, parents centred over their children, nothing overlaps) and the
// compact "ranked" one (each step's candidates in one column, sorted by log-probability).
#pragma once

#include <QHash>
#include <QVector>

#include "beam_search/beam_tree_view.h"

namespace ts::ui {

struct BeamStyle;

/// Vertical room between two boxes of a column (and between the boxes and the step labels).
constexpr double kBeamGap = 6;

struct BeamLayout {
  QVector<int> preorder;  // indices of the nodes shown, depth first, most probable child first
  QVector<int> depth;     // per node index: its column (0 for the root)
  QVector<double> y;      // per node index: the vertical centre of its box
};

/// Lays out `nodes` (`index` maps a node id to its position in `nodes`); box heights come from
/// the metrics in `st`.
BeamLayout layoutBeamTree(const QVector<BeamTreeView::Node>& nodes, const QHash<qint64, int>& index, bool show_pruned,
                          bool ranked, const BeamStyle& st);

}  // namespace ts::ui
