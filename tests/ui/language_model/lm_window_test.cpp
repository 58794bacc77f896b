// SPDX-License-Identifier: GPL-3.0-or-later
// The language-model window, driven through its widgets: a text opened and summarised, bad files
// named, the form following presets and settings, a real (tiny) training run drawn next to the
// bigram baseline and recorded in the history, streamed and reproducible generation with its
// causal attention, the bigram model on the same chart, pause/generate-while-training/stop/resume,
// and closing mid-run.
#include <cmath>
#include <set>

#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QScreen>
#include <QTest>

#include "widgets/attention_heatmap.h"
#include "services/lm_service.h"
#include "language_model/lm_text_pane.h"
#include "language_model/lm_window.h"
#include "history/history_panel.h"
#include "shell/main_window.h"
#include "services/training_controller.h"
#include "services/translation_service.h"
#include "ts/store/run_store.h"
#include "ui_test_utils.h"

using namespace ts::ui;
using ts::ui::test::find_child;
using ts::ui::test::wait_until;

namespace {

// A deterministic text whose characters mostly follow "abcde \n" in order, so a tiny model learns
// something in a few dozen steps.
QString markov_text(int length) {
  const QString alphabet = QStringLiteral("abcde \n");
  QString text;
  quint64 state = 11;
  int prev = 0;
  for (int i = 0; i < length; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const int next =
        (state >> 33) % 100 < 60 ? (prev + 1) % alphabet.size() : static_cast<int>((state >> 40) % alphabet.size());
    text += alphabet[next];
    prev = next;
  }
  return text;
}

QString write_file(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
  f.write(bytes);
  return path;
}

// A model small enough to train in a second or two on one thread.
void make_tiny(LmWindow& w, int steps, int eval_interval) {
  for (const auto& s : {QStringLiteral("n_layer=1"), QStringLiteral("n_head=2"), QStringLiteral("n_embd=16"),
                        QStringLiteral("block_size=8"), QStringLiteral("batch_size=8"), QStringLiteral("eval_iters=2"),
                        QStringLiteral("threads=1"), QStringLiteral("device=cpu")})
    QVERIFY2(w.applySetting(s), qPrintable(s));
  QVERIFY(w.applySetting(QStringLiteral("max_steps=%1").arg(steps)));
  QVERIFY(w.applySetting(QStringLiteral("eval_interval=%1").arg(eval_interval)));
}

bool open_text(LmWindow& w, const QString& path) {
  QSignalSpy ready(&w, &LmWindow::textReady);
  w.openText(path);
  return ts::ui::test::wait_for_signal(ready);
}

}  // namespace

class LmWindowTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void opensATextAndShowsItsSizeAndVocabulary();
  void badFilesAreNamedAndTheOpenTextStays();
  void formFollowsPresetsAndSettings();
  void trainsNextToTheBaselineThenGeneratesWithAttention();
  void pauseGenerateWhileTrainingStopAndResume();
  void closingMidRunStopsWithACheckpoint();
  void theRunsEndComesLastWithTheRunOver();
  void exportsAModelFolderThatGeneratesTheSameText();
  void fileMenuOpensTheWindow();
  void theWindowFitsItsScreen();
  void aControlCharacterTokenShowsItsCodePoint();
};

