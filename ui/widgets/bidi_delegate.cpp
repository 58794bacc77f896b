// SPDX-License-Identifier: GPL-3.0-or-later
// Right-to-left text in item views (see bidi_delegate.h).
#include "widgets/bidi_delegate.h"

namespace ts::ui {

QString isolated(const QString& text) { return QChar(0x2068) + text + QChar(0x2069); }

QString left_to_right(const QString& line) { return QChar(0x200E) + line; }

Qt::LayoutDirection text_direction(const QString& text) {
  return text.isRightToLeft() ? Qt::RightToLeft : Qt::LeftToRight;
}

void BidiItemDelegate::initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const {
  QStyledItemDelegate::initStyleOption(option, index);
  if (!(option->features & QStyleOptionViewItem::HasDisplay)) return;
  // The style lays the text out in option->direction and mirrors a (non-absolute) left alignment
  // there, so the cell's own direction is all it takes.
  option->direction = text_direction(option->text);
  option->displayAlignment &= ~Qt::AlignAbsolute;
}

}  // namespace ts::ui
