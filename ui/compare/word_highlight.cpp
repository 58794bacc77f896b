// SPDX-License-Identifier: GPL-3.0-or-later
// Word-level differences between two outputs, and the delegate that paints them (see word_highlight.h).
#include "compare/word_highlight.h"

#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QPainter>
#include <QRegularExpression>
#include <QSet>
#include <QTextDocument>

namespace ts::ui {

namespace {

// A Chinese or Japanese character alone; else a run of letters, marks and digits (with inner
// apostrophes: "don't"); else one visible character.
const QRegularExpression& word_pattern() {
  static const QRegularExpression re(
      QStringLiteral("[\\p{Han}\\p{Hiragana}\\p{Katakana}]"
                     "|(?:(?![\\p{Han}\\p{Hiragana}\\p{Katakana}])[\\p{L}\\p{M}\\p{N}])+"
                     "(?:['\\x{2019}](?:(?![\\p{Han}\\p{Hiragana}\\p{Katakana}])[\\p{L}\\p{M}\\p{N}])+)*"
                     "|\\S"),
      QRegularExpression::UseUnicodePropertiesOption);
  return re;
}

}  // namespace

QStringList word_tokens(const QString& text) {
  QStringList out;
  auto it = word_pattern().globalMatch(text);
  while (it.hasNext()) out << it.next().captured(0);
  return out;
}

QString highlight_words(const QString& text, const QString& other, const QColor& color, QStringList* marked) {
  QSet<QString> present;
  for (const QString& w : word_tokens(other)) present.insert(w.toCaseFolded());
  QString html;
  qsizetype done = 0;
  auto it = word_pattern().globalMatch(text);
  while (it.hasNext()) {
    const auto m = it.next();
    html += text.mid(done, m.capturedStart() - done).toHtmlEscaped();
    const QString word = m.captured(0);
    if (present.contains(word.toCaseFolded())) {
      html += word.toHtmlEscaped();
    } else {
      html += QStringLiteral("<b style=\"color:%1\">%2</b>").arg(color.name(), word.toHtmlEscaped());
      if (marked) *marked << word;
    }
    done = m.capturedEnd();
  }
  html += text.mid(done).toHtmlEscaped();
  // Runs of spaces stay as they are in the text.
  return QStringLiteral("<span style=\"white-space:pre\">%1</span>").arg(html);
}

HtmlItemDelegate::HtmlItemDelegate(int html_role, QObject* parent) : BidiItemDelegate(parent), html_role_(html_role) {}

void HtmlItemDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const {
  const QString html = index.data(html_role_).toString();
  if (html.isEmpty()) {
    BidiItemDelegate::paint(painter, option, index);
    return;
  }
  QStyleOptionViewItem opt = option;
  initStyleOption(&opt, index);  // opt.direction: the cell's own text's
  const Qt::LayoutDirection direction = opt.direction;
  opt.text.clear();
  const QWidget* widget = opt.widget;
  QStyle* style = widget ? widget->style() : QApplication::style();
  style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);  // background, selection, focus

  QTextDocument doc;
  doc.setDocumentMargin(0);
  doc.setDefaultFont(opt.font);
  doc.setHtml(html);
  const QRect rect = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, widget).adjusted(2, 0, -2, 0);
  QAbstractTextDocumentLayout::PaintContext context;
  const auto group = (opt.state & QStyle::State_Enabled) ? QPalette::Normal : QPalette::Disabled;
  context.palette = opt.palette;
  context.palette.setColor(
      QPalette::Text,
      opt.palette.color(group, (opt.state & QStyle::State_Selected) ? QPalette::HighlightedText : QPalette::Text));
  if (direction == Qt::RightToLeft) {  // laid out right to left, against the cell's right edge
    QTextOption text_option = doc.defaultTextOption();
    text_option.setTextDirection(Qt::RightToLeft);
    text_option.setAlignment(Qt::AlignRight | Qt::AlignAbsolute);
    doc.setDefaultTextOption(text_option);
    doc.setHtml(html);  // the default option applies to blocks made after it is set
    doc.setTextWidth(rect.width());
  }
  const double top = rect.top() + (rect.height() - doc.size().height()) / 2.0;
  painter->save();
  painter->setClipRect(rect);
  painter->translate(rect.left(), top);
  context.clip = QRectF(0, 0, rect.width(), rect.height());
  doc.documentLayout()->draw(painter, context);
  painter->restore();
}

QSize HtmlItemDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
  QSize size = BidiItemDelegate::sizeHint(option, index);
  const QString html = index.data(html_role_).toString();
  if (html.isEmpty()) return size;
  QTextDocument doc;
  doc.setDocumentMargin(0);
  doc.setDefaultFont(option.font);
  doc.setHtml(html);
  size.setWidth(static_cast<int>(doc.idealWidth()) + 10);
  return size;
}

}  // namespace ts::ui
