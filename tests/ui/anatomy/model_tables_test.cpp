// SPDX-License-Identifier: GPL-3.0-or-later
// The model's own tables, from a real trained checkpoint: TranslationService::requestTables and
// findNeighbours against the model's tensors and the analysis functions, and the anatomy panel's
// "Model positions" and "Embeddings" tabs drawing them (cells, points, labels, highlights, hover).
//
// LibTorch headers come first: Qt's keyword macros (slots, signals) must not be defined yet.
#include "test_utils.h"
#include "ts/analysis/embeddings.h"
#include "ts/model/positional.h"
#include "ts/text/demo_corpus.h"
#include "ts/train/checkpoint.h"
#include "ts/train/trainer.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>

#include <qcustomplot.h>
#include "anatomy/anatomy_panel.h"
#include "shell/studio_state.h"
#include "services/translation_service.h"
#include "ui_test_utils.h"

using namespace ts::ui;
using ts::ui::test::wait_until;

namespace {

QCPColorMap* color_map(QCustomPlot* plot) {
  for (int i = 0; i < plot->plottableCount(); ++i)
    if (auto* map = qobject_cast<QCPColorMap*>(plot->plottable(i))) return map;
  return nullptr;
}

QList<QCPItemText*> text_items(QCustomPlot* plot) {
  QList<QCPItemText*> out;
  for (int i = 0; i < plot->itemCount(); ++i)
    if (auto* t = qobject_cast<QCPItemText*>(plot->item(i))) out << t;
  return out;
}

QCPGraph* graph_named(QCustomPlot* plot, const QString& name) {
  for (int i = 0; i < plot->graphCount(); ++i)
    if (plot->graph(i)->name() == name) return plot->graph(i);
  return nullptr;
}

bool load(TranslationService& service, const QString& checkpoint) {
  QSignalSpy changed(&service, &TranslationService::modelChanged);
  service.loadCheckpoint(checkpoint);
  return ts::ui::test::wait_for_signal(changed);
}

ModelTables request_tables(TranslationService& service, int positions, int tokens) {
  QSignalSpy ready(&service, &TranslationService::tablesReady);
  const quint64 id = service.requestTables(positions, tokens);
  if (!ts::ui::test::wait_for_signal(ready)) return {};
  auto tables = ready.takeFirst().at(0).value<ModelTables>();
  if (tables.id != id) tables.error = QStringLiteral("wrong id");
  return tables;
}

TokenNeighbours request_neighbours(TranslationService& service, bool target, const QString& token, int k) {
  QSignalSpy ready(&service, &TranslationService::neighboursReady);
  const quint64 id = service.findNeighbours(target, token, k);
  if (!ts::ui::test::wait_for_signal(ready)) return {};
  auto result = ready.takeFirst().at(0).value<TokenNeighbours>();
  if (result.id != id) result.error = QStringLiteral("wrong id");
  return result;
}

// The Model anatomy panel on its own service, shown at `size` with the tab named `tab` open.
struct ShownPanel {
  StudioState state;
  TranslationService service;
  AnatomyPanel panel{&state};
  ShownPanel(const char* tab, QSize size) {
    panel.setTranslationService(&service);
    panel.resize(size);
    panel.show();
    panel.findChild<QTabWidget*>(QStringLiteral("anatomyTabs"))
        ->setCurrentWidget(panel.findChild<QWidget*>(QString::fromLatin1(tab)));
  }
};

void hover(QWidget* plot, QPointF pos) {
  QMouseEvent move(QEvent::MouseMove, pos, plot->mapToGlobal(pos), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
  QCoreApplication::sendEvent(plot, &move);
}

}  // namespace

class ModelTablesTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    QCoreApplication::setOrganizationName(QStringLiteral("TransformerStudioTests"));
    QVERIFY(learned_dir_.isValid() && sinusoidal_dir_.isValid());
    // Learned positions on the demo corpus (vocabularies of well over 50 words per side).
    auto config = ts::preset("tiny");
    config.model.positions = ts::Positions::kLearned;
    config.data.max_len = 40;  // learned positions need max_positions (64) >= max_len + 2
    config.train.max_steps = 60;
    const auto demo = ts::demo_corpus({600, 7});
    auto data = ts::prepare_data(demo, ts::parse_direction("en-de", demo), config.data);
    auto summary =
        ts::Trainer(config, std::move(data), {learned_dir_.path().toStdString(), "demo-deu.txt", "", nullptr}).run();
    QCOMPARE(summary.status, ts::RunStatus::kFinished);
    learned_ = learned_dir_.filePath(QStringLiteral("last.ckpt"));
    QVERIFY(QFileInfo::exists(learned_));

