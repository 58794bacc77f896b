// SPDX-License-Identifier: GPL-3.0-or-later
// Threads and UI stress (issue 8): start, pause, resume and stop training from the UI 100 times,
// switching the translate panel's model while training, then close mid-training. Nothing may
// deadlock (every wait is bounded), crash or lose the run; each cycle ends in the idle state with a
// checkpoint. Run under the asan preset, LeakSanitizer checks for leaks (scripts/sanitize.sh).
#include <QAbstractButton>
#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

#include "shell/main_window.h"
#include "shell/studio_state.h"
#include "services/training_controller.h"
#include "training/training_panel.h"
#include "translate/translate_panel.h"
#include "services/translation_service.h"
#include "ts/store/run_store.h"
#include "ts/train/run_recorder.h"
#include "ui_test_utils.h"

using namespace ts::ui;

// Shows the window, opens `corpus` and sets the tiny preset with no step limit to speak of.
bool openForLongTraining(MainWindow& w, const QString& corpus) {
  w.show();
  QSignalSpy loaded(w.state(), &StudioState::corpusChanged);
  w.openCorpus(corpus);
  if (!test::wait_for_signal(loaded)) return false;
  w.state()->applyPreset(QStringLiteral("tiny"));
  return w.state()->applySetting(QStringLiteral("train.max_steps=100000"));
}

class TrainingStressTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void hundredStartPauseResumeStopCyclesWithModelSwitches() {
    QTemporaryDir dir;
    const QString corpus = test::write_fixture_corpus(dir, 40);
    const QString db = QDir(dir.path()).filePath(QStringLiteral("runs.db"));
    MainWindow w(db);
    QVERIFY(openForLongTraining(w, corpus));
    QVERIFY(w.state()->applySetting(QStringLiteral("train.validate_every=0")));
    auto* controller = w.controller();
    QSignalSpy progress(controller, &TrainingController::progress);
    QSignalSpy finished(controller, &TrainingController::finished);
    QSignalSpy model_changed(w.translation(), &TranslationService::modelChanged);
    QSignalSpy translated(w.translation(), &TranslationService::translated);
    QStringList checkpoints;
    const int cycles =
        qEnvironmentVariableIntValue("TS_STRESS_CYCLES") > 0 ? qEnvironmentVariableIntValue("TS_STRESS_CYCLES") : 100;
    for (int cycle = 0; cycle < cycles; ++cycle) {
      const int steps_before = progress.count();
      QCOMPARE(controller->state(), TrainingController::State::Idle);
      w.trainingPanel()->start();
      QVERIFY2(test::wait_until([&] { return progress.count() > steps_before; }, 30000),
               qPrintable(QString::number(cycle)));
      if (cycle % 2 == 0) {
        controller->pause();
        QCOMPARE(controller->state(), TrainingController::State::Paused);
        controller->resume();
        QCOMPARE(controller->state(), TrainingController::State::Training);
      }
      // Every tenth cycle: switch the translate panel to an earlier run's checkpoint while this one
      // trains, and translate with it.
      if (cycle % 10 == 5 && !checkpoints.isEmpty()) {
        const int changes = model_changed.count();
        w.translation()->loadCheckpoint(checkpoints.at(cycle % checkpoints.size()));
        QVERIFY(test::wait_until([&] { return model_changed.count() > changes; }, 20000));
        const int results = translated.count();
        w.translatePanel()->translateText(QStringLiteral("I see the dog."));
        QVERIFY(test::wait_until([&] { return translated.count() > results; }, 20000));
      }
      // Stop at a random moment: at once, or after a few more steps.
      if (cycle % 3 == 1) QTest::qWait(20);
      const int done = finished.count();
      controller->stop();
      QVERIFY2(test::wait_until([&] { return finished.count() > done && !controller->isRunning(); }, 20000),
               qPrintable(QStringLiteral("cycle %1 did not stop").arg(cycle)));
      QCOMPARE(controller->state(), TrainingController::State::Idle);
      const QString last = QDir(controller->outDir()).filePath(QStringLiteral("last.ckpt"));
      QVERIFY2(QFileInfo::exists(last), qPrintable(last));
      checkpoints << last;
    }
    QCOMPARE(finished.count(), cycles);
    // Every run is in the history, stopped, with its checkpoint.
    ts::RunStore store(db.toStdString());
    const auto runs = store.list_runs();
    QCOMPARE(static_cast<int>(runs.size()), cycles);
    for (const auto& r : runs) QCOMPARE(r.status, ts::RunStatus::kStopped);
    QCOMPARE(QString::fromStdString(store.integrity_check()), QStringLiteral("ok"));

