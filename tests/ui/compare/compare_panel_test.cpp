// SPDX-License-Identifier: GPL-3.0-or-later
// ComparePanel with real models: two tiny runs trained on a fixture corpus and recorded in a
// temporary run history, compared through the panel. The summary holds the scores compare_systems
// gives for the same texts, a checkpoint against itself has p = 1, the sentence table has a row per
// test pair, sorts and filters, a double-click names the right checkpoint, a model tested on other
// sentences is reported in the panel, and one system gives the held-out browser, worst first.
//
// LibTorch headers come first: Qt's keyword macros (slots, signals) must not be defined yet.
#include "ts/analysis/compare.h"
#include "ts/store/run_store.h"
#include "ts/text/corpus.h"
#include "ts/train/data.h"
#include "ts/train/model_comparison.h"
#include "ts/train/trainer.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTest>

#include <qcustomplot.h>

#include "compare/bucket_view.h"
#include "compare/confidence_view.h"
#include "compare/compare_panel.h"
#include "compare/ngram_view.h"
#include "compare/sentence_browser.h"
#include "compare/sentence_table_model.h"
#include "compare/summary_table.h"
#include "compare/system_chooser.h"
#include "compare/word_highlight.h"
#include "services/compare_service.h"
#include "shell/studio_state.h"
#include "ui_test_utils.h"

using namespace ts::ui;
using ts::ui::test::wait_until;

namespace {

// Trains the tiny preset for `steps` on `corpus` (en→de) with `test` held-out pairs; returns the
// checkpoint the panel takes for the run (best.ckpt, else last.ckpt), empty when training did not finish.
QString train(const QString& corpus, const QString& out_dir, int steps, double test) {
  auto config = ts::preset("tiny");
  config.data.test = test;
  // The fixture repeats each of its 10 pairs 6 times: grouped by source, 8 test pairs could not be
  // held out (groups of 6). The split itself is tested in tests/text/split_test.cpp.
  config.data.split = ts::SplitMethod::kShuffledPairs;
  config.train.max_steps = steps;
  const auto c = ts::read_corpus(QFile::encodeName(corpus).toStdString());
  auto data = ts::prepare_data(c, ts::parse_direction("en-de", c), config.data);
  const auto summary =
      ts::Trainer(config, std::move(data),
                  {QFile::encodeName(out_dir).toStdString(), QFile::encodeName(corpus).toStdString(), "", nullptr})
          .run();
  if (summary.status != ts::RunStatus::kFinished) return {};
  for (const char* name : {"best.ckpt", "last.ckpt"}) {
    const QString path = QDir(out_dir).filePath(QString::fromLatin1(name));
    if (QFileInfo::exists(path)) return path;
  }
  return {};
}

qint64 record(ts::RunStore& store, const std::string& name, const QString& out_dir,
              ts::RunKind kind = ts::RunKind::kTranslation) {
  ts::NewRun n;
  n.name = name;
  n.corpus_path = "deu.txt";
  n.direction = "en-de";
  n.preset = "tiny";
  n.out_dir = QFile::encodeName(out_dir).toStdString();
  n.kind = kind;
  n.config = nlohmann::json::object();
  const auto id = store.create_run(n);
  store.finish_run(id, ts::RunStatus::kFinished, "", 10);
  return id;
}

// Waits for the panel's comparison to end; false when it failed (the message in `error`).
bool wait_for_comparison(ComparePanel& panel, QString* error = nullptr) {
  QSignalSpy done(&panel, &ComparePanel::compared);
  QSignalSpy failed(&panel, &ComparePanel::comparisonFailed);
  if (!panel.compare()) {
    if (error) *error = panel.status();
    return false;
  }
  if (!wait_until([&] { return done.count() + failed.count() > 0; })) {
    if (error) *error = QStringLiteral("no result");
    return false;
  }
  if (!failed.isEmpty()) {
    if (error) *error = failed.front().front().toString();
    return false;
  }
  return true;
}

void check_only(SystemChooser* chooser, const QList<qint64>& runs) {
  chooser->uncheckAll();
  for (qint64 id : runs) chooser->setChecked(chooser->rowOfRun(id), true);
}

// The values of a column of the sentence table in the order the view shows them.
QVector<double> column_values(SentenceBrowser* browser, int column) {
  QVector<double> out;
  auto* proxy = browser->view()->model();
  for (int r = 0; r < proxy->rowCount(); ++r)
    out << proxy->index(r, column).data(SentenceTableModel::SortRole).toDouble();
  return out;
}

}  // namespace

class ComparePanelTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString corpus_, db_;
  QString a_, b_, c_;  // the checkpoints of runs 1 and 2 (same test split) and 3 (another test split)
  qint64 run_a_ = 0, run_b_ = 0, run_c_ = 0;

 private Q_SLOTS:
  void initTestCase() {
    QCoreApplication::setOrganizationName(QStringLiteral("TransformerStudioTests"));
    QVERIFY(dir_.isValid());
    corpus_ = ts::ui::test::write_fixture_corpus(dir_, 60);
    QVERIFY(!corpus_.isEmpty());
    const QDir root(dir_.path());
    // Two models of one test split, trained for different lengths (different outputs), and one
    // with another number of test pairs.
    a_ = train(corpus_, root.filePath(QStringLiteral("a")), 10, 8);
    b_ = train(corpus_, root.filePath(QStringLiteral("b")), 80, 8);
    c_ = train(corpus_, root.filePath(QStringLiteral("c")), 5, 5);
    QVERIFY(!a_.isEmpty() && !b_.isEmpty() && !c_.isEmpty());

    db_ = root.filePath(QStringLiteral("runs.db"));
    ts::RunStore store(QFile::encodeName(db_).toStdString());
    run_a_ = record(store, "short", root.filePath(QStringLiteral("a")));
    run_b_ = record(store, "long", root.filePath(QStringLiteral("b")));
    run_c_ = record(store, "other split", root.filePath(QStringLiteral("c")));
    // Neither is a translation model to compare: a language model, and a run without checkpoints.
    const QString lm = root.filePath(QStringLiteral("lm"));
    QVERIFY(QDir().mkpath(lm));
    QFile lm_checkpoint(QDir(lm).filePath(QStringLiteral("last.ckpt")));
    QVERIFY(lm_checkpoint.open(QIODevice::WriteOnly));
    lm_checkpoint.close();
    record(store, "a language model", lm, ts::RunKind::kLanguageModel);
    record(store, "no checkpoint", root.filePath(QStringLiteral("missing")));
  }

  void wordsMissingFromTheOtherOutputAreMarked() {
    QStringList marked;
    const QString html = highlight_words(QStringLiteral("Ich sehe eine Katze."), QStringLiteral("ich sehe den Hund."),
                                         QColor(Qt::red), &marked);
    QCOMPARE(marked, (QStringList{QStringLiteral("eine"), QStringLiteral("Katze")}));
    QVERIFY(html.contains(QStringLiteral(">Katze</b>")));
    QVERIFY(!html.contains(QStringLiteral(">sehe</b>")));
    QCOMPARE(word_tokens(QStringLiteral("Don't stop. 我爱你")),
             (QStringList{QStringLiteral("Don't"), QStringLiteral("stop"), QStringLiteral("."), QStringLiteral("我"),
                          QStringLiteral("爱"), QStringLiteral("你")}));
  }

  void listsTranslationRunsWithACheckpointNewestFirst() {
    StudioState state;
    state.setDatabasePath(db_);
    ComparePanel panel(&state);
    auto* chooser = panel.chooser();
    QCOMPARE(chooser->count(), 3);
    QCOMPARE(chooser->list()->item(0)->data(SystemChooser::RunRole).toLongLong(), run_c_);
    QCOMPARE(chooser->list()->item(1)->data(SystemChooser::RunRole).toLongLong(), run_b_);
    QCOMPARE(chooser->list()->item(2)->data(SystemChooser::RunRole).toLongLong(), run_a_);
    QCOMPARE(chooser->list()->item(2)->data(SystemChooser::PathRole).toString(), a_);
    QVERIFY(chooser->checkedModels().isEmpty());
    QVERIFY(!panel.compare());  // nothing checked: said in the panel
    QVERIFY(panel.statusIsError());

    // The first checked entry is the baseline; "Make baseline" moves one to the top.
    check_only(chooser, {run_a_, run_b_});
    QCOMPARE(chooser->checkedModels().front().name, QStringLiteral("run %1").arg(run_b_));
    chooser->makeBaseline(chooser->rowOfRun(run_a_));
    const auto models = chooser->checkedModels();
    QCOMPARE(models.size(), 2);
    QCOMPARE(models[0], (ModelChoice{QStringLiteral("run %1").arg(run_a_), a_}));
    QCOMPARE(models[1], (ModelChoice{QStringLiteral("run %1").arg(run_b_), b_}));
    QVERIFY(chooser->list()->item(0)->text().contains(QStringLiteral("baseline")));

    // A refresh keeps the order and the checks.
    QVERIFY(chooser->refresh());
    QCOMPARE(chooser->checkedModels(), models);

    QString error;
    QVERIFY(!chooser->addModel(QDir(dir_.path()).filePath(QStringLiteral("nowhere")), &error));
    QVERIFY(error.contains(QStringLiteral("nowhere")));
    QVERIFY(!chooser->addModel(dir_.path(), &error));  // neither a model folder nor a run directory
    QVERIFY(error.contains(QStringLiteral("neither")));
    // A run directory stands for its checkpoint.
    QVERIFY(chooser->addModel(QFileInfo(b_).absolutePath(), &error));
    QCOMPARE(chooser->checkedModels().back().path, b_);
  }

  void comparesTwoRunsAsCompareSystemsDoes() {
    StudioState state;
    state.setDatabasePath(db_);
    ComparePanel panel(&state);
    // Before anything is compared: a placeholder that says what to do, not an empty chart.
    QVERIFY(panel.wordAccuracy()->showsPlaceholder());
    QVERIFY(panel.sentenceBuckets()->showsPlaceholder());
    check_only(panel.chooser(), {run_a_, run_b_});
    panel.chooser()->makeBaseline(panel.chooser()->rowOfRun(run_a_));
    QSignalSpy progress(panel.service(), &CompareService::progress);
    QString error;
    QVERIFY2(wait_for_comparison(panel, &error), qPrintable(error));
    // Each model: its start (0 of 0 sentences), then its one batch of the 8 test sentences.
    QCOMPARE(progress.count(), 4);
    for (int m = 0; m < 2; ++m) {
      const auto start = progress.at(2 * m), batch = progress.at(2 * m + 1);
      QCOMPARE(start.at(0).toInt(), m);
      QCOMPARE(start.at(1).toInt(), 2);
      QCOMPARE(start.at(3).toInt(), 0);
      QCOMPARE(batch.at(0).toInt(), m);
      QCOMPARE(batch.at(3).toInt(), 8);
      QCOMPARE(batch.at(4).toInt(), 8);
    }
    QVERIFY(!panel.isBusy());
    QVERIFY(!panel.statusIsError());

    // The same texts as translating the two checkpoints here, and the same scores.
    const QString name_a = QStringLiteral("run %1").arg(run_a_), name_b = QStringLiteral("run %1").arg(run_b_);
    const auto input = ts::compare_input_from_models(
        {{name_a.toStdString(), a_.toStdString()}, {name_b.toStdString(), b_.toStdString()}});
    const auto& shown = panel.result().input;
    QVERIFY(shown.references == input.references);
    QVERIFY(shown.sources == input.sources);
    QVERIFY(shown.systems == input.systems);
    QCOMPARE(input.references.size(), std::size_t{8});
    QVERIFY(input.systems[0] != input.systems[1]);  // 10 and 80 steps: the comparison has differences to show
    const auto expected = ts::compare_systems(input);
    auto* summary = panel.summary();
    QCOMPARE(summary->rowCount(), 2);
    QCOMPARE(summary->item(0, SummaryTable::System)->text(), name_a);
    QCOMPARE(summary->item(1, SummaryTable::System)->text(), name_b);
    for (int s = 0; s < 2; ++s) {
      const auto& e = expected.systems[static_cast<std::size_t>(s)];
      QCOMPARE(summary->item(s, SummaryTable::Bleu)->data(Qt::UserRole).toDouble(), e.bleu.score);
      QCOMPARE(summary->item(s, SummaryTable::Chrf)->data(Qt::UserRole).toDouble(), e.chrf.score);
      QCOMPARE(summary->item(s, SummaryTable::MeanSentence)->data(Qt::UserRole).toDouble(), e.mean_sentence_score);
      QVERIFY(summary->item(s, SummaryTable::Bleu)->text().startsWith(QString::number(e.bleu.score, 'f', 2)));
    }
    QCOMPARE(summary->item(0, SummaryTable::PBleu)->text(), QStringLiteral("baseline"));
    QCOMPARE(summary->item(1, SummaryTable::PBleu)->data(Qt::UserRole).toDouble(), expected.systems[1].p_bleu);
    QCOMPARE(summary->item(1, SummaryTable::PChrf)->data(Qt::UserRole).toDouble(), expected.systems[1].p_chrf);
    QCOMPARE(summary->item(1, SummaryTable::PBleu)->text().endsWith(QStringLiteral("*")),
             expected.systems[1].p_bleu < SummaryTable::kSignificance);

    // The analyses: a bar per system and bucket, the n-gram pair, the bucket tables.
    auto* words = panel.wordAccuracy();
    QVERIFY(!words->showsPlaceholder());
    QCOMPARE(words->plot()->plottableCount(), 2);
    QCOMPARE(words->table()->columnCount(), 2);
    QCOMPARE(words->table()->rowCount(), static_cast<int>(expected.word_accuracy.labels.size()));
    QCOMPARE(words->table()->item(6, 1)->data(Qt::UserRole).toDouble(), expected.word_accuracy.values[6][1]);
    panel.bucketChooser()->setCurrentIndex(1);
    QCOMPARE(panel.sentenceBuckets()->table()->rowCount(), static_cast<int>(expected.by_sentence_score.labels.size()));
    QCOMPARE(panel.ngrams()->pairChooser()->count(), 1);
    QCOMPARE(panel.ngrams()->table(true)->rowCount(),
             std::max<int>(1, static_cast<int>(expected.pairs[0].a_better.size())));

    // One row per test pair, sorted by the difference (run b − run a), worst first.
    auto* browser = panel.sentences();
    auto* model = browser->model();
    QCOMPARE(model->rowCount(), 8);
    QCOMPARE(browser->view()->model()->rowCount(), 8);
    const int diff = model->differenceColumn();
    QVERIFY(diff > 0);
    auto values = column_values(browser, diff);
    QVERIFY(std::is_sorted(values.begin(), values.end()));
    for (int r = 0; r < model->rowCount(); ++r)
      QCOMPARE(model->difference(r), expected.sentence_scores[1][static_cast<std::size_t>(r)] -
                                         expected.sentence_scores[0][static_cast<std::size_t>(r)]);
    browser->view()->sortByColumn(diff, Qt::DescendingOrder);
    values = column_values(browser, diff);
    QVERIFY(std::is_sorted(values.rbegin(), values.rend()));
    browser->view()->sortByColumn(model->scoreColumn(0), Qt::AscendingOrder);
    values = column_values(browser, model->scoreColumn(0));
    QVERIFY(std::is_sorted(values.begin(), values.end()));

    // The search keeps the rows holding every word, in any text of the row.
    const QString word = QString::fromStdString(input.references[0]).split(QLatin1Char(' ')).front().toLower();
    int expected_rows = 0;
    for (std::size_t i = 0; i < input.references.size(); ++i) {
      QString text = QString::fromStdString(input.sources[i] + "\n" + input.references[i]);
      for (const auto& system : input.systems) text += QString::fromStdString("\n" + system[i]);
      expected_rows += text.toLower().contains(word) ? 1 : 0;
    }
    QVERIFY(expected_rows >= 1);
    browser->searchBox()->setText(word);
    QCOMPARE(browser->view()->model()->rowCount(), expected_rows);
    browser->searchBox()->setText(word + QStringLiteral(" zzqqxx"));
    QCOMPARE(browser->view()->model()->rowCount(), 0);
    QCOMPARE(browser->findChild<QLabel*>(QStringLiteral("compareSentenceCount"))->text(),
             QStringLiteral("0 of 8 sentences"));
    browser->searchBox()->clear();
    QCOMPARE(browser->view()->model()->rowCount(), 8);

    // Outputs mark the words the other output lacks.
    for (int r = 0; r < model->rowCount(); ++r) {
      const QString a = QString::fromStdString(input.systems[0][static_cast<std::size_t>(r)]);
      const QString b = QString::fromStdString(input.systems[1][static_cast<std::size_t>(r)]);
      QStringList marked;
      highlight_words(b, a, Qt::red, &marked);
      const QString html = model->index(r, model->outputColumn(1)).data(SentenceTableModel::HtmlRole).toString();
      QCOMPARE(html.contains(QStringLiteral("<b ")), !marked.isEmpty());
    }

    // A double-click opens the sentence with the system of the column; the baseline for the source.
    QSignalSpy open(&panel, &ComparePanel::openSentence);
    auto* view = browser->view();
    const QModelIndex output_b = view->model()->index(3, model->outputColumn(1));
    Q_EMIT view->doubleClicked(output_b);
    QCOMPARE(open.count(), 1);
    const int row = view->model()->index(3, 0).data(SentenceTableModel::SentenceRole).toInt();
    QCOMPARE(open[0][0].toString(), QString::fromStdString(input.sources[static_cast<std::size_t>(row)]));
    QCOMPARE(open[0][1].toString(), b_);
    Q_EMIT view->doubleClicked(view->model()->index(3, SentenceTableModel::Source));
    QCOMPARE(open[1][1].toString(), a_);
    Q_EMIT view->doubleClicked(view->model()->index(3, model->scoreColumn(0)));
    QCOMPARE(open[2][1].toString(), a_);
  }

  void aCheckpointAgainstItselfHasPOne() {
    StudioState state;
    state.setDatabasePath(db_);
    ComparePanel panel(&state);
    panel.chooser()->uncheckAll();
    QVERIFY(panel.chooser()->addModel(a_));
    QVERIFY(panel.chooser()->addModel(a_));
    const auto models = panel.chooser()->checkedModels();
    QCOMPARE(models.size(), 2);
    QCOMPARE(models[0].path, a_);
    QCOMPARE(models[1].path, a_);
    QVERIFY(models[0].name != models[1].name);
    QString error;
    QVERIFY2(wait_for_comparison(panel, &error), qPrintable(error));
    const auto& c = panel.result().comparison;
    QCOMPARE(c.systems[1].p_bleu, 1.0);
    QCOMPARE(c.systems[1].p_chrf, 1.0);
    QCOMPARE(c.pairs[0].identical, c.sentences);
    QCOMPARE(panel.summary()->item(1, SummaryTable::PBleu)->data(Qt::UserRole).toDouble(), 1.0);
    QCOMPARE(panel.summary()->item(1, SummaryTable::PBleu)->text(), QStringLiteral("1.0000"));
    auto* model = panel.sentences()->model();
    for (int r = 0; r < model->rowCount(); ++r) QCOMPARE(model->difference(r), 0.0);
  }

  void aModelTestedOnOtherSentencesIsReportedInThePanel() {
    StudioState state;
    state.setDatabasePath(db_);
    ComparePanel panel(&state);
    check_only(panel.chooser(), {run_a_, run_c_});
    panel.chooser()->makeBaseline(panel.chooser()->rowOfRun(run_a_));
    QString error;
    QVERIFY(!wait_for_comparison(panel, &error));
    QVERIFY2(error.contains(c_), qPrintable(error));
    QVERIFY(panel.statusIsError());
    QVERIFY2(panel.status().contains(c_), qPrintable(panel.status()));
    QVERIFY(!panel.isBusy());
    QVERIFY(!panel.hasResult());
  }

  void oneSystemIsTheHeldOutBrowserWorstFirst() {
    StudioState state;
    state.setDatabasePath(db_);
    ComparePanel panel(&state);
    check_only(panel.chooser(), {run_b_});
    QString error;
    QVERIFY2(wait_for_comparison(panel, &error), qPrintable(error));
    QCOMPARE(panel.tabs()->currentWidget(), panel.sentences());
    QCOMPARE(panel.summary()->rowCount(), 1);
    QCOMPARE(panel.summary()->item(0, SummaryTable::PBleu)->text(), QStringLiteral("baseline"));

    const auto input = ts::compare_input_from_models({{"b", b_.toStdString()}});
    auto* browser = panel.sentences();
    auto* model = browser->model();
    QCOMPARE(model->systems(), 1);
    QCOMPARE(model->differenceColumn(), -1);
    QCOMPARE(model->columnCount(), 6);  // #, source, reference, output, score, confidence
    QVERIFY(model->hasConfidence());
    QCOMPARE(model->rowCount(), static_cast<int>(input.references.size()));
    auto* proxy = browser->view()->model();
    QVector<double> scores;
    for (int r = 0; r < proxy->rowCount(); ++r) {
      const int i = proxy->index(r, 0).data(SentenceTableModel::SentenceRole).toInt();
      QCOMPARE(proxy->index(r, SentenceTableModel::Source).data().toString(),
               QString::fromStdString(input.sources[static_cast<std::size_t>(i)]));
      QCOMPARE(proxy->index(r, SentenceTableModel::Reference).data().toString(),
               QString::fromStdString(input.references[static_cast<std::size_t>(i)]));
      QCOMPARE(proxy->index(r, model->outputColumn(0)).data().toString(),
               QString::fromStdString(input.systems[0][static_cast<std::size_t>(i)]));
      scores << proxy->index(r, model->scoreColumn(0)).data(SentenceTableModel::SortRole).toDouble();
      // The confidence is the output's mean token log-probability, as core computes it.
      const double confidence =
          proxy->index(r, model->confidenceColumn(0)).data(SentenceTableModel::SortRole).toDouble();
      QVERIFY(confidence <= 0);
      QVERIFY(std::abs(confidence - input.confidences[0][static_cast<std::size_t>(i)]) < 1e-5);
    }
    QVERIFY(std::is_sorted(scores.begin(), scores.end()));  // worst first
    QCOMPARE(panel.ngrams()->pairChooser()->count(), 0);

    // The Confidence tab: one point per sentence, the correlations in the caption; its button lists
    // the least confident sentences first.
    auto* confidence = panel.confidence();
    QCOMPARE(confidence->plot()->graphCount(), 1);
    QCOMPARE(confidence->plot()->graph(0)->dataCount(), model->rowCount());
    QVERIFY2(confidence->caption()->text().contains(QStringLiteral("ρ")), qPrintable(confidence->caption()->text()));
    const auto& result = panel.result().comparison.confidence.at(0);
    QVERIFY(result.available);
    QVERIFY2(confidence->caption()->text().contains(QString::number(result.spearman, 'f', 2)),
             qPrintable(confidence->caption()->text()));
    QVERIFY(confidence->leastConfidentButton()->isEnabled());
    confidence->leastConfidentButton()->click();
    QCOMPARE(panel.tabs()->currentWidget(), panel.sentences());
    QVector<double> confidences = column_values(browser, model->confidenceColumn(0));
    QVERIFY(std::is_sorted(confidences.begin(), confidences.end()));
    QCOMPARE(proxy->index(0, 0).data(SentenceTableModel::SentenceRole).toInt(),
             static_cast<int>(result.least_confident.front()));

    QSignalSpy open(&panel, &ComparePanel::openSentence);
    Q_EMIT browser->view()->doubleClicked(proxy->index(0, SentenceTableModel::Reference));
    QCOMPARE(open.count(), 1);
    QCOMPARE(open[0][1].toString(), b_);
  }

  void aNewerRequestSupersedesAnOlderOne() {
    StudioState state;
    state.setDatabasePath(db_);
    auto panel = std::make_unique<ComparePanel>(&state);
    QSignalSpy done(panel.get(), &ComparePanel::compared);
    check_only(panel->chooser(), {run_a_, run_b_});
    QVERIFY(panel->compare());
    check_only(panel->chooser(), {run_b_});
    QVERIFY(panel->compare());
    QVERIFY(wait_until([&] { return done.count() > 0; }));
    QCOMPARE(panel->result().models.size(), 1);
    QCOMPARE(panel->result().models.front().path, b_);
    QVERIFY(!panel->isBusy());
    QCoreApplication::processEvents();
    panel.reset();  // waits for the older request's worker
    QCOMPARE(done.count(), 1);
  }

  void stopEndsTheComparison() {
    StudioState state;
    state.setDatabasePath(db_);
    ComparePanel panel(&state);
    QSignalSpy stopped(panel.service(), &CompareService::stopped);
    QSignalSpy done(&panel, &ComparePanel::compared);
    check_only(panel.chooser(), {run_a_, run_b_});
    QVERIFY(panel.compare());
    QVERIFY(panel.isBusy());
    panel.stop();
    QCOMPARE(stopped.count(), 1);
    QVERIFY(!panel.isBusy());
    QCOMPARE(panel.status(), QStringLiteral("Stopped."));
    QCOMPARE(done.count(), 0);
  }
};

QTEST_MAIN(ComparePanelTest)
#include "compare_panel_test.moc"
