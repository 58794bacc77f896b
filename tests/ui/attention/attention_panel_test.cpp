// SPDX-License-Identifier: GPL-3.0-or-later
// AttentionPanel on synthetic results whose attention is known (identity, shifted, uniform,
// permuted heads): the model view's thumbnails, the large map per kind (rows, columns, labels,
// values, the causal mask), head averages, clicking a thumbnail, the per-head summary table, the
// SVG/JSON/PNG exports, the empty and no-model states, a 64-token sentence with 6 × 8 heads, and
// a sentence translated through the service by a real (tiny) model.
//
// LibTorch headers come first: Qt's keyword macros (slots, signals) must not be defined yet.
#include "test_utils.h"
#include "ts/train/trainer.h"

#include <cmath>

#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QAbstractButton>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStackedWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <nlohmann/json.hpp>
#include <qcustomplot.h>

#include "attention/attention_export.h"
#include "widgets/attention_heatmap.h"
#include "attention/attention_panel.h"
#include "widgets/attention_thumbnail.h"
#include "widgets/bidi_delegate.h"
#include "services/translation_service.h"
#include "shell/studio_state.h"
#include "ts/text/split.h"
#include "ts/text/corpus.h"
#include "ui_test_utils.h"

using namespace ts::ui;
using ts::AttentionKind;
using ts::ui::test::wait_until;
using Matrix = std::vector<std::vector<double>>;
using Layers = std::vector<std::vector<Matrix>>;  // [layer][head]

namespace {

Matrix identity(int rows, int columns) {
  Matrix m(rows, std::vector<double>(columns, 0.0));
  for (int r = 0; r < rows; ++r) m[r][std::min(r, columns - 1)] = 1;
  return m;
}
// Row r on key r - 1 (row 0 on itself).
Matrix shifted(int n) {
  Matrix m(n, std::vector<double>(n, 0.0));
  for (int r = 0; r < n; ++r) m[r][r == 0 ? 0 : r - 1] = 1;
  return m;
}
Matrix uniform(int rows, int columns, bool causal = false) {
  Matrix m(rows, std::vector<double>(columns, 0.0));
  for (int r = 0; r < rows; ++r) {
    const int keys = causal ? std::min(r + 1, columns) : columns;
    for (int c = 0; c < keys; ++c) m[r][c] = 1.0 / keys;
  }
  return m;
}
Matrix last_column(int rows, int columns) {
  Matrix m(rows, std::vector<double>(columns, 0.0));
  for (auto& row : m) row[columns - 1] = 1;
  return m;
}
// Cross-attention that jumps around the source: target r aligned to perm[r].
Matrix permuted(int rows, int columns) {
  Matrix m(rows, std::vector<double>(columns, 0.0));
  for (int r = 0; r < rows; ++r) m[r][r + 1 == rows ? columns - 1 : (r * 3 + 2) % (columns - 1)] = 1;
  return m;
}

const QStringList kSource = {QStringLiteral("▁Ich"), QStringLiteral("sehe"),  QStringLiteral("<unk>"),
                             QStringLiteral("&"),    QStringLiteral("Katze"), QStringLiteral("."),
                             QStringLiteral("</s>")};
const QStringList kTarget = {QStringLiteral("I"),   QStringLiteral("see"), QStringLiteral("a"),
                             QStringLiteral("cat"), QStringLiteral("."),   QStringLiteral("</s>")};

nlohmann::json tokens(const QStringList& list) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& t : list) j.push_back(t.toStdString());
  return j;
}

// 2 layers × 3 heads of each kind, S = 7 source and T = 6 target tokens:
//   encoder  L1: identity, shifted, uniform        L2: shifted, identity, last column (</s>)
//   decoder  L1: identity, shifted, causal uniform L2: shifted, identity, causal uniform
//   cross    L1: monotone, permuted, uniform       L2: permuted, monotone, last column
TranslationResult synthetic_result(quint64 id = 7) {
  const int S = kSource.size(), T = kTarget.size();
  TranslationResult r;
  r.id = id;
  r.source = QStringLiteral("Ich sehe <unk> & Katze.");
  r.text = QStringLiteral("I see a cat.");
  r.model = QStringLiteral("synthetic model");
  r.source_tokens = kSource;
  r.target_tokens = kTarget;
  r.attention = nlohmann::json::object();
  r.attention["source_tokens"] = tokens(kSource);
  r.attention["target_tokens"] = tokens(kTarget);
  r.attention["encoder_self"] =
      Layers{{identity(S, S), shifted(S), uniform(S, S)}, {shifted(S), identity(S, S), last_column(S, S)}};
  r.attention["decoder_self"] =
      Layers{{identity(T, T), shifted(T), uniform(T, T, true)}, {shifted(T), identity(T, T), uniform(T, T, true)}};
  r.attention["cross"] =
      Layers{{identity(T, S), permuted(T, S), uniform(T, S)}, {permuted(T, S), identity(T, S), last_column(T, S)}};
  return r;
}

