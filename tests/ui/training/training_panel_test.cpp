// SPDX-License-Identifier: GPL-3.0-or-later
// TrainingPanel: "Train for" reaches the run's config, the budget left is shown, and `auto` runs train as fitted.
#include <exception>

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTest>

#include <qcustomplot.h>

#include "ts/train/auto_fit.h"
#include "shell/studio_state.h"
#include "services/training_controller.h"
#include "training/training_panel.h"
#include "ui_test_utils.h"

using namespace ts::ui;

namespace {

const QString kBudgetSetting = QStringLiteral("training/budgetMinutes");

// A panel over a fixture corpus, recording into a temporary history.
struct Fixture {
  QTemporaryDir dir;
  StudioState state;
  TrainingController controller;
  TrainingPanel panel{&state, &controller};
  QStringList log;

  Fixture() {
    state.setDatabasePath(QDir(dir.path()).filePath(QStringLiteral("runs.db")));
    controller.setDeliveryInterval(20);
    QObject::connect(&controller, &TrainingController::logLine, [this](const QString& line) { log << line; });
  }
  bool open(int pairs) {
    QSignalSpy loaded(&state, &StudioState::corpusChanged);
    state.loadCorpus(test::write_fixture_corpus(dir, pairs));
    return test::wait_for_signal(loaded);
  }
  // Starts a run with the panel's Start, reads the config.json it wrote into its directory (before
  // training began), then stops it. Returns an empty string, or what went wrong.
  QString runOnce(ts::ExperimentConfig& config) {
    QSignalSpy started(&controller, &TrainingController::started);
    QSignalSpy failed(&controller, &TrainingController::failed);
    panel.start();
    if (!test::wait_until([&] { return started.count() > 0 || failed.count() > 0; })) return QStringLiteral("no start");
    QString error;
    if (failed.count() > 0) {
      error = failed.at(0).at(0).toString();
    } else {
      try {
        const QString file = QDir(controller.outDir()).filePath(QStringLiteral("config.json"));
        config = ts::load_config_file(QFile::encodeName(file).toStdString());
      } catch (const std::exception& e) {
        error = QString::fromStdString(e.what());
      }
    }
    controller.stop();
    if (!test::wait_until([&] { return !controller.isRunning(); })) return QStringLiteral("did not stop");
    return error;
  }
};

}  // namespace

class TrainingPanelTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { QCoreApplication::setOrganizationName(QStringLiteral("TransformerStudioTests")); }
  void cleanup() { QSettings().remove(kBudgetSetting); }

  void trainForIs20MinutesAtFirstAndReachesTheRun() {
    QSettings().remove(kBudgetSetting);  // a first start
    Fixture f;
    auto* budget = test::find_child<QComboBox>(&f.panel, "trainBudget");
    auto* minutes = test::find_child<QDoubleSpinBox>(&f.panel, "trainBudgetMinutes");
    QVERIFY(budget && minutes);
    QCOMPARE(budget->currentText(), QStringLiteral("20 min"));
    QCOMPARE(f.panel.budgetMinutes(), 20.0);
    QCOMPARE(f.state.config().train.budget_minutes, 20.0);
    QVERIFY(minutes->isHidden());
    const QString tip = budget->toolTip();
    QVERIFY2(tip.contains(QStringLiteral("deadline")) && tip.contains(QStringLiteral("paused")), qPrintable(tip));
    for (const char* choice : {"1 min", "2 min", "3 min", "5 min", "10 min", "30 min", "1 h", "2 h", "until I stop it"})
      QVERIFY2(budget->findText(QString::fromUtf8(choice)) >= 0, choice);

    QVERIFY(f.open(40));
    QVERIFY(f.state.applyPreset(QStringLiteral("tiny")));
    QCOMPARE(f.state.config().train.budget_minutes, 20.0);  // a preset keeps "Train for"
    QVERIFY(f.state.applySetting(QStringLiteral("train.max_steps=100000")));
    ts::ExperimentConfig run;
    QString error = f.runOnce(run);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(run.train.budget_minutes, 20.0);

    // "until I stop it": no budget, the preset's own limits.
    budget->setCurrentIndex(budget->findData(0.0));
    QCOMPARE(budget->currentText(), QStringLiteral("until I stop it"));
    QCOMPARE(f.state.config().train.budget_minutes, 0.0);
    error = f.runOnce(run);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(run.train.budget_minutes, 0.0);
    QCOMPARE(run.train.max_steps, 100000);

    // A custom number of minutes, remembered for the next session.
    budget->setCurrentIndex(budget->findData(-1.0));
    QVERIFY(!minutes->isHidden());
    minutes->setValue(45);
    QCOMPARE(f.state.config().train.budget_minutes, 45.0);
    QCOMPARE(f.panel.budgetMinutes(), 45.0);
    QCOMPARE(StudioState().budgetMinutes(), 45.0);
    // A budget set elsewhere (a loaded file, the Configuration panel) shows in the control.
    QVERIFY(f.state.applySetting(QStringLiteral("train.budget_minutes=60")));
    QCOMPARE(budget->currentText(), QStringLiteral("1 h"));
    QVERIFY(minutes->isHidden());
    QVERIFY(f.state.applySetting(QStringLiteral("train.budget_minutes=7.5")));
    QCOMPARE(budget->currentData().toDouble(), -1.0);
    QCOMPARE(minutes->value(), 7.5);
    QVERIFY(!minutes->isHidden());
  }

  // The demo preset (what the app starts with) stops at 2 minutes whatever "Train for" says: the panel
  // says so beside the control, and only while that limit comes first.
  void aTimeLimitShorterThanTheBudgetIsShownBesideIt() {
    QSettings().remove(kBudgetSetting);
    Fixture f;
    auto* budget = test::find_child<QComboBox>(&f.panel, "trainBudget");
    auto* cap = test::find_child<QLabel>(&f.panel, "trainBudgetCap");
    QVERIFY(budget && cap);
    QCOMPARE(f.state.config().train.max_minutes, 2.0);
    QCOMPARE(budget->currentText(), QStringLiteral("20 min"));
    QVERIFY(!cap->isHidden());
    QCOMPARE(cap->text(), QStringLiteral("ends at 2 min (time limit)"));
    QVERIFY2(cap->toolTip().contains(QStringLiteral("train.max_minutes = 2")) &&
                 cap->toolTip().contains(QStringLiteral("deadline moves to 2 min")),
             qPrintable(cap->toolTip()));
    budget->setCurrentIndex(budget->findText(QStringLiteral("1 min")));  // the budget comes first
    QVERIFY(cap->isHidden());
    budget->setCurrentIndex(budget->findData(0.0));  // "until I stop it": the limit ends the run
    QVERIFY(!cap->isHidden());
    QVERIFY2(!cap->toolTip().contains(QStringLiteral("deadline")), qPrintable(cap->toolTip()));
    QVERIFY(f.state.applySetting(QStringLiteral("train.max_minutes=0")));  // no limit
    QVERIFY(cap->isHidden());
    QVERIFY(f.state.applySetting(QStringLiteral("train.max_minutes=90")));
    QVERIFY(!cap->isHidden());
    QCOMPARE(cap->text(), QStringLiteral("ends at 1 h 30 min (time limit)"));
    budget->setCurrentIndex(budget->findText(QStringLiteral("1 h")));
    QVERIFY(cap->isHidden());
  }

  // The panel alone (no Configuration panel): Start fits `auto` on the training thread, keeps the
  // fields the person changed, writes that config and logs the recipe's reasons.
  void anAutoRunTrainsAsFittedAndSaysWhy() {
    Fixture f;
    QVERIFY(f.open(200));
    QVERIFY(f.state.applySetting(QStringLiteral("train.budget_minutes=20")));
    QVERIFY(f.state.applyPreset(QStringLiteral("auto")));
    QVERIFY(is_plain_auto(f.state.config()));
    // Changes of one's own: a small word-level model with a short dev and test split.
    for (const char* setting : {"data.src_tokenizer.kind=word", "model.encoder_layers=1", "model.decoder_layers=1",
                                "data.dev=20", "data.test=20"})
      QVERIFY2(f.state.applySetting(QString::fromLatin1(setting)), setting);
    const ts::ExperimentConfig before = f.state.config();
    // The status says what the session does before the first step, phase by phase (the panel's
    // own slot runs first: it was connected first).
    auto* status = test::find_child<QLabel>(&f.panel, "trainStatus");
    QVERIFY(status);
    QList<int> phases;  // ts::SessionPhase
    QStringList shown;
    QObject::connect(&f.controller, &TrainingController::phaseChanged, [&](ts::SessionPhase phase) {
      phases << static_cast<int>(phase);
      shown << status->text();
    });
    ts::ExperimentConfig run;
    const QString error = f.runOnce(run);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    using P = ts::SessionPhase;
    const QList<int> expected_phases{static_cast<int>(P::kFittingRecipe), static_cast<int>(P::kPreparingData),
                                     static_cast<int>(P::kStartingHistory), static_cast<int>(P::kTraining)};
    QCOMPARE(phases, expected_phases);
    QVERIFY2(shown.at(0).contains(QStringLiteral("fitting the recipe")), qPrintable(shown.join(QLatin1Char('|'))));
    QVERIFY2(shown.at(1).startsWith(QStringLiteral("Preparing data")), qPrintable(shown.join(QLatin1Char('|'))));
    // The run was fitted to this machine's measured speed; the fit now finds that measurement.
    const ts::AutoFit fit = fit_auto(*f.state.corpus(), f.state.direction(), before);
    QVERIFY2(fit.ok(), fit.error.c_str());
    QVERIFY(fit.measured);
    QVERIFY(!fit.reasons.empty());
    ts::ExperimentConfig expected = refit_auto(before, fit.config);
    // No probe was typed: the run picked a dev sentence for Attention over training, and said so.
    QVERIFY(expected.train.probe.empty());
    QVERIFY(!run.train.probe.empty());
    QVERIFY2(
        !f.log.filter(QStringLiteral("probe sentence: \"%1\"").arg(QString::fromStdString(run.train.probe))).isEmpty(),
        qPrintable(f.log.join(QLatin1Char('\n'))));
    expected.train.probe = run.train.probe;
    QCOMPARE(expected.model.encoder_layers, 1);
    QVERIFY(expected.data.src_tokenizer.kind == ts::TokenizerKind::kWord);
    QCOMPARE(expected.train.ema, fit.config.train.ema);
    QCOMPARE(expected.train.budget_minutes, 20.0);
    QVERIFY2(run.to_json() == expected.to_json(),
             (run.to_json().dump() + "\nexpected " + expected.to_json().dump()).c_str());
    for (const auto& reason : fit.reasons)
      QVERIFY2(!f.log.filter(QString::fromStdString(reason)).isEmpty(), qPrintable(f.log.join(QLatin1Char('\n'))));
  }

  // The summary under the bar follows every validation, the final one included; a new run's
  // charts are scaled to its own steps, never the last run's (one point used to keep the old width).
  void theSummaryFollowsTheLastValidationAndANewRunResetsTheAxes() {
    Fixture f;
    QVERIFY(f.open(60));
    QVERIFY(f.state.applyPreset(QStringLiteral("tiny")));
    for (const char* setting :
         {"train.budget_minutes=0", "train.max_steps=40", "train.validate_every=15", "data.dev=8", "data.test=4"})
      QVERIFY2(f.state.applySetting(QString::fromLatin1(setting)), setting);
    auto* stats = test::find_child<QLabel>(&f.panel, "trainStats");
    auto* metric = test::find_child<QCustomPlot>(&f.panel, "metricChart");
    QVERIFY(stats && metric);
    QList<ts::ValidationResult> validations;
    QObject::connect(&f.controller, &TrainingController::validated,
                     [&](const ts::ValidationResult& v) { validations << v; });
    QSignalSpy finished(&f.controller, &TrainingController::finished);
    const auto run = [&] {
      validations.clear();
      const int before = finished.count();
      f.panel.start();
      return test::wait_until([&] { return finished.count() > before && !f.controller.isRunning(); });
    };
    QVERIFY(run());
    QVERIFY2(validations.size() >= 3, qPrintable(QString::number(validations.size())));
    const auto& last = validations.last();
    QCOMPARE(static_cast<int>(last.step), 40);
    const QString expected = QStringLiteral("dev loss %1 · BLEU %2, chrF %3")
                                 .arg(QString::number(last.loss, 'g', 4), QString::number(last.bleu, 'f', 2),
                                      QString::number(last.chrf, 'f', 2));
    QVERIFY2(stats->text().contains(expected), qPrintable(stats->text() + QStringLiteral("\nexpected ") + expected));
    QVERIFY(metric->xAxis->range().upper >= 40);

    QVERIFY(f.state.applySetting(QStringLiteral("train.max_steps=5")));  // one validation, at step 5
    QVERIFY(run());
    QCOMPARE(validations.size(), qsizetype(1));
    QCOMPARE(metric->xAxis->range().lower, 0.0);
    QVERIFY2(metric->xAxis->range().upper < 10, qPrintable(QString::number(metric->xAxis->range().upper)));
  }

  void legendsSitAboveTheChartsAndTheLearningRateSaysWhyItSteps() {
    StudioState state;
    TrainingController controller;
    TrainingPanel panel(&state, &controller);
    for (const char* name : {"lossChart", "metricChart"}) {
      auto* chart = test::find_child<QCustomPlot>(&panel, name);
      QVERIFY(chart);
      QVERIFY(chart->legend->visible());
      // In a row of the plot layout, not inset in the plot area where it covered the curves' ends.
      QCOMPARE(chart->axisRect()->insetLayout()->elementCount(), 0);
      QVERIFY(chart->legend->layout() == chart->plotLayout());
    }
    auto* lr = test::find_child<QCustomPlot>(&panel, "lrChart");
    QVERIFY(lr);
    QVERIFY2(lr->toolTip().contains(QStringLiteral("validation")), qPrintable(lr->toolTip()));
    QCPTextElement* note = nullptr;
    for (int i = 0; i < lr->plotLayout()->elementCount(); ++i)
      if (auto* t = qobject_cast<QCPTextElement*>(lr->plotLayout()->elementAt(i))) note = t;
    QVERIFY(note);
    QVERIFY2(note->text().contains(QStringLiteral("each validation")), qPrintable(note->text()));
  }

  void progressShowsTheBudgetLeftAndTheWeightsAsTrained() {
    StudioState state;
    TrainingController controller;
    TrainingPanel panel(&state, &controller);
    auto* bar = test::find_child<QProgressBar>(&panel, "trainProgress");
    auto* log = test::find_child<QPlainTextEdit>(&panel, "trainLog");
    QVERIFY(bar && log);
    ts::TrainingProgress p;
    p.step = 120;
    p.batch_in_epoch = 3;
    p.batches_per_epoch = 10;
    p.tokens_per_s = 1000;
    p.eta_s = 754;
    p.fraction = 0.25;
    p.budget_left_s = 754;
    Q_EMIT controller.progress({p});
    QVERIFY2(bar->format().contains(QStringLiteral("12 min 34 s left in the budget")), qPrintable(bar->format()));
    QVERIFY2(!bar->format().contains(QStringLiteral("ETA")), qPrintable(bar->format()));
    QCOMPARE(bar->value(), 250);  // the bar follows the budget
    // The text beside the bar, not drawn on it across the fill edge.
    QVERIFY(!bar->isTextVisible());
    auto* text = test::find_child<QLabel>(&panel, "trainProgressText");
    QVERIFY(text);
    QCOMPARE(text->text(), bar->format());
    p.budget_left_s = -1;  // no budget: the ETA as before
    Q_EMIT controller.progress({p});
    QVERIFY2(bar->format().contains(QStringLiteral("ETA 12 min 34 s")), qPrintable(bar->format()));
    QVERIFY(!bar->format().contains(QStringLiteral("budget")));

    ts::ValidationResult v;
    v.step = 120;
    v.bleu = 23.5;
    v.chrf = 51;
    v.bleu_as_trained = 22.25;
    v.chrf_as_trained = 50.5;
    Q_EMIT controller.validated(v);
    QVERIFY2(log->toPlainText().contains(QStringLiteral("BLEU 23.50")), qPrintable(log->toPlainText()));
    QVERIFY2(log->toPlainText().contains(QStringLiteral("(weights as trained: BLEU 22.25, chrF 50.50)")),
             qPrintable(log->toPlainText()));
    log->clear();
    v.bleu_as_trained = v.chrf_as_trained = -1;  // no weight averaging, or not the final validation
    Q_EMIT controller.validated(v);
    QVERIFY(!log->toPlainText().contains(QStringLiteral("as trained")));

    // Without dev pairs the checkpoints come with nothing measured: no point of 0 on the charts.
    auto* metric = test::find_child<QCustomPlot>(&panel, "metricChart");
    auto* loss = test::find_child<QCustomPlot>(&panel, "lossChart");
    QVERIFY(metric && loss);
    const int bleu_points = metric->graph(0)->dataCount(), dev_loss_points = loss->graph(2)->dataCount();
    QCOMPARE(bleu_points, 2);
    ts::ValidationResult unscored;
    unscored.step = 130;
    unscored.scored = false;
    log->clear();
    Q_EMIT controller.validated(unscored);
    QCOMPARE(metric->graph(0)->dataCount(), bleu_points);
    QCOMPARE(loss->graph(2)->dataCount(), dev_loss_points);
    QVERIFY2(log->toPlainText().contains(QStringLiteral("checkpoint at step 130: no dev pairs")),
             qPrintable(log->toPlainText()));
    QVERIFY(!log->toPlainText().contains(QStringLiteral("BLEU")));
  }
};

QTEST_MAIN(TrainingPanelTest)
#include "training_panel_test.moc"
