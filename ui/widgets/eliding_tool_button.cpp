// SPDX-License-Identifier: GPL-3.0-or-later
// A tool button that cuts its text to its width (see eliding_tool_button.h).
#include "widgets/eliding_tool_button.h"

#include <algorithm>

#include <QFontMetrics>

namespace ts::ui {

namespace {
constexpr int kMinimumTextWidth = 80;  // at least a title and a little of the summary
}

ElidingToolButton::ElidingToolButton(QWidget* parent) : QToolButton(parent) {}

void ElidingToolButton::setFullText(const QString& text) {
  full_text_ = text;
  elide();
}

void ElidingToolButton::setBaseToolTip(const QString& tip) {
  base_tip_ = tip;
  elide();
}

QSize ElidingToolButton::minimumSizeHint() const {
  QSize size = QToolButton::minimumSizeHint();
  const int icon = toolButtonStyle() == Qt::ToolButtonTextOnly ? 0 : iconSize().width() + 8;
  size.setWidth(icon + kMinimumTextWidth);
  return size;
}

void ElidingToolButton::resizeEvent(QResizeEvent* event) {
  QToolButton::resizeEvent(event);
  elide();
}

void ElidingToolButton::elide() {
  // The room the text has: the button's width less what the whole text's size hint adds to it
  // (icon, spacing, margins).
  const QFontMetrics metrics(font());
  const int extra = (toolButtonStyle() == Qt::ToolButtonTextOnly ? 0 : iconSize().width() + 4) + 16;
  const int room = std::max(0, width() - extra);
  const QString shown =
      metrics.horizontalAdvance(full_text_) <= room ? full_text_ : metrics.elidedText(full_text_, Qt::ElideRight, room);
  if (text() != shown) setText(shown);
  const QString tip =
      shown == full_text_ || base_tip_.isEmpty() ? base_tip_ : base_tip_ + QLatin1Char('\n') + full_text_;
  if (toolTip() != tip) setToolTip(tip);
}

}  // namespace ts::ui