void LmWindowTest::opensATextAndShowsItsSizeAndVocabulary() {
  QTemporaryDir dir;
  // 'a' is the most frequent character; a newline and a space are in the vocabulary too.
  const QString text = QStringLiteral("aaab a\nba ab\n").repeated(40);
  const QString path = write_file(dir, QStringLiteral("notes.txt"), text.toUtf8());
  LmWindow w(dir.filePath(QStringLiteral("runs.db")), dir.filePath(QStringLiteral("runs")));
  QVERIFY(open_text(w, path));
  QVERIFY(w.hasText());
  QCOMPARE(w.textInfo().chars, text.size());
  QCOMPARE(w.textInfo().lines, 80);
  QCOMPARE(w.textInfo().train_tokens + w.textInfo().val_tokens, text.size());
  // Four distinct characters: a, b, space, newline (plus the four specials in the vocabulary size).
  auto* table = find_child<QTableWidget>(&w, "lmVocabulary");
  QCOMPARE(table->rowCount(), 4);
  QCOMPARE(w.textInfo().vocab_size, 8);
  QCOMPARE(table->item(0, 0)->text(), QStringLiteral("a"));
  QCOMPARE(table->item(0, 1)->text(), QLocale().toString(qint64(40 * 6)));
  std::set<QString> shown;
  for (int r = 0; r < table->rowCount(); ++r) shown.insert(table->item(r, 0)->text());
  QVERIFY(shown.count(QStringLiteral("⏎")) && shown.count(QStringLiteral("␣")));
  auto* summary = find_child<QLabel>(&w, "lmTextSummary");
  QVERIFY2(summary->text().contains(QLocale().toString(qint64(text.size()))), qPrintable(summary->text()));
  // The bigram baseline is drawn, and lies between a perfect model and one that knows nothing.
  QVERIFY(std::isfinite(w.baseline()));
  QCOMPARE(w.baseline(), w.textInfo().bigram_loss);
  QVERIFY(w.baseline() > 0 && w.baseline() < w.textInfo().uniform_loss);
  // The size estimate is the configuration's, over this vocabulary.
  auto* estimate = find_child<QLabel>(&w, "lmEstimate");
  QVERIFY2(estimate->text().contains(QLocale().toString(qint64(w.config().parameter_estimate(8)))),
           qPrintable(estimate->text()));
  QVERIFY(find_child<QPushButton>(&w, "lmTrain")->isEnabled());
}

void LmWindowTest::badFilesAreNamedAndTheOpenTextStays() {
  QTemporaryDir dir;
  LmWindow w(QString(), dir.filePath(QStringLiteral("runs")));
  auto* error = find_child<QLabel>(&w, "lmTextError");
  auto* train = find_child<QPushButton>(&w, "lmTrain");
  QVERIFY(!train->isEnabled());  // nothing open yet
  const QList<QPair<QString, QByteArray>> bad{
      {QStringLiteral("empty.txt"), QByteArray()},
      {QStringLiteral("binary.txt"), QByteArray("abc\0\0\0def", 9).repeated(20)},
      {QStringLiteral("latin1.txt"), QByteArray("line one\nline two caf\xe9\n").repeated(10)},
      {QStringLiteral("short.txt"), QByteArray("abc")},
  };
  for (const auto& [name, bytes] : bad) {
    const QString path = write_file(dir, name, bytes);
    QVERIFY2(open_text(w, path), qPrintable(name));
    QVERIFY2(error->isVisibleTo(&w), qPrintable(name));
    QVERIFY2(error->text().contains(name), qPrintable(error->text()));
    QVERIFY(!w.hasText());
    QVERIFY(!train->isEnabled());
  }
  QVERIFY(open_text(w, dir.filePath(QStringLiteral("missing.txt"))));
  QVERIFY2(error->text().contains(QStringLiteral("missing.txt")), qPrintable(error->text()));
  // A good text, then a bad one: the message shows and the good text stays open and trainable.
  const QString good = write_file(dir, QStringLiteral("good.txt"), markov_text(2000).toUtf8());
  QVERIFY(open_text(w, good));
  QVERIFY(!error->isVisibleTo(&w));
  QVERIFY(open_text(w, dir.filePath(QStringLiteral("empty.txt"))));
  QVERIFY(error->isVisibleTo(&w));
  QCOMPARE(w.textInfo().path, good);
  QVERIFY(train->isEnabled());
}

