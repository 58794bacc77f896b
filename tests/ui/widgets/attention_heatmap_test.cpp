// SPDX-License-Identifier: GPL-3.0-or-later
// The attention heatmap with right-to-left tokens: an Arabic source runs from the right of the
// column axis, as it is read, and a cell under the mouse is still the cell of its token.
#include <QTest>

#include <qcustomplot.h>

#include "widgets/attention_heatmap.h"

using namespace ts::ui;

class AttentionHeatmapTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void anArabicSourceRunsFromTheRight() {
    AttentionHeatmap map;
    map.resize(600, 400);
    map.show();
    QVERIFY(QTest::qWaitForWindowExposed(&map));
    const QVector<QVector<double>> values{{0.7, 0.2, 0.1}, {0.1, 0.8, 0.1}};
    map.setMatrix({QStringLiteral("I"), QStringLiteral("run")},
                  {QStringLiteral("\u2581\u0623\u0646\u0627"), QStringLiteral("\u2581\u0623\u0631\u0643\u0636"),
                   QStringLiteral("</s>")},
                  values);
    QVERIFY(map.plot()->xAxis->rangeReversed());
    // The first source token's column is right of the second's, and the cell there is its own.
    const QPoint first = map.cellCenter(0, 0), second = map.cellCenter(0, 1);
    QVERIFY2(first.x() > second.x(), qPrintable(QStringLiteral("%1 vs %2").arg(first.x()).arg(second.x())));
    int row = -1, column = -1;
    QVERIFY(map.cellAt(first, &row, &column));
    QCOMPARE(row, 0);
    QCOMPARE(column, 0);

    // Left-to-right tokens (special tokens do not count) run from the left.
    map.setMatrix({QStringLiteral("Ich"), QStringLiteral("laufe")},
                  {QStringLiteral("<unk>"), QStringLiteral("\u2581I"), QStringLiteral("\u2581run")}, values);
    QVERIFY(!map.plot()->xAxis->rangeReversed());
    QVERIFY(map.cellCenter(0, 0).x() < map.cellCenter(0, 1).x());
  }
};

QTEST_MAIN(AttentionHeatmapTest)
#include "attention_heatmap_test.moc"
