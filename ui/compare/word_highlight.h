// SPDX-License-Identifier: GPL-3.0-or-later
// Where two translations of one sentence differ, word by word: the words of one output that the
// other lacks, as HTML with those words marked (the Compare panel's sentence table draws it), and
// an item delegate that paints such HTML in a table cell.
#pragma once

#include <QColor>
#include <QString>
#include <QStringList>
#include <QStyledItemDelegate>

#include "widgets/bidi_delegate.h"

namespace ts::ui {

/// The words of `text`: runs of letters and digits, single Chinese or Japanese characters, and
/// single marks of punctuation, in order.
QStringList word_tokens(const QString& text);

/// `text` as HTML, escaped, with each word that does not occur in `other` (compared case-folded)
/// in bold and `color`. The words marked are added to `marked` when given.
QString highlight_words(const QString& text, const QString& other, const QColor& color, QStringList* marked = nullptr);

/// Paints the item's `html_role` as rich text when it holds any (plain text otherwise), on one line
/// clipped to the cell, with the selection's colours when the row is selected; either way in the
/// direction of the cell's own text (right-to-left and right-aligned for Arabic).
class HtmlItemDelegate : public BidiItemDelegate {
  Q_OBJECT
 public:
  HtmlItemDelegate(int html_role, QObject* parent = nullptr);
  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

 private:
  int html_role_;
};

}  // namespace ts::ui