void LmWindowTest::formFollowsPresetsAndSettings() {
  QTemporaryDir dir;
  LmWindow w(QString(), dir.filePath(QStringLiteral("runs")));
  // Every configuration key but the preset's name has an editor.
  const auto keys = w.config().to_json();
  for (const auto& item : keys.items()) {
    if (item.key() == "preset") continue;
    QVERIFY2(w.findChild<QWidget*>(QStringLiteral("lm_") + QString::fromStdString(item.key())),
             qPrintable(QString::fromStdString(item.key())));
  }
  QCOMPARE(w.config().preset, std::string("shakespeare-char"));
  QCOMPARE(find_child<QSpinBox>(&w, "lm_n_layer")->value(), 4);
  QVERIFY(w.applyPreset(QStringLiteral("bigram")));
  QCOMPARE(find_child<QComboBox>(&w, "lm_kind")->currentText(), QStringLiteral("bigram"));
  QCOMPARE(find_child<QComboBox>(&w, "lmPreset")->currentText(), QStringLiteral("bigram"));
  QString error;
  QVERIFY(!w.applyPreset(QStringLiteral("nope"), &error));
  QVERIFY(error.contains(QStringLiteral("nope")));
  QVERIFY(w.applyPreset(QStringLiteral("shakespeare-char-large")));
  QCOMPARE(find_child<QSpinBox>(&w, "lm_block_size")->value(), 256);
  // Editing a field changes the configuration.
  find_child<QSpinBox>(&w, "lm_n_layer")->setValue(2);
  QCOMPARE(w.config().n_layer, 2);
  find_child<QDoubleSpinBox>(&w, "lm_dropout")->setValue(0.1);
  QCOMPARE(w.config().dropout, 0.1);
  // Heads that do not divide the width: the problem is named and Train stays off.
  find_child<QSpinBox>(&w, "lm_n_head")->setValue(5);
  auto* problems = find_child<QLabel>(&w, "lmProblems");
  QVERIFY(problems->isVisibleTo(&w));
  QVERIFY2(problems->text().contains(QStringLiteral("n_head")), qPrintable(problems->text()));
  QVERIFY(!find_child<QPushButton>(&w, "lmTrain")->isEnabled());
  QVERIFY(!w.applySetting(QStringLiteral("n_layer=\"two\""), &error));
  QVERIFY2(error.contains(QStringLiteral("n_layer")), qPrintable(error));
  QCOMPARE(w.config().n_layer, 2);
}

