// SPDX-License-Identifier: GPL-3.0-or-later
// Right-to-left text in item views: each cell in its own text's direction, aligned to its leading edge.
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QStandardItemModel>
#include <QTableView>
#include <QGlyphRun>
#include <QTextLayout>
#include <QTest>

#include "ui_test_utils.h"
#include "widgets/bidi_delegate.h"

using namespace ts::ui;

namespace {

// The delegate's option for an index, as the view would paint it.
struct OpenDelegate : BidiItemDelegate {
  QStyleOptionViewItem option_for(const QModelIndex& index) const {
    QStyleOptionViewItem option;
    initStyleOption(&option, index);
    return option;
  }
};

// Where, from the left, the character at `index` of a one-line left-to-right `text` is drawn (-1: not drawn).
qreal drawn_at(const QString& text, int index) {
  QTextLayout layout(text, QFont(QStringLiteral("DejaVu Sans"), 12));
  QTextOption option;
  option.setTextDirection(Qt::LeftToRight);
  layout.setTextOption(option);
  layout.beginLayout();
  QTextLine line = layout.createLine();
  line.setLineWidth(10000);
  layout.endLayout();
  // The middle of the glyphs the character is drawn with.
  const auto runs = layout.glyphRuns(index, 1);
  if (runs.isEmpty()) return -1;
  return runs.front().boundingRect().center().x();
}

}  // namespace

class BidiDelegateTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // The paragraph direction comes from the first strong character, as the Unicode bidi rules say.
  void theDirectionIsTheTextsOwn() {
    QCOMPARE(text_direction(QString::fromUtf8("اركض!")), Qt::RightToLeft);
    QCOMPARE(text_direction(QString::fromUtf8("٣ قطط")), Qt::RightToLeft);   // digits are weak
    QCOMPARE(text_direction(QString::fromUtf8("«שלום»")), Qt::RightToLeft);  // Hebrew, in quotes
    QCOMPARE(text_direction(QStringLiteral("Run!")), Qt::LeftToRight);
    QCOMPARE(text_direction(QString::fromUtf8("Tom قال")), Qt::LeftToRight);  // starts Latin
    QCOMPARE(text_direction(QString()), Qt::LeftToRight);
  }

  // A line holding both an Arabic and an English sentence, each isolated: the line reads left to right
  // (source, arrow, translation) and each side keeps its own direction and punctuation.
  void isolatedSidesLeaveTheLineLeftToRight() {
    const QString arabic = QString::fromUtf8("أين الكتاب؟"), english = QStringLiteral("Where's the book?");
    QCOMPARE(text_direction(arabic + QStringLiteral("  →  ") + english), Qt::RightToLeft);  // the bug
    const QString line = isolated(arabic) + QStringLiteral("  →  ") + isolated(english);
    QCOMPARE(text_direction(line), Qt::LeftToRight);
    QCOMPARE(line.front(), QChar(0x2068));            // FIRST STRONG ISOLATE
    QVERIFY(line.contains(english + QChar(0x2069)));  // POP DIRECTIONAL ISOLATE after the question mark
    // Laid out by a label above another line (as the Attention panel shows it), the line starts at the
    // left: the Arabic source there, the English after it.
    QLabel label(left_to_right(line) + QStringLiteral("\n4 source tokens"));
    label.setTextFormat(Qt::PlainText);
    label.setTextInteractionFlags(Qt::TextSelectableByMouse);  // a QTextDocument lays it out then
    label.setFont(QFont(QStringLiteral("DejaVu Sans"), 12));
    label.adjustSize();
    label.resize(label.width() + 200, label.height());  // room to the right: left-aligned or not shows
    QImage image(label.size(), QImage::Format_RGB32);
    image.fill(Qt::white);
    label.render(&image);
    const QRect band(0, 0, image.width(), image.height() / 2);  // the first line
    QVERIFY2(ts::ui::test::ink_centre(image, band) < image.width() / 2.0, "the line is not at the left");
  }

  // An Arabic sentence quoted in an English message: its final full stop stands at its left end, where
  // Arabic ends, not after its first word at the right, where the message's direction would put it.
  void aQuotedArabicSentenceKeepsItsFullStopAtItsEnd() {
    const QString arabic = QString::fromUtf8("إن قطرة واحدة.");
    const auto ends = [&](const QString& quoted) {
      const QString message = QStringLiteral("The last run recorded \u201C%1\u201D, a sentence.").arg(quoted);
      const int start = message.indexOf(QChar(0x0625));  // the first letter, drawn at the right end
      const int stop = message.indexOf(QLatin1Char('.'));
      return drawn_at(message, stop) < drawn_at(message, start);
    };
    QVERIFY2(!ends(arabic), "without an isolate the full stop should follow the first word (the bug)");
    QVERIFY(ends(isolated(arabic)));
  }

  void anArabicCellIsLaidOutRightToLeftAndAnEnglishOneLeftToRight() {
    QStandardItemModel model(2, 1);
    model.setItem(0, 0, new QStandardItem(QString::fromUtf8("اركض!")));
    model.setItem(1, 0, new QStandardItem(QStringLiteral("Run!")));
    OpenDelegate delegate;
    const auto arabic = delegate.option_for(model.index(0, 0));
    const auto english = delegate.option_for(model.index(1, 0));
    QCOMPARE(arabic.direction, Qt::RightToLeft);
    QCOMPARE(english.direction, Qt::LeftToRight);
    // The style mirrors a leading alignment in a right-to-left option: the Arabic cell is right-aligned.
    QVERIFY(QStyle::visualAlignment(arabic.direction, arabic.displayAlignment) & Qt::AlignRight);
    QVERIFY(QStyle::visualAlignment(english.direction, english.displayAlignment) & Qt::AlignLeft);
  }

  // Painted: the Arabic row's ink sits in the right half of a wide cell, the English row's in the left.
  void aTableShowsArabicAgainstTheRightEdge() {
    QStandardItemModel model(2, 1);
    model.setItem(0, 0, new QStandardItem(QString::fromUtf8("اركض!")));
    model.setItem(1, 0, new QStandardItem(QStringLiteral("Run!")));
    QTableView view;
    view.setModel(&model);
    view.setItemDelegate(new BidiItemDelegate(&view));
    view.horizontalHeader()->hide();
    view.verticalHeader()->hide();
    view.setShowGrid(false);
    view.resize(400, 120);
    view.setColumnWidth(0, 380);
    QPalette palette = view.palette();
    palette.setColor(QPalette::Base, Qt::white);
    palette.setColor(QPalette::Text, Qt::black);
    view.setPalette(palette);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QImage image = view.viewport()->grab().toImage();
    const QRect arabic = view.visualRect(model.index(0, 0));
    const QRect english = view.visualRect(model.index(1, 0));
    const double middle = arabic.center().x();
    const double arabic_ink = ts::ui::test::ink_centre(image, arabic.adjusted(1, 1, -1, -1));
    const double english_ink = ts::ui::test::ink_centre(image, english.adjusted(1, 1, -1, -1));
    QVERIFY2(arabic_ink > middle,
             qPrintable(QStringLiteral("Arabic ink at %1, cell middle %2").arg(arabic_ink).arg(middle)));
    QVERIFY2(english_ink >= 0 && english_ink < middle,
             qPrintable(QStringLiteral("English ink at %1, cell middle %2").arg(english_ink).arg(middle)));
  }
};

QTEST_MAIN(BidiDelegateTest)
#include "bidi_delegate_test.moc"
