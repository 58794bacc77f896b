// SPDX-License-Identifier: GPL-3.0-or-later
// The launch options that the desktop app and the screenshot tool share: values checked and refused
// by option name, the window opened at the size asked, a corpus opened in the direction asked (for
// this start only), a preset and settings applied, Qt's own -reverse kept away from Qt.
#include <QApplication>
#include <QCommandLineParser>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "services/training_controller.h"
#include "shell/launch_options.h"
#include "shell/main_window.h"
#include "shell/studio_state.h"
#include "ts/text/corpus.h"
#include "ts/train/auto_fit.h"
#include "ui_test_utils.h"

using namespace ts::ui;

namespace {

// Parses `args` (the program name first) with the launch options; `apply`s them to `window`.
struct Launch {
  QCommandLineParser parser;
  LaunchOptions options{parser, QStringLiteral("test")};
  bool parsed = false;
  explicit Launch(const QStringList& args) { parsed = parser.parse(args); }
};

}  // namespace

class LaunchOptionsTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void aWindowSizeIsWidthByHeight() {
    QCOMPARE(parse_window_size(QStringLiteral("1280x800")), QSize(1280, 800));
    QVERIFY(!parse_window_size(QStringLiteral("1280")).isValid());
    QVERIFY(!parse_window_size(QStringLiteral("1280x")).isValid());
    QVERIFY(!parse_window_size(QStringLiteral("wide x tall")).isValid());
    QVERIFY(!parse_window_size(QStringLiteral("100x100")).isValid());  // below 320 x 240
  }

  void reverseIsTakenAwayFromQt() {
    char prog[] = "transformer-studio", rev[] = "-reverse", corpus[] = "deu.txt", other[] = "--reverse";
    char* argv[] = {prog, rev, corpus, other};
    const auto start = take_reverse_flag(4, argv);
    QVERIFY(start.into_english);
    QCOMPARE(start.argc, 2);
    QCOMPARE(QString::fromLatin1(start.args[0]), QStringLiteral("transformer-studio"));
    QCOMPARE(QString::fromLatin1(start.args[1]), QStringLiteral("deu.txt"));
    QVERIFY(start.args[2] == nullptr);
    char* plain[] = {prog, corpus};
    QVERIFY(!take_reverse_flag(2, plain).into_english);
  }

  void aRefusedValueNamesItsOption_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("named");
    QTest::newRow("set") << QStringList{QStringLiteral("--set"), QStringLiteral("model.d_model=banana")}
                         << QStringLiteral("--set model.d_model=banana");
    QTest::newRow("preset") << QStringList{QStringLiteral("--preset"), QStringLiteral("no-such-preset")}
                            << QStringLiteral("--preset");
    QTest::newRow("window size") << QStringList{QStringLiteral("--window-size"), QStringLiteral("10x10")}
                                 << QStringLiteral("--window-size 10x10");
    QTest::newRow("replay") << QStringList{QStringLiteral("--replay-probe"), QStringLiteral("first")}
                            << QStringLiteral("--replay-probe first");
    QTest::newRow("compare") << QStringList{QStringLiteral("--compare"), QStringLiteral("/no/such/model.ckpt")}
                             << QStringLiteral("--compare /no/such/model.ckpt");
  }
  void aRefusedValueNamesItsOption() {
    QFETCH(QStringList, args);
    QFETCH(QString, named);
    QTemporaryDir dir;
    Launch launch(QStringList{QStringLiteral("transformer-studio")} + args);
    QVERIFY(launch.parsed);
    MainWindow window(dir.filePath(QStringLiteral("runs.db")));
    QString error;
    QVERIFY(!launch.options.apply(window, false, &error));
    QVERIFY2(error.startsWith(named), qPrintable(error));
  }

  void theWindowOpensAtTheSizeAsked() {
    QTemporaryDir dir;
    Launch launch({QStringLiteral("transformer-studio"), QStringLiteral("--db"), dir.filePath(QStringLiteral("r.db")),
                   QStringLiteral("--window-size"), QStringLiteral("1280x800")});
    QVERIFY(launch.parsed);
    QCOMPARE(launch.options.database(), dir.filePath(QStringLiteral("r.db")));
    MainWindow window(launch.options.database());
    QString error;
    QVERIFY2(launch.options.apply(window, false, &error), qPrintable(error));
    QVERIFY(window.isVisible());
    QVERIFY(test::wait_until([&] { return window.size() == QSize(1280, 800); }));
  }

  void aCorpusOpensInTheDirectionAskedWithTheSettingsKept() {
    QTemporaryDir dir;
    const QString corpus = test::write_fixture_corpus(dir, 40);
    Launch launch({QStringLiteral("transformer-studio"), QStringLiteral("--from-english"), QStringLiteral("--set"),
                   QStringLiteral("train.max_steps=7"), corpus});
    QVERIFY(launch.parsed);
    MainWindow window(dir.filePath(QStringLiteral("runs.db")));
    QSignalSpy changed(window.state(), &StudioState::corpusChanged);
    QString error;
    QVERIFY2(launch.options.apply(window, false, &error), qPrintable(error));
    QVERIFY(test::wait_for_signal(changed));
    QCOMPARE(window.state()->corpusPath(), corpus);
    QVERIFY(window.state()->direction().english_is_source);  // deu.txt alone opens into English
    QCOMPARE(window.state()->config().train.max_steps, 7);   // applied again over the auto recipe
    // For this start only: the file's remembered direction is untouched.
    QVERIFY(!StudioState::rememberedEnglishIsSource(corpus));
  }

  // --train with a corpus starts once the `auto` recipe is fitted to it and to the settings given:
  // the run fits and times the machine for the configuration shown (a run started at once fitted the
  // preset as it stood before, fp32 precision included), and the recipe box then says what it measured.
  void trainAtLaunchStartsOnceTheRecipeIsFitted() {
    QTemporaryDir dir;
    const QString corpus = test::write_fixture_corpus(dir, 200);
    Launch launch({QStringLiteral("transformer-studio"), QStringLiteral("--train"), QStringLiteral("--set"),
                   QStringLiteral("train.threads=1"), QStringLiteral("--set"),
                   QStringLiteral("train.budget_minutes=20"), corpus});
    QVERIFY(launch.parsed);
    MainWindow window(dir.filePath(QStringLiteral("runs.db")));
    auto* controller = window.controller();
    QSignalSpy fitted(controller, &TrainingController::recipeFitted);
    QSignalSpy started(controller, &TrainingController::started);
    QString error;
    QVERIFY2(launch.options.apply(window, false, &error), qPrintable(error));
    QVERIFY(test::wait_until([&] { return started.count() > 0; }, 60000));
    QCOMPARE(fitted.count(), 1);
    const auto fit = fitted.at(0).at(0).value<std::shared_ptr<const ts::AutoFit>>();
    QVERIFY(fit && fit->measured);
    QCOMPARE(fit->config.train.precision, ts::Precision::kAuto);
    const auto& state = *window.state();
    QCOMPARE(QString::fromStdString(fit->key),
             QString::fromStdString(ts::auto_fit_key(*state.corpus(), state.direction(), state.config())));
    auto* reasons = window.findChild<QLabel*>(QStringLiteral("recipeReasons"));
    QVERIFY(reasons);
    QVERIFY2(reasons->text().contains(QStringLiteral("measured here")), qPrintable(reasons->text()));
    controller->stop();
    QVERIFY(test::wait_until([&] { return !controller->isRunning(); }, 60000));
  }

  void reverseOnTheCommandLineTranslatesIntoEnglish() {
    QTemporaryDir dir;
    Launch launch({QStringLiteral("transformer-studio")});  // the demo corpus goes from English
    QVERIFY(launch.parsed);
    MainWindow window(dir.filePath(QStringLiteral("runs.db")));
    QVERIFY(window.state()->direction().english_is_source);
    QString error;
    QVERIFY2(launch.options.apply(window, /*into_english=*/true, &error), qPrintable(error));
    QVERIFY(!window.state()->direction().english_is_source);
  }
};

QTEST_MAIN(LaunchOptionsTest)

#include "launch_options_test.moc"