void LmWindowTest::trainsNextToTheBaselineThenGeneratesWithAttention() {
  QTemporaryDir dir;
  const QString db = dir.filePath(QStringLiteral("runs.db"));
  const QString path = write_file(dir, QStringLiteral("markov.txt"), markov_text(4000).toUtf8());
  LmWindow w(db, dir.filePath(QStringLiteral("runs")));
  w.controller()->setDeliveryInterval(20);
  QVERIFY(open_text(w, path));
  make_tiny(w, 40, 20);
  find_child<QPushButton>(&w, "lmTrain")->click();
  QVERIFY(w.controller()->isRunning());
  QVERIFY(wait_until([&] { return !w.controller()->isRunning(); }, 120000));
  QVERIFY2(find_child<QLabel>(&w, "lmRunStatus")->text().startsWith(QStringLiteral("finished")),
           qPrintable(find_child<QLabel>(&w, "lmRunStatus")->text()));
  // Every step's loss, and the two estimates at steps 20 and 40 on both splits.
  QCOMPARE(w.curveCount(), 1);
  QCOMPARE(w.curvePoints(0, QStringLiteral("step")).size(), 40);
  const auto val = w.curvePoints(0, QStringLiteral("val"));
  const auto train = w.curvePoints(0, QStringLiteral("train"));
  QCOMPARE(val.size(), 2);
  QCOMPARE(train.size(), 2);
  QCOMPARE(val[1].x(), 40.0);
  QVERIFY(val[1].y() < w.textInfo().uniform_loss);  // it learnt something
  // Recorded in the history as a language-model run, with its estimates.
  {
    ts::RunStore store(db.toStdString());
    const auto runs = store.list_runs();
    QCOMPARE(runs.size(), size_t(1));
    QVERIFY(runs[0].kind == ts::RunKind::kLanguageModel);
    QCOMPARE(runs[0].status, ts::RunStatus::kFinished);
    QCOMPARE(runs[0].steps, 40);
    QCOMPARE(store.metric(runs[0].id, "dev_loss").size(), size_t(2));
  }
  // The trained model is there to generate from.
  QVERIFY(wait_until([&] { return w.service()->hasModel(); }));
  QVERIFY(find_child<QLabel>(&w, "lmModelLabel")->text().contains(QStringLiteral("40")));
  find_child<QLineEdit>(&w, "lmPrompt")->setText(QStringLiteral("ab"));
  find_child<QSpinBox>(&w, "lmLength")->setValue(30);
  find_child<QSpinBox>(&w, "lmSeed")->setValue(5);
  QSignalSpy pieces(w.service(), &LmService::piece);
  QSignalSpy done(&w, &LmWindow::generationDone);
  find_child<QPushButton>(&w, "lmGenerate")->click();
  QVERIFY(ts::ui::test::wait_for_signal(done));
  QCOMPARE(pieces.count(), 30);  // streamed one token at a time
  const QString first = w.outputText();
  QVERIFY2(first.startsWith(QStringLiteral("ab")) && first.size() == 32, qPrintable(first));
  for (const QChar c : first) QVERIFY(QStringLiteral("abcde \n").contains(c));
  find_child<QPushButton>(&w, "lmGenerate")->click();
  QVERIFY(ts::ui::test::wait_for_signal(done));
  QCOMPARE(w.outputText(), first);  // the same seed, the same text
  find_child<QSpinBox>(&w, "lmSeed")->setValue(6);
  find_child<QPushButton>(&w, "lmGenerate")->click();
  QVERIFY(ts::ui::test::wait_for_signal(done));
  QVERIFY(w.outputText() != first);
  // Attention over the last window (the block size): causal, each row a distribution.
  const auto& a = w.attention();
  QCOMPARE(a.layers(), 1);
  QCOMPARE(a.heads(), 2);
  QCOMPARE(a.tokens.size(), 8);
  QCOMPARE(w.attentionMap()->rowCount(), 8);
  QCOMPARE(find_child<QComboBox>(&w, "lmAttentionHead")->count(), 3);  // two heads and their mean
  for (int r = 0; r < 8; ++r) {
    double sum = 0;
    for (int c = 0; c < 8; ++c) {
      sum += w.attentionMap()->value(r, c);
      if (c > r) QCOMPARE(w.attentionMap()->value(r, c), 0.0);
    }
    QVERIFY(std::abs(sum - 1.0) < 1e-4);
  }
  find_child<QComboBox>(&w, "lmAttentionHead")->setCurrentIndex(2);  // the mean of the heads
  QVERIFY(std::abs(w.attentionMap()->value(3, 1) - (a.weights[0][0][3][1] + a.weights[0][1][3][1]) / 2) < 1e-9);

  // The bigram model trains on the same chart, in its own colour.
  QVERIFY(w.applyPreset(QStringLiteral("bigram")));
  QVERIFY(w.applySetting(QStringLiteral("max_steps=30")));
  QVERIFY(w.applySetting(QStringLiteral("eval_interval=15")));
  QVERIFY(w.applySetting(QStringLiteral("eval_iters=2")));
  QVERIFY(w.applySetting(QStringLiteral("lr=0.1")));
  QVERIFY(w.startTraining());
  QVERIFY(wait_until([&] { return !w.controller()->isRunning(); }, 60000));
  QCOMPARE(w.curveCount(), 2);
  QVERIFY(w.curveLabel(1).contains(QStringLiteral("bigram")));
  QCOMPARE(w.curvePoints(1, QStringLiteral("val")).size(), 2);
  QCOMPARE(w.curvePoints(0, QStringLiteral("val")).size(), 2);  // the GPT's curves stay
  QVERIFY(wait_until([&] { return w.service()->modelConfig().kind == ts::LmKind::kBigram; }));
  find_child<QPushButton>(&w, "lmGenerate")->click();
  QVERIFY(ts::ui::test::wait_for_signal(done));
  QCOMPARE(w.attention().layers(), 0);
  QCOMPARE(w.attentionMap()->cellCount(), 0);  // "the bigram model has no attention"
  find_child<QPushButton>(&w, "lmClearChart")->click();
  QCOMPARE(w.curveCount(), 0);
}

