// SPDX-License-Identifier: GPL-3.0-or-later
// AnatomyPanel: each tab plots what it claims — the sinusoidal table cell by cell, the chosen
// dimensions as curves, the Noam curves peaking at their warmup, smoothed rows summing to 1, and
// masks hiding the future and the pads — and it follows the configuration. Without a model, the
// model's tables (positions, embeddings) say how to get one (tests/ui/model_tables_test.cpp loads
// a real checkpoint).
#include <cmath>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
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

namespace {

QCPColorMap* color_map(QCustomPlot* plot) {
  for (int i = 0; i < plot->plottableCount(); ++i)
    if (auto* map = qobject_cast<QCPColorMap*>(plot->plottable(i))) return map;
  return nullptr;
}

// Key (step) of the largest value of a graph.
double peak_key(QCPGraph* graph) {
  double best = -1, key = 0;
  for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
    if (it->value > best) {
      best = it->value;
      key = it->key;
    }
  return key;
}

}  // namespace

class AnatomyPanelTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { QCoreApplication::setOrganizationName(QStringLiteral("TransformerStudioTests")); }

  void positionalHeatmapIsTheClosedForm() {
    StudioState state;
    AnatomyPanel panel(&state);
    panel.resize(900, 700);
    panel.show();
    auto* tabs = panel.findChild<QTabWidget*>(QStringLiteral("anatomyTabs"));
    QVERIFY(tabs);
    QCOMPARE(tabs->count(), 6);
    tabs->setCurrentWidget(panel.findChild<QWidget*>(QStringLiteral("positionalTab")));
    auto* positions = panel.findChild<QSpinBox*>(QStringLiteral("pePositions"));
    auto* d_model = panel.findChild<QSpinBox*>(QStringLiteral("peDModel"));
    auto* heatmap = panel.findChild<QCustomPlot*>(QStringLiteral("peHeatmap"));
    QVERIFY(positions && d_model && heatmap);
    QCOMPARE(positions->value(), 100);
    QCOMPARE(d_model->value(), state.config().model.d_model);
    QCOMPARE(heatmap->xAxis->label(), QStringLiteral("Dimension"));
    QCOMPARE(heatmap->yAxis->label(), QStringLiteral("Position"));

    positions->setValue(30);
    d_model->setValue(20);
    QCPColorMap* map = color_map(heatmap);
    QVERIFY(map);
    QVERIFY(!map->interpolate());
    QCOMPARE(map->data()->keySize(), 20);
    QCOMPARE(map->data()->valueSize(), 30);
    for (int pos : {0, 3, 29})
      for (int i : {0, 2, 9}) {
        const double angle = pos / std::pow(10000.0, 2.0 * i / 20);
        QVERIFY(std::abs(map->data()->cell(2 * i, pos) - std::sin(angle)) < 1e-5);
        QVERIFY(std::abs(map->data()->cell(2 * i + 1, pos) - std::cos(angle)) < 1e-5);
      }
  }

  void curvesFollowTheChosenDimensions() {
    StudioState state;
    AnatomyPanel panel(&state);
    panel.show();
    auto* curves = panel.findChild<QCustomPlot*>(QStringLiteral("peCurves"));
    auto* dims = panel.findChild<QLineEdit*>(QStringLiteral("peDimensions"));
    auto* message = panel.findChild<QLabel*>(QStringLiteral("peMessage"));
    QVERIFY(curves && dims && message);
    QCOMPARE(dims->text(), QStringLiteral("4,5,6,7"));
    QCOMPARE(curves->graphCount(), 4);
    QCOMPARE(curves->graph(0)->name(), QStringLiteral("dim 4"));
    QCOMPARE(curves->graph(0)->dataCount(), 100);
    // sin(pos / 10000^(4/d)) at position 10 on dimension 4.
    const int d = state.config().model.d_model;
    QVERIFY(std::abs(curves->graph(0)->data()->at(10)->value - std::sin(10 / std::pow(10000.0, 4.0 / d))) < 1e-5);

    dims->clear();
    QTest::keyClicks(dims, QStringLiteral("0, 1, x, 99999"));
    QCOMPARE(curves->graphCount(), 2);
    QVERIFY(message->isVisible());
    QVERIFY2(message->text().contains(QStringLiteral("99999")) && message->text().contains(QStringLiteral("x")),
             qPrintable(message->text()));
    QCOMPARE(curves->xAxis->label(), QStringLiteral("Position"));
  }

  void learningRateCurvesPeakAtTheirWarmup() {
    StudioState state;
    AnatomyPanel panel(&state);
    panel.show();
    auto* tabs = panel.findChild<QTabWidget*>(QStringLiteral("anatomyTabs"));
    tabs->setCurrentWidget(panel.findChild<QWidget*>(QStringLiteral("learningRateTab")));
    auto* plot = panel.findChild<QCustomPlot*>(QStringLiteral("lrPlot"));
    QVERIFY(plot);
    QCOMPARE(plot->graphCount(), 1 + AnatomyPanel::noamComparisons().size());
    QCOMPARE(plot->xAxis->label(), QStringLiteral("Step"));
    QCOMPARE(plot->yAxis->label(), QStringLiteral("Learning rate"));
    for (int i = 0; i < AnatomyPanel::noamComparisons().size(); ++i) {
      const auto [d, warmup] = AnatomyPanel::noamComparisons()[i];
      QCPGraph* graph = plot->graph(i + 1);
      QCOMPARE(peak_key(graph), double(warmup));
      QVERIFY(graph->name().contains(QString::number(warmup)));
      // Peak value: d^-0.5 * warmup^-0.5.
      double peak = 0;
      for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
        peak = std::max(peak, it->value);
      QVERIFY(std::abs(peak - 1.0 / std::sqrt(double(d) * warmup)) < 1e-9);
    }

    // The current configuration's curve follows the configuration.
    QString error;
    QVERIFY2(state.applySetting(QStringLiteral("train.schedule=noam"), &error), qPrintable(error));
    QVERIFY2(state.applySetting(QStringLiteral("train.warmup=3000"), &error), qPrintable(error));
    QCOMPARE(peak_key(plot->graph(0)), 3000.0);
    QVERIFY(plot->graph(0)->name().contains(QStringLiteral("warmup 3000")));
    QVERIFY(panel.findChild<QLabel*>(QStringLiteral("lrSummary"))->text().contains(QStringLiteral("3000")));
    QVERIFY(!panel.findChild<QLabel*>(QStringLiteral("lrSummary"))->text().contains(QStringLiteral("deadline")));

    // A linear decay with a time budget ends at the deadline, not at the steps drawn: the summary says so.
    QVERIFY2(state.applySetting(QStringLiteral("train.schedule=linear"), &error), qPrintable(error));
    QVERIFY2(state.applySetting(QStringLiteral("train.budget_minutes=3"), &error), qPrintable(error));
    QVERIFY2(state.applySetting(QStringLiteral("train.max_steps=0"), &error), qPrintable(error));
    const QString budgeted = panel.findChild<QLabel*>(QStringLiteral("lrSummary"))->text();
    QVERIFY2(budgeted.contains(QStringLiteral("deadline")) && budgeted.contains(QStringLiteral("3 min")),
             qPrintable(budgeted));
    // The legend sits above the curves, not on them.
    QVERIFY(plot->legend->visible());
    QVERIFY(plot->legend->layout() != plot->axisRect()->insetLayout());
  }

  void smoothingRowsSumToOne() {
    StudioState state;
    AnatomyPanel panel(&state);
    panel.show();
    auto* smoothing = panel.findChild<QDoubleSpinBox*>(QStringLiteral("lsSmoothing"));
    auto* vocab = panel.findChild<QSpinBox*>(QStringLiteral("lsVocab"));
    auto* plot = panel.findChild<QCustomPlot*>(QStringLiteral("lsHeatmap"));
    QVERIFY(smoothing && vocab && plot);
    QCOMPARE(smoothing->value(), state.config().train.label_smoothing);
    smoothing->setValue(0.4);
    vocab->setValue(8);
    QCPColorMap* map = color_map(plot);
    const QList<int> targets = AnatomyPanel::smoothingTargets();
    QCOMPARE(map->data()->keySize(), 8);
    QCOMPARE(map->data()->valueSize(), targets.size());
    for (int r = 0; r < targets.size(); ++r) {
      double sum = 0;
      for (int c = 0; c < 8; ++c) sum += map->data()->cell(c, r);
      if (targets[r] == 0) {
        QCOMPARE(sum, 0.0);  // a pad reference is ignored by the loss
      } else {
        QVERIFY2(std::abs(sum - 1.0) < 1e-5, qPrintable(QString::number(sum)));
        QVERIFY(std::abs(map->data()->cell(targets[r], r) - (0.6 + 0.4 / 8)) < 1e-6);
        QVERIFY(std::abs(map->data()->cell(0, r) - 0.4 / 8) < 1e-6);
      }
    }

    QString error;
    QVERIFY2(state.applySetting(QStringLiteral("train.label_smoothing=0.2"), &error), qPrintable(error));
    QCOMPARE(smoothing->value(), 0.2);
    QVERIFY(std::abs(map->data()->cell(targets[0], 0) - (0.8 + 0.2 / 8)) < 1e-6);
  }

  void masksHideTheFutureAndThePads() {
    StudioState state;
    AnatomyPanel panel(&state);
    panel.show();
    auto* tabs = panel.findChild<QTabWidget*>(QStringLiteral("anatomyTabs"));
    tabs->setCurrentWidget(panel.findChild<QWidget*>(QStringLiteral("masksTab")));
    auto* length = panel.findChild<QSpinBox*>(QStringLiteral("maskLength"));
    auto* causal = panel.findChild<QCustomPlot*>(QStringLiteral("causalMaskPlot"));
    auto* padding = panel.findChild<QCustomPlot*>(QStringLiteral("paddingMaskPlot"));
    QVERIFY(length && causal && padding);
    length->setValue(7);
    QCPColorMap* map = color_map(causal);
    QCOMPARE(map->data()->keySize(), 7);
    QCOMPARE(map->data()->valueSize(), 7);
    for (int q = 0; q < 7; ++q)
      for (int k = 0; k < 7; ++k) QCOMPARE(map->data()->cell(k, q), k <= q ? 1.0 : 0.0);
    QCOMPARE(causal->xAxis->label(), QStringLiteral("Key position"));

    // Three sentences of different lengths: each row is 1s then 0s, lengths all different, the
    // longest row has no pad.
    QCPColorMap* pad = color_map(padding);
    QCOMPARE(pad->data()->valueSize(), 3);
    const int width = pad->data()->keySize();
    QSet<int> lengths;
    for (int r = 0; r < 3; ++r) {
      int ones = 0;
      for (int c = 0; c < width; ++c) {
        const double v = pad->data()->cell(c, r);
        if (c > 0 && v == 1.0) QCOMPARE(pad->data()->cell(c - 1, r), 1.0);  // pads only at the end
        ones += v == 1.0;
      }
      QVERIFY(ones >= 1);
      lengths.insert(ones);
    }
    QCOMPARE(lengths.size(), 3);
    QVERIFY(lengths.contains(width));
  }

  void modelTablesWithoutAModelSayHowToGetOne() {
    StudioState state;
    AnatomyPanel panel(&state);
    panel.resize(900, 700);
    panel.show();
    auto* tabs = panel.findChild<QTabWidget*>(QStringLiteral("anatomyTabs"));
    QStringList titles;
    for (int i = 0; i < tabs->count(); ++i) titles << tabs->tabText(i);
    QCOMPARE(titles, (QStringList{QStringLiteral("Positional encoding"), QStringLiteral("Model positions"),
                                  QStringLiteral("Learning rate"), QStringLiteral("Label smoothing"),
                                  QStringLiteral("Masks"), QStringLiteral("Embeddings")}));
    const QString expected =
        QStringLiteral("Load a checkpoint or start training to see the model's positions and embeddings.");

    // No service at all (the panel's original constructor), then a service without a model.
    TranslationService service;
    for (int round = 0; round < 2; ++round) {
      if (round == 1) panel.setTranslationService(&service);
      tabs->setCurrentWidget(panel.findChild<QWidget*>(QStringLiteral("modelPositionsTab")));
      QCOMPARE(panel.findChild<QLabel*>(QStringLiteral("modelPositionsMessage"))->text(), expected);
      QVERIFY(!panel.findChild<QCustomPlot*>(QStringLiteral("anatomyLearnedPositions"))->isVisible());
      QVERIFY(!panel.findChild<QCustomPlot*>(QStringLiteral("anatomyPositionSimilarity"))->isVisible());

      tabs->setCurrentWidget(panel.findChild<QWidget*>(QStringLiteral("embeddingsTab")));
      auto* scatter = panel.findChild<QCustomPlot*>(QStringLiteral("embeddingScatter"));
      QVERIFY(scatter && scatter->isVisible());
      QCOMPARE(scatter->itemCount(), 0);
      for (int g = 0; g < scatter->graphCount(); ++g) QCOMPARE(scatter->graph(g)->dataCount(), 0);
      QCOMPARE(panel.findChild<QLabel*>(QStringLiteral("embeddingMessage"))->text(), expected);
      auto* search = panel.findChild<QLineEdit*>(QStringLiteral("embeddingSearch"));
      QTest::keyClicks(search, QStringLiteral("Hund"));
      QTest::keyClick(search, Qt::Key_Return);
      QCOMPARE(panel.findChild<QLabel*>(QStringLiteral("embeddingMessage"))->text(), expected);
      QCOMPARE(panel.findChild<QTableWidget*>(QStringLiteral("embeddingNeighbours"))->rowCount(), 0);
      search->clear();
    }
    QVERIFY(!service.isBusy());

    // The controls: both sides, 50 to 500 tokens.
    auto* side = panel.findChild<QComboBox*>(QStringLiteral("embeddingSide"));
    QCOMPARE(side->count(), 2);
    auto* count = panel.findChild<QSpinBox*>(QStringLiteral("embeddingCount"));
    QCOMPARE(count->minimum(), 50);
    QCOMPARE(count->maximum(), 500);
    QCOMPARE(panel.findChild<QTableWidget*>(QStringLiteral("embeddingNeighbours"))->columnCount(), 2);
  }

  void followsTheModelSizeOfTheConfiguration() {
    StudioState state;
    AnatomyPanel panel(&state);
    QString error;
    QVERIFY2(state.applySetting(QStringLiteral("model.d_model=64"), &error), qPrintable(error));
    QCOMPARE(panel.findChild<QSpinBox*>(QStringLiteral("peDModel"))->value(), 64);
    QCOMPARE(color_map(panel.findChild<QCustomPlot*>(QStringLiteral("peHeatmap")))->data()->keySize(), 64);
  }
};

QTEST_MAIN(AnatomyPanelTest)
#include "anatomy_panel_test.moc"
