// SPDX-License-Identifier: GPL-3.0-or-later
// Painting the beam search tree: the style taken from the palette, a candidate's box, and the
// Ctrl+wheel zoom of the view.
#include "beam_search/beam_scene_items.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <QFontMetricsF>
#include <QPainter>
#include <QPalette>
#include <QStyleOptionGraphicsItem>
#include <QWheelEvent>
#include <QWidget>

#include "widgets/plot_style.h"

namespace ts::ui {

namespace {

constexpr double kMinZoom = 0.002, kMaxZoom = 4.0;

}  // namespace

void BeamStyle::takeFrom(const QWidget& widget) {
  const QPalette pal = widget.palette();
  base = pal.color(QPalette::Base);
  text = pal.color(QPalette::Text);
  dim_text = text;  // PlaceholderText is not always readable in custom dark palettes
  dim_text.setAlpha(170);
  border = pal.color(QPalette::Text);
  border.setAlpha(150);
  accent = pal.color(QPalette::Highlight);
  finished = series_color(2);
  font = widget.font();
  small = widget.font();
  small.setPointSizeF(font.pointSizeF() * 0.85);
  const QFontMetricsF fm(font);
  line_h = std::ceil(fm.height()) + 1;
  pad = 4;
  box_w = std::max(100.0, std::ceil(fm.horizontalAdvance(QLatin1Char('M')) * 8));
  column = box_w + 44;
}

BeamNodeItem::BeamNodeItem(const BeamStyle* style, qint64 id, QStringList lines, bool best, bool finished, bool faded)
    : style_(style), id_(id), lines_(std::move(lines)), best_(best), finished_(finished), faded_(faded) {
  rect_ = QRectF(0, 0, style->box_w, height(*style, faded_ ? 1 : static_cast<int>(lines_.size())));
  rect_.moveCenter(QPointF(0, 0));
  setFlag(ItemIsSelectable);
  if (faded_) setOpacity(0.45);
  setZValue(best_ ? 2 : 1);
}

void BeamNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
  const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
  QColor fill = style_->base;
  if (isSelected()) {
    const QColor a = style_->accent;
    fill = QColor::fromRgbF(0.7 * fill.redF() + 0.3 * a.redF(), 0.7 * fill.greenF() + 0.3 * a.greenF(),
                            0.7 * fill.blueF() + 0.3 * a.blueF());
  }
  QPen pen(best_ ? style_->accent : style_->border, best_ ? 2.5 : 1.0);
  if (faded_) pen.setStyle(Qt::DashLine);
  if (isSelected()) pen = QPen(style_->accent, 3.0);
  pen.setCosmetic(true);
  painter->setPen(pen);
  painter->setBrush(fill);
  if (lod < 0.2) {  // an overview: plain boxes, no text (far cheaper for thousands of nodes)
    painter->drawRect(rect_);
    return;
  }
  painter->drawRoundedRect(rect_, 4, 4);
  if (finished_) {
    // A stripe on the right edge marks a finished hypothesis (ended with </s> or the length limit).
    painter->setPen(Qt::NoPen);
    painter->setBrush(style_->finished);
    painter->drawRect(QRectF(rect_.right() - 5, rect_.top() + 2, 3, rect_.height() - 4));
  }
  const double pad = style_->pad, right = finished_ ? 4 : 0;
  if (faded_ && lines_.size() >= 2) {
    const QRectF line(rect_.left() + pad, rect_.top() + pad, rect_.width() - 2 * pad, style_->line_h);
    painter->setPen(style_->text);
    painter->setFont(style_->font);
    painter->drawText(line, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextSingleLine, lines_[0]);
    painter->setPen(style_->dim_text);
    painter->setFont(style_->small);
    painter->drawText(line, Qt::AlignRight | Qt::AlignVCenter | Qt::TextSingleLine, lines_[1]);
    return;
  }
  for (int i = 0; i < lines_.size(); ++i) {
    painter->setFont(i == 0 ? style_->font : style_->small);
    painter->setPen(i == 0 ? style_->text : style_->dim_text);
    const QRectF line(rect_.left() + pad, rect_.top() + pad + i * style_->line_h, rect_.width() - 2 * pad - right,
                      style_->line_h);
    painter->drawText(line, Qt::AlignCenter | Qt::TextSingleLine, lines_[i]);
  }
}

void BeamGraphicsView::zoomBy(double factor) {
  const double current = transform().m11();
  const double target = std::clamp(current * factor, kMinZoom, kMaxZoom);
  if (std::abs(target - current) < 1e-9) return;
  scale(target / current, target / current);
}

void BeamGraphicsView::wheelEvent(QWheelEvent* event) {
  if (event->modifiers() & Qt::ControlModifier) {
    setTransformationAnchor(AnchorUnderMouse);
    zoomBy(std::pow(1.0015, event->angleDelta().y()));
    event->accept();
    return;
  }
  QGraphicsView::wheelEvent(event);
}

}  // namespace ts::ui