// A long sentence: n source and target tokens, 6 layers × 8 heads, softmax-like random rows.
TranslationResult long_result(int n, int layers, int heads) {
  TranslationResult r;
  r.id = 99;
  QStringList src, tgt;
  for (int i = 0; i + 1 < n; ++i) src << QStringLiteral("▁w%1").arg(i), tgt << QStringLiteral("t%1").arg(i);
  src << QStringLiteral("</s>");
  tgt << QStringLiteral("</s>");
  r.source = src.join(QLatin1Char(' '));
  r.text = tgt.join(QLatin1Char(' '));
  r.source_tokens = src;
  r.target_tokens = tgt;
  std::uint32_t seed = 12345;
  const auto next = [&] { return (seed = seed * 1664525u + 1013904223u) / 4294967296.0; };
  const auto make = [&](bool causal) {
    nlohmann::json layers_json = nlohmann::json::array();
    for (int l = 0; l < layers; ++l) {
      nlohmann::json heads_json = nlohmann::json::array();
      for (int h = 0; h < heads; ++h) {
        Matrix m(n, std::vector<double>(n, 0.0));
        for (int q = 0; q < n; ++q) {
          double sum = 0;
          const int keys = causal ? q + 1 : n;
          for (int k = 0; k < keys; ++k) sum += (m[q][k] = std::exp(4 * next()));
          for (int k = 0; k < keys; ++k) m[q][k] /= sum;
        }
        heads_json.push_back(m);
      }
      layers_json.push_back(heads_json);
    }
    return layers_json;
  };
  r.attention = nlohmann::json::object();
  r.attention["source_tokens"] = tokens(src);
  r.attention["target_tokens"] = tokens(tgt);
  r.attention["encoder_self"] = make(false);
  r.attention["decoder_self"] = make(true);
  r.attention["cross"] = make(false);
  return r;
}

Matrix json_matrix(const nlohmann::json& j) { return j.get<Matrix>(); }

// Parses an exported SVG: an error message (empty when well-formed with an <svg> root), and the
// number of <rect class="cell"> and <rect class="masked">, and every <text>.
QString read_svg(const QString& path, int* cells, int* masked, QStringList* texts) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return QStringLiteral("cannot open");
  QXmlStreamReader xml(&file);
  *cells = *masked = 0;
  bool root = false;
  while (!xml.atEnd()) {
    if (xml.readNext() != QXmlStreamReader::StartElement) continue;
    if (xml.name() == QLatin1String("svg")) root = true;
    if (xml.name() == QLatin1String("rect")) {
      const auto cls = xml.attributes().value(QLatin1String("class"));
      if (cls == QLatin1String("cell")) ++*cells;
      if (cls == QLatin1String("masked")) ++*masked;
    }
    if (xml.name() == QLatin1String("text")) *texts << xml.readElementText();
  }
  if (xml.hasError()) return xml.errorString();
  return root ? QString() : QStringLiteral("no <svg> root");
}

struct Fixture {
  TranslationService service;  // no model: the panel only needs it to exist
  AttentionPanel panel{&service};

  Fixture() {
    panel.resize(1300, 900);
    panel.show();
  }
  template <class T>
  T* find(const char* name) {
    return test::find_child<T>(&panel, name);
  }
  QList<AttentionThumbnail*> thumbs() { return find<QWidget>("attentionGrid")->findChildren<AttentionThumbnail*>(); }
  QStringList gridLabels() {
    QStringList out;
    for (auto* label : find<QWidget>("attentionGrid")->findChildren<QLabel*>()) out << label->text();
    return out;
  }
  AttentionHeatmap* large() { return find<AttentionHeatmap>("attentionLarge"); }
  QCPColorMap* colorMap() { return qobject_cast<QCPColorMap*>(large()->plot()->plottable(0)); }
  QTableView* table() { return find<QTableView>("attentionSummary"); }
  QString tableText(int row, int column) { return table()->model()->index(row, column).data().toString(); }
};

}  // namespace

class AttentionPanelTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void emptyStateAndNoModel() {
    Fixture f;
    QVERIFY(QTest::qWaitForWindowExposed(&f.panel));
    auto* pages = f.panel.findChild<QStackedWidget*>();
    QVERIFY(pages);
    QCOMPARE(pages->currentWidget(), f.find<QLabel>("attentionEmpty"));
    QCOMPARE(f.find<QLabel>("attentionEmpty")->text(),
             QStringLiteral("Translate a sentence to explore its attention."));
    QVERIFY(!f.find<QComboBox>("attentionKind")->isEnabled());
    QVERIFY(!f.find<QAbstractButton>("attentionExport")->isEnabled());
    // Without a model the sentence line says so and cannot be used.
    QVERIFY(!f.service.hasModel());
    QVERIFY(!f.find<QLineEdit>("attentionInput")->isEnabled());
    QVERIFY(!f.find<QPushButton>("attentionTranslate")->isEnabled());
    QVERIFY(f.find<QLabel>("attentionStatus")->text().contains(QStringLiteral("No model")));
    f.panel.translateText(QStringLiteral("Ich sehe eine Katze."));  // ignored, no crash
    QVERIFY(!f.service.isBusy());
    QCOMPARE(f.thumbs().size(), 0);
    QString error;
    QTemporaryDir dir;
    QVERIFY(!f.panel.exportSvg(dir.filePath(QStringLiteral("x.svg")), &error));
    QVERIFY(error.contains(QStringLiteral("Nothing to export")));
    QVERIFY(!f.panel.exportJson(dir.filePath(QStringLiteral("x.json")), &error));
  }

  void modelViewAndLargeMapPerKind() {
    Fixture f;
    const auto r = synthetic_result();
    f.panel.showResult(r);
    QCOMPARE(f.panel.result().id, r.id);
    QVERIFY(f.find<QLabel>("attentionSentence")
                ->text()
                .contains(ts::ui::isolated(QStringLiteral("Ich sehe <unk> & Katze.")) + QStringLiteral("  →  ") +
                          ts::ui::isolated(QStringLiteral("I see a cat."))));
    QVERIFY(f.find<QComboBox>("attentionKind")->isEnabled());

    struct Expect {
      AttentionKind kind;
      int rows, columns;
      QStringList row_labels, column_labels;
      QString row_title;
    };
    const QStringList decoder_inputs = {QStringLiteral("<s>"), QStringLiteral("I"),   QStringLiteral("see"),
                                        QStringLiteral("a"),   QStringLiteral("cat"), QStringLiteral(".")};
    const Expect expects[] = {
        {AttentionKind::EncoderSelf, 7, 7, kSource, kSource, QStringLiteral("query (source token)")},
        {AttentionKind::DecoderSelf, 6, 6, decoder_inputs, decoder_inputs,
         QStringLiteral("query (decoder input, predicts the next token)")},
        {AttentionKind::Cross, 6, 7, kTarget, kSource, QStringLiteral("output (target token)")},
    };
    auto* kind = f.find<QComboBox>("attentionKind");
    for (const auto& e : expects) {
      kind->setCurrentIndex(kind->findData(static_cast<int>(e.kind)));
      QCOMPARE(f.panel.kind(), e.kind);
      // 2 layers × (3 heads + the average).
      const auto thumbs = f.thumbs();
      QCOMPARE(thumbs.size(), 2 * 4);
      for (int l = 0; l < 2; ++l)
        for (int h = -1; h < 3; ++h) {
          auto* t = f.find<AttentionThumbnail>(qPrintable(QStringLiteral("attentionThumb_%1_%2").arg(l).arg(h)));
          QVERIFY(t);
          QCOMPARE(t->image().width(), e.columns);  // one pixel per cell
          QCOMPARE(t->image().height(), e.rows);
          QVERIFY(!t->caption().isEmpty());
        }
      const QStringList labels = f.gridLabels();
      for (const char* l : {"L1", "L2", "H1", "H2", "H3", "avg"}) QVERIFY2(labels.contains(QString::fromLatin1(l)), l);
      QVERIFY(!labels.contains(QStringLiteral("L3")));
      QVERIFY(!labels.contains(QStringLiteral("H4")));

      auto* large = f.large();
      QCOMPARE(large->rowCount(), e.rows);
      QCOMPARE(large->columnCount(), e.columns);
      QCOMPARE(large->cellCount(), e.rows * e.columns);
      QCOMPARE(large->rowLabels(), e.row_labels);
      QCOMPARE(large->columnLabels(), e.column_labels);
      QCOMPARE(large->plot()->yAxis->label(), e.row_title);
      // Layer and head combos: 2 layers; "Average of heads" then 3 heads.
      auto* layer = f.find<QComboBox>("attentionLayerCombo");
      auto* head = f.find<QComboBox>("attentionHeadCombo");
      QCOMPARE(layer->count(), 2);
      QCOMPARE(head->count(), 4);
      QCOMPARE(head->itemText(0), QStringLiteral("Average of heads"));
      QCOMPARE(head->itemText(3), QStringLiteral("Head 3"));
    }
  }

  void clickingAThumbnailOpensItLarge() {
    Fixture f;
    QVERIFY(QTest::qWaitForWindowExposed(&f.panel));
    const auto r = synthetic_result();
    f.panel.showResult(r);
    f.panel.setKind(AttentionKind::Cross);
    // Default: the last layer's average.
    QCOMPARE(f.panel.selectedLayer(), 1);
    QCOMPARE(f.panel.selectedHead(), -1);
    QVERIFY(f.panel.thumbnail(1, -1)->isSelected());

    auto* thumb = f.find<AttentionThumbnail>("attentionThumb_0_1");  // layer 1, head 2: the permuted map
    QVERIFY(thumb);
    QVERIFY(wait_until([&] { return thumb->isVisible() && thumb->width() > 0; }));
    QTest::mouseClick(thumb, Qt::LeftButton, Qt::NoModifier, thumb->rect().center());
    QCOMPARE(f.panel.selectedLayer(), 0);
    QCOMPARE(f.panel.selectedHead(), 1);
    QCOMPARE(f.find<QComboBox>("attentionLayerCombo")->currentIndex(), 0);
    QCOMPARE(f.find<QComboBox>("attentionHeadCombo")->currentIndex(), 2);
    QVERIFY(thumb->isSelected());
    QVERIFY(!f.panel.thumbnail(1, -1)->isSelected());
    const Matrix expected = json_matrix(r.attention["cross"][0][1]);
    auto* large = f.large();
    for (int q = 0; q < large->rowCount(); ++q)
      for (int k = 0; k < large->columnCount(); ++k) QCOMPARE(large->value(q, k), expected[q][k]);
    // The summary table follows: its current row is layer 1, head 2.
    const QModelIndex current = f.table()->selectionModel()->currentIndex();
    QVERIFY(current.isValid());
    QCOMPARE(f.tableText(current.row(), 0), QStringLiteral("1"));
    QCOMPARE(f.tableText(current.row(), 1), QStringLiteral("2"));
    QCOMPARE(f.tableText(current.row(), 2), QStringLiteral("reordering"));
    QVERIFY(f.find<QLabel>("attentionHeadInfo")->text().contains(QStringLiteral("reordering")));

    // The head combo back to the average: the mean of the three heads, cell by cell.
    f.find<QComboBox>("attentionHeadCombo")->setCurrentIndex(0);
    QCOMPARE(f.panel.selectedHead(), -1);
    QVERIFY(f.panel.thumbnail(0, -1)->isSelected());
    for (int q = 0; q < large->rowCount(); ++q)
      for (int k = 0; k < large->columnCount(); ++k) {
        double mean = 0;
        for (int h = 0; h < 3; ++h) mean += r.attention["cross"][0][h][q][k].get<double>() / 3;
        QVERIFY2(std::abs(large->value(q, k) - mean) < 1e-12, qPrintable(QStringLiteral("%1,%2").arg(q).arg(k)));
      }
    // The average thumbnail draws the same values (viridis over [0, 1]).
    const QImage avg = f.panel.thumbnail(0, -1)->image();
    QCOMPARE(avg.pixel(0, 0), attention_color(large->value(0, 0)));
    QCOMPARE(avg.pixel(3, 2), attention_color(large->value(2, 3)));

    // Keyboard: a focused thumbnail opens with Enter.
    auto* other = f.panel.thumbnail(1, 2);
    other->setFocus();
    QTest::keyClick(other, Qt::Key_Return);
    QCOMPARE(f.panel.selectedLayer(), 1);
    QCOMPARE(f.panel.selectedHead(), 2);
  }

  void decoderSelfShowsTheCausalMask() {
    Fixture f;
    QVERIFY(QTest::qWaitForWindowExposed(&f.panel));
    const auto r = synthetic_result();
    f.panel.showResult(r);
    f.panel.setKind(AttentionKind::DecoderSelf);
    f.panel.selectHead(0, 2);  // causal uniform
    auto* large = f.large();
    QCOMPARE(large->rowCount(), 6);
    QCOMPARE(large->value(3, 0), 0.25);
    QCOMPARE(large->value(3, 3), 0.25);
    QCOMPARE(large->value(3, 4), 0.0);
    auto* map = f.colorMap();
    QVERIFY(map);
    int masked = 0, shown = 0;
    for (int q = 0; q < 6; ++q)
      for (int k = 0; k < 6; ++k) {
        const int alpha = map->data()->alpha(k, q);
        if (k > q) {
          QCOMPARE(alpha, 0);
          ++masked;
        } else {
          QCOMPARE(alpha, 255);
          ++shown;
        }
      }
    QCOMPARE(masked, 15);
    QCOMPARE(shown, 21);
    QCOMPARE(f.panel.largeCellText(1, 4), QStringLiteral("I ← cat: masked: later tokens"));
    QVERIFY(f.panel.largeCellText(4, 1).startsWith(QStringLiteral("cat ← I: 0.2")));
    // Thumbnails: masked cells are transparent, the others opaque.
    const QImage img = f.panel.thumbnail(0, 2)->image();
    QCOMPARE(qAlpha(img.pixel(4, 1)), 0);
    QCOMPARE(qAlpha(img.pixel(1, 4)), 255);
    // The hint under the map names the mask, and wraps rather than widening the window: on one line,
    // with a desktop's fonts, it made a 1280-pixel window 1332 wide.
    auto* hint = f.panel.findChild<QLabel*>(QStringLiteral("attentionHover"));
    QVERIFY(hint && hint->text().contains(QStringLiteral("causal mask")));
    QVERIFY2(hint->minimumSizeHint().width() < hint->fontMetrics().horizontalAdvance(hint->text()) / 2,
             qPrintable(QStringLiteral("the hint asks for %1 px").arg(hint->minimumSizeHint().width())));

    // Hovering a masked cell says so under the map.
    auto* plot = large->findChild<QWidget*>(QStringLiteral("heatmapPlot"));
    QVERIFY(plot);
    QVERIFY(wait_until([&] { return large->cellAt(large->cellCenter(1, 4), nullptr, nullptr); }));
    const QPoint pos = large->cellCenter(1, 4);
    QMouseEvent move(QEvent::MouseMove, QPointF(pos), plot->mapToGlobal(QPointF(pos)), Qt::NoButton, Qt::NoButton,
                     Qt::NoModifier);
    QCoreApplication::sendEvent(plot, &move);
    QCOMPARE(f.find<QLabel>("attentionHover")->text(), QStringLiteral("I ← cat: masked: later tokens"));

    // Switching to a kind without a mask clears it.
    f.panel.setKind(AttentionKind::EncoderSelf);
    for (int q = 0; q < large->rowCount(); ++q)
      for (int k = 0; k < large->columnCount(); ++k) QCOMPARE(int(map->data()->alpha(k, q)), 255);
  }

  void summaryTableNamesThePatterns() {
    Fixture f;
    const auto r = synthetic_result();
    f.panel.showResult(r);
    auto* table = f.table();
    const auto patterns = [&] {
      QMap<QPair<int, int>, QString> out;
      for (int row = 0; row < table->model()->rowCount(); ++row)
        out[{f.tableText(row, 0).toInt(), f.tableText(row, 1).toInt()}] = f.tableText(row, 2);
      return out;
    };
    f.panel.setKind(AttentionKind::EncoderSelf);
    QCOMPARE(table->model()->rowCount(), 2 * 3);
    QCOMPARE(table->model()->columnCount(), 7);
    auto p = patterns();
    QCOMPARE(p[qMakePair(1, 1)], QStringLiteral("same token (diagonal)"));
    QCOMPARE(p[qMakePair(1, 2)], QStringLiteral("previous token"));
    QCOMPARE(p[qMakePair(1, 3)], QStringLiteral("broad"));
    QCOMPARE(p[qMakePair(2, 1)], QStringLiteral("previous token"));
    QCOMPARE(p[qMakePair(2, 3)], QStringLiteral("end of sentence (</s>)"));
    QVERIFY(table->isColumnHidden(6));  // monotonicity: cross-attention only
    // The uniform head: normalised entropy 1.00, mean entropy log 7.
    for (int row = 0; row < table->model()->rowCount(); ++row)
      if (f.tableText(row, 2) == QStringLiteral("broad")) {
        QCOMPARE(f.tableText(row, 5), QStringLiteral("1.00"));
        QCOMPARE(f.tableText(row, 4), QString::number(std::log(7.0), 'f', 2));
      }
    // The thumbnail captions say the same.
    QCOMPARE(f.panel.thumbnail(0, 1)->caption(), QStringLiteral("prev 100%"));
    QCOMPARE(f.panel.thumbnail(0, 0)->caption(), QStringLiteral("diag 100%"));
    QVERIFY(f.panel.thumbnail(0, 1)->toolTip().contains(QStringLiteral("previous token (100%)")));

    f.panel.setKind(AttentionKind::DecoderSelf);
    p = patterns();
    QCOMPARE(p[qMakePair(1, 1)], QStringLiteral("same token (diagonal)"));
    QCOMPARE(p[qMakePair(1, 2)], QStringLiteral("previous token"));
    QCOMPARE(p[qMakePair(1, 3)], QStringLiteral("broad"));

    f.panel.setKind(AttentionKind::Cross);
    QVERIFY(!table->isColumnHidden(6));
    p = patterns();
    QCOMPARE(p[qMakePair(1, 1)], QStringLiteral("alignment"));
    QCOMPARE(p[qMakePair(1, 2)], QStringLiteral("reordering"));
    QCOMPARE(p[qMakePair(1, 3)], QStringLiteral("broad"));
    QCOMPARE(p[qMakePair(2, 3)], QStringLiteral("end of sentence (</s>)"));
    for (int row = 0; row < table->model()->rowCount(); ++row) {
      if (f.tableText(row, 2) == QStringLiteral("alignment")) QCOMPARE(f.tableText(row, 6), QStringLiteral("100%"));
      if (f.tableText(row, 2) == QStringLiteral("reordering")) QCOMPARE(f.tableText(row, 6), QStringLiteral("60%"));
      if (f.tableText(row, 2) == QStringLiteral("broad")) QCOMPARE(f.tableText(row, 6), QStringLiteral("–"));
    }

    // Sortable: by strength, descending puts the 100% heads first and the broad ones last.
    table->sortByColumn(3, Qt::DescendingOrder);
    QCOMPARE(f.tableText(0, 3), QStringLiteral("100%"));
    const auto strength = [&](int row) { return table->model()->index(row, 3).data(Qt::UserRole).toDouble(); };
    for (int row = 1; row < table->model()->rowCount(); ++row) QVERIFY(strength(row - 1) >= strength(row));

    // Selecting a row opens that head.
    const int row = 4;
    const int layer = f.tableText(row, 0).toInt() - 1, head = f.tableText(row, 1).toInt() - 1;
    table->selectionModel()->setCurrentIndex(table->model()->index(row, 0),
                                             QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QCOMPARE(f.panel.selectedLayer(), layer);
    QCOMPARE(f.panel.selectedHead(), head);
    QCOMPARE(f.find<QComboBox>("attentionHeadCombo")->currentIndex(), head + 1);
    const Matrix expected = json_matrix(r.attention["cross"][layer][head]);
    QCOMPARE(f.large()->value(2, 1), expected[2][1]);
  }

  void svgExportIsWellFormedWithEscapedTokens() {
    Fixture f;
    f.panel.showResult(synthetic_result());
    QTemporaryDir dir;
    f.panel.setKind(AttentionKind::EncoderSelf);
    f.panel.selectHead(0, 0);
    const QString path = dir.filePath(QStringLiteral("encoder.svg"));
    QString error;
    QVERIFY2(f.panel.exportSvg(path, &error), qPrintable(error));
    int cells = 0, masked = 0;
    QStringList texts;
    const QString problem = read_svg(path, &cells, &masked, &texts);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(cells, 7 * 7);
    QCOMPARE(masked, 0);
    // Every source token appears as a row and as a column label, read back unescaped.
    for (const auto& token : kSource) QVERIFY2(texts.count(token) >= 2, qPrintable(token));
    QFile raw(path);
    QVERIFY(raw.open(QIODevice::ReadOnly));
    const QString svg = QString::fromUtf8(raw.readAll());
    QVERIFY(svg.contains(QStringLiteral(">&lt;unk&gt;</text>")));
    QVERIFY(svg.contains(QStringLiteral(">&amp;</text>")));
    QVERIFY(svg.contains(QStringLiteral(">&lt;/s&gt;</text>")));
    QVERIFY(!svg.contains(QStringLiteral("><unk><")));
    // The diagonal cell of the identity head is viridis' top colour, an off-diagonal one its bottom.
    QVERIFY(svg.contains(
        QStringLiteral("fill=\"%1\"><title>sehe ← sehe: 1.0000</title>").arg(QColor(attention_color(1)).name())));
    QVERIFY(svg.contains(
        QStringLiteral("fill=\"%1\"><title>sehe ← ▁Ich: 0.0000</title>").arg(QColor(attention_color(0)).name())));

    // Decoder self-attention: 21 visible cells, 15 masked.
    f.panel.setKind(AttentionKind::DecoderSelf);
    const QString decoder = dir.filePath(QStringLiteral("decoder.svg"));
    QVERIFY2(f.panel.exportSvg(decoder, &error), qPrintable(error));
    texts.clear();
    QVERIFY(read_svg(decoder, &cells, &masked, &texts).isEmpty());
    QCOMPARE(cells, 21);
    QCOMPARE(masked, 15);

    // The escaper alone, and a writer refusing a path it cannot write.
    QCOMPARE(xml_escape(QStringLiteral("a<b>&\"c'\x01")), QStringLiteral("a&lt;b&gt;&amp;&quot;c&apos;"));
    QVERIFY(!f.panel.exportSvg(dir.filePath(QStringLiteral("missing/dir/x.svg")), &error));
    QVERIFY(error.contains(QStringLiteral("x.svg")));
  }

  void jsonAndPngExports() {
    Fixture f;
    QVERIFY(QTest::qWaitForWindowExposed(&f.panel));
    const auto r = synthetic_result();
    f.panel.showResult(r);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("attention.json"));
    QString error;
    QVERIFY2(f.panel.exportJson(path, &error), qPrintable(error));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto j = nlohmann::json::parse(file.readAll().toStdString());
    QCOMPARE(QString::fromStdString(j["source"].get<std::string>()), r.source);
    QCOMPARE(QString::fromStdString(j["text"].get<std::string>()), r.text);
    QCOMPARE(QString::fromStdString(j["model"].get<std::string>()), r.model);
    for (const char* key : {"source_tokens", "target_tokens", "encoder_self", "decoder_self", "cross"})
      QVERIFY2(j[key] == r.attention[key], key);

    const QString png = dir.filePath(QStringLiteral("large.png"));
    QVERIFY2(f.panel.exportPng(png, &error), qPrintable(error));
    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() > 200 && image.height() > 150);
  }

  void resultsWithoutAttentionAreIgnored() {
    Fixture f;
    f.panel.showResult(synthetic_result(7));
    TranslationResult plain;
    plain.id = 8;
    plain.source = QStringLiteral("Hallo");
    plain.text = QStringLiteral("Hello");
    f.panel.showResult(plain);  // the Translate panel may ask without attention
    TranslationResult failed;
    failed.id = 9;
    failed.error = QStringLiteral("boom");
    f.panel.showResult(failed);
    QCOMPARE(f.panel.result().id, quint64(7));
    QCOMPARE(f.thumbs().size(), 8);
    // Through the service's signal, as the main window wires it.
    auto other = synthetic_result(10);
    other.source = QStringLiteral("Der Hund rennt.");
    Q_EMIT f.service.translated(other);
    QCOMPARE(f.panel.result().id, quint64(10));
    QVERIFY(f.find<QLabel>("attentionSentence")->text().contains(QStringLiteral("Der Hund rennt.")));
  }

  void degenerateResults() {
    Fixture f;
    // One token, and a result whose JSON has only cross-attention.
    TranslationResult one;
    one.id = 1;
    one.source_tokens = {QStringLiteral("</s>")};
    one.target_tokens = {QStringLiteral("</s>")};
    const Layers single = {{Matrix(1, std::vector<double>(1, 1.0))}};
    one.attention = nlohmann::json::object();
    for (const char* key : {"encoder_self", "decoder_self", "cross"}) one.attention[key] = single;
    f.panel.showResult(one);
    for (auto kind : {AttentionKind::EncoderSelf, AttentionKind::DecoderSelf, AttentionKind::Cross}) {
      f.panel.setKind(kind);
      QCOMPARE(f.large()->cellCount(), 1);
      QCOMPARE(f.panel.headSummary(0, 0).description, std::string("too few tokens"));
    }
    auto cross_only = synthetic_result(2);
    cross_only.attention.erase("encoder_self");
    cross_only.attention.erase("decoder_self");
    f.panel.setKind(AttentionKind::EncoderSelf);
    f.panel.showResult(cross_only);
    QCOMPARE(f.panel.kind(), AttentionKind::Cross);  // the kinds it lacks are not offered
    QCOMPARE(f.thumbs().size(), 8);
    auto* kind = f.find<QComboBox>("attentionKind");
    auto* model = qobject_cast<QStandardItemModel*>(kind->model());
    QVERIFY(model);
    QVERIFY(!model->item(kind->findData(static_cast<int>(AttentionKind::EncoderSelf)))->isEnabled());
    QVERIFY(model->item(kind->findData(static_cast<int>(AttentionKind::Cross)))->isEnabled());
  }

  void longSentenceRendersEveryHead() {
    Fixture f;
    QVERIFY(QTest::qWaitForWindowExposed(&f.panel));
    const int n = 64, layers = 6, heads = 8;
    const auto r = long_result(n, layers, heads);
    QElapsedTimer clock;
    clock.start();
    f.panel.showResult(r);
    QCoreApplication::processEvents();
    f.panel.grab();  // paints every visible thumbnail and the large map
    const qint64 first = clock.elapsed();
    QCOMPARE(f.thumbs().size(), layers * (heads + 1));
    QCOMPARE(f.large()->cellCount(), n * n);
    QCOMPARE(f.table()->model()->rowCount(), layers * heads);
    clock.restart();
    for (auto kind : {AttentionKind::EncoderSelf, AttentionKind::DecoderSelf, AttentionKind::Cross}) {
      f.panel.setKind(kind);
      QCoreApplication::processEvents();
      f.panel.grab();
      QCOMPARE(f.large()->rowCount(), n);
    }
    const qint64 kinds = clock.elapsed();
    clock.restart();
    for (int l = 0; l < layers; ++l)
      for (int h = -1; h < heads; ++h) f.panel.selectHead(l, h);
    QCoreApplication::processEvents();
    const qint64 clicks = clock.elapsed();
    qInfo("64 tokens, 6 layers x 8 heads: first show %lld ms, three kind switches %lld ms, 54 head selections %lld ms",
          first, kinds, clicks);
    QCOMPARE(f.panel.selectedLayer(), layers - 1);
    QCOMPARE(f.panel.selectedHead(), heads - 1);
    // Still well-formed exports at this size.
    QTemporaryDir dir;
    QString error;
    const QString svg = dir.filePath(QStringLiteral("long.svg"));
    QVERIFY2(f.panel.exportSvg(svg, &error), qPrintable(error));
    int cells = 0, masked = 0;
    QStringList texts;
    QVERIFY(read_svg(svg, &cells, &masked, &texts).isEmpty());
    QCOMPARE(cells, n * n);
  }

  // The real translator's attention, through the service: every kind has the shapes of the
  // sentence, the rows sum to one, and the panel offers the model's layers and heads.
  void translatesThroughTheServiceWithARealModel() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto config = ts::preset("tiny");
    config.model.decoder_layers = 2;
    config.train.max_steps = 40;
    const auto summary = ts::Trainer(config, ts::test::tiny_data(config, "de-en"),
                                     {dir.path().toStdString(), "tiny-deu.txt", "", nullptr})
                             .run();
    QCOMPARE(summary.status, ts::RunStatus::kFinished);

    Fixture f;
    QSignalSpy changed(&f.service, &TranslationService::modelChanged);
    f.service.loadCheckpoint(dir.filePath(QStringLiteral("last.ckpt")));
    QVERIFY(ts::ui::test::wait_for_signal(changed));
    QVERIFY(f.find<QLineEdit>("attentionInput")->isEnabled());
    QVERIFY(f.find<QPushButton>("attentionTranslate")->isEnabled());
    QVERIFY(!f.find<QLabel>("attentionStatus")->text().contains(QStringLiteral("No model")));

    auto* input = f.find<QLineEdit>("attentionInput");
    QTest::keyClicks(input, QStringLiteral("Ich sehe den Hund."));
    QSignalSpy translated(&f.service, &TranslationService::translated);
    QTest::mouseClick(f.find<QPushButton>("attentionTranslate"), Qt::LeftButton);
    QVERIFY(ts::ui::test::wait_for_signal(translated));
    QVERIFY2(f.panel.result().error.isEmpty(), qPrintable(f.panel.result().error));
    QCOMPARE(f.panel.result().source, QStringLiteral("Ich sehe den Hund."));
    QVERIFY(f.find<QLabel>("attentionSentence")
                ->text()
                .startsWith(ts::ui::left_to_right(ts::ui::isolated(QStringLiteral("Ich sehe den Hund.")) +
                                                  QStringLiteral("  →  "))));
    QVERIFY(f.find<QLabel>("attentionStatus")->text().startsWith(QStringLiteral("Translated in")));

    const auto& d = f.panel.data();
    const int S = d.sourceTokens().size(), T = d.targetTokens().size();
    QVERIFY(S >= 2 && T >= 1);
    QCOMPARE(d.sourceTokens().last(), QStringLiteral("</s>"));
    const struct {
      AttentionKind kind;
      int layers, rows, columns;
    } kinds[] = {
        {AttentionKind::EncoderSelf, 1, S, S}, {AttentionKind::DecoderSelf, 2, T, T}, {AttentionKind::Cross, 2, T, S}};
    for (const auto& k : kinds) {
      f.panel.setKind(k.kind);
      QCOMPARE(d.layers(k.kind), k.layers);
      QCOMPARE(d.heads(k.kind), 2);
      QCOMPARE(f.thumbs().size(), k.layers * 3);
      QCOMPARE(f.table()->model()->rowCount(), k.layers * 2);
      QCOMPARE(f.large()->rowCount(), k.rows);
      QCOMPARE(f.large()->columnCount(), k.columns);
      // Each row of each head is a distribution over what it may see.
      for (int l = 0; l < k.layers; ++l)
        for (int h = 0; h < 2; ++h) {
          const auto m = d.matrix(k.kind, l, h);
          for (int q = 0; q < k.rows; ++q) {
            double sum = 0;
            for (double v : m[q]) sum += v;
            QVERIFY2(std::abs(sum - 1) < 1e-4,
                     qPrintable(QStringLiteral("layer %1 head %2 row %3: %4").arg(l).arg(h).arg(q).arg(sum)));
            if (k.kind == AttentionKind::DecoderSelf)
              for (int c = q + 1; c < k.columns; ++c) QCOMPARE(m[q][c], 0.0);
          }
        }
    }

    // A dev pair from the list: its source is translated and its reference shown with the result.
    auto* dev = f.find<QComboBox>("attentionDevPair");
    QVERIFY(!dev->isEnabled());  // nothing offered yet
    f.panel.setDevPairs({{QStringLiteral("Ich sehe die Katze."), QStringLiteral("I see the cat.")},
                         {QStringLiteral("Du hast den Hund."), QStringLiteral("You have the dog.")}});
    QCOMPARE(dev->count(), 3);
    QVERIFY(dev->isEnabled());
    dev->setCurrentIndex(2);
    Q_EMIT dev->activated(2);
    QVERIFY(ts::ui::test::wait_for_signal(translated));
    QCOMPARE(f.panel.result().source, QStringLiteral("Du hast den Hund."));
    QCOMPARE(input->text(), QStringLiteral("Du hast den Hund."));
    QVERIFY2(f.find<QLabel>("attentionSentence")->toolTip().contains(QStringLiteral("reference: You have the dog.")),
             qPrintable(f.find<QLabel>("attentionSentence")->toolTip()));

    // Another model: the status line names it at once (it went on naming the first one).
    const QString other = dir.filePath(QStringLiteral("other.ckpt"));
    QVERIFY(QFile::copy(dir.filePath(QStringLiteral("last.ckpt")), other));
    changed.clear();
    f.service.loadCheckpoint(other);
    QVERIFY(ts::ui::test::wait_for_signal(changed));
    const QString status = f.find<QLabel>("attentionStatus")->text();
    QVERIFY2(status.startsWith(QStringLiteral("Model: ")) && status.contains(QStringLiteral("other.ckpt")),
             qPrintable(status));
  }

  void offersTheDevSplitOfTheOpenCorpus() {
    QTemporaryDir dir;
    const QString path = ts::ui::test::write_fixture_corpus(dir, 40);
    StudioState state;
    QSignalSpy loaded(&state, &StudioState::corpusChanged);
    state.loadCorpus(path);
    QVERIFY(ts::ui::test::wait_for_signal(loaded));
    QVERIFY(state.applySetting(QStringLiteral("data.dev=7")));
    QVERIFY(state.applySetting(QStringLiteral("data.test=3")));
    // The fixture repeats each of its 10 pairs: split grouped by source, groups of 4 cannot make 7.
    QVERIFY(state.applySetting(QStringLiteral("data.split=pairs")));
    Fixture f;
    f.panel.followDevSplit(&state);
    auto* dev = f.find<QComboBox>("attentionDevPair");
    // The same 7 held-out pairs the trainer will use, computed in the background.
    QVERIFY(ts::ui::test::wait_until([&] { return dev->count() == 8; }, 5000));
    const auto split = ts::split_pairs(ts::oriented_pairs(*state.corpus(), state.direction()),
                                       ts::SplitConfig{7, 3, 1234, ts::SplitMethod::kShuffledPairs});
    for (int i = 0; i < 7; ++i)
      QCOMPARE(dev->itemData(i + 1).toString(), QString::fromStdString(split.dev[static_cast<std::size_t>(i)].src));
    // Changing the split changes the list.
    QVERIFY(state.applySetting(QStringLiteral("data.dev=5")));
    QVERIFY(ts::ui::test::wait_until([&] { return dev->count() == 6; }, 5000));
  }
};

QTEST_MAIN(AttentionPanelTest)
#include "attention_panel_test.moc"
