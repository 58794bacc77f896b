// SPDX-License-Identifier: GPL-3.0-or-later
// BeamTreeView: a synthetic beam tree of known shape is drawn node for node and edge for edge, the
// pruned toggle hides exactly the pruned candidates, the best path is the highlighted one, boxes and
// tooltips carry tokens and scores, clicking a node shows its prefix, a greedy result offers a beam
// search of the same sentence, and a 10 × 60 tree lays out quickly with no overlapping boxes.
#include <algorithm>
#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QGraphicsView>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QWheelEvent>

#include "beam_search/beam_tree_view.h"
#include "services/translation_service.h"
#include "widgets/bidi_delegate.h"
#include "ui_test_utils.h"

using namespace ts::ui;
using ts::ui::test::wait_until;

namespace {

nlohmann::json node(qint64 id, qint64 parent, const char* token, int step, double token_lp, double lp,
                    const char* state, double score = 0, int rank = -1) {
  return {{"id", id},       {"parent", parent},
          {"token", token}, {"token_id", 100 + id},
          {"step", step},   {"token_log_prob", token_lp},
          {"log_prob", lp}, {"score", state == std::string("finished") ? score : lp},
          {"state", state}, {"rank", rank}};
}

// <s> ─┬─ Ich ─┬─ sehe ── </s> (finished, #1)
//      │       └─ mag ─┬─ </s> (finished, #2)
//      │               └─ Tee (pruned)
//      ├─ Wir ── sind (pruned)
//      └─ Er (pruned)
TranslationResult small_result() {
  TranslationResult r;
  r.id = 7;
  r.source = QStringLiteral("I see.");
  r.text = QStringLiteral("Ich sehe");
  r.score = -0.7;
  auto nodes = nlohmann::json::array();
  nodes.push_back(node(0, -1, "<s>", 0, 0, 0, "root"));
  nodes.push_back(node(1, 0, "Ich", 1, -0.2, -0.2, "kept"));
  nodes.push_back(node(2, 0, "Wir", 1, -1.0, -1.0, "kept"));
  nodes.push_back(node(3, 0, "Er", 1, -2.5, -2.5, "pruned"));
  nodes.push_back(node(4, 1, "sehe", 2, -0.3, -0.5, "kept"));
  nodes.push_back(node(5, 1, "mag", 2, -1.3, -1.5, "kept"));
  nodes.push_back(node(6, 2, "sind", 2, -1.0, -2.0, "pruned"));
  nodes.push_back(node(7, 4, "</s>", 3, -0.4, -0.9, "finished", -0.7, 0));
  nodes.push_back(node(8, 5, "</s>", 3, -0.4, -1.9, "finished", -1.4, 1));
  nodes.push_back(node(9, 5, "Tee", 3, -1.5, -3.0, "pruned"));
  r.beam_tree = {{"nodes", nodes}, {"best_path", {0, 1, 4, 7}}};
  return r;
}

// A beam of `width` over `steps` steps: every step scores 2 × width candidates, keeps `width` and
// prunes the rest; the last step's kept candidates finish, ranked by score.
TranslationResult large_result(int width, int steps) {
  TranslationResult r;
  r.source = QStringLiteral("a long sentence");
  auto nodes = nlohmann::json::array();
  nodes.push_back(node(0, -1, "<s>", 0, 0, 0, "root"));
  qint64 next = 1;
  std::vector<qint64> alive{0};
  std::vector<double> alive_lp{0};
  qint64 best_leaf = -1;
  for (int t = 1; t <= steps; ++t) {
    std::vector<qint64> kept;
    std::vector<double> kept_lp;
    for (int k = 0; k < 2 * width; ++k) {
      const std::size_t p = static_cast<std::size_t>((k * 7 + t) % static_cast<int>(alive.size()));
      const double token_lp = -0.05 * (k + 1);
      const double lp = alive_lp[p] + token_lp;
      const bool keep = k < width;
      const bool last = t == steps;
      const std::string token = "w" + std::to_string(t) + "_" + std::to_string(k);
      nodes.push_back(node(next, alive[p], token.c_str(), t, token_lp, lp,
                           keep ? (last ? "finished" : "kept") : "pruned", lp / steps, last && keep ? k : -1));
      if (keep) {
        kept.push_back(next);
        kept_lp.push_back(lp);
      }
      if (last && k == 0) best_leaf = next;
      ++next;
    }
    alive = kept;
    alive_lp = kept_lp;
  }
  // The best path: parents of the best leaf up to the root.
  std::vector<qint64> path;
  for (qint64 n = best_leaf; n >= 0; n = nodes[static_cast<std::size_t>(n)]["parent"].get<qint64>()) path.push_back(n);
  std::reverse(path.begin(), path.end());
  r.beam_tree = {{"nodes", nodes}, {"best_path", path}};
  return r;
}

// True when no two drawn boxes intersect (boxes of one column are compared in order of height).
bool no_overlap(const BeamTreeView& view, QString* problem) {
  QMap<int, QList<QRectF>> columns;
  for (qint64 id : view.drawnNodeIds()) {
    const QRectF r = view.nodeRect(id);
    columns[qRound(r.center().x())] << r;
  }
  for (auto it = columns.begin(); it != columns.end(); ++it) {
    auto& rects = it.value();
    std::sort(rects.begin(), rects.end(), [](const QRectF& a, const QRectF& b) { return a.top() < b.top(); });
    for (int i = 1; i < rects.size(); ++i)
      if (rects[i].top() < rects[i - 1].bottom()) {
        *problem = QStringLiteral("boxes at x=%1 overlap: y %2..%3 and %4..%5")
                       .arg(it.key())
                       .arg(rects[i - 1].top())
                       .arg(rects[i - 1].bottom())
                       .arg(rects[i].top())
                       .arg(rects[i].bottom());
        return false;
      }
  }
  return true;
}

}  // namespace

class BeamTreeViewTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { QCoreApplication::setOrganizationName(QStringLiteral("TransformerStudioTests")); }

  void drawsEveryNodeAndEdge() {
    TranslationService service;
    BeamTreeView view(&service);
    view.resize(900, 600);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.showResult(small_result());
    QVERIFY(view.showsTree());
    QVERIFY(view.findChild<QGraphicsView*>(QStringLiteral("beamTreeView"))->isVisible());
    QCOMPARE(view.nodeCount(), 10);
    QCOMPARE(view.edgeCount(), 9);
    QCOMPARE(view.highlightedPath(), (QList<qint64>{0, 1, 4, 7}));
    QCOMPARE(view.highlightedEdgeCount(), 3);

    // Steps go left to right; a parent sits between its first and last child.
    QVERIFY(view.nodeRect(0).center().x() < view.nodeRect(1).center().x());
    QVERIFY(view.nodeRect(1).center().x() < view.nodeRect(4).center().x());
    QCOMPARE(view.nodeRect(4).center().x(), view.nodeRect(6).center().x());
    QCOMPARE(view.nodeRect(1).center().y(), (view.nodeRect(4).center().y() + view.nodeRect(5).center().y()) / 2);
    // The more probable continuation is above.
    QVERIFY(view.nodeRect(4).center().y() < view.nodeRect(5).center().y());
    QString problem;
    QVERIFY2(no_overlap(view, &problem), qPrintable(problem));

    // Boxes: token and cumulative log-prob; finished ones add score and rank.
    QCOMPARE(view.nodeLabel(4), (QStringList{QStringLiteral("sehe"), QStringLiteral("-0.50")}));
    QCOMPARE(view.nodeLabel(7),
             (QStringList{QStringLiteral("</s>"), QStringLiteral("-0.90"), QStringLiteral("-0.70 · #1")}));
    QCOMPARE(view.nodeLabel(8).value(2), QStringLiteral("-1.40 · #2"));
    QVERIFY(view.nodeFaded(3));
    QVERIFY(view.nodeFaded(9));
    QVERIFY(!view.nodeFaded(4));

    // Tooltip: prefix text, token probability, log-prob; and the score of a finished node.
    const QString tip = view.nodeToolTip(4);
    QVERIFY2(tip.contains(QStringLiteral("Ich sehe")), qPrintable(tip));
    QVERIFY2(tip.contains(QString::number(std::exp(-0.3), 'f', 3)), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("-0.50")), qPrintable(tip));
    const QString finished_tip = view.nodeToolTip(8);
    QVERIFY2(finished_tip.contains(QStringLiteral("Ich mag")), qPrintable(finished_tip));
    QVERIFY2(finished_tip.contains(QStringLiteral("score -1.40")), qPrintable(finished_tip));
    QVERIFY2(finished_tip.contains(QStringLiteral("#2")), qPrintable(finished_tip));
    QVERIFY(view.nodeToolTip(3).contains(QStringLiteral("Pruned")));

    auto* summary = view.findChild<QLabel*>(QStringLiteral("beamSummary"));
    QVERIFY(summary->text().contains(QStringLiteral("9 candidates")));
    QVERIFY(summary->text().contains(QStringLiteral("3 pruned")));
  }

  void prunedToggleHidesPrunedCandidates() {
    TranslationService service;
    BeamTreeView view(&service);
    view.resize(900, 600);
    view.show();
    view.showResult(small_result());
    auto* toggle = view.findChild<QCheckBox*>(QStringLiteral("beamShowPruned"));
    QVERIFY(toggle && toggle->isChecked());
    toggle->click();
    QCOMPARE(view.nodeCount(), 7);
    QCOMPARE(view.edgeCount(), 6);
    for (qint64 id : {3, 6, 9}) QVERIFY(view.nodeRect(id).isNull());
    QCOMPARE(view.drawnNodeIds(), (QList<qint64>{0, 1, 2, 4, 5, 7, 8}));
    QCOMPARE(view.highlightedPath(), (QList<qint64>{0, 1, 4, 7}));
    QString problem;
    QVERIFY2(no_overlap(view, &problem), qPrintable(problem));
    toggle->click();
    QCOMPARE(view.nodeCount(), 10);
    QCOMPARE(view.edgeCount(), 9);
  }

  void clickingANodeShowsItsHypothesis() {
    TranslationService service;
    BeamTreeView view(&service);
    view.resize(900, 600);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.showResult(small_result());
    auto* gv = view.findChild<QGraphicsView*>(QStringLiteral("beamTreeView"));
    QSignalSpy selected(&view, &BeamTreeView::nodeSelected);
    gv->ensureVisible(view.nodeRect(8));
    const QPoint at = gv->mapFromScene(view.nodeRect(8).center());
    QVERIFY(gv->viewport()->rect().contains(at));
    QTest::mouseClick(gv->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(view.selectedNode(), qint64(8));
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.first().at(1).toString(), QStringLiteral("Ich mag"));
    auto* label = view.findChild<QLabel*>(QStringLiteral("beamSelection"));
    QVERIFY2(label->text().contains(QStringLiteral("“") + isolated(QStringLiteral("Ich mag")) + QStringLiteral("”")),
             qPrintable(label->text()));
    QVERIFY(label->text().contains(QStringLiteral("#2")));

    view.selectNode(6);
    QVERIFY(label->text().contains(QStringLiteral("“") + isolated(QStringLiteral("Wir sind")) + QStringLiteral("”")));
    QVERIFY(label->text().contains(QStringLiteral("pruned")));
  }

  void aLargeTreeOpensOnTheChosenTranslation() {
    TranslationService service;
    BeamTreeView view(&service);
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.showResult(large_result(8, 8));
    auto* gv = view.graphicsView();
    const auto path = view.highlightedPath();
    QVERIFY(path.size() > 2);
    QVERIFY(view.zoom() < 1.0);  // too big to show whole at full size
    for (qint64 id : path) {
      const QPoint at = gv->mapFromScene(view.nodeRect(id).center());
      QVERIFY2(gv->viewport()->rect().contains(at), qPrintable(QStringLiteral("node %1 is off screen").arg(id)));
    }
  }

  void aTreeTooBigToReadOpensInTheCompactLayoutUnlessTheTreeWasChosen() {
    TranslationService service;
    BeamTreeView view(&service);
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.showResult(large_result(10, 60));
    QVERIFY(view.ranked());  // the best path cannot be framed legibly in the tree layout
    auto* gv = view.graphicsView();
    const auto path = view.highlightedPath();
    QVERIFY(gv->viewport()->rect().contains(gv->mapFromScene(view.nodeRect(path[1]).center())));
    view.showResult(small_result());
    QVERIFY(!view.ranked());  // a small tree reads best as a tree
    // Once the person picks a layout, it stays.
    auto* layout = view.findChild<QComboBox*>(QStringLiteral("beamLayout"));
    layout->setCurrentIndex(0);
    Q_EMIT layout->activated(0);
    view.showResult(large_result(10, 60));
    QVERIFY(!view.ranked());
  }

  void zoomAndFit() {
    TranslationService service;
    BeamTreeView view(&service);
    view.resize(700, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.showResult(large_result(5, 20));
    auto* gv = view.graphicsView();
    const double before = view.zoom();
    const QPoint at = gv->viewport()->rect().center();
    QWheelEvent wheel(QPointF(at), gv->viewport()->mapToGlobal(QPointF(at)), QPoint(), QPoint(0, 240), Qt::NoButton,
                      Qt::ControlModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(gv->viewport(), &wheel);
    QVERIFY2(view.zoom() > before * 1.2, qPrintable(QString::number(view.zoom())));
    QTest::mouseClick(view.findChild<QWidget*>(QStringLiteral("beamFit")), Qt::LeftButton);
    // The whole tree now fits in the viewport.
    const QRect shown = gv->mapFromScene(gv->scene()->itemsBoundingRect()).boundingRect();
    QVERIFY2(gv->viewport()->rect().adjusted(-2, -2, 2, 2).contains(shown),
             qPrintable(QStringLiteral("%1x%2").arg(shown.width()).arg(shown.height())));
  }

  void greedyResultOffersBeamSearch() {
    TranslationService service;  // no model: the request comes back with an error
    BeamTreeView view(&service);
    view.resize(800, 500);
    view.show();
    view.showResult(small_result());
    TranslationResult greedy;
    greedy.id = 3;
    greedy.source = QStringLiteral("Tom is here.");
    greedy.text = QStringLiteral("Tom ist hier.");
    view.showResult(greedy);
    QVERIFY(!view.showsTree());
    QCOMPARE(view.nodeCount(), 0);
    QVERIFY2(view.message().contains(QStringLiteral("only for beam search")), qPrintable(view.message()));
    QVERIFY(view.findChild<QLabel*>(QStringLiteral("beamMessage"))->isVisible());
    auto* run = view.findChild<QPushButton*>(QStringLiteral("beamRun"));
    auto* width = view.findChild<QSpinBox*>(QStringLiteral("beamWidth"));
    QVERIFY(run && width);
    QVERIFY(run->isVisible() && run->isEnabled());
    QCOMPARE(width->value(), 5);
    // The width follows the configuration's (the recipe's beam, as in the Translate panel)...
    ts::DecodeConfig recipe;
    recipe.beam = 4;
    view.setDecodeDefaults(recipe);
    QCOMPARE(width->value(), 4);
    width->setValue(3);
    // ...until the person sets one.
    recipe.beam = 6;
    view.setDecodeDefaults(recipe);
    QCOMPARE(width->value(), 3);
    QSignalSpy translated(&service, &TranslationService::translated);
    run->click();
    QCOMPARE(view.lastRequest().mode, ts::DecodeMode::kBeam);
    QCOMPARE(view.lastRequest().beam, 3);
    QCOMPARE(view.lastRequest().nbest, 3);
    QVERIFY(view.lastRequestId() > 0);
    QVERIFY(view.message().contains(QStringLiteral("Tom is here.")));
    QVERIFY(ts::ui::test::wait_for_signal(translated));
    const auto result = translated.first().at(0).value<TranslationResult>();
    QCOMPARE(result.id, view.lastRequestId());
    QCOMPARE(result.source, QStringLiteral("Tom is here."));
    // The view got the same result: no model, so it says why.
    QVERIFY(wait_until([&] { return view.message().contains(QStringLiteral("failed")); }));
  }

  void largeTreeLaysOutWithoutOverlap() {
    TranslationService service;
    BeamTreeView view(&service);
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    // The person picks the tree layout (otherwise a tree this big opens in the compact one).
    auto* tree_layout = view.findChild<QComboBox*>(QStringLiteral("beamLayout"));
    tree_layout->setCurrentIndex(0);
    Q_EMIT tree_layout->activated(0);
    const auto result = large_result(10, 60);
    QElapsedTimer clock;
    clock.start();
    Q_EMIT service.translated(result);  // as the service delivers it
    const qint64 shown_ms = clock.elapsed();
    QCOMPARE(view.nodeCount(), 1 + 60 * 20);
    QCOMPARE(view.edgeCount(), 60 * 20);
    QCOMPARE(view.highlightedPath().size(), 61);
    QCOMPARE(view.highlightedEdgeCount(), 60);
    qInfo("10 x 60 tree: shown in %lld ms, layout %.1f ms", shown_ms, view.layoutMilliseconds());
    QString problem;
    QVERIFY2(no_overlap(view, &problem), qPrintable(problem));
    // Every leaf has a row of its own.
    QSet<int> rows;
    int leaves = 0;
    QSet<qint64> parents;
    for (const auto& n : view.nodes()) parents.insert(n.parent);
    for (const auto& n : view.nodes())
      if (!parents.contains(n.id)) {
        ++leaves;
        rows.insert(qRound(view.nodeRect(n.id).center().y()));
      }
    QCOMPARE(rows.size(), leaves);
    // Repainting the whole tree zoomed out (the times are printed; docs/benchmarks.md holds the measured ones).
    view.fitToView();
    clock.restart();
    view.graphicsView()->viewport()->repaint();
    qInfo("overview repaint: %lld ms", clock.elapsed());

    auto* toggle = view.findChild<QCheckBox*>(QStringLiteral("beamShowPruned"));
    toggle->click();
    QCOMPARE(view.nodeCount(), 1 + 60 * 10);
    QVERIFY2(no_overlap(view, &problem), qPrintable(problem));
    toggle->click();

    // The compact layout: each step's candidates ranked in one column, 2 × width rows in all.
    auto* layout = view.findChild<QComboBox*>(QStringLiteral("beamLayout"));
    QVERIFY(layout && !view.ranked());
    clock.restart();
    layout->setCurrentIndex(1);
    QVERIFY(view.ranked());
    qInfo("compact layout: %lld ms", clock.elapsed());
    QCOMPARE(view.nodeCount(), 1 + 60 * 20);
    QCOMPARE(view.highlightedPath().size(), 61);
    QVERIFY2(no_overlap(view, &problem), qPrintable(problem));
    QSet<int> heights;
    for (qint64 id : view.drawnNodeIds())
      if (id != 0) heights.insert(qRound(view.nodeRect(id).center().y()));
    QCOMPARE(heights.size(), 20);
    // Within a step, higher log-probability is higher up.
    for (int step = 1; step <= 60; step += 13) {
      QList<QPair<double, double>> column;  // (y, log-prob)
      for (const auto& n : view.nodes())
        if (n.step == step) column << qMakePair(view.nodeRect(n.id).center().y(), n.log_prob);
      std::sort(column.begin(), column.end());
      for (int i = 1; i < column.size(); ++i) QVERIFY(column[i].second <= column[i - 1].second);
    }
  }

  void joinsTokensAsText() {
    QCOMPARE(BeamTreeView::joinTokens(
                 {QStringLiteral("▁Ich"), QStringLiteral("▁seh"), QStringLiteral("e"), QStringLiteral("</s>")}),
             QStringLiteral("Ich sehe"));
    QCOMPARE(BeamTreeView::joinTokens(
                 {QStringLiteral("i"), QStringLiteral("see"), QStringLiteral("it"), QStringLiteral(".")}),
             QStringLiteral("i see it."));
    QCOMPARE(BeamTreeView::joinTokens(
                 {QStringLiteral("我"), QStringLiteral("爱"), QStringLiteral("你"), QStringLiteral("。")}),
             QStringLiteral("我爱你。"));
  }

  void malformedTreeIsReported() {
    TranslationService service;
    BeamTreeView view(&service);
    auto r = small_result();
    r.beam_tree["nodes"][4]["parent"] = 42;
    view.showResult(r);
    QVERIFY(!view.showsTree());
    QVERIFY2(view.message().contains(QStringLiteral("parent 42")), qPrintable(view.message()));
    auto unknown = small_result();
    unknown.beam_tree["nodes"][3]["state"] = "abandoned";  // not one of root, kept, pruned, finished
    view.showResult(unknown);
    QVERIFY(!view.showsTree());
    QVERIFY2(view.message().contains(QStringLiteral("unknown state \"abandoned\"")), qPrintable(view.message()));
  }
};

QTEST_MAIN(BeamTreeViewTest)
#include "beam_tree_view_test.moc"
