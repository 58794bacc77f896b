// SPDX-License-Identifier: GPL-3.0-or-later
// BeamTreeView, the drawn tree: the scene built from the nodes and their layout (boxes, edges,
// step labels), the node tooltips, what the tests read back from the scene, the selection, and the
// rebuild when the palette or font changes.
#include "beam_search/beam_tree_view.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <QCheckBox>
#include <QElapsedTimer>
#include <QEvent>
#include <QFontMetricsF>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QLabel>
#include <QPainterPath>
#include <QSet>

#include "beam_search/beam_format.h"
#include "beam_search/beam_scene_items.h"
#include "beam_search/beam_tree_layout.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

using beam::format_lp;

QString BeamTreeView::toolTipFor(int i) const {
  const Node& n = nodes_[i];
  const auto esc = [](const QString& s) { return s.toHtmlEscaped(); };
  QStringList lines;
  lines << QStringLiteral("<b>%1</b>").arg(n.prefix.isEmpty() ? tr("(start of the sentence)") : esc(n.prefix));
  if (n.parent < 0) {
    lines << tr("Root: the decoder starts from %1").arg(esc(n.token));
  } else {
    lines << tr("Token “%1” (id %2) at step %3").arg(isolated(esc(n.token))).arg(n.token_id).arg(n.step);
    lines << tr("P(token | prefix) = %1 (log %2)")
                 .arg(std::exp(n.token_log_prob), 0, 'f', 3)
                 .arg(format_lp(n.token_log_prob));
    lines << tr("Cumulative log-prob %1").arg(format_lp(n.log_prob));
  }
  if (n.state == BeamNodeState::kFinished) {
    lines << tr("Finished: score %1 (log-prob / length penalty)").arg(format_lp(n.score));
    lines << (n.rank >= 0 ? tr("n-best rank #%1").arg(n.rank + 1) : tr("Not among the n-best returned"));
  } else if (n.state == BeamNodeState::kPruned) {
    lines << tr("Pruned: scored, but cut because the beam was full");
  } else if (n.state == BeamNodeState::kKept) {
    lines << tr("Kept in the beam (score %1)").arg(format_lp(n.score));
  }
  if (best_path_.contains(n.id)) lines << tr("On the path of the best translation");
  return lines.join(QStringLiteral("<br>"));
}

void BeamTreeView::rebuildScene() {
  QElapsedTimer clock;
  clock.start();
  scene_->clear();
  items_.clear();
  edges_.clear();
  highlighted_edges_ = 0;
  if (nodes_.isEmpty()) {
    scene_->setSceneRect(QRectF());
    layout_ms_ = 0;
    return;
  }

  BeamStyle& st = *style_;
  st.takeFrom(*this);
  const BeamLayout placed = layoutBeamTree(nodes_, index_, show_pruned_->isChecked(), ranked(), st);
  const QVector<int>& preorder = placed.preorder;
  const QVector<int>& depth = placed.depth;
  const QVector<double>& y = placed.y;

  const QSet<qint64> best(best_path_.cbegin(), best_path_.cend());
  int max_depth = 0;
  for (int i : preorder) {
    const Node& node = nodes_[i];
    max_depth = std::max(max_depth, depth[i]);
    QStringList lines;
    const QFontMetricsF bold(st.font);
    lines << bold.elidedText(node.token, Qt::ElideMiddle, st.box_w - 2 * st.pad - 4);
    lines << format_lp(node.log_prob);
    const bool finished = node.state == BeamNodeState::kFinished;
    if (finished)
      lines << (node.rank >= 0 ? tr("%1 · #%2").arg(format_lp(node.score)).arg(node.rank + 1) : format_lp(node.score));
    const bool faded = node.state == BeamNodeState::kPruned;
    auto* item = new BeamNodeItem(&st, node.id, lines, best.contains(node.id), finished, faded);
    item->setPos(depth[i] * st.column, y[i]);
    item->setToolTip(toolTipFor(i));
    scene_->addItem(item);
    items_.insert(node.id, item);
  }

  // Edges: a curve from the right side of the parent's box to the left side of the child's.
  QPen normal(st.border, 1.0);
  QPen accent(st.accent, 3.0);
  normal.setCosmetic(true);  // lines stay visible when the tree is zoomed out to an overview
  accent.setCosmetic(true);
  for (int i : preorder) {
    const Node& node = nodes_[i];
    if (node.parent < 0) continue;
    BeamNodeItem* parent = items_.value(node.parent);
    BeamNodeItem* child = items_.value(node.id);
    if (!parent || !child) continue;
    const QPointF a(parent->pos().x() + st.box_w / 2, parent->pos().y());
    const QPointF b(child->pos().x() - st.box_w / 2, child->pos().y());
    QPainterPath path(a);
    const double dx = (b.x() - a.x()) / 2;
    path.cubicTo(a + QPointF(dx, 0), b - QPointF(dx, 0), b);
    const bool on_best = best.contains(node.id) && best.contains(node.parent);
    auto* edge = scene_->addPath(path, on_best ? accent : normal);
    edge->setZValue(on_best ? 0.5 : 0);
    edge->setData(0, node.id);
    if (node.state == BeamNodeState::kPruned) {
      QPen dashed = normal;
      dashed.setStyle(Qt::DashLine);
      edge->setPen(dashed);
      edge->setOpacity(0.4);
    }
    if (on_best) ++highlighted_edges_;
    edges_ << edge;
  }

  // Step numbers above the columns.
  double top = 0;
  for (auto* item : std::as_const(items_)) top = std::min(top, item->pos().y() + item->box().top());
  for (int d = 1; d <= max_depth; ++d) {
    auto* label = scene_->addSimpleText(tr("step %1").arg(d), st.small);
    label->setBrush(st.dim_text);
    const QRectF r = label->boundingRect();
    label->setPos(d * st.column - r.width() / 2, top - kBeamGap - r.height());
  }
  scene_->setSceneRect(scene_->itemsBoundingRect().adjusted(-20, -20, 20, 20));
  layout_ms_ = clock.nsecsElapsed() / 1e6;
}