void LmWindowTest::exportsAModelFolderThatGeneratesTheSameText() {
  QTemporaryDir dir;
  const QString path = write_file(dir, QStringLiteral("markov.txt"), markov_text(4000).toUtf8());
  LmWindow w(QString(), dir.filePath(QStringLiteral("runs")));
  QVERIFY(open_text(w, path));
  make_tiny(w, 20, 20);
  QVERIFY(w.startTraining());
  QVERIFY(wait_until([&] { return !w.controller()->isRunning(); }, 120000));
  QDirIterator it(dir.filePath(QStringLiteral("runs")), {QStringLiteral("last.ckpt")}, QDir::Files,
                  QDirIterator::Subdirectories);
  QVERIFY(it.hasNext());
  const QString checkpoint = it.next();
  QVERIFY(w.findChild<QAction*>(QStringLiteral("lmExportModel")));  // File > Export model...

  QSignalSpy exported(&w, &LmWindow::modelExported);
  QSignalSpy failed(&w, &LmWindow::exportFailed);
  const QString folder = dir.filePath(QStringLiteral("model"));
  w.exportModel(checkpoint, folder);
  QVERIFY(ts::ui::test::wait_for_signal(exported));
  QVERIFY2(exported.at(0).at(1).toString().contains(QStringLiteral("parameters")),
           qPrintable(exported.at(0).at(1).toString()));
  for (const auto* f : {"model.safetensors", "config.json", "README.md"})
    QVERIFY(QFileInfo::exists(folder + QLatin1Char('/') + QLatin1String(f)));

  // The same seed gives the same text from the checkpoint and from the folder.
  auto generate_from = [&](const QString& model) {
    QSignalSpy changed(w.service(), &LmService::modelChanged);
    w.openCheckpoint(model);
    if (!ts::ui::test::wait_for_signal(changed)) return QStringLiteral("(not loaded)");
    find_child<QLineEdit>(&w, "lmPrompt")->setText(QStringLiteral("ab"));
    find_child<QSpinBox>(&w, "lmLength")->setValue(25);
    find_child<QSpinBox>(&w, "lmSeed")->setValue(9);
    QSignalSpy done(&w, &LmWindow::generationDone);
    find_child<QPushButton>(&w, "lmGenerate")->click();
    return ts::ui::test::wait_for_signal(done) ? w.outputText() : QStringLiteral("(no generation)");
  };
  const QString from_checkpoint = generate_from(checkpoint);
  QCOMPARE(from_checkpoint.size(), 27);
  QCOMPARE(generate_from(folder), from_checkpoint);

  // A folder with other files in it is refused by name, and left alone.
  const QString foreign = dir.filePath(QStringLiteral("notes"));
  QDir().mkpath(foreign);
  write_file(dir, QStringLiteral("notes/mine.txt"), "my notes");
  w.exportModel(checkpoint, foreign);
  QVERIFY(ts::ui::test::wait_for_signal(failed));
  QVERIFY2(failed.at(0).at(1).toString().contains(foreign), qPrintable(failed.at(0).at(1).toString()));
  auto* box = w.findChild<QMessageBox*>(QStringLiteral("lmExportError"));  // said where it cannot be missed
  QVERIFY(box && box->text().contains(foreign));
  QCOMPARE(QDir(foreign).entryList(QDir::Files), QStringList{QStringLiteral("mine.txt")});
}

