// SPDX-License-Identifier: GPL-3.0-or-later
// The screenshot tour drives the main window from outside: one PNG per panel and tab, each a picture
// of the whole window, the views put back as they were afterwards, and a clear error (not a crash)
// when the folder cannot be written or the window goes away during the tour.
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include "attention/attention_panel.h"
#include "screenshots/screenshot_tour.h"
#include "shell/main_window.h"
#include "ui_test_utils.h"

using namespace ts::ui;

class ScreenshotTourTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void everyPanelIsSavedAsAPictureOfTheWindow() {
    QTemporaryDir dir;
    MainWindow window(dir.filePath(QStringLiteral("runs.db")));
    window.show();
    window.resize(1280, 800);
    const auto kind = window.attentionPanel()->kind();
    const QString shots = dir.filePath(QStringLiteral("shots/nested"));  // made by the tour
    ScreenshotTour tour(&window, shots);
    add_main_window_views(tour, window);
    QSignalSpy finished(&tour, &ScreenshotTour::finished);
    tour.start();
    QVERIFY(test::wait_for_signal(finished));
    QCOMPARE(finished.first().first().toString(), QString());
    const QStringList expected{QStringLiteral("dataset"),
                               QStringLiteral("configuration"),
                               QStringLiteral("training"),
                               QStringLiteral("translate"),
                               QStringLiteral("history"),
                               QStringLiteral("compare"),
                               QStringLiteral("attention"),
                               QStringLiteral("attention-over-training"),
                               QStringLiteral("beam-search"),
                               QStringLiteral("anatomy"),
                               QStringLiteral("attention-decoder-self")};
    for (const auto& name : expected) {
      const QString path = QDir(shots).filePath(name + QStringLiteral(".png"));
      QVERIFY2(tour.written().contains(path), qPrintable(name));
      const QImage image(path);
      QVERIFY2(!image.isNull(), qPrintable(path));
      QCOMPARE(image.size() / image.devicePixelRatio(), window.size());
    }
    QCOMPARE(tour.written().first(), QDir(shots).filePath(QStringLiteral("dataset.png")));
    // The anatomy's tabs each have a picture, named after the tab.
    int anatomy_tabs = 0;
    for (const auto& path : tour.written())
      if (QFileInfo(path).fileName().startsWith(QStringLiteral("anatomy-"))) ++anatomy_tabs;
    QVERIFY(anatomy_tabs >= 2);
    // The views are put back: the attention panel shows what it showed before.
    QCOMPARE(window.attentionPanel()->kind(), kind);
  }

  void aFolderThatCannotBeMadeIsNamed() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("a-file"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    MainWindow window(dir.filePath(QStringLiteral("runs.db")));
    window.show();
    ScreenshotTour tour(&window, file + QStringLiteral("/shots"));
    add_main_window_views(tour, window);
    QSignalSpy finished(&tour, &ScreenshotTour::finished);
    tour.start();
    QVERIFY(test::wait_for_signal(finished));
    const QString error = finished.first().first().toString();
    QVERIFY2(error.contains(file), qPrintable(error));
    QVERIFY(tour.written().isEmpty());
  }

  void aWindowClosedDuringTheTourEndsItWithAnError() {
    QTemporaryDir dir;
    auto window = std::make_unique<MainWindow>(dir.filePath(QStringLiteral("runs.db")));
    window->show();
    ScreenshotTour tour(window.get(), dir.filePath(QStringLiteral("shots")));
    tour.add(QStringLiteral("first"), [] {});
    tour.add(QStringLiteral("second"), [&window] { window.reset(); });
    QSignalSpy finished(&tour, &ScreenshotTour::finished);
    tour.start();
    QVERIFY(test::wait_for_signal(finished));
    QVERIFY(finished.first().first().toString().contains(QStringLiteral("closed")));
    QCOMPARE(tour.written().size(), 1);
  }
};

QTEST_MAIN(ScreenshotTourTest)
#include "screenshot_tour_test.moc"
