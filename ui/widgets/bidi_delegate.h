// SPDX-License-Identifier: GPL-3.0-or-later
// Right-to-left text in item views: each cell laid out in the direction of its own text (Arabic
// right-aligned, with its final "!" at the left end as Arabic shows it), whatever the application's
// layout direction. Item views lay every cell out in the widget's direction unless told otherwise.
// And lines that put sentences of both directions side by side ("source → translation").
#pragma once

#include <QStyledItemDelegate>

namespace ts::ui {

/// The paragraph direction a text asks for: right-to-left when its first strong character is
/// (Arabic, Hebrew, Syriac, Thaana, N'Ko), else left-to-right; the Unicode bidi rule P2/P3.
Qt::LayoutDirection text_direction(const QString& text);

/// `text` between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE (U+2068, U+2069): laid out in its own
/// direction inside a line of another, its punctuation kept with it. "أين الكتاب؟ → Where's the book?"
/// otherwise reads as one right-to-left paragraph, and the English question mark lands at its left.
QString isolated(const QString& text);
/// `line` after a LEFT-TO-RIGHT MARK (U+200E): a line of isolated sentences laid out left to right,
/// whatever the first of them is. A selectable label (laid out by a QTextDocument) takes its
/// paragraph's direction from the first strong character even inside an isolate.
QString left_to_right(const QString& line);

/// A plain-text delegate that gives each cell its text's direction and aligns it to that
/// direction's leading edge. Set it on a table or list that shows sentences.
class BidiItemDelegate : public QStyledItemDelegate {
  Q_OBJECT
 public:
  using QStyledItemDelegate::QStyledItemDelegate;

 protected:
  void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override;
};

}  // namespace ts::ui