void LmWindowTest::pauseGenerateWhileTrainingStopAndResume() {
  QTemporaryDir dir;
  const QString db = dir.filePath(QStringLiteral("runs.db"));
  const QString path = write_file(dir, QStringLiteral("markov.txt"), markov_text(4000).toUtf8());
  LmWindow w(db, dir.filePath(QStringLiteral("runs")));
  w.controller()->setDeliveryInterval(20);
  QVERIFY(open_text(w, path));
  make_tiny(w, 1000000, 1000000);
  QVERIFY(w.startTraining());
  QVERIFY(wait_until([&] { return w.curvePoints(0, QStringLiteral("step")).size() >= 5; }, 60000));
  find_child<QPushButton>(&w, "lmPause")->click();
  QVERIFY(wait_until([&] { return w.controller()->state() == TrainingController::State::Paused; }));
  // Generating while training takes the weights as they are now.
  QSignalSpy done(&w, &LmWindow::generationDone);
  find_child<QSpinBox>(&w, "lmLength")->setValue(10);
  find_child<QPushButton>(&w, "lmGenerate")->click();
  QVERIFY(ts::ui::test::wait_for_signal(done));
  QVERIFY(find_child<QLabel>(&w, "lmModelLabel")->text().contains(QStringLiteral("training model at step")));
  QCOMPARE(w.outputText().size(), 10);
  const int paused_points = w.curvePoints(0, QStringLiteral("step")).size();
  QTest::qWait(200);
  QCOMPARE(w.curvePoints(0, QStringLiteral("step")).size(), paused_points);  // really paused
  find_child<QPushButton>(&w, "lmPause")->click();                           // resume
  QVERIFY(wait_until([&] { return w.curvePoints(0, QStringLiteral("step")).size() > paused_points + 3; }, 60000));
  find_child<QPushButton>(&w, "lmStop")->click();
  QVERIFY(wait_until([&] { return !w.controller()->isRunning(); }, 60000));
  QVERIFY(find_child<QLabel>(&w, "lmRunStatus")->text().startsWith(QStringLiteral("stopped")));
  const int stopped_at = static_cast<int>(w.curvePoints(0, QStringLiteral("step")).last().x());
  const QString last = QDir(w.controller()->outDir()).filePath(QStringLiteral("last.ckpt"));
  QVERIFY(QFileInfo::exists(last));

  // Resume it: configuration and text come from the checkpoint; the curve goes on from there.
  QVERIFY(w.applySetting(QStringLiteral("n_layer=3")));  // replaced by the checkpoint's
  QSignalSpy resumable(&w, &LmWindow::resumeReady);
  w.resumeFrom(last);
  QVERIFY(ts::ui::test::wait_for_signal(resumable));
  QCOMPARE(w.config().n_layer, 1);
  QCOMPARE(find_child<QPushButton>(&w, "lmTrain")->text(), QStringLiteral("Resume"));
  QVERIFY(w.applySetting(QStringLiteral("max_steps=%1").arg(stopped_at + 6)));
  QVERIFY(w.startTraining());
  QVERIFY(wait_until([&] { return !w.controller()->isRunning(); }, 60000));
  QCOMPARE(w.curveCount(), 2);
  const auto resumed = w.curvePoints(1, QStringLiteral("step"));
  QCOMPARE(resumed.size(), 6);
  QCOMPARE(resumed.first().x(), double(stopped_at + 1));
  QCOMPARE(w.controller()->outDir(), QFileInfo(last).absolutePath());
  ts::RunStore store(db.toStdString());
  const auto runs = store.list_runs();
  QCOMPARE(runs.size(), size_t(1));  // the resumed run goes on in the same history row
  QCOMPARE(runs[0].steps, stopped_at + 6);
  // Opening another text after choosing a checkpoint to resume means a fresh run on that text.
  w.resumeFrom(last);
  QVERIFY(ts::ui::test::wait_for_signal(resumable));
  QCOMPARE(find_child<QPushButton>(&w, "lmTrain")->text(), QStringLiteral("Resume"));
  QVERIFY(open_text(w, write_file(dir, QStringLiteral("other.txt"), markov_text(3000).toUtf8())));
  QCOMPARE(find_child<QPushButton>(&w, "lmTrain")->text(), QStringLiteral("Train"));
  // A checkpoint that is not one: a clear message, nothing changes.
  const QString junk = write_file(dir, QStringLiteral("junk.ckpt"), QByteArray("not a checkpoint at all"));
  w.resumeFrom(junk);
  QVERIFY(ts::ui::test::wait_for_signal(resumable));
  QVERIFY2(find_child<QLabel>(&w, "lmRunStatus")->text().contains(QStringLiteral("junk.ckpt")),
           qPrintable(find_child<QLabel>(&w, "lmRunStatus")->text()));
  QCOMPARE(find_child<QPushButton>(&w, "lmTrain")->text(), QStringLiteral("Train"));
}

