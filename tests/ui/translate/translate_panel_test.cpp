// SPDX-License-Identifier: GPL-3.0-or-later
// TranslatePanel: the "no model" state, loading a checkpoint, Enter translates, beam n-best, the
// cross-attention heatmap with its layer/head choices and tooltip, late results dropped, bad
// checkpoints named in the error, a snapshot of a model while it trains.
//
// LibTorch headers come first: Qt's keyword macros (slots, signals) must not be defined yet.
#include "test_utils.h"
#include "ts/train/trainer.h"

#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>

#include <qcustomplot.h>
#include "widgets/attention_heatmap.h"
#include "widgets/plot_style.h"
#include "translate/translate_output_box.h"
#include "shell/studio_state.h"
#include "services/training_controller.h"
#include "translate/translate_panel.h"
#include "services/translation_service.h"
#include "ui_test_utils.h"

using namespace ts::ui;
using ts::DecodeMode;
using ts::ui::test::wait_until;

namespace {

struct Fixture {
  StudioState state;
  TranslationService service;
  TrainingController controller;
  TranslatePanel panel{&state, &service, &controller};

  Fixture() {  // as the main window wires them
    QObject::connect(&controller, &TrainingController::snapshotReady, &service, &TranslationService::setSnapshot);
  }

  template <class T>
  T* find(const char* name) {
    auto* w = panel.findChild<T*>(QString::fromLatin1(name));
    if (!w) qWarning("no widget named %s", name);
    return w;
  }
  QString text(const char* name) { return find<QLabel>(name)->text(); }
  bool load(const QString& checkpoint) {
    QSignalSpy changed(&service, &TranslationService::modelChanged);
    service.loadCheckpoint(checkpoint);
    return ts::ui::test::wait_for_signal(changed);
  }
  /// Translates `sentence` by typing it and pressing Enter; true once a result is shown.
  bool typeAndTranslate(const QString& sentence) {
    auto* input = find<QLineEdit>("translateInput");
    input->clear();
    QTest::keyClicks(input, sentence);
    QTest::keyClick(input, Qt::Key_Return);
    return wait_until([&] { return panel.result().source == sentence && !service.isBusy(); }, 20000);
  }
};

}  // namespace

class TranslatePanelTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    QCoreApplication::setOrganizationName(QStringLiteral("TransformerStudioTests"));
    QVERIFY(dir_.isValid());
    // A tiny English→German model with two decoder layers (so the layer choice means something).
    auto config = ts::preset("tiny");
    config.model.decoder_layers = 2;
    config.train.max_steps = 150;
    const auto summary = ts::Trainer(config, ts::test::tiny_data(config, "en-de"),
                                     {dir_.path().toStdString(), "tiny-deu.txt", "", nullptr})
                             .run();
    QCOMPARE(summary.status, ts::RunStatus::kFinished);
    checkpoint_ = dir_.filePath(QStringLiteral("last.ckpt"));
    QVERIFY(QFileInfo::exists(checkpoint_));
    // The same model briefly, with beam search written into its decode section (as `auto` does).
    config.decode.mode = DecodeMode::kBeam;
    config.decode.beam = 3;
    config.decode.length_penalty = 1.3;
    config.train.max_steps = 5;
    const QString beam_dir = dir_.filePath(QStringLiteral("beam"));
    QVERIFY(QDir().mkpath(beam_dir));
    const auto beam =
        ts::Trainer(config, ts::test::tiny_data(config, "en-de"), {beam_dir.toStdString(), "tiny-deu.txt", "", nullptr})
            .run();
    QCOMPARE(beam.status, ts::RunStatus::kFinished);
    beam_checkpoint_ = QDir(beam_dir).filePath(QStringLiteral("last.ckpt"));
  }

  void aCheckpointTranslatesAsItsOwnDecodeSectionSays() {
    Fixture f;
    QVERIFY(f.load(beam_checkpoint_));
    auto d = f.panel.decodeConfig();
    QCOMPARE(d.mode, DecodeMode::kBeam);
    QCOMPARE(d.beam, 3);
    QCOMPARE(d.length_penalty, 1.3);
    // The Configuration panel's decode section does not override a checkpoint's own...
    auto config = f.state.config();
    config.decode.mode = DecodeMode::kGreedy;
    config.decode.length_penalty = 0.6;
    f.state.setConfig(config);
    QCOMPARE(f.panel.decodeConfig().mode, DecodeMode::kBeam);
    // ...and Defaults returns to the checkpoint's settings.
    f.find<QSpinBox>("translateBeam")->setValue(6);
    f.find<QPushButton>("translateDefaults")->click();
    QCOMPARE(f.panel.decodeConfig().beam, 3);
    // Another checkpoint brings its own (greedy here).
    QVERIFY(f.load(checkpoint_));
    QCOMPARE(f.panel.decodeConfig().mode, DecodeMode::kGreedy);
  }

  void withoutAModelTranslatingSaysSo() {
    Fixture f;
    QVERIFY(f.text("translateModel").contains(QStringLiteral("No model yet")));
    QVERIFY(!f.find<QPushButton>("translateButton")->isEnabled());
    QVERIFY(f.find<QPushButton>("translateButton")->toolTip().contains(QStringLiteral("load a checkpoint")));
    QVERIFY(!f.find<QPushButton>("translateUseTraining")->isEnabled());
    QCOMPARE(f.text("translateDirection"), QStringLiteral("English → German"));  // the demo corpus
    f.panel.translateText(QStringLiteral("I see the dog."));
    QCOMPARE(f.find<QLineEdit>("translateInput")->text(), QStringLiteral("I see the dog."));
    QVERIFY(!f.find<QLabel>("translateError")->isHidden());
    QVERIFY(f.text("translateError").contains(QStringLiteral("No model yet")));
    QVERIFY(f.text("translateError").contains(QStringLiteral("translated as soon as there is one")));
    QVERIFY(f.text("translateOutput").isEmpty());
    // The first model to arrive translates the sentence that was asked for (as --translate at launch
    // asks before training has made one) and the message goes.
    QVERIFY(f.load(checkpoint_));
    QVERIFY(wait_until([&] { return f.panel.result().source == QStringLiteral("I see the dog."); }, 30000));
    QVERIFY(f.panel.result().error.isEmpty());
    QVERIFY(!f.text("translateOutput").isEmpty());
    QVERIFY(f.find<QLabel>("translateError")->isHidden());
  }

  void aSentenceEditedAfterNoModelWaitsForEnter() {
    Fixture f;
    f.panel.translateText(QStringLiteral("I see the dog."));
    QVERIFY(f.text("translateError").contains(QStringLiteral("No model yet")));
    // The person changes the sentence without asking again: the model that arrives translates nothing.
    f.find<QLineEdit>("translateInput")->setText(QStringLiteral("The cat sleeps."));
    QVERIFY(f.load(checkpoint_));  // the panel has seen the model arrive when this returns
    QVERIFY(!f.service.isBusy());  // a request counts as pending from the moment it is sent
    QVERIFY(f.find<QLabel>("translateStatus")->isHidden());
    QCOMPARE(f.panel.result().id, 0u);
    QVERIFY(f.text("translateOutput").isEmpty());
    // Enter then translates the new sentence.
    QVERIFY(f.typeAndTranslate(QStringLiteral("The cat sleeps.")));
    QVERIFY(f.panel.result().error.isEmpty());
  }

  void loadsACheckpointAndTranslatesOnEnter() {
    Fixture f;
    QVERIFY(f.load(checkpoint_));
    const QString model = f.text("translateModel");
    QVERIFY2(model.contains(QStringLiteral("last.ckpt")) && model.contains(QStringLiteral("step 150")),
             qPrintable(model));
    QVERIFY2(model.contains(QStringLiteral("English → German")), qPrintable(model));
    QVERIFY(f.find<QPushButton>("translateButton")->isEnabled());

    QVERIFY(f.typeAndTranslate(QStringLiteral("I see the dog.")));
    QVERIFY(f.panel.result().error.isEmpty());
    QVERIFY(!f.text("translateOutput").isEmpty());
    QCOMPARE(f.text("translateOutput"), f.panel.result().text);
    const QString latency = f.text("translateLatency");
    QVERIFY2(latency.contains(QStringLiteral(" ms by ")) && latency.contains(QStringLiteral("last.ckpt")),
             qPrintable(latency));
    QVERIFY2(f.text("translateScore").contains(QStringLiteral("log-probability")),
             qPrintable(f.text("translateScore")));
    QVERIFY(f.find<QLabel>("translateError")->isHidden());
    // One probability per output token, and greedy decoding lists a single candidate.
    auto* tokens = f.find<QTableWidget>("translateTokens");
    QVERIFY(tokens->columnCount() > 0);
    QCOMPARE(tokens->columnCount(), f.panel.result().target_tokens.size());
    const double p = tokens->item(1, 0)->text().toDouble();
    QVERIFY(p > 0 && p <= 1);
    QCOMPARE(f.find<QTableWidget>("translateNbestTable")->rowCount(), 1);

    // Coloured by probability: a token's colour is the confidence scale's for its probability.
    for (int i = 0; i < tokens->columnCount(); ++i) {
      const double pi = std::exp(f.panel.result().token_log_probs.value(i));
      QCOMPARE(tokens->item(0, i)->background().color(), ts::ui::confidence_color(pi));
    }
    QVERIFY(ts::ui::confidence_color(0.05).hueF() < ts::ui::confidence_color(0.95).hueF());  // red .. green
    // No token picked yet; clicking one outlines its heatmap row and names the source tokens it
    // read, the one with the most weight in bold.
    auto* focus = f.find<QLabel>("translateTokenFocus");
    QVERIFY(focus->isHidden());
    QCOMPARE(f.panel.heatmap()->highlightedRow(), -1);
    const int last = tokens->columnCount() - 1;
    Q_EMIT tokens->cellClicked(0, last);
    QCOMPARE(f.panel.outputBox()->focusedToken(), last);
    QCOMPARE(f.panel.heatmap()->highlightedRow(), last);
    QVERIFY(!focus->isHidden());
    auto* heatmap = f.panel.heatmap();
    QVERIFY(heatmap->rowCount() > last);
    int strongest = 0;
    for (int c = 1; c < heatmap->columnCount(); ++c)
      if (heatmap->value(last, c) > heatmap->value(last, strongest)) strongest = c;
    const QString text = f.panel.outputBox()->focusText();
    for (const auto& label : heatmap->columnLabels()) QVERIFY2(text.contains(label.toHtmlEscaped()), qPrintable(text));
    const QString bold =
        QStringLiteral("font-weight:600\">&nbsp;%1&nbsp;").arg(heatmap->columnLabels()[strongest].toHtmlEscaped());
    QVERIFY2(text.contains(bold), qPrintable(text));
    // Another pick moves the outline; a new sentence drops it.
    f.panel.focusToken(0);
    QCOMPARE(heatmap->highlightedRow(), 0);
    QVERIFY(f.typeAndTranslate(QStringLiteral("The cat sleeps.")));
    QCOMPARE(heatmap->highlightedRow(), -1);
    QVERIFY(focus->isHidden());
  }

  void enterWhileACheckpointLoadsTranslatesOnceLoaded() {
    Fixture f;
    f.service.loadCheckpoint(checkpoint_);
    QVERIFY(f.find<QPushButton>("translateButton")->isEnabled());
    f.panel.translateText(QStringLiteral("I see the dog."));
    QVERIFY(f.find<QLabel>("translateError")->isHidden());
    QVERIFY(wait_until([&] { return f.panel.result().source == QStringLiteral("I see the dog."); }, 30000));
    QVERIFY(f.panel.result().error.isEmpty());
    QVERIFY(!f.text("translateOutput").isEmpty());
  }

  void beamSearchListsTheNBest() {
    Fixture f;
    QVERIFY(f.load(checkpoint_));
    auto* mode = f.find<QComboBox>("translateMode");
    mode->setCurrentIndex(mode->findData(QStringLiteral("beam")));
    QVERIFY(f.find<QSpinBox>("translateBeam")->isEnabled());
    QVERIFY(f.find<QSpinBox>("translateNbest")->isEnabled());
    QVERIFY(!f.find<QDoubleSpinBox>("translateTemperature")->isEnabled());
    f.find<QSpinBox>("translateBeam")->setValue(4);
    f.find<QSpinBox>("translateNbest")->setValue(3);
    QCOMPARE(f.panel.decodeConfig().mode, DecodeMode::kBeam);
    QCOMPARE(f.panel.decodeConfig().nbest, 3);
    QVERIFY(f.typeAndTranslate(QStringLiteral("The cat sleeps.")));
    auto* table = f.find<QTableWidget>("translateNbestTable");
    QCOMPARE(table->rowCount(), 3);
    QCOMPARE(table->item(0, 1)->text(), f.panel.result().text);
    QCOMPARE(table->item(2, 0)->text(), QStringLiteral("3"));
    // n-best cannot exceed the beam width
    f.find<QSpinBox>("translateBeam")->setValue(2);
    QCOMPARE(f.find<QSpinBox>("translateNbest")->value(), 2);
  }

  void samplingOptionsAreUsed() {
    Fixture f;
    QVERIFY(f.load(checkpoint_));
    auto* mode = f.find<QComboBox>("translateMode");
    mode->setCurrentIndex(mode->findData(QStringLiteral("sample")));
    QVERIFY(f.find<QDoubleSpinBox>("translateTemperature")->isEnabled());
    QVERIFY(!f.find<QSpinBox>("translateBeam")->isEnabled());
    f.find<QDoubleSpinBox>("translateTemperature")->setValue(0.7);
    f.find<QSpinBox>("translateTopK")->setValue(5);
    f.find<QSpinBox>("translateSeed")->setValue(42);
    const auto d = f.panel.decodeConfig();
    QCOMPARE(d.mode, DecodeMode::kSample);
    QCOMPARE(d.temperature, 0.7);
    QCOMPARE(d.top_k, 5);
    QCOMPARE(d.seed, std::uint64_t(42));
    QVERIFY(f.typeAndTranslate(QStringLiteral("I have a cat.")));
    QVERIFY(f.panel.result().error.isEmpty());
    QVERIFY(!f.text("translateOutput").isEmpty());
  }

  void defaultsComeFromTheConfiguration() {
    Fixture f;
    QVERIFY(f.state.applySetting(QStringLiteral("decode.mode=beam")));
    QVERIFY(f.state.applySetting(QStringLiteral("decode.beam=7")));
    QCOMPARE(f.find<QComboBox>("translateMode")->currentData().toString(), QStringLiteral("beam"));
    QCOMPARE(f.find<QSpinBox>("translateBeam")->value(), 7);
    f.find<QSpinBox>("translateBeam")->setValue(3);
    f.find<QPushButton>("translateDefaults")->click();
    QCOMPARE(f.find<QSpinBox>("translateBeam")->value(), 7);
  }

  void showsCrossAttentionByLayerAndHead() {
    Fixture f;
    f.panel.resize(900, 1000);
    f.panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&f.panel));
    QVERIFY(f.load(checkpoint_));
    QVERIFY(f.typeAndTranslate(QStringLiteral("She has a house.")));
    const auto& r = f.panel.result();
    auto* heatmap = f.panel.heatmap();
    QCOMPARE(heatmap->rowCount(), r.target_tokens.size());
    QCOMPARE(heatmap->columnCount(), r.source_tokens.size());
    QCOMPARE(heatmap->cellCount(), r.target_tokens.size() * r.source_tokens.size());
    QCOMPARE(heatmap->columnLabels().last(), QStringLiteral("</s>"));

    auto* layer = f.find<QComboBox>("attentionLayer");
    auto* head = f.find<QComboBox>("attentionHead");
    QCOMPARE(layer->count(), 2);            // two decoder layers
    QCOMPARE(f.panel.attentionLayer(), 1);  // the last by default
    QCOMPARE(head->count(), 3);             // average + two heads
    QCOMPARE(f.panel.attentionHead(), -1);
    QVERIFY(head->itemText(0).contains(QStringLiteral("Average")));

    // Each row of cross-attention is a distribution over the source tokens.
    const auto matrix = [&] {
      QVector<double> v;
      for (int row = 0; row < heatmap->rowCount(); ++row)
        for (int col = 0; col < heatmap->columnCount(); ++col) v << heatmap->value(row, col);
      return v;
    };
    const auto average = matrix();
    double row_sum = 0;
    for (int col = 0; col < heatmap->columnCount(); ++col) row_sum += heatmap->value(0, col);
    QVERIFY(std::abs(row_sum - 1) < 1e-3);
    head->setCurrentIndex(1);
    QCOMPARE(f.panel.attentionHead(), 0);
    const auto head1 = matrix();
    head->setCurrentIndex(2);
    const auto head2 = matrix();
    QVERIFY(head1 != average);
    for (int i = 0; i < average.size(); ++i) QVERIFY(std::abs(average[i] - (head1[i] + head2[i]) / 2) < 1e-5);
    layer->setCurrentIndex(0);
    QCOMPARE(f.panel.attentionLayer(), 0);
    QVERIFY(matrix() != head2);
    // The choice is kept for the next sentence.
    QVERIFY(f.typeAndTranslate(QStringLiteral("I see the dog.")));
    QCOMPARE(f.panel.attentionLayer(), 0);
    QCOMPARE(f.panel.attentionHead(), 1);

    // Hovering a cell says which tokens it links and the weight.
    auto* plot = heatmap->findChild<QWidget*>(QStringLiteral("heatmapPlot"));
    QVERIFY(plot);
    QVERIFY(wait_until([&] { return heatmap->cellAt(heatmap->cellCenter(0, 1), nullptr, nullptr); }));
    const QPoint pos = heatmap->cellCenter(0, 1);
    QMouseEvent move(QEvent::MouseMove, QPointF(pos), plot->mapToGlobal(QPointF(pos)), Qt::NoButton, Qt::NoButton,
                     Qt::NoModifier);
    QCoreApplication::sendEvent(plot, &move);
    const QString expected = QStringLiteral("%1 ← %2: ").arg(heatmap->rowLabels()[0], heatmap->columnLabels()[1]);
    QVERIFY2(heatmap->hoverText().startsWith(expected), qPrintable(heatmap->hoverText()));
    QCOMPARE(heatmap->hoverText(), heatmap->cellText(0, 1));
  }

  void heatmapLabelsFitLongAndChineseSentences() {
    AttentionHeatmap heatmap;
    heatmap.resize(700, 400);
    heatmap.show();
    QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
    QStringList chinese, words;
    for (const QChar c : QStringLiteral("我今天早上在图书馆看到了一只很大的黑猫。")) chinese << QString(c);
    for (int i = 0; i < 40; ++i) words << QStringLiteral("token%1").arg(i);
    const auto matrix = [](int rows, int columns) {
      QVector<QVector<double>> m(rows, QVector<double>(columns));
      for (int r = 0; r < rows; ++r) m[r][r % columns] = 1;
      return m;
    };
    const auto ticks = [&](QCPAxis* axis) { return axis->ticker().dynamicCast<QCPAxisTickerText>()->ticks(); };
    auto* plot = heatmap.plot();

    // A fresh map with short column labels: the reference bottom margin.
    heatmap.setMatrix(words.mid(0, 5), chinese, matrix(5, chinese.size()));
    QTest::qWait(50);
    const int reference = plot->axisRect()->margins().bottom();
    QCOMPARE(plot->xAxis->tickLabelRotation(), 0.0);
    QCOMPARE(ticks(plot->xAxis).value(0), QStringLiteral("我"));
    QCOMPARE(ticks(plot->xAxis).size(), chinese.size());  // one character per cell fits

    // 40 wide labels in 700 px turn upright; in 450 px they also thin out rather than overlap.
    heatmap.setMatrix(chinese, words, matrix(chinese.size(), words.size()));
    QTest::qWait(50);
    QCOMPARE(heatmap.cellCount(), chinese.size() * 40);
    QCOMPARE(plot->xAxis->tickLabelRotation(), -90.0);
    QVERIFY(plot->axisRect()->margins().bottom() > reference);
    heatmap.resize(450, 400);
    QTest::qWait(50);
    QVERIFY2(ticks(plot->xAxis).size() < 40, qPrintable(QString::number(ticks(plot->xAxis).size())));
    QCOMPARE(ticks(plot->xAxis).value(0), QStringLiteral("token0"));
    heatmap.resize(700, 400);

    // Back to short labels: horizontal again, and the room for upright labels is given back.
    heatmap.setMatrix(words.mid(0, 5), chinese, matrix(5, chinese.size()));
    QTest::qWait(50);
    QCOMPARE(plot->xAxis->tickLabelRotation(), 0.0);
    QCOMPARE(plot->axisRect()->margins().bottom(), reference);

    // Rows thin out when they are shorter than a line of text.
    heatmap.resize(700, 200);
    heatmap.setMatrix(words, chinese, matrix(40, chinese.size()));
    QTest::qWait(50);
    QVERIFY2(ticks(plot->yAxis).size() < 40, qPrintable(QString::number(ticks(plot->yAxis).size())));
    QVERIFY(ticks(plot->yAxis).size() > 1);

    heatmap.clear(QStringLiteral("nothing"));
    QCOMPARE(heatmap.cellCount(), 0);
  }

  void onlyTheLatestRequestIsShown() {
    Fixture f;
    QVERIFY(f.load(checkpoint_));
    QStringList shown_when_answered;
    connect(&f.service, &TranslationService::translated, &f.panel,
            [&](const TranslationResult&) { shown_when_answered << f.panel.result().source; });
    f.panel.translateText(QStringLiteral("I see the dog."));
    f.panel.translateText(QStringLiteral("The cat sleeps."));
    QVERIFY(wait_until([&] { return shown_when_answered.size() == 2; }));
    QCOMPARE(shown_when_answered[0], QString());  // the first answer was dropped
    QCOMPARE(shown_when_answered[1], QStringLiteral("The cat sleeps."));
    QCOMPARE(f.find<QLabel>("translateStatus")->isHidden(), true);
  }

  void aBadCheckpointIsNamedInTheError() {
    Fixture f;
    QVERIFY(f.load(checkpoint_));
    const QString missing = dir_.filePath(QStringLiteral("no-such.ckpt"));
    QSignalSpy failed(&f.service, &TranslationService::loadFailed);
    f.service.loadCheckpoint(missing);
    QVERIFY(f.text("translateModel").contains(QStringLiteral("Loading no-such.ckpt")));
    QVERIFY(ts::ui::test::wait_for_signal(failed));
    QVERIFY(!f.find<QLabel>("translateError")->isHidden());
    QVERIFY2(f.text("translateError").contains(missing), qPrintable(f.text("translateError")));
    // The model in use stays and still translates.
    QVERIFY(f.text("translateModel").contains(QStringLiteral("last.ckpt")));

    const QString garbage = dir_.filePath(QStringLiteral("garbage.ckpt"));
    QFile file(garbage);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not a checkpoint at all\n");
    file.close();
    f.service.loadCheckpoint(garbage);
    QVERIFY(ts::ui::test::wait_for_signal(failed));
    QVERIFY2(f.text("translateError").contains(QStringLiteral("garbage.ckpt")), qPrintable(f.text("translateError")));
    QVERIFY(f.typeAndTranslate(QStringLiteral("I see the dog.")));
    QVERIFY(f.find<QLabel>("translateError")->isHidden());
  }

  void translatesWithTheModelWhileItTrains() {
    Fixture f;
    f.controller.setDeliveryInterval(20);
    ts::ui::TrainingRequest request;
    const auto corpus = ts::test::tiny_corpus();
    request.corpus = std::make_shared<const ts::Corpus>(corpus);
    request.corpus_path = QStringLiteral("tiny-deu.txt");
    request.direction = ts::parse_direction("en-de", corpus);
    request.config = ts::preset("tiny");
    request.config.train.max_steps = 100000;
    request.config.data.dev = 2;  // validations, so the panel has a reason to refresh
    request.config.train.validate_every = 40;
    request.out_dir = dir_.filePath(QStringLiteral("training"));
    QVERIFY(f.controller.start(request));
    QVERIFY(wait_until([&] { return f.controller.state() == TrainingController::State::Training; }));
    auto* use = f.find<QPushButton>("translateUseTraining");
    QVERIFY(use->isEnabled());
    QVERIFY(f.find<QPushButton>("translateButton")->isEnabled());  // a snapshot is taken on demand
    QSignalSpy changed(&f.service, &TranslationService::modelChanged);
    use->click();
    QVERIFY(ts::ui::test::wait_for_signal(changed));
    QVERIFY2(f.text("translateModel").contains(QStringLiteral("training model at step")),
             qPrintable(f.text("translateModel")));
    QVERIFY(f.typeAndTranslate(QStringLiteral("I see the dog.")));
    QVERIFY(f.text("translateLatency").contains(QStringLiteral("training model at step")));
    // After a validation the copy in use is stale: translating first takes a fresh one.
    const qint64 first_step = f.service.model().step;
    QSignalSpy validated(&f.controller, &TrainingController::validated);
    QVERIFY(wait_until(
        [&] { return !validated.isEmpty() && validated.last().at(0).value<ts::ValidationResult>().step > first_step; },
        20000));
    QVERIFY(f.typeAndTranslate(QStringLiteral("The dog sleeps.")));
    QVERIFY2(f.service.model().step > first_step, qPrintable(f.text("translateModel")));
    QVERIFY(f.text("translateLatency").contains(QStringLiteral("step %1").arg(f.service.model().step)));
    f.controller.stop();
    QVERIFY(f.controller.waitForFinished(30000));
    QVERIFY(!use->isEnabled());
  }

 private:
  QTemporaryDir dir_;
  QString checkpoint_;
  QString beam_checkpoint_;  // the same model with beam search in its decode section
};

QTEST_MAIN(TranslatePanelTest)
#include "translate_panel_test.moc"