    // Sinusoidal positions on the tiny corpus.
    auto tiny = ts::preset("tiny");
    tiny.train.max_steps = 20;
    summary = ts::Trainer(tiny, ts::test::tiny_data(tiny, "en-de"),
                          {sinusoidal_dir_.path().toStdString(), "tiny-deu.txt", "", nullptr})
                  .run();
    QCOMPARE(summary.status, ts::RunStatus::kFinished);
    sinusoidal_ = sinusoidal_dir_.filePath(QStringLiteral("last.ckpt"));
    QVERIFY(QFileInfo::exists(sinusoidal_));
  }

  void withoutAModelTheServiceSaysHowToGetOne() {
    TranslationService service;
    const auto tables = request_tables(service, 10, 50);
    QVERIFY2(tables.error.contains(QStringLiteral("Load a checkpoint or start training")), qPrintable(tables.error));
    QCOMPARE(tables.positions, 0);
    const auto n = request_neighbours(service, true, QStringLiteral("Hund"), 5);
    QVERIFY(!n.error.isEmpty());
    QVERIFY(n.tokens.isEmpty());
    QVERIFY(!service.isBusy());  // table requests are not translations
  }

  void learnedTablesMatchTheModel() {
    TranslationService service;
    QVERIFY(load(service, learned_));
    const auto tables = request_tables(service, 40, 50);
    QVERIFY2(tables.error.isEmpty(), qPrintable(tables.error));
    QVERIFY(tables.model.contains(QStringLiteral("last.ckpt")));
    QVERIFY(tables.learned_positions);
    QCOMPARE(tables.max_positions, 64);  // the tiny preset's max_positions
    QCOMPARE(tables.positions, 40);
    QCOMPARE(tables.d_model, 32);
    QCOMPARE(tables.position_table.size(), 40 * 32);
    QCOMPARE(tables.position_similarity.size(), 40 * 40);

    // The same numbers as the model's own table, and as the analysis of it.
    auto loaded = ts::load_checkpoint(learned_.toStdString(), at::Device(at::kCPU));
    const at::Tensor table = loaded.model->position_table();
    for (int p : {0, 7, 39})
      for (int d : {0, 13, 31}) QCOMPARE(tables.position_table[p * 32 + d], table[p][d].item<float>());
    for (int i = 0; i < 40; ++i) {
      QVERIFY(std::abs(tables.position_similarity[i * 40 + i] - 1.0f) < 1e-6f);
      for (int j = 0; j < 40; ++j)
        QCOMPARE(tables.position_similarity[i * 40 + j], tables.position_similarity[j * 40 + i]);
    }
    const at::Tensor a = table[3], b = table[11];
    const double expected = (a * b).sum().item<double>() / (a.norm().item<double>() * b.norm().item<double>());
    QVERIFY(std::abs(tables.position_similarity[3 * 40 + 11] - expected) < 1e-5);

    // Each side: the 50 most frequent tokens (vocabulary ids 4.., no specials), projected by PCA.
    const auto& pipeline = loaded.pipeline;
    for (bool target : {false, true}) {
      const EmbeddingProjection& side = target ? tables.target : tables.source;
      const ts::Vocab& vocab = target ? *pipeline.tgt_vocab : *pipeline.src_vocab;
      QVERIFY(vocab.size() > 60);
      QCOMPARE(side.vocab_size, qint64(vocab.size()));
      QCOMPARE(side.language, target ? QStringLiteral("German") : QStringLiteral("English"));
      QCOMPARE(side.tokens.size(), 50);
      QCOMPARE(side.x.size(), 50);
      QCOMPARE(side.y.size(), 50);
      for (int i = 0; i < 50; ++i) {
        QCOMPARE(side.ids[i], qint64(i + 4));
        QCOMPARE(side.tokens[i], QString::fromStdString(vocab.token(i + 4)));
      }
      QVERIFY(!side.tokens.contains(QStringLiteral("</s>")) && !side.tokens.contains(QStringLiteral("<pad>")));
      QVERIFY(side.explained_x > 0 && side.explained_x <= 1);
      QVERIFY(side.explained_y > 0 && side.explained_y <= side.explained_x);
      QVERIFY(side.explained_x + side.explained_y <= 1 + 1e-9);
      const at::Tensor emb = loaded.model->embedding_table(target).slice(0, 4, 54).contiguous();
      const ts::FloatMatrix rows(50, 32,
                                 std::vector<float>(emb.data_ptr<float>(), emb.data_ptr<float>() + emb.numel()));
      const auto pca = ts::pca_2d(rows);
      QVERIFY(std::abs(side.explained_x - pca.explained[0]) < 1e-9);
      for (int i : {0, 17, 49}) {
        QVERIFY(std::abs(side.x[i] - pca.coordinates.at(i, 0)) < 1e-6);
        QVERIFY(std::abs(side.y[i] - pca.coordinates.at(i, 1)) < 1e-6);
      }
    }

    // Asking for more positions than the table has gives the whole table.
    QCOMPARE(request_tables(service, 1000, 50).positions, 64);
  }

  void sinusoidalTablesAreTheClosedForm() {
    TranslationService service;
    QVERIFY(load(service, sinusoidal_));
    const auto tables = request_tables(service, 48, 50);
    QVERIFY2(tables.error.isEmpty(), qPrintable(tables.error));
    QVERIFY(!tables.learned_positions);
    QCOMPARE(tables.positions, 48);
    const auto closed = ts::sinusoidal_values(48, 32);
    for (int i = 0; i < 48 * 32; ++i) QVERIFY(std::abs(tables.position_table[i] - closed[i]) < 1e-5);
    // Cosine similarity of the sinusoidal table: a function of the offset only.
    const auto similarity = ts::cosine_similarity_matrix(ts::FloatMatrix(48, 32, closed));
    for (int i = 0; i < 48; ++i)
      for (int j = 0; j < 48; ++j) {
        QVERIFY(std::abs(tables.position_similarity[i * 48 + j] - similarity.at(i, j)) < 1e-5);
        QVERIFY(std::abs(tables.position_similarity[i * 48 + j] - tables.position_similarity[std::abs(i - j)]) < 1e-4);
      }
    // The tiny corpus has fewer than 50 words a side: all of them are projected.
    QVERIFY(tables.target.tokens.size() > 5);
    QCOMPARE(tables.target.tokens.size(), int(tables.target.vocab_size - 4));
  }

  void neighboursAreTheMostSimilarTokens() {
    TranslationService service;
    QVERIFY(load(service, learned_));
    auto loaded = ts::load_checkpoint(learned_.toStdString(), at::Device(at::kCPU));
    const ts::Vocab& vocab = *loaded.pipeline.tgt_vocab;
    const QString word = QString::fromStdString(vocab.token(6));
    QVERIFY(request_tables(service, 16, 100).error.isEmpty());  // so the neighbours are projected
    const auto n = request_neighbours(service, true, word, 5);
    QVERIFY2(n.error.isEmpty(), qPrintable(n.error));
    QCOMPARE(n.token, word);
    QCOMPARE(n.token_id, qint64(6));
    QCOMPARE(n.tokens.size(), 5);
    // Against the analysis function on the model's table, specials excluded.
    const at::Tensor emb = loaded.model->embedding_table(true).contiguous();
    const ts::FloatMatrix all(int(emb.size(0)), int(emb.size(1)),
                              std::vector<float>(emb.data_ptr<float>(), emb.data_ptr<float>() + emb.numel()));
    const auto expected = ts::nearest_neighbours(all, 6, 5, {0, 1, 2, 3});
    for (int i = 0; i < 5; ++i) {
      QCOMPARE(n.ids[i], qint64(expected[i].row));
      QCOMPARE(n.tokens[i], QString::fromStdString(vocab.token(expected[i].row)));
      QVERIFY(std::abs(n.similarities[i] - expected[i].similarity) < 1e-9);
      if (i > 0) QVERIFY(n.similarities[i] <= n.similarities[i - 1]);
      QVERIFY(n.ids[i] >= 4 && n.ids[i] != 6);
    }
    QVERIFY(n.projected);
    QCOMPARE(n.xs.size(), 5);

    // Typed with spaces around: still found. Unknown: said so, naming the side.
    QCOMPARE(request_neighbours(service, true, QStringLiteral("  ") + word + QStringLiteral(" "), 3).token, word);
    const auto unknown = request_neighbours(service, true, QStringLiteral("xyz"), 5);
    QCOMPARE(unknown.error, QStringLiteral("\u201cxyz\u201d is not in the target vocabulary."));
    QVERIFY(unknown.tokens.isEmpty());
    QVERIFY(request_neighbours(service, false, QStringLiteral("Hund"), 5)
                .error.contains(QStringLiteral("source vocabulary")));
  }

  void panelShowsTheLearnedPositions() {
    ShownPanel on_screen("modelPositionsTab", {1000, 800});
    auto& [state, service, panel] = on_screen;
    auto* message = panel.findChild<QLabel*>(QStringLiteral("modelPositionsMessage"));
    QVERIFY(message->text().contains(QStringLiteral("Load a checkpoint or start training")));

    QSignalSpy ready(&service, &TranslationService::tablesReady);
    QVERIFY(load(service, learned_));
    QVERIFY(wait_until([&] { return panel.modelTables().learned_positions; }));  // asked for by the panel
    QCOMPARE(ready.count(), 1);
    auto* learned = panel.findChild<QCustomPlot*>(QStringLiteral("anatomyLearnedPositions"));
    auto* similarity = panel.findChild<QCustomPlot*>(QStringLiteral("anatomyPositionSimilarity"));
    QVERIFY(learned && similarity);
    QVERIFY(learned->isVisible() && similarity->isVisible());
    QVERIFY2(
        message->text().contains(QStringLiteral("learned")) && message->text().contains(QStringLiteral("last.ckpt")),
        qPrintable(message->text()));
    auto* count = panel.findChild<QSpinBox*>(QStringLiteral("modelPositionsCount"));
    QCOMPARE(count->value(), 64);
    QCPColorMap* table = color_map(learned);
    QCOMPARE(table->data()->keySize(), 32);
    QCOMPARE(table->data()->valueSize(), 64);
    QVERIFY(!table->interpolate());

    count->setValue(20);
    QVERIFY(wait_until([&] { return panel.modelTables().positions == 20; }));
    QCPColorMap* sim = color_map(similarity);
    QCOMPARE(sim->data()->keySize(), 20);
    QCOMPARE(sim->data()->valueSize(), 20);
    QCOMPARE(table->data()->valueSize(), 20);
    const auto& t = panel.modelTables();
    for (int i = 0; i < 20; ++i) {
      QVERIFY(std::abs(sim->data()->cell(i, i) - 1.0) < 1e-6);
      for (int j : {0, 5, 19}) QCOMPARE(sim->data()->cell(j, i), double(t.position_similarity[i * 20 + j]));
      QCOMPARE(table->data()->cell(7, i), double(t.position_table[i * 32 + 7]));
    }
    QCOMPARE(similarity->xAxis->label(), QStringLiteral("Position"));

    // Hovering a cell names both positions and the similarity.
    similarity->replot();
    const QPointF cell(similarity->xAxis->coordToPixel(5), similarity->yAxis->coordToPixel(2));
    hover(similarity, cell);
    const QString text = similarity->property("hoverText").toString();
    QVERIFY2(text.startsWith(QStringLiteral("positions 2 and 5 (distance 3): cosine similarity ")), qPrintable(text));
    QVERIFY(text.endsWith(QString::number(t.position_similarity[2 * 20 + 5], 'f', 3)));
  }

  void panelExplainsTheSinusoidalPositions() {
    StudioState state;
    TranslationService service;
    QVERIFY(load(service, sinusoidal_));
    AnatomyPanel panel(&state);
    panel.setTranslationService(&service);  // a model is already there
    panel.show();
    panel.findChild<QTabWidget*>(QStringLiteral("anatomyTabs"))
        ->setCurrentWidget(panel.findChild<QWidget*>(QStringLiteral("modelPositionsTab")));
    QVERIFY(wait_until([&] { return panel.modelTables().positions > 0; }));
    QVERIFY(!panel.findChild<QCustomPlot*>(QStringLiteral("anatomyLearnedPositions"))->isVisible());
    auto* similarity = panel.findChild<QCustomPlot*>(QStringLiteral("anatomyPositionSimilarity"));
    QVERIFY(similarity->isVisible());
    QCPColorMap* sim = color_map(similarity);
    QCOMPARE(sim->data()->keySize(), 64);
    // Constant diagonals.
    for (int i = 10; i < 64; ++i) QVERIFY(std::abs(sim->data()->cell(i, i - 10) - sim->data()->cell(10, 0)) < 1e-4);
    const QString note = panel.findChild<QLabel*>(QStringLiteral("modelPositionsNote"))->text();
    QVERIFY2(note.contains(QStringLiteral("sinusoidal")) && note.contains(QStringLiteral("distance")),
             qPrintable(note));
    QVERIFY(panel.findChild<QLabel*>(QStringLiteral("modelPositionsMessage"))
                ->text()
                .contains(QStringLiteral("sinusoidal")));
  }

  // A model whose languages share one vocabulary and one embedding table: the note says so, and
  // names no single language's vocabulary.
  void aSharedVocabularyIsNamedAsShared() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto config = ts::preset("tiny");
    config.data.shared_vocab = true;
    config.model.share_embeddings = true;
    config.train.max_steps = 5;
    const auto summary = ts::Trainer(config, ts::test::tiny_data(config, "en-de"),
                                     {dir.path().toStdString(), "tiny-deu.txt", "", nullptr})
                             .run();
    QCOMPARE(summary.status, ts::RunStatus::kFinished);
    ShownPanel on_screen("embeddingsTab", {1100, 800});
    auto& [state, service, panel] = on_screen;
    QVERIFY(load(service, dir.filePath(QStringLiteral("last.ckpt"))));
    QVERIFY(wait_until([&] { return !panel.modelTables().source.tokens.isEmpty(); }));
    QVERIFY(panel.modelTables().shared_embeddings);
    auto* note = panel.findChild<QLabel*>(QStringLiteral("embeddingNote"));
    QVERIFY(note);
    QVERIFY2(note->text().contains(QStringLiteral("the vocabulary English and German share")),
             qPrintable(note->text()));
    QVERIFY2(note->text().contains(QStringLiteral("Source and Target show the same points")), qPrintable(note->text()));
    // A token's neighbours are found in the space both languages share, not in "the English space".
    const QString word = panel.modelTables().source.tokens[2];
    auto* search = panel.findChild<QLineEdit*>(QStringLiteral("embeddingSearch"));
    auto* message = panel.findChild<QLabel*>(QStringLiteral("embeddingMessage"));
    QVERIFY(search && message);
    search->setText(word);
    QTest::keyClick(search, Qt::Key_Return);
    QVERIFY(wait_until([&] { return message->text().contains(QStringLiteral("nearest")); }));
    QVERIFY2(message->text().contains(QStringLiteral("in the embedding space English and German share")),
             qPrintable(message->text()));
    // Not shared: the side's own vocabulary, named by its language.
    QVERIFY(load(service, learned_));
    QVERIFY(wait_until([&] { return !panel.modelTables().shared_embeddings; }));
    QVERIFY(wait_until([&] { return note->text().contains(QStringLiteral("of the English vocabulary")); }));
  }

  void embeddingsScatterAndNeighbours() {
    ShownPanel on_screen("embeddingsTab", {1100, 800});
    auto& [state, service, panel] = on_screen;
    auto* scatter = panel.findChild<QCustomPlot*>(QStringLiteral("embeddingScatter"));
    auto* side = panel.findChild<QComboBox*>(QStringLiteral("embeddingSide"));
    auto* count = panel.findChild<QSpinBox*>(QStringLiteral("embeddingCount"));
    auto* search = panel.findChild<QLineEdit*>(QStringLiteral("embeddingSearch"));
    auto* table = panel.findChild<QTableWidget*>(QStringLiteral("embeddingNeighbours"));
    auto* message = panel.findChild<QLabel*>(QStringLiteral("embeddingMessage"));
    QVERIFY(scatter && side && count && search && table && message);
    QVERIFY(message->text().contains(QStringLiteral("Load a checkpoint or start training")));
    QVERIFY(text_items(scatter).isEmpty());

    QVERIFY(load(service, learned_));
    QVERIFY(wait_until([&] { return !panel.modelTables().source.tokens.isEmpty(); }));
    QCOMPARE(count->value(), 200);
    count->setValue(50);
    QVERIFY(wait_until([&] { return panel.modelTables().source.tokens.size() == 50; }));
    const auto& tables = panel.modelTables();
    QCOMPARE(side->currentText(), QStringLiteral("Source (English)"));
    QCPGraph* points = graph_named(scatter, QStringLiteral("tokens"));
    QVERIFY(points);
    QCOMPARE(points->dataCount(), 50);
    // The plotted points are the projected tokens (QCustomPlot keeps them sorted by x).
    QSet<QPair<double, double>> plotted, projected;
    for (int i = 0; i < points->dataCount(); ++i)
      plotted.insert({points->data()->at(i)->key, points->data()->at(i)->value});
    for (int i = 0; i < 50; ++i) projected.insert({tables.source.x[i], tables.source.y[i]});
    QCOMPARE(plotted, projected);
    QCOMPARE(text_items(scatter).size(), 50);
    QSet<QString> labels;
    for (auto* item : text_items(scatter)) labels << item->text();
    QCOMPARE(labels, QSet<QString>(tables.source.tokens.begin(), tables.source.tokens.end()));
    QVERIFY2(scatter->xAxis->label().startsWith(QStringLiteral("PC 1 (")) &&
                 scatter->xAxis->label().contains(QStringLiteral("% of the variance")),
             qPrintable(scatter->xAxis->label()));
    QVERIFY(scatter->xAxis->label().contains(QString::number(100 * tables.source.explained_x, 'f', 1)));
    QVERIFY(scatter->yAxis->label().contains(QString::number(100 * tables.source.explained_y, 'f', 1)));

    // Labels are thinned: some drawn, none overlapping.
    scatter->replot();
    const QStringList visible = panel.visibleEmbeddingLabels();
    QVERIFY(!visible.isEmpty());
    QVERIFY(visible.contains(tables.source.tokens[0]));  // the most frequent token is labelled first
    QList<QRectF> boxes;  // the text of each label (its 5-pixel left padding keeps it off its point)
    for (auto* item : text_items(scatter))
      if (item->visible())
        boxes << QRectF(item->topLeft->pixelPosition(), item->bottomRight->pixelPosition()).adjusted(6, 1, -1, -1);
    for (int i = 0; i < boxes.size(); ++i)
      for (int j = i + 1; j < boxes.size(); ++j) QVERIFY2(!boxes[i].intersects(boxes[j]), "overlapping labels");
    // Shrinking the plot hides more labels.
    scatter->resize(320, 260);
    scatter->replot();
    QVERIFY(panel.visibleEmbeddingLabels().size() <= visible.size());

    // Hovering a point shows its token.
    scatter->resize(700, 500);
    scatter->replot();
    const QPointF at(scatter->xAxis->coordToPixel(tables.source.x[3]),
                     scatter->yAxis->coordToPixel(tables.source.y[3]));
    hover(scatter, at);
    QString hover_text = scatter->property("hoverText").toString();
    QVERIFY2(hover_text.startsWith(tables.source.tokens[3] + QStringLiteral("\nfrequency rank 4 (id 7)")),
             qPrintable(hover_text));

    // Target side, search a token: neighbours listed and ringed, the token starred.
    side->setCurrentIndex(1);
    QCOMPARE(side->currentText(), QStringLiteral("Target (German)"));
    QCOMPARE(points->dataCount(), 50);
    labels.clear();
    for (auto* item : text_items(scatter)) labels << item->text();
    QCOMPARE(labels, QSet<QString>(tables.target.tokens.begin(), tables.target.tokens.end()));
    const QString word = tables.target.tokens[2];
    search->setText(word);
    QTest::keyClick(search, Qt::Key_Return);
    QVERIFY(wait_until([&] { return table->rowCount() == 10; }));
    QCOMPARE(panel.neighbours().token, word);
    QVERIFY(panel.neighbours().target);
    QVERIFY2(message->text().contains(word) && message->text().contains(QStringLiteral("German")),
             qPrintable(message->text()));
    for (int r = 0; r < 10; ++r) {
      QCOMPARE(table->item(r, 0)->text(), panel.neighbours().tokens[r]);
      QCOMPARE(table->item(r, 1)->text(), QString::number(panel.neighbours().similarities[r], 'f', 3));
      if (r > 0)
        QVERIFY(table->item(r, 1)->data(Qt::UserRole).toDouble() <=
                table->item(r - 1, 1)->data(Qt::UserRole).toDouble());
    }
    QCPGraph* ringed = graph_named(scatter, QStringLiteral("neighbours"));
    QCPGraph* starred = graph_named(scatter, QStringLiteral("searched token"));
    QCOMPARE(ringed->dataCount(), 10);
    QCOMPARE(starred->dataCount(), 1);
    QVERIFY(std::abs(starred->data()->at(0)->key - tables.target.x[2]) < 1e-5);
    QVERIFY(std::abs(starred->data()->at(0)->value - tables.target.y[2]) < 1e-5);
    // Highlighted labels are drawn in bold and placed first: the searched token's always, then the
    // neighbours by rank; still no two labels overlap. One label per token.
    scatter->replot();
    const QStringList shown = panel.visibleEmbeddingLabels();
    QVERIFY(shown.contains(word));
    QVERIFY(shown.contains(panel.neighbours().tokens[0]) || panel.neighbours().xs.isEmpty());
    boxes.clear();
    for (auto* item : text_items(scatter))
      if (item->visible())
        boxes << QRectF(item->topLeft->pixelPosition(), item->bottomRight->pixelPosition()).adjusted(6, 1, -1, -1);
    for (int i = 0; i < boxes.size(); ++i)
      for (int j = i + 1; j < boxes.size(); ++j) QVERIFY2(!boxes[i].intersects(boxes[j]), "overlapping labels");
    QCOMPARE(
        text_items(scatter).size(), 50 + [&] {
          int outside = 0;  // neighbours that are not among the 50 plotted tokens get their own label
          for (qint64 id : panel.neighbours().ids) outside += !tables.target.ids.contains(id);
          return outside;
        }());
    int bold = 0;
    for (auto* item : text_items(scatter)) bold += item->font().bold();
    QCOMPARE(bold, 11);
    const QPointF star(scatter->xAxis->coordToPixel(tables.target.x[2]),
                       scatter->yAxis->coordToPixel(tables.target.y[2]));
    hover(scatter, star);
    hover_text = scatter->property("hoverText").toString();
    QVERIFY2(hover_text.startsWith(word) && hover_text.contains(QStringLiteral("searched token")),
             qPrintable(hover_text));

    // Fewer neighbours: the search is asked again.
    panel.findChild<QSpinBox*>(QStringLiteral("embeddingK"))->setValue(3);
    QVERIFY(wait_until([&] { return table->rowCount() == 3 && ringed->dataCount() == 3; }));

    // An unknown token: said so, nothing highlighted.
    search->clear();
    QTest::keyClicks(search, QStringLiteral("xyz"));
    QTest::keyClick(search, Qt::Key_Return);
    QVERIFY(wait_until([&] { return message->text().contains(QStringLiteral("xyz")); }));
    QCOMPARE(message->text(), QStringLiteral("\u201cxyz\u201d is not in the target vocabulary."));
    QCOMPARE(table->rowCount(), 0);
    QCOMPARE(ringed->dataCount(), 0);
    QCOMPARE(starred->dataCount(), 0);

    // Clicking a point lists that token's neighbours.
    const QPoint click(qRound(scatter->xAxis->coordToPixel(tables.target.x[0])),
                       qRound(scatter->yAxis->coordToPixel(tables.target.y[0])));
    QTest::mouseClick(scatter, Qt::LeftButton, Qt::NoModifier, click);
    QVERIFY(wait_until([&] { return table->rowCount() == 3 && panel.neighbours().token == tables.target.tokens[0]; }));
    QCOMPARE(search->text(), tables.target.tokens[0]);

    // A new model: the tables and the search follow it.
    QVERIFY(load(service, sinusoidal_));
    QVERIFY(wait_until([&] { return !panel.modelTables().learned_positions && panel.modelTables().positions > 0; }));
    QVERIFY(panel.modelTables().target.tokens.size() < 50);  // the tiny corpus
    QCOMPARE(points->dataCount(), panel.modelTables().target.tokens.size());
  }

 private:
  QTemporaryDir learned_dir_, sinusoidal_dir_;
  QString learned_, sinusoidal_;
};

QTEST_MAIN(ModelTablesTest)
#include "model_tables_test.moc"