void LmWindowTest::closingMidRunStopsWithACheckpoint() {
  QTemporaryDir dir;
  const QString path = write_file(dir, QStringLiteral("markov.txt"), markov_text(4000).toUtf8());
  LmWindow w(QString(), dir.filePath(QStringLiteral("runs")));
  w.controller()->setDeliveryInterval(20);
  w.show();
  QVERIFY(open_text(w, path));
  make_tiny(w, 1000000, 1000000);
  QVERIFY(w.startTraining());
  QVERIFY(wait_until([&] { return w.curvePoints(0, QStringLiteral("step")).size() >= 3; }, 60000));
  w.close();
  QVERIFY(wait_until([&] { return !w.isVisible(); }, 60000));
  QVERIFY(!w.controller()->isRunning());
  QVERIFY(QFileInfo::exists(QDir(w.controller()->outDir()).filePath(QStringLiteral("last.ckpt"))));
}

// The run's end is delivered after everything the training thread sent before it ended (the trained
// model's snapshot, which it takes after the session's `finished`), and what a handler of `finished`
// queues runs with the run over: the LM window, closed mid-run, closes from such a queued call. Until
// 2026-11-30 `finished` could be delivered while the thread was still taking that snapshot, the state
// stayed Training past the queued close, and the window waited for good (seen once in a CI check).
void LmWindowTest::theRunsEndComesLastWithTheRunOver() {
  QTemporaryDir dir;
  const QString path = write_file(dir, QStringLiteral("markov.txt"), markov_text(4000).toUtf8());
  LmWindow w(QString(), dir.filePath(QStringLiteral("runs")));
  auto* controller = w.controller();
  controller->setDeliveryInterval(1);
  QVERIFY(open_text(w, path));
  make_tiny(w, 30, 1000000);
  QStringList order;
  QObject::connect(controller, &TrainingController::lmSnapshotReady, &w,
                   [&](const LmModelSnapshot& s) { order << QStringLiteral("snapshot ") + s.label; });
  bool running_after_finished = true;
  QObject::connect(controller, &TrainingController::finished, &w, [&] {
    order << QStringLiteral("finished");
    QMetaObject::invokeMethod(
        &w, [&] { running_after_finished = controller->isRunning(); }, Qt::QueuedConnection);
  });
  QVERIFY(w.startTraining());
  QVERIFY(wait_until([&] { return !controller->isRunning(); }, 60000));
  QCoreApplication::processEvents();  // the call queued by the handler of `finished`
  QVERIFY2(order.size() >= 2, qPrintable(order.join(QStringLiteral(" | "))));
  QCOMPARE(order.last(), QStringLiteral("finished"));
  QVERIFY2(order.at(order.size() - 2).startsWith(QStringLiteral("snapshot trained model, step 30")),
           qPrintable(order.join(QStringLiteral(" | "))));
  QVERIFY(!running_after_finished);
}

