// SPDX-License-Identifier: GPL-3.0-or-later
// The layout of a beam search tree: the rows and columns of its boxes, tree or ranked.
#include "beam_search/beam_tree_layout.h"

#include <algorithm>
#include <utility>

#include "beam_search/beam_scene_items.h"

namespace ts::ui {

BeamLayout layoutBeamTree(const QVector<BeamTreeView::Node>& nodes, const QHash<qint64, int>& index, bool show_pruned,
                          bool ranked, const BeamStyle& st) {
  using Node = BeamTreeView::Node;
  const int n = nodes.size();
  // Which nodes are drawn: pruned candidates only on request, and never a node whose parent is not.
  QVector<char> visible(n, 0);
  QVector<QVector<int>> children(n);
  QVector<int> roots;
  for (int i = 0; i < n; ++i) {
    const Node& node = nodes[i];
    const int p = node.parent >= 0 ? index.value(node.parent, -1) : -1;
    const bool self = show_pruned || node.state != BeamNodeState::kPruned;
    visible[i] = self && (p < 0 || visible[p]);
    if (!visible[i]) continue;
    if (p < 0)
      roots << i;
    else
      children[p] << i;
  }
  // Most probable continuation on top.
  for (auto& c : children)
    std::stable_sort(c.begin(), c.end(), [&](int a, int b) { return nodes[a].log_prob > nodes[b].log_prob; });

  // Box heights: pruned candidates take one line, finished ones three, the others two.
  const auto box_height = [&](int i) {
    const BeamNodeState state = nodes[i].state;
    return BeamNodeItem::height(st, state == BeamNodeState::kPruned ? 1 : state == BeamNodeState::kFinished ? 3 : 2);
  };
  const double gap = kBeamGap;
  QVector<double> y(n, 0);
  QVector<int> depth(n, 0);
  QVector<int> preorder;
  preorder.reserve(n);
  QVector<int> stack;
  for (int r = roots.size() - 1; r >= 0; --r) stack << roots[r];
  while (!stack.isEmpty()) {
    const int i = stack.takeLast();
    preorder << i;
    const Node& node = nodes[i];
    const int p = node.parent >= 0 ? index.value(node.parent, -1) : -1;
    depth[i] = p < 0 ? 0 : depth[p] + 1;
    for (int c = children[i].size() - 1; c >= 0; --c) stack << children[i][c];
  }
  if (ranked) {
    // Compact: each step is a column of its candidates sorted by log-probability, centred on the
    // root's row. Edges may cross, but the height is that of one step's candidates.
    QHash<int, QVector<int>> columns;
    for (int i : preorder) columns[depth[i]] << i;
    const double pitch = BeamNodeItem::height(st, 3) + gap;
    for (auto it = columns.begin(); it != columns.end(); ++it) {
      auto& column = it.value();
      std::stable_sort(column.begin(), column.end(),
                       [&](int a, int b) { return nodes[a].log_prob > nodes[b].log_prob; });
      for (int k = 0; k < column.size(); ++k) y[column[k]] = (k - (column.size() - 1) / 2.0) * pitch;
    }
  } else {
    // Tree: leaves are stacked in depth-first order, each on its own row; a parent sits midway
    // between its first and last child, so subtrees occupy disjoint bands. Two adjacent leaves
    // with the same parent only need room for themselves; otherwise an inner node (two lines) may
    // sit level with either, so a one-line leaf is spaced as if it had two. Then no two boxes of a
    // column overlap (the test checks it on a 10 × 60 tree).
    const double inner_h = BeamNodeItem::height(st, 2);
    double next = 0, previous_h = -1;
    int previous = -1;
    for (int i : preorder) {
      if (!children[i].isEmpty()) continue;
      const double h = box_height(i);
      if (previous >= 0) {
        const bool siblings = nodes[previous].parent == nodes[i].parent;
        next +=
            siblings ? (previous_h + h) / 2 + gap : (std::max(previous_h, inner_h) + std::max(h, inner_h)) / 2 + gap;
      }
      y[i] = next;
      previous_h = h;
      previous = i;
    }
    for (int k = preorder.size() - 1; k >= 0; --k) {
      const int i = preorder[k];
      if (!children[i].isEmpty()) y[i] = (y[children[i].first()] + y[children[i].last()]) / 2;
    }
  }
  return {std::move(preorder), std::move(depth), std::move(y)};
}

}  // namespace ts::ui
