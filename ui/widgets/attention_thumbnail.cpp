// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/attention_thumbnail.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>

#include <qcustomplot.h>

#include "widgets/plot_style.h"

namespace ts::ui {

namespace {

// Viridis sampled once: colouring a 64×64 map is then a table lookup per pixel.
const std::array<QRgb, 256>& viridis_table() {
  static const std::array<QRgb, 256> table = [] {
    std::array<QRgb, 256> t{};
    QCPColorGradient g = viridis_gradient();
    for (int i = 0; i < 256; ++i) t[static_cast<std::size_t>(i)] = g.color(i / 255.0, QCPRange(0, 1));
    return t;
  }();
  return table;
}

constexpr int kPadding = 3;  // around the map, room for the selection frame

}  // namespace

QRgb attention_color(double weight) {
  const double w = std::isfinite(weight) ? std::clamp(weight, 0.0, 1.0) : 0.0;
  return viridis_table()[static_cast<std::size_t>(std::lround(w * 255))];
}

QImage attention_image(const AttentionMatrix& m, bool causal) {
  const int rows = static_cast<int>(m.size());
  const int columns = static_cast<int>(attention_columns(m));
  if (rows == 0 || columns == 0) return {};
  QImage image(columns, rows, QImage::Format_ARGB32);
  for (int r = 0; r < rows; ++r) {
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(r));
    const auto& row = m[static_cast<std::size_t>(r)];
    for (int c = 0; c < columns; ++c)
      line[c] = causal && c > r
                    ? qRgba(0, 0, 0, 0)
                    : attention_color(c < static_cast<int>(row.size()) ? row[static_cast<std::size_t>(c)] : 0.0);
  }
  return image;
}

AttentionThumbnail::AttentionThumbnail(int layer, int head, QWidget* parent)
    : QWidget(parent), layer_(layer), head_(head) {
  setObjectName(QStringLiteral("attentionThumb_%1_%2").arg(layer).arg(head));
  setCursor(Qt::PointingHandCursor);
  setFocusPolicy(Qt::StrongFocus);  // Enter/Space open it from the keyboard too
  setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
}

void AttentionThumbnail::setMatrix(const AttentionMatrix& m, bool causal) {
  image_ = attention_image(m, causal);
  update();
}

void AttentionThumbnail::setCaption(const QString& caption) {
  caption_ = caption;
  updateGeometry();
  update();
}

void AttentionThumbnail::setSelected(bool selected) {
  if (selected_ == selected) return;
  selected_ = selected;
  update();
}

void AttentionThumbnail::setSide(int side) {
  side_ = std::max(16, side);
  updateGeometry();
  update();
}

QFont AttentionThumbnail::captionFont() const {
  QFont f = font();
  f.setPointSizeF(f.pointSizeF() * 0.85);
  return f;
}

// "broad 89%" under a small map does not fit on one line: the name above the figure then.
QStringList AttentionThumbnail::captionLines() const {
  const QFontMetrics fm(captionFont());
  const int space = caption_.lastIndexOf(QLatin1Char(' '));
  if (fm.horizontalAdvance(caption_) <= side_ + 2 * kPadding || space < 0) return {caption_};
  return {caption_.left(space), caption_.mid(space + 1)};
}

QSize AttentionThumbnail::sizeHint() const {
  const int lines = static_cast<int>(captionLines().size());
  return QSize(side_ + 2 * kPadding, side_ + 2 * kPadding + lines * QFontMetrics(captionFont()).height() + 1);
}

QRect AttentionThumbnail::mapRect() const { return QRect(kPadding, kPadding, side_, side_); }

void AttentionThumbnail::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QRect map = mapRect();
  // Masked (transparent) cells show this: a flat mid-grey that is neither low nor high weight.
  QColor masked = palette().color(QPalette::Mid);
  masked.setAlpha(110);
  p.fillRect(map, masked);
  if (!image_.isNull()) p.drawImage(map, image_);  // no SmoothPixmapTransform: cells stay crisp
  if (selected_) {
    p.setPen(QPen(palette().color(QPalette::Highlight), 3));
    p.drawRect(map.adjusted(-1, -1, 1, 1));
  } else if (hasFocus()) {
    p.setPen(QPen(palette().color(QPalette::Highlight), 1, Qt::DashLine));
    p.drawRect(map.adjusted(-1, -1, 1, 1));
  }
  const QFont f = captionFont();
  const QFontMetrics fm(f);
  p.setFont(f);
  p.setPen(palette().color(QPalette::WindowText));
  int y = map.bottom() + kPadding;
  for (const QString& line : captionLines()) {
    p.drawText(QRect(0, y, width(), fm.height()), Qt::AlignHCenter | Qt::AlignTop,
               fm.elidedText(line, Qt::ElideRight, width()));
    y += fm.height();
  }
}

void AttentionThumbnail::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton && rect().contains(event->position().toPoint())) Q_EMIT clicked(layer_, head_);
  QWidget::mouseReleaseEvent(event);
}

void AttentionThumbnail::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter || event->key() == Qt::Key_Space) {
    Q_EMIT clicked(layer_, head_);
    return;
  }
  QWidget::keyPressEvent(event);
}

}  // namespace ts::ui
