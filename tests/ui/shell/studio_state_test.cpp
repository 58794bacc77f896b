// SPDX-License-Identifier: GPL-3.0-or-later
// StudioState: the demo corpus at start, asynchronous corpus loading with clear errors, direction
// and configuration changes with their signals, recent files.
#include <QSettings>
#include <QSignalSpy>
#include <QTest>

#include "shell/studio_state.h"
#include "ui_test_utils.h"

using namespace ts::ui;

class StudioStateTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { QCoreApplication::setOrganizationName(QStringLiteral("TransformerStudioTests")); }

  void startsWithTheDemoCorpusAndPreset() {
    StudioState state;
    QVERIFY(state.isDemo());
    QVERIFY(state.corpus()->pairs.size() > 100);
    QCOMPARE(QString::fromStdString(state.config().preset), QStringLiteral("demo"));
    QVERIFY(state.direction().english_is_source);
    QCOMPARE(QString::fromStdString(state.direction().src_code), QStringLiteral("en"));
  }

  void loadsACorpusOffTheGuiThreadAndRemembersIt() {
    QTemporaryDir dir;
    const QString path = test::write_fixture_corpus(dir, 30, 2);
    StudioState state;
    QSignalSpy loading(&state, &StudioState::corpusLoading);
    QSignalSpy changed(&state, &StudioState::corpusChanged);
    state.loadCorpus(path);
    QCOMPARE(loading.count(), 1);
    QVERIFY(state.isLoading());
    QVERIFY(ts::ui::test::wait_for_signal(changed));
    QVERIFY(!state.isLoading());
    QCOMPARE(state.corpusPath(), path);
    QCOMPARE(state.corpus()->pairs.size(), std::size_t(30));
    QCOMPARE(state.corpus()->stats.skipped, std::size_t(2));
    // A corpus file opens into English (German→English for a deu.txt), whatever the demo did.
    QCOMPARE(QString::fromStdString(state.direction().src_code), QStringLiteral("de"));
    QCOMPARE(QString::fromStdString(state.direction().tgt_code), QStringLiteral("en"));
    QCOMPARE(state.recentFiles().value(0), QFileInfo(path).absoluteFilePath());
  }

  void aFileOpensInTheDirectionLastChosenForIt() {
    QTemporaryDir dir;
    const QString chosen = test::write_fixture_corpus(dir, 30, 0);
    QTemporaryDir other_dir;
    const QString other = test::write_fixture_corpus(other_dir, 20, 0);
    {
      StudioState state;
      QSignalSpy changed(&state, &StudioState::corpusChanged);
      state.loadCorpus(chosen);
      QVERIFY(ts::ui::test::wait_for_signal(changed));
      QVERIFY(!state.direction().english_is_source);
      state.setEnglishIsSource(true);  // the person's choice, kept for this file
      QCOMPARE(QString::fromStdString(state.direction().src_code), QStringLiteral("en"));
      state.loadCorpus(other);  // another file: into English again
      QVERIFY(ts::ui::test::wait_for_signal(changed));
      QVERIFY(!state.direction().english_is_source);
      state.setEnglishIsSource(true, /*remember=*/false);  // a command-line flag: this start only
    }
    QVERIFY(StudioState::rememberedEnglishIsSource(chosen));
    QVERIFY(!StudioState::rememberedEnglishIsSource(other));
    StudioState next;  // the next start of the app
    QSignalSpy changed(&next, &StudioState::corpusChanged);
    next.loadCorpus(chosen);
    QVERIFY(ts::ui::test::wait_for_signal(changed));
    QVERIFY(next.direction().english_is_source);
    QCOMPARE(QString::fromStdString(next.direction().tgt_code), QStringLiteral("de"));
    QSettings().remove(QStringLiteral("corpusDirection"));
  }

  void aBadFileIsAClearErrorAndKeepsTheCorpus() {
    QTemporaryDir dir;
    const QString path = QDir(dir.path()).filePath(QStringLiteral("deu.txt"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray("PK\x03\x04 zipped", 10));
    f.close();
    StudioState state;
    QSignalSpy failed(&state, &StudioState::corpusFailed);
    state.loadCorpus(path);
    QVERIFY(ts::ui::test::wait_for_signal(failed));
    QCOMPARE(failed.at(0).at(0).toString(), path);
    QVERIFY2(failed.at(0).at(1).toString().contains(QStringLiteral("deu.txt")),
             qPrintable(failed.at(0).at(1).toString()));
    QVERIFY(state.isDemo());  // the previous corpus stays
  }

  void directionAndSettings() {
    StudioState state;
    QSignalSpy direction(&state, &StudioState::directionChanged);
    QSignalSpy config(&state, &StudioState::configChanged);
    state.setEnglishIsSource(false);
    QCOMPARE(direction.count(), 1);
    QCOMPARE(QString::fromStdString(state.direction().tgt_code), QStringLiteral("en"));
    QVERIFY(state.applySetting(QStringLiteral("model.d_model=64")));
    QCOMPARE(state.config().model.d_model, 64);
    QCOMPARE(config.count(), 1);
    QString error;
    QVERIFY(!state.applySetting(QStringLiteral("model.no_such_key=1"), &error));
    QVERIFY2(error.contains(QStringLiteral("no_such_key")), qPrintable(error));
    QCOMPARE(config.count(), 1);
    QVERIFY(state.applyPreset(QStringLiteral("tiny")));
    QCOMPARE(QString::fromStdString(state.config().preset), QStringLiteral("tiny"));
    QVERIFY(!state.applyPreset(QStringLiteral("no-such-preset"), &error));
    QVERIFY2(error.contains(QStringLiteral("annotated")), qPrintable(error));  // names the valid presets
    QCOMPARE(QString::fromStdString(state.config().preset), QStringLiteral("tiny"));
  }

  void formatsSizesAndDurations() {
    QCOMPARE(format_bytes(512), QStringLiteral("512 B"));
    QCOMPARE(format_bytes(1.5e6), QStringLiteral("1.50 MB"));
    QCOMPARE(format_duration(65), QStringLiteral("1 min 05 s"));
    QCOMPARE(format_duration(3720), QStringLiteral("1 h 02 min"));
    QCOMPARE(format_duration(-1), QStringLiteral("–"));
  }
};

QTEST_MAIN(StudioStateTest)
#include "studio_state_test.moc"
