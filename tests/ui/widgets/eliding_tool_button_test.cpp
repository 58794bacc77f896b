// SPDX-License-Identifier: GPL-3.0-or-later
// The Configuration panel's section headers: the summary is cut to the width the button gets (the
// whole text in the tooltip), and shown whole again once there is room.
#include <QTest>

#include "widgets/eliding_tool_button.h"

using namespace ts::ui;

class ElidingToolButtonTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void cutsToItsWidthAndShowsTheWholeTextWhenItFits() {
    const QString full = QStringLiteral("Training   \u2014   AdamW \u00b7 linear lr 0.0015 \u00b7 1,000-token batches");
    ElidingToolButton button;
    button.setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    button.setArrowType(Qt::DownArrow);
    button.setBaseToolTip(QStringLiteral("Show or hide the Training settings"));
    button.setFullText(full);
    // It asks for little: a layout may give it less than the whole text needs.
    QVERIFY(button.minimumSizeHint().width() < button.fontMetrics().horizontalAdvance(full));

    button.resize(160, 30);
    button.show();
    QVERIFY(QTest::qWaitForWindowExposed(&button));
    QVERIFY2(button.text().endsWith(QChar(0x2026)) && button.text().size() < full.size(), qPrintable(button.text()));
    QVERIFY(full.startsWith(button.text().chopped(1)));
    QVERIFY(button.toolTip().contains(full));
    QVERIFY(button.toolTip().startsWith(QStringLiteral("Show or hide the Training settings")));
    QCOMPARE(button.fullText(), full);

    button.resize(button.fontMetrics().horizontalAdvance(full) + 100, 30);
    QCOMPARE(button.text(), full);
    QCOMPARE(button.toolTip(), QStringLiteral("Show or hide the Training settings"));
  }
};

QTEST_MAIN(ElidingToolButtonTest)
#include "eliding_tool_button_test.moc"
