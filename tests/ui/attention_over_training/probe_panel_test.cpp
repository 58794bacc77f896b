// SPDX-License-Identifier: GPL-3.0-or-later
// ProbePanel: validations carrying the probe's cross-attention become frames ordered by step; the
// slider walks through them and the heatmap shows each frame's own tokens and weights (per head and
// averaged); the alignment chart has one point per frame and a marker at the frame shown; play
// advances; the sentence box edits train.probe and follows it; the dev-sentence button picks a
// medium-length sentence of the dev split; frames come back from the run store and export as JSON.
#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QTest>

#include <qcustomplot.h>

#include "widgets/attention_heatmap.h"
#include "widgets/bidi_delegate.h"
#include "attention_over_training/probe_panel.h"
#include "shell/studio_state.h"
#include "services/training_controller.h"
#include "ts/store/run_store.h"
#include "ts/text/split.h"
#include "ui_test_utils.h"

using namespace ts::ui;
using ts::ui::test::wait_until;

namespace {

constexpr int kLayers = 2, kHeads = 3;

const QStringList kSource = {QStringLiteral("▁I"), QStringLiteral("▁see"), QStringLiteral("▁a"), QStringLiteral("▁cat"),
                             QStringLiteral("</s>")};

// The weight the synthetic probe of `step` gives to (layer, head, row, column): rows sum to 1, and
// later steps are sharper (more weight on the diagonal).
double weight(qint64 step, int layer, int head, int row, int column, int columns) {
  double raw[16] = {};
  double sum = 0;
  for (int c = 0; c < columns; ++c) {
    raw[c] = (c == (row + head) % columns ? 1.0 + step / 100.0 : 1.0) + 0.1 * layer + 0.01 * c;
    sum += raw[c];
  }
  return raw[column] / sum;
}

// The target tokens of step `step`: the translation grows as training goes on.
QStringList targets(qint64 step) {
  QStringList all = {QStringLiteral("▁Ich"), QStringLiteral("▁sehe"), QStringLiteral("▁eine"),
                     QStringLiteral("▁Katze")};
  const int n = std::clamp(static_cast<int>(step / 100), 1, 4);
  QStringList out = all.mid(0, n);
  out << QStringLiteral("</s>");
  return out;
}

nlohmann::json probe(qint64 step) {
  const QStringList tgt = targets(step);
  auto cross = nlohmann::json::array();
  for (int l = 0; l < kLayers; ++l) {
    auto layer = nlohmann::json::array();
    for (int h = 0; h < kHeads; ++h) {
      auto head = nlohmann::json::array();
      for (int r = 0; r < tgt.size(); ++r) {
        auto row = nlohmann::json::array();
        for (int c = 0; c < kSource.size(); ++c)
          row.push_back(weight(step, l, h, r, c, static_cast<int>(kSource.size())));
        head.push_back(row);
      }
      layer.push_back(head);
    }
    cross.push_back(layer);
  }
  std::vector<std::string> src, dst;
  for (const auto& s : kSource) src.push_back(s.toStdString());
  for (const auto& s : tgt) dst.push_back(s.toStdString());
  QStringList words;
  for (const auto& t : tgt.mid(0, tgt.size() - 1)) words << t.mid(1);
  return {{"source", "I see a cat"},
          {"text", words.join(QLatin1Char(' ')).toStdString()},
          {"source_tokens", src},
          {"target_tokens", dst},
          {"cross", cross}};
}

ts::ValidationResult validation(qint64 step, bool with_probe = true) {
  ts::ValidationResult v;
  v.step = step;
  v.bleu = 1.0 * step;
  if (with_probe) v.probe = probe(step);
  return v;
}

// The [target][source] matrix the panel should show for (layer, head), head -1 = mean of heads.
QVector<QVector<double>> expected(qint64 step, int layer, int head) {
  const int rows = static_cast<int>(targets(step).size()), cols = static_cast<int>(kSource.size());
  QVector<QVector<double>> m(rows, QVector<double>(cols, 0));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      if (head >= 0) {
        m[r][c] = weight(step, layer, head, r, c, cols);
      } else {
        for (int h = 0; h < kHeads; ++h) m[r][c] += weight(step, layer, h, r, c, cols) / kHeads;
      }
    }
  return m;
}

double mean_row_max(const QVector<QVector<double>>& m) {
  double total = 0;
  for (const auto& row : m) total += *std::max_element(row.begin(), row.end());
  return total / m.size();
}