void LmWindowTest::fileMenuOpensTheWindow() {
  QTemporaryDir dir;
  MainWindow main(dir.filePath(QStringLiteral("runs.db")));
  QAction* action = nullptr;
  for (auto* a : main.menuBar()->actions().first()->menu()->actions())
    if (a->text().contains(QStringLiteral("Language Model"))) action = a;
  QVERIFY(action);
  QCOMPARE(action->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N));
  action->trigger();
  auto* lm = main.languageModelWindow();
  QVERIFY(lm->isVisible());
  QCOMPARE(main.languageModelWindow(), lm);  // one window, shown again
  // A language-model run lands in the main window's history; loading its checkpoint from there
  // opens it in this window, not in the Translate panel.
  const QString path = write_file(dir, QStringLiteral("markov.txt"), markov_text(3000).toUtf8());
  lm->controller()->setDeliveryInterval(20);
  QVERIFY(open_text(*lm, path));
  make_tiny(*lm, 10, 5);
  QVERIFY(lm->startTraining());
  QVERIFY(wait_until([&] { return !lm->controller()->isRunning(); }, 60000));
  auto* history = main.historyPanel();
  history->refresh();
  history->selectRun(1);
  QSignalSpy model(lm->service(), &LmService::modelChanged);
  QVERIFY(history->loadSelectedCheckpoint());
  QVERIFY(wait_until([&] { return lm->service()->model().label.startsWith(QStringLiteral("checkpoint")); }));
  QCOMPARE(lm->service()->model().step, 10);
  QVERIFY(!main.translation()->hasModel());
  lm->close();
}

// At its first show the window takes 1320 x 860 only where the screen has room: on a smaller one (a
// 1280 x 800 laptop; the offscreen platform's screen is smaller still) it reached past the edges.
void LmWindowTest::theWindowFitsItsScreen() {
  QTemporaryDir dir;
  LmWindow w(dir.filePath(QStringLiteral("runs.db")), dir.filePath(QStringLiteral("runs")));
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  // 1320 x 860 cut to the screen's room, but never below what the window needs.
  const QRect room = w.screen()->availableGeometry();
  const QSize minimum = w.minimumSizeHint().expandedTo(w.minimumSize());
  const QSize expected = QSize(std::min(1320, room.width()), std::min(860, room.height())).expandedTo(minimum);
  QVERIFY2(w.size() == expected, qPrintable(QStringLiteral("window %1x%2 on a screen with room for %3x%4")
                                                .arg(w.width())
                                                .arg(w.height())
                                                .arg(room.width())
                                                .arg(room.height())));
  // What it needs fits a 1280 x 800 screen.
  QVERIFY2(minimum.width() <= 1280 && minimum.height() <= 800,
           qPrintable(QStringLiteral("minimum %1x%2").arg(minimum.width()).arg(minimum.height())));
}

// The vocabulary table's tokens: whitespace as symbols, other control characters by their code point
// (Qt 6.11 no longer formats a char16_t as a number, so the code point is passed as one).
void LmWindowTest::aControlCharacterTokenShowsItsCodePoint() {
  QCOMPARE(visible_token(QStringLiteral("a\n b\t")), QStringLiteral("a⏎␣b⇥"));
  QCOMPARE(visible_token(QString(QChar(0x1B))), QStringLiteral("U+001B"));
  QCOMPARE(visible_token(QString(QChar(0x7F))), QStringLiteral("U+007F"));
  QCOMPARE(visible_token(QStringLiteral("Buch")), QStringLiteral("Buch"));
}

QTEST_MAIN(LmWindowTest)
#include "lm_window_test.moc"