QList<qint64> BeamTreeView::drawnNodeIds() const {
  QList<qint64> ids;
  for (const auto& n : nodes_)
    if (items_.contains(n.id)) ids << n.id;
  return ids;
}

QList<qint64> BeamTreeView::highlightedPath() const {
  QList<QPair<double, qint64>> marked;
  for (auto* item : items_)
    if (item->best()) marked << qMakePair(item->pos().x(), item->id());
  std::sort(marked.begin(), marked.end());
  QList<qint64> ids;
  for (const auto& m : marked) ids << m.second;
  return ids;
}

int BeamTreeView::highlightedEdgeCount() const { return highlighted_edges_; }

QRectF BeamTreeView::nodeRect(qint64 id) const {
  auto* item = items_.value(id);
  return item ? item->mapRectToScene(item->box()) : QRectF();
}

QStringList BeamTreeView::nodeLabel(qint64 id) const {
  auto* item = items_.value(id);
  return item ? item->lines() : QStringList();
}

QString BeamTreeView::nodeToolTip(qint64 id) const {
  auto* item = items_.value(id);
  return item ? item->toolTip() : QString();
}

bool BeamTreeView::nodeFaded(qint64 id) const {
  auto* item = items_.value(id);
  return item && item->faded();
}

QString BeamTreeView::prefixText(qint64 id) const {
  const int i = index_.value(id, -1);
  return i < 0 ? QString() : nodes_[i].prefix;
}

void BeamTreeView::selectNode(qint64 id) {
  scene_->clearSelection();
  if (auto* item = items_.value(id)) {
    item->setSelected(true);
    view_->ensureVisible(item);
  }
}

qint64 BeamTreeView::selectedNode() const {
  const auto selected = scene_->selectedItems();
  if (selected.isEmpty()) return -1;
  return static_cast<BeamNodeItem*>(selected.first())->id();
}

void BeamTreeView::onSelectionChanged() {
  const qint64 id = selectedNode();
  const int i = index_.value(id, -1);
  if (i < 0) {
    selection_->clear();
    Q_EMIT nodeSelected(-1, QString());
    return;
  }
  const Node& n = nodes_[i];
  QString details = tr("step %1 · log-prob %2").arg(n.step).arg(format_lp(n.log_prob));
  if (n.state == BeamNodeState::kFinished)
    details += n.rank >= 0 ? tr(" · finished, score %1, n-best #%2").arg(format_lp(n.score)).arg(n.rank + 1)
                           : tr(" · finished, score %1").arg(format_lp(n.score));
  else if (n.state == BeamNodeState::kPruned)
    details += tr(" · pruned");
  selection_->setText(
      tr("Selected hypothesis: “%1” (%2)").arg(n.prefix.isEmpty() ? tr("start") : isolated(n.prefix), details));
  Q_EMIT nodeSelected(n.id, n.prefix);
}

void BeamTreeView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if ((event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) && !nodes_.isEmpty()) {
    const qint64 selected = selectedNode();
    const QTransform t = view_->transform();
    rebuildScene();
    view_->setTransform(t);
    if (selected >= 0) selectNode(selected);
  }
}

}  // namespace ts::ui