    // Finally close the window mid-training (answering Yes): it stops, keeps the checkpoint, closes.
    w.trainingPanel()->start();
    const int steps = progress.count();
    QVERIFY(test::wait_until([&] { return progress.count() > steps; }, 30000));
    test::answer_next_message_box(QMessageBox::Yes);
    w.close();
    QVERIFY(test::wait_until([&] { return !w.isVisible() && !controller->isRunning(); }, 20000));
  }

  // The run history is locked by another process when the person stops training: the status bar
  // says that the app waits, every row and the final status arrive once the lock is released, and
  // the run's checkpoints are listed. The lock is taken once the run is recorded and released when
  // the status bar says it waits (events, not time).
  void aLockedHistoryAtTheEndIsWaitedForAndSaid() {
    QTemporaryDir dir;
    const QString corpus = test::write_fixture_corpus(dir, 40);
    const QString db = QDir(dir.path()).filePath(QStringLiteral("runs.db"));
    MainWindow w(db);
    QVERIFY(openForLongTraining(w, corpus));
    auto* controller = w.controller();
    QSignalSpy recorded(controller, &TrainingController::runRecorded);
    QSignalSpy progress(controller, &TrainingController::progress);
    QSignalSpy finished(controller, &TrainingController::finished);
    std::unique_ptr<ts::WriteLockHolder> blocker;
    QStringList shown, tooltips;
    auto* status = test::find_child<QLabel>(&w, "statusMessage");
    QVERIFY(status);
    connect(controller, &TrainingController::historyWaiting, this, [&](const QString&, const QString&, bool waiting) {
      shown << status->text();  // what the status bar says at that moment
      tooltips << status->toolTip();
      if (waiting) blocker.reset();
    });
    w.trainingPanel()->start();
    QVERIFY(test::wait_for_signal(recorded));
    const qint64 run = recorded.at(0).at(0).toLongLong();
    blocker = std::make_unique<ts::WriteLockHolder>(db.toStdString());  // another process writes
    const int before = progress.count();
    QVERIFY(test::wait_until([&] { return progress.count() > before; }));
    controller->stop();
    QVERIFY(test::wait_until([&] { return !controller->isRunning(); }));
    QCOMPARE(finished.count(), 1);
    QVERIFY(!blocker);
    QVERIFY2(shown.size() >= 2, qPrintable(shown.join(QStringLiteral(" | "))));
    QVERIFY2(
        shown.first().startsWith(QStringLiteral("Waiting for the run history to store the end of this run: another "
                                                "program holds it locked.")),
        qPrintable(shown.first()));
    QVERIFY2(tooltips.first().startsWith(QStringLiteral("run history: waiting up to 120 s for the run database")),
             qPrintable(tooltips.first()));  // the whole line, with the recovery file's path
    QVERIFY2(shown.last().startsWith(QStringLiteral("Run history: stored after waiting")), qPrintable(shown.last()));
    const auto summary = finished.at(0).at(0).value<ts::TrainingSummary>();
    ts::RunStore store(db.toStdString());
    const auto info = store.find_run(run);
    QVERIFY(info.has_value());
    QCOMPARE(info->status, ts::RunStatus::kStopped);
    QCOMPARE(info->steps, summary.steps);
    QCOMPARE(static_cast<std::int64_t>(store.metric(run, "train_loss").size()), summary.steps);
    QVERIFY(!store.checkpoints(run).empty());
  }
};

QTEST_MAIN(TrainingStressTest)
#include "training_stress_test.moc"