struct Fixture {
  StudioState state;
  TrainingController controller;
  ProbePanel panel{&state, &controller};

  Fixture() {
    panel.resize(900, 700);
    panel.show();
  }
  template <class T>
  T* find(const char* name) {
    return test::find_child<T>(&panel, name);
  }
  AttentionHeatmap* heatmap() { return find<AttentionHeatmap>("probeHeatmap"); }
  /// Checks that the heatmap shows step `step` for (layer, head) (4-decimal rounding allowed).
  bool shows(qint64 step, int layer, int head, QString* why) {
    const auto fail = [why](const QString& reason) {
      *why = reason;
      return false;
    };
    const auto m = expected(step, layer, head);
    const QStringList tgt = targets(step);
    if (heatmap()->rowLabels() != tgt) return fail(QStringLiteral("rows %1").arg(heatmap()->rowLabels().join(' ')));
    if (heatmap()->columnLabels() != kSource) return fail(QStringLiteral("columns"));
    if (heatmap()->cellCount() != tgt.size() * kSource.size()) return fail(QStringLiteral("cells"));
    for (int r = 0; r < m.size(); ++r)
      for (int c = 0; c < m[r].size(); ++c)
        if (std::abs(heatmap()->value(r, c) - m[r][c]) > 1e-5)
          return fail(QStringLiteral("cell %1,%2: %3 vs %4").arg(r).arg(c).arg(heatmap()->value(r, c)).arg(m[r][c]));
    return true;
  }
};

// A fixture corpus whose English sentences have 3 to 15 words.
QString write_length_corpus(const QTemporaryDir& dir) {
  const QString path = QDir(dir.path()).filePath(QStringLiteral("deu.txt"));
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return {};
  const QStringList words = {QStringLiteral("the"),  QStringLiteral("old"),   QStringLiteral("man"),
                             QStringLiteral("sees"), QStringLiteral("a"),     QStringLiteral("small"),
                             QStringLiteral("red"),  QStringLiteral("cat"),   QStringLiteral("near"),
                             QStringLiteral("the"),  QStringLiteral("green"), QStringLiteral("house"),
                             QStringLiteral("by"),   QStringLiteral("the"),   QStringLiteral("river")};
  for (int i = 0; i < 60; ++i) {
    const int n = 3 + i % 13;
    QStringList en = words.mid(0, n);
    en << QString::number(i);  // every sentence distinct
    file.write(QStringLiteral("%1.\tSatz Nummer %2.\n").arg(en.join(QLatin1Char(' '))).arg(i).toUtf8());
  }
  return path;
}

}  // namespace

class ProbePanelTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { QCoreApplication::setOrganizationName(QStringLiteral("TransformerStudioTests")); }

  void startsEmptyWithAnExplanation() {
    Fixture f;
    auto* empty = f.find<QLabel>("probeEmpty");
    QVERIFY(empty->isVisible());
    QCOMPARE(empty->text(),
             QStringLiteral("Set a probe sentence and train: its attention is captured at every validation."));
    QCOMPARE(f.panel.currentFrame(), -1);
    QVERIFY(!f.find<QPushButton>("probeExport")->isEnabled());
  }

  void framesFollowTheSliderInStepOrder() {
    Fixture f;
    QSignalSpy changed(&f.panel, &ProbePanel::framesChanged);
    // Out of order, through the controller's signal as training delivers them.
    Q_EMIT f.controller.validated(validation(300));
    Q_EMIT f.controller.validated(validation(100));
    f.panel.addValidation(validation(200));
    f.panel.addValidation(validation(400));
    QCOMPARE(f.panel.frames().size(), 4);
    QCOMPARE(changed.count(), 4);
    QList<qint64> steps;
    for (const auto& frame : f.panel.frames()) steps << frame.step;
    QCOMPARE(steps, (QList<qint64>{100, 200, 300, 400}));
    auto* slider = f.find<QSlider>("probeSlider");
    QVERIFY(slider->isVisible());
    QCOMPARE(slider->minimum(), 0);
    QCOMPARE(slider->maximum() + 1, 4);
    QVERIFY(!f.find<QLabel>("probeEmpty")->isVisible());

    // Combos: one entry per layer, "Average of heads" then one per head; the last layer by default.
    auto* layer = f.find<QComboBox>("probeLayer");
    auto* head = f.find<QComboBox>("probeHead");
    QCOMPARE(layer->count(), kLayers);
    QCOMPARE(head->count(), kHeads + 1);
    QCOMPARE(head->itemText(0), QStringLiteral("Average of heads"));
    QCOMPARE(f.panel.layer(), kLayers - 1);
    QCOMPARE(f.panel.head(), -1);

    QString why;
    for (int i : {0, 2, 1, 3}) {
      slider->setValue(i);
      const qint64 step = f.panel.frames()[i].step;
      QVERIFY2(f.shows(step, kLayers - 1, -1, &why), qPrintable(QStringLiteral("step %1: %2").arg(step).arg(why)));
      auto* label = f.find<QLabel>("probeStep");
      QVERIFY2(label->text().startsWith(QStringLiteral("step %1 — ").arg(step)), qPrintable(label->text()));
      QVERIFY(label->text().endsWith(ts::ui::isolated(QString::fromStdString(probe(step)["text"].get<std::string>()))));
      QCOMPARE(f.panel.markerStep(), double(step));
    }
    // The tokens change with the step: step 100 translates one word, step 400 four.
    slider->setValue(0);
    QCOMPARE(f.heatmap()->rowCount(), 2);
    slider->setValue(3);
    QCOMPARE(f.heatmap()->rowCount(), 5);

    // A single head and another layer.
    head->setCurrentIndex(2);
    QCOMPARE(f.panel.head(), 1);
    QVERIFY2(f.shows(400, kLayers - 1, 1, &why), qPrintable(why));
    layer->setCurrentIndex(0);
    QVERIFY2(f.shows(400, 0, 1, &why), qPrintable(why));
    slider->setValue(1);
    QVERIFY2(f.shows(200, 0, 1, &why), qPrintable(why));
  }

  void alignmentChartHasOnePointPerFrame() {
    Fixture f;
    for (qint64 s : {100, 200, 300, 400, 500}) f.panel.addValidation(validation(s));
    auto* chart = f.find<QCustomPlot>("probeAlignmentChart");
    QCOMPARE(chart->graphCount(), 2);
    QCOMPARE(chart->graph(0)->dataCount(), 5);
    QCOMPARE(chart->graph(1)->dataCount(), 5);
    int i = 0;
    double previous_sharpness = 0, previous_entropy = 2;
    for (auto it = chart->graph(0)->data()->constBegin(); it != chart->graph(0)->data()->constEnd(); ++it, ++i) {
      const qint64 step = 100 * (i + 1);
      QCOMPARE(it->key, double(step));
      QVERIFY(std::abs(it->value - mean_row_max(expected(step, kLayers - 1, -1))) < 1e-4);
      QVERIFY(it->value > previous_sharpness);  // the synthetic frames sharpen with the step
      previous_sharpness = it->value;
    }
    for (auto it = chart->graph(1)->data()->constBegin(); it != chart->graph(1)->data()->constEnd(); ++it) {
      QVERIFY(it->value > 0 && it->value <= 1);
      QVERIFY(it->value < previous_entropy);
      previous_entropy = it->value;
    }
    // Following the newest frame: the marker sits on the last step.
    QCOMPARE(f.panel.currentFrame(), 4);
    QCOMPARE(f.panel.markerStep(), 500.0);
    f.find<QSlider>("probeSlider")->setValue(1);
    QCOMPARE(f.panel.markerStep(), 200.0);
    // Not following any more: a new frame does not move the view.
    f.panel.addValidation(validation(600));
    QCOMPARE(f.panel.currentFrame(), 1);
    QCOMPARE(chart->graph(0)->dataCount(), 6);
  }

  void headAverageIsTheMeanOfHeads() {
    ProbePanel::Frame frame;
    QVERIFY(ProbePanel::parseFrame(probe(300), 300, &frame));
    QCOMPARE(frame.layers, kLayers);
    QCOMPARE(frame.heads, kHeads);
    QCOMPARE(frame.rows, 4);
    QCOMPARE(frame.columns, 5);
    const auto avg = ProbePanel::matrix(frame, 1, -1);
    for (int r = 0; r < frame.rows; ++r) {
      double row_sum = 0;
      for (int c = 0; c < frame.columns; ++c) {
        double mean = 0;
        for (int h = 0; h < kHeads; ++h) mean += ProbePanel::matrix(frame, 1, h)[r][c] / kHeads;
        QVERIFY(std::abs(avg[r][c] - mean) < 1e-9);
        row_sum += avg[r][c];
      }
      QVERIFY(std::abs(row_sum - 1) < 1e-5);
    }
    // Entropy: 0 for one-hot rows, 1 for uniform ones.
    QCOMPARE(ProbePanel::normalizedEntropy({{0, 1, 0}, {1, 0, 0}}), 0.0);
    QVERIFY(std::abs(ProbePanel::normalizedEntropy({{0.25, 0.25, 0.25, 0.25}}) - 1) < 1e-12);
    QCOMPARE(ProbePanel::sharpness({{0.2, 0.8}, {0.6, 0.4}}), 0.7);
  }

  void playAdvancesThroughTheFrames() {
    Fixture f;
    for (qint64 s : {100, 200, 300}) f.panel.addValidation(validation(s));
    auto* play = f.find<QPushButton>("probePlay");
    QVERIFY(play->isEnabled());
    QCOMPARE(f.panel.currentFrame(), 2);
    QSignalSpy moved(&f.panel, &ProbePanel::currentFrameChanged);
    play->click();  // at the end: starts again from the first frame
    QVERIFY(f.panel.isPlaying());
    QCOMPARE(f.panel.currentFrame(), 0);
    QCOMPARE(play->text(), QStringLiteral("Pause"));
    QString why;
    QVERIFY(wait_until([&] { return f.panel.currentFrame() == 1; }, 3000));
    QVERIFY2(f.shows(200, kLayers - 1, -1, &why), qPrintable(why));
    QVERIFY(wait_until([&] { return f.panel.currentFrame() == 2; }, 3000));
    QVERIFY(wait_until([&] { return !f.panel.isPlaying(); }, 3000));  // stops at the last frame
    QCOMPARE(play->text(), QStringLiteral("Play"));
    QVERIFY(moved.count() >= 3);
    // Pause in the middle.
    play->click();
    QVERIFY(wait_until([&] { return f.panel.currentFrame() == 1; }, 3000));
    play->click();
    QVERIFY(!f.panel.isPlaying());
    QTest::qWait(900);
    QCOMPARE(f.panel.currentFrame(), 1);
  }

  void framesWithoutProbeAreIgnoredAndANewRunClears() {
    Fixture f;
    f.panel.addValidation(validation(100));
    f.panel.addValidation(validation(200, /*with_probe=*/false));
    auto v = validation(300);
    v.probe.erase("cross");
    f.panel.addValidation(v);
    auto empty = validation(400);
    empty.probe["cross"] = nlohmann::json::array();
    f.panel.addValidation(empty);
    auto text = validation(500);
    text.probe = "not an object";
    f.panel.addValidation(text);
    QCOMPARE(f.panel.frames().size(), 1);
    QCOMPARE(f.find<QSlider>("probeSlider")->maximum(), 0);
    // The same step again (a resumed run) replaces its frame.
    f.panel.addValidation(validation(100));
    QCOMPARE(f.panel.frames().size(), 1);

    Q_EMIT f.controller.started(ts::TrainingStart{});
    QCOMPARE(f.panel.frames().size(), 0);
    QVERIFY(f.find<QLabel>("probeEmpty")->isVisible());
    QCOMPARE(f.heatmap()->cellCount(), 0);
    QCOMPARE(f.find<QCustomPlot>("probeAlignmentChart")->graph(0)->dataCount(), 0);
  }

  void sentenceBoxEditsTheConfiguration() {
    Fixture f;
    auto* edit = f.find<QLineEdit>("probeSentence");
    QCOMPARE(edit->text(), QString::fromStdString(f.state.config().train.probe));
    edit->setFocus();
    edit->clear();
    QTest::keyClicks(edit, QStringLiteral("The dog sleeps."));
    QTest::keyClick(edit, Qt::Key_Return);
    QCOMPARE(QString::fromStdString(f.state.config().train.probe), QStringLiteral("The dog sleeps."));
    // Non-ASCII text (QTest cannot type it: inserted as an input method would).
    edit->clear();
    edit->insert(QStringLiteral("我很高兴见到你。"));
    QTest::keyClick(edit, Qt::Key_Return);
    QCOMPARE(QString::fromStdString(f.state.config().train.probe), QStringLiteral("我很高兴见到你。"));
    // A sentence that reads as JSON stays a string.
    edit->clear();
    QTest::keyClicks(edit, QStringLiteral("42"));
    QTest::keyClick(edit, Qt::Key_Return);
    QCOMPARE(QString::fromStdString(f.state.config().train.probe), QStringLiteral("42"));
    // Changed elsewhere: the box shows the value in force.
    edit->clearFocus();
    QVERIFY(f.state.applySetting(QStringLiteral("train.probe=\"Tom is here.\"")));
    QCOMPARE(edit->text(), QStringLiteral("Tom is here."));
    QVERIFY(f.find<QLabel>("probeStatus")->text().contains(QStringLiteral("validation")));
    QVERIFY(f.state.applySetting(QStringLiteral("train.probe=\"\"")));
    QCOMPARE(edit->text(), QString());
    QVERIFY(f.find<QLabel>("probeStatus")->text().contains(QStringLiteral("No probe sentence")));
  }

  void pickButtonChoosesAMediumDevSentence() {
    QTemporaryDir dir;
    const QString path = write_length_corpus(dir);
    Fixture f;
    QSignalSpy loaded(&f.state, &StudioState::corpusChanged);
    f.state.loadCorpus(path);
    QVERIFY(ts::ui::test::wait_for_signal(loaded));
    QVERIFY(!f.state.direction().english_is_source);  // a corpus file opens into English
    f.state.setEnglishIsSource(true);
    // The demo preset holds out 300 pairs: fractions fit this 60-pair corpus.
    QVERIFY(f.state.applySetting(QStringLiteral("data.dev=0.1")));
    QVERIFY(f.state.applySetting(QStringLiteral("data.test=0.1")));
    auto* pick = f.find<QPushButton>("probePick");
    auto* edit = f.find<QLineEdit>("probeSentence");
    edit->clear();
    pick->click();
    QVERIFY(wait_until([&] { return !edit->text().isEmpty() && pick->isEnabled(); }));
    const QString chosen = edit->text();
    const int words = static_cast<int>(chosen.split(QLatin1Char(' '), Qt::SkipEmptyParts).size());
    QVERIFY2(words >= 6 && words <= 12, qPrintable(chosen));
    QCOMPARE(QString::fromStdString(f.state.config().train.probe), chosen);
    // It is a source sentence of the dev split the trainer will hold out.
    const auto& data = f.state.config().data;
    const auto split = ts::split_pairs(ts::oriented_pairs(*f.state.corpus(), f.state.direction()),
                                       ts::SplitConfig{data.dev, data.test, data.split_seed});
    bool in_dev = false;
    for (const auto& p : split.dev) in_dev = in_dev || QString::fromStdString(p.src) == chosen;
    QVERIFY2(in_dev, qPrintable(chosen));
    // Deterministic: the same sentence again.
    edit->clear();
    pick->click();
    QVERIFY(wait_until([&] { return !edit->text().isEmpty() && pick->isEnabled(); }));
    QCOMPARE(edit->text(), chosen);
    QCOMPARE(ProbePanel::pickProbeSentence(*f.state.corpus(), f.state.direction(), data), chosen);
    // German as the source: a German sentence.
    f.state.setEnglishIsSource(false);
    edit->clear();
    pick->click();
    QVERIFY(wait_until([&] { return !edit->text().isEmpty() && pick->isEnabled(); }));
    QVERIFY2(edit->text().startsWith(QStringLiteral("Satz Nummer")), qPrintable(edit->text()));
  }

  // The status line and the step line quote the probe and its translation each in its own direction:
  // an Arabic sentence inside the English line keeps its final full stop at its own end.
  void anArabicProbeIsQuotedInItsOwnDirection() {
    Fixture f;
    auto v = validation(100);
    const QString arabic = QString::fromUtf8("إن قطرة واحدة.");
    v.probe["source"] = arabic.toStdString();
    v.probe["text"] = arabic.toStdString();
    f.panel.addValidation(v);
    QCOMPARE(f.panel.frames().size(), 1);
    Q_EMIT f.controller.stateChanged(TrainingController::State::Idle);  // the run that recorded it ended
    const QString status = f.find<QLabel>("probeStatus")->text();
    QVERIFY2(status.contains(QStringLiteral("\u201C") + ts::ui::isolated(arabic) + QStringLiteral("\u201D")),
             qPrintable(status));
    const QString step = f.find<QLabel>("probeStep")->text();
    QVERIFY2(step.endsWith(ts::ui::isolated(arabic)), qPrintable(step));
    QVERIFY(f.find<QLabel>("probeStep")->toolTip().endsWith(ts::ui::isolated(arabic)));
  }

  void loadsARunFromTheStore() {
    QTemporaryDir dir;
    const QString db = QDir(dir.path()).filePath(QStringLiteral("runs.db"));
    qint64 run = 0;
    {
      ts::RunStore store(db.toStdString());
      ts::NewRun r;
      r.name = "probe run";
      r.direction = "en-de";
      run = store.create_run(r);
      ts::StoreBatch batch;
      for (qint64 s : {500, 100, 300}) batch.probes.push_back({run, s, probe(s)});
      store.write(batch);
      store.finish_run(run, ts::RunStatus::kFinished, "done", 500);
    }
    Fixture f;
    f.panel.addValidation(validation(700));  // replaced by the run's frames
    QSignalSpy loaded(&f.panel, &ProbePanel::runLoaded);
    f.panel.loadRun(db, run);
    QVERIFY(ts::ui::test::wait_for_signal(loaded));
    QCOMPARE(loaded.first().at(0).toLongLong(), run);
    QCOMPARE(loaded.first().at(1).toInt(), 3);
    QList<qint64> steps;
    for (const auto& frame : f.panel.frames()) steps << frame.step;
    QCOMPARE(steps, (QList<qint64>{100, 300, 500}));
    QCOMPARE(f.find<QSlider>("probeSlider")->maximum(), 2);
    f.find<QSlider>("probeSlider")->setValue(1);
    QString why;
    QVERIFY2(f.shows(300, kLayers - 1, -1, &why), qPrintable(why));
    // The status line says whose frames these are, not what the next run would capture.
    const QString status = f.find<QLabel>("probeStatus")->text();
    QVERIFY2(status.contains(QStringLiteral("run %1").arg(run)) && status.contains(QStringLiteral("100 to 500")),
             qPrintable(status));

    // A run without probes says so.
    QSignalSpy again(&f.panel, &ProbePanel::runLoaded);
    {
      ts::RunStore store(db.toStdString());
      ts::NewRun r;
      r.name = "no probe";
      run = store.create_run(r);
    }
    f.panel.loadRun(db, run);
    QVERIFY(ts::ui::test::wait_for_signal(again));
    QCOMPARE(f.panel.frames().size(), 0);
    QVERIFY(f.find<QLabel>("probeEmpty")->text().contains(QStringLiteral("no probe frames")));

    // A file that is not a database: an error, not a crash.
    const QString bad = QDir(dir.path()).filePath(QStringLiteral("bad.db"));
    QFile file(bad);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("this is not a database at all, just text that fills a page");
    file.close();
    QSignalSpy failed(&f.panel, &ProbePanel::loadFailed);
    f.panel.loadRun(bad, 1);
    QVERIFY(ts::ui::test::wait_for_signal(failed));
    QVERIFY(f.find<QLabel>("probeEmpty")->text().contains(QStringLiteral("could not be read")));
    // A missing file is reported, not created.
    const QString missing = QDir(dir.path()).filePath(QStringLiteral("missing.db"));
    f.panel.loadRun(missing, 1);
    QVERIFY(ts::ui::test::wait_for_signal(failed));
    QVERIFY(failed.last().at(0).toString().contains(QStringLiteral("missing.db")));
    QVERIFY(!QFile::exists(missing));
  }

  void exportsEveryFrameAsJson() {
    QTemporaryDir dir;
    Fixture f;
    for (qint64 s : {100, 200}) f.panel.addValidation(validation(s));
    QVERIFY(f.find<QPushButton>("probeExport")->isEnabled());
    const QString path = QDir(dir.path()).filePath(QStringLiteral("frames.json"));
    QString error;
    QVERIFY2(f.panel.exportFrames(path, &error), qPrintable(error));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto j = nlohmann::json::parse(file.readAll().toStdString());
    QCOMPARE(int(j["frames"].size()), 2);
    QCOMPARE(j["frames"][1]["step"].get<qint64>(), qint64(200));
    QVERIFY(j["frames"][0]["cross"] == probe(100)["cross"]);
    QVERIFY(j["frames"][0]["target_tokens"] == probe(100)["target_tokens"]);
    QVERIFY(!f.panel.exportFrames(QDir(dir.path()).filePath(QStringLiteral("missing/dir/frames.json")), &error));
    QVERIFY(error.contains(QStringLiteral("frames.json")));
  }
};

QTEST_MAIN(ProbePanelTest)
#include "probe_panel_test.moc"
