// SPDX-License-Identifier: GPL-3.0-or-later
// BeamTreeView, framing the tree: the first view of a new tree (whole, or the best path at a
// legible size, or the compact layout when even that does not fit), Fit, 100 % and the zoom level.
#include "beam_search/beam_tree_view.h"

#include <algorithm>

#include <QComboBox>
#include <QGraphicsScene>
#include <QSignalBlocker>
#include <QTimer>

#include "beam_search/beam_scene_items.h"

namespace ts::ui {

void BeamTreeView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (initial_view_pending_) QTimer::singleShot(0, this, &BeamTreeView::initialView);
}

void BeamTreeView::initialView() {
  // The viewport's size is only known once the view is shown (a hidden dock has none yet).
  initial_view_pending_ = !view_->isVisible();
  if (items_.isEmpty() || initial_view_pending_) return;
  // Start readable: the whole tree when it fits at a legible size, otherwise the best path at a
  // legible size (Fit and Ctrl+wheel give the overview).
  view_->resetTransform();
  const QRectF bounds = scene_->itemsBoundingRect();
  const QSize port = view_->viewport()->size();
  const double fit =
      std::min(port.width() / std::max(1.0, bounds.width() + 20), port.height() / std::max(1.0, bounds.height() + 20));
  if (fit >= 0.6) {
    fitToView();
    return;
  }
  // Too big for one legible view: frame the best path (the translation chosen), as far as it fits
  // at a legible size, so the chosen hypothesis is what one sees first.
  QRectF path_rect;
  for (qint64 id : best_path_)
    if (auto* item = items_.value(id)) path_rect = path_rect.united(item->sceneBoundingRect());
  if (path_rect.isNull()) {
    if (auto* root = items_.value(nodes_.first().id)) path_rect = root->sceneBoundingRect();
  }
  path_rect.adjust(-40, -40, 40, 40);
  const double path_fit =
      std::min(port.width() / std::max(1.0, path_rect.width()), port.height() / std::max(1.0, path_rect.height()));
  if (path_fit >= 0.45) {
    const double s = std::min(path_fit, 1.0);
    view_->scale(s, s);
    view_->centerOn(path_rect.center());
    return;
  }
  // Not even the path fits. Unless the person chose the tree layout, the compact one (each step's
  // candidates ranked in a column) shows the chosen translation whole.
  if (!layout_chosen_ && !ranked()) {
    {
      const QSignalBlocker block(layout_);
      layout_->setCurrentIndex(1);
    }
    rebuildScene();
    initialView();
    return;
  }
  view_->scale(0.6, 0.6);
  BeamNodeItem* focus = best_path_.size() > 1 ? items_.value(best_path_[1]) : nullptr;
  if (!focus) focus = items_.value(nodes_.first().id);
  if (focus) view_->centerOn(focus);
}

double BeamTreeView::zoom() const { return view_->transform().m11(); }

void BeamTreeView::fitToView() {
  if (items_.isEmpty()) return;
  view_->fitInView(scene_->sceneRect(), Qt::KeepAspectRatio);
  // A small tree is not blown up beyond what reading needs; a little slack keeps rounding from
  // bringing the scroll bars back.
  const double s = view_->transform().m11();
  const double target = std::min(1.5, s * 0.98);
  view_->scale(target / s, target / s);
}

void BeamTreeView::resetZoom() {
  view_->setTransformationAnchor(QGraphicsView::AnchorViewCenter);
  view_->resetTransform();
}

}  // namespace ts::ui
