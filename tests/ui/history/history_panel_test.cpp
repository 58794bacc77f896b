// SPDX-License-Identifier: GPL-3.0-or-later
// HistoryPanel: the runs of a real SQLite store in the table (sorting, filtering, status), the
// overlay chart of the selected runs, the config diff, rename/tag/delete written to the store,
// CSV and chart export, checkpoint loading refused for a missing file, a store that cannot be
// opened, and a live run's curve moving while the panel polls.
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTest>
#include <QTreeWidget>

#include <qcustomplot.h>

#include "history/history_panel.h"
#include "history/run_table_model.h"
#include "shell/studio_state.h"
#include "services/translation_service.h"
#include "ts/store/run_store.h"
#include "ui_test_utils.h"

using namespace ts::ui;

namespace {

struct RunSpec {
  std::string name = "run";
  std::string corpus = "/data/corpora/deu.txt";
  std::string direction = "en-de";
  std::string preset = "tiny";
  int d_model = 128;
  int steps = 100;      // train_loss every 10 steps up to this
  int validations = 3;  // bleu points
  ts::RunStatus status = ts::RunStatus::kFinished;
  std::vector<std::pair<std::string, std::string>> checkpoints;  // kind, path
};

qint64 add_run(ts::RunStore& store, const RunSpec& spec) {
  ts::NewRun n;
  n.name = spec.name;
  n.corpus_path = spec.corpus;
  n.corpus_pairs = 1000;
  n.corpus_bytes = 50000;
  n.direction = spec.direction;
  n.preset = spec.preset;
  n.machine = "test-host";
  n.device = "cpu";
  n.out_dir = "/tmp/runs/" + spec.name;
  n.config = {{"model", {{"d_model", spec.d_model}, {"heads", 4}, {"encoder_layers", 2}}},
              {"train", {{"lr", 1.0}, {"schedule", "noam"}}}};
  const auto id = store.create_run(n);
  ts::StoreBatch batch;
  for (int s = 10; s <= spec.steps; s += 10) batch.metrics.push_back({id, s, "train_loss", 10.0 / s, s * 0.5});
  double best = 0;
  for (int v = 1; v <= spec.validations; ++v) {
    const double bleu = v * 5.0 + spec.d_model / 128.0;  // exact in binary
    best = std::max(best, bleu);
    batch.metrics.push_back({id, v * 30, "bleu", bleu, 0});
  }
  for (const auto& [kind, path] : spec.checkpoints) {
    ts::CheckpointRow c;
    c.run_id = id;
    c.step = spec.steps;
    c.kind = kind;
    c.path = path;
    c.sha256 = "00";
    c.metrics = {{"bleu", best}};
    batch.checkpoints.push_back(c);
  }
  store.write(batch);
  store.update_progress(id, spec.steps, spec.validations ? std::optional<double>(best) : std::nullopt);
  if (spec.status != ts::RunStatus::kRunning)
    store.finish_run(id, spec.status, spec.status == ts::RunStatus::kFailed ? "out of memory" : "", spec.steps);
  return id;
}

QAbstractItemModel* table_model(HistoryPanel& panel) { return panel.table()->model(); }

QStringList column(HistoryPanel& panel, int col) {
  QStringList out;
  auto* m = table_model(panel);
  for (int r = 0; r < m->rowCount(); ++r) out << m->index(r, col).data().toString();
  return out;
}

QTreeWidgetItem* find_item(QTreeWidget* tree, const QString& key) {
  const auto items = tree->findItems(key, Qt::MatchExactly | Qt::MatchRecursive, 0);
  return items.isEmpty() ? nullptr : items.front();
}

}  // namespace

class HistoryPanelTest : public QObject {
  Q_OBJECT
 private:
  std::unique_ptr<QTemporaryDir> dir_;
  QString db_;

  // Three runs: #1 "small" (128, 100 steps, finished), #2 "large" (256, 1000 steps, finished,
  // tagged), #3 "broken" (de-en, 80 steps, failed).
  void makeThreeRuns() {
    ts::RunStore store(db_.toStdString());
    RunSpec a;
    a.name = "small";
    add_run(store, a);
    RunSpec b;
    b.name = "large";
    b.d_model = 256;
    b.steps = 1000;
    b.preset = "base";
    const auto large = add_run(store, b);
    store.add_tag(large, "baseline");
    RunSpec c;
    c.name = "broken";
    c.direction = "de-en";
    c.steps = 80;
    c.validations = 0;
    c.status = ts::RunStatus::kFailed;
    c.corpus = "/data/corpora/cmn.txt";
    add_run(store, c);
  }

 private Q_SLOTS:
  void initTestCase() { QCoreApplication::setOrganizationName(QStringLiteral("TransformerStudioTests")); }

  void init() {
    QSettings().remove(QStringLiteral("history"));
    dir_ = std::make_unique<QTemporaryDir>();
    QVERIFY(dir_->isValid());
    db_ = QDir(dir_->path()).filePath(QStringLiteral("runs.db"));
  }

  void aMissingStoreSaysNoRunsYetAndIsNotCreatedByLooking() {
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    QVERIFY(!panel.storeOpen());
    QVERIFY(!QFile::exists(db_));  // the panel reads; the first run recorded creates the database
    QVERIFY2(panel.message().contains("No runs recorded yet"), qPrintable(panel.message()));
    QCOMPARE(table_model(panel)->rowCount(), 0);
    QCOMPARE(panel.findChild<QLabel*>(QStringLiteral("historyCount"))->text(), QStringLiteral("no runs yet"));
    QVERIFY(!panel.findChild<QWidget*>(QStringLiteral("historyStoreError"))->isVisibleTo(&panel));
    QCOMPARE(panel.chart()->graphCount(), 0);
    // The first runs recorded create it: the panel lists them and no longer says there are none.
    makeThreeRuns();
    panel.refresh();
    QVERIFY(panel.storeOpen());
    QCOMPARE(table_model(panel)->rowCount(), 3);
    QVERIFY2(!panel.message().contains("No runs recorded yet"), qPrintable(panel.message()));
    QVERIFY2(panel.message().contains(db_), qPrintable(panel.message()));
  }

  void listsRunsWithStatusAndSelectsTheNewest() {
    makeThreeRuns();
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    QCOMPARE(table_model(panel)->rowCount(), 3);
    // Newest first by default.
    QCOMPARE(column(panel, RunTableModel::Name), (QStringList{"broken", "large", "small"}));
    QCOMPARE(column(panel, RunTableModel::Status), (QStringList{"failed", "finished", "finished"}));
    QCOMPARE(column(panel, RunTableModel::Corpus), (QStringList{"cmn.txt", "deu.txt", "deu.txt"}));
    QCOMPARE(column(panel, RunTableModel::Tags), (QStringList{"", "baseline", ""}));
    QCOMPARE(column(panel, RunTableModel::BestBleu).at(0), QStringLiteral("–"));
    auto* m = table_model(panel);
    // Full corpus path and the failure message in tooltips; failed coloured differently from finished.
    QVERIFY(m->index(0, RunTableModel::Corpus).data(Qt::ToolTipRole).toString().contains("/data/corpora/cmn.txt"));
    QVERIFY(m->index(0, RunTableModel::Status).data(Qt::ToolTipRole).toString().contains("out of memory"));
    QVERIFY(m->index(0, RunTableModel::Status).data(Qt::ForegroundRole).value<QColor>() !=
            m->index(1, RunTableModel::Status).data(Qt::ForegroundRole).value<QColor>());
    QCOMPARE(panel.findChild<QLabel*>(QStringLiteral("historyCount"))->text(), QStringLiteral("3 runs"));
    QCOMPARE(panel.selectedRunIds(), (QList<qint64>{3}));
  }

  void sortsNumbersAsNumbersAndFilters() {
    makeThreeRuns();
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    panel.resize(1400, 800);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    auto* header = panel.table()->horizontalHeader();
    QTest::mouseClick(header->viewport(), Qt::LeftButton, {},
                      QPoint(header->sectionViewportPosition(RunTableModel::Steps) + 5, header->height() / 2));
    QCOMPARE(header->sortIndicatorSection(), int(RunTableModel::Steps));
    panel.table()->sortByColumn(RunTableModel::Steps, Qt::AscendingOrder);
    QCOMPARE(column(panel, RunTableModel::Steps), (QStringList{"80", "100", "1000"}));  // not "100" < "1000" < "80"
    panel.table()->sortByColumn(RunTableModel::Steps, Qt::DescendingOrder);
    QCOMPARE(column(panel, RunTableModel::Steps), (QStringList{"1000", "100", "80"}));

    auto* filter = panel.findChild<QLineEdit*>(QStringLiteral("historyFilter"));
    QTest::keyClicks(filter, QStringLiteral("de-en"));
    QCOMPARE(column(panel, RunTableModel::Name), (QStringList{"broken"}));
    QCOMPARE(panel.findChild<QLabel*>(QStringLiteral("historyCount"))->text(), QStringLiteral("1 of 3 runs"));
    filter->clear();
    QTest::keyClicks(filter, QStringLiteral("baseline"));  // a tag
    QCOMPARE(column(panel, RunTableModel::Name), (QStringList{"large"}));
    filter->setText(QStringLiteral("finished deu"));  // every word must match
    QCOMPARE(table_model(panel)->rowCount(), 2);
    filter->setText(QStringLiteral("FAILED"));
    QCOMPARE(column(panel, RunTableModel::Name), (QStringList{"broken"}));
    filter->setText(QStringLiteral("cmn.txt"));
    QCOMPARE(table_model(panel)->rowCount(), 1);
    filter->setText(QStringLiteral("no-such-run"));
    QCOMPARE(table_model(panel)->rowCount(), 0);
    filter->clear();
    QCOMPARE(table_model(panel)->rowCount(), 3);
  }

  void twoSelectedRunsAreTwoCurves() {
    makeThreeRuns();
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    panel.selectRuns({1, 2});
    QCOMPARE(panel.selectedRunIds().size(), 2);
    QVERIFY(panel.setMetric(QStringLiteral("train_loss")));
    QCustomPlot* chart = panel.chart();
    QCOMPARE(chart->graphCount(), 2);
    QMap<QString, int> points;
    for (int i = 0; i < chart->graphCount(); ++i) points[chart->graph(i)->name()] = chart->graph(i)->data()->size();
    QCOMPARE(points.value(QStringLiteral("#1 small")), 10);
    QCOMPARE(points.value(QStringLiteral("#2 large")), 100);
    QVERIFY(chart->legend->visible());
    QVERIFY(chart->legend->layout() != chart->axisRect()->insetLayout());  // above the curves, not on them
    QVERIFY(chart->graph(0)->pen().color() != chart->graph(1)->pen().color());

    // The metric combo lists what was recorded; choosing BLEU redraws.
    auto* combo = panel.findChild<QComboBox*>(QStringLiteral("historyMetric"));
    QVERIFY(combo->findData(QStringLiteral("bleu")) >= 0);
    QVERIFY(combo->findData(QStringLiteral("dev_loss")) < 0);
    combo->setCurrentIndex(combo->findData(QStringLiteral("bleu")));
    QCOMPARE(panel.metric(), QStringLiteral("bleu"));
    QCOMPARE(chart->graphCount(), 2);
    QCOMPARE(chart->graph(0)->data()->size(), 3);
    QCOMPARE(chart->yAxis->label(), QStringLiteral("BLEU"));

    // A run without BLEU adds no curve.
    panel.selectRuns({2, 3});
    QCOMPARE(chart->graphCount(), 1);
    panel.selectRuns({});
    QCOMPARE(chart->graphCount(), 0);
  }

  void configDiffListsWhatDiffers() {
    makeThreeRuns();
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    auto* tree = panel.findChild<QTreeWidget*>(QStringLiteral("historyConfig"));
    panel.selectRuns({1, 2});
    QCOMPARE(tree->columnCount(), 3);
    // One column per run, in table order (newest first by default).
    QCOMPARE(tree->headerItem()->text(1), QStringLiteral("#2 large"));
    QCOMPARE(tree->headerItem()->text(2), QStringLiteral("#1 small"));
    QTreeWidgetItem* d_model = find_item(tree, QStringLiteral("model.d_model"));
    QVERIFY(d_model);
    QCOMPARE(d_model->text(1), QStringLiteral("256"));
    QCOMPARE(d_model->text(2), QStringLiteral("128"));
    QVERIFY(!find_item(tree, QStringLiteral("model.heads")));  // the same in both
    QTreeWidgetItem* preset = find_item(tree, QStringLiteral("preset"));
    QVERIFY(preset);
    QCOMPARE(preset->text(1), QStringLiteral("base"));
    QCOMPARE(preset->text(2), QStringLiteral("tiny"));
    QVERIFY(panel.findChild<QLabel*>(QStringLiteral("historyConfigNote"))->text().contains("1 setting"));
    panel.findChild<QCheckBox*>(QStringLiteral("historyConfigAll"))->setChecked(true);
    QVERIFY(find_item(tree, QStringLiteral("model.heads")));
    QCOMPARE(find_item(tree, QStringLiteral("train.schedule"))->text(1), QStringLiteral("noam"));  // no JSON quotes

    // One run: its full configuration as a tree.
    panel.selectRun(2);
    QCOMPARE(tree->columnCount(), 2);
    QTreeWidgetItem* model = find_item(tree, QStringLiteral("model"));
    QVERIFY(model);
    QTreeWidgetItem* dm = find_item(tree, QStringLiteral("d_model"));
    QVERIFY(dm);
    QCOMPARE(dm->text(1), QStringLiteral("256"));
    QCOMPARE(find_item(tree, QStringLiteral("machine"))->text(1), QStringLiteral("test-host"));
  }

  void renameTagDeleteWriteTheStore() {
    makeThreeRuns();
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    auto* rename = panel.findChild<QAction*>(QStringLiteral("historyRename"));
    panel.selectRuns({1, 2});
    QVERIFY(!rename->isEnabled());  // one run at a time
    QVERIFY(!panel.renameSelected(QStringLiteral("x")));
    panel.selectRun(1);
    QVERIFY(rename->isEnabled());
    QVERIFY(!panel.renameSelected(QStringLiteral("   ")));
    QVERIFY(panel.renameSelected(QString::fromUtf8("小模型 v2")));
    QVERIFY(column(panel, RunTableModel::Name).contains(QString::fromUtf8("小模型 v2")));
    QCOMPARE(panel.selectedRunIds(), (QList<qint64>{1}));  // the selection survives the refresh
    {
      ts::RunStore fresh(db_.toStdString());
      QCOMPARE(QString::fromStdString(fresh.find_run(1)->name), QString::fromUtf8("小模型 v2"));
    }

    panel.selectRuns({1, 3});
    QVERIFY(panel.tagSelected(QStringLiteral("ablation")));
    {
      ts::RunStore fresh(db_.toStdString());
      QCOMPARE(fresh.find_run(1)->tags, (std::vector<std::string>{"ablation"}));
      QCOMPARE(fresh.find_run(3)->tags, (std::vector<std::string>{"ablation"}));
    }
    panel.findChild<QLineEdit*>(QStringLiteral("historyFilter"))->setText(QStringLiteral("ablation"));
    QCOMPARE(table_model(panel)->rowCount(), 2);
    panel.findChild<QLineEdit*>(QStringLiteral("historyFilter"))->clear();
    panel.selectRun(3);
    QVERIFY(panel.findChild<QAction*>(QStringLiteral("historyUntag"))->isEnabled());
    QVERIFY(panel.untagSelected(QStringLiteral("ablation")));
    {
      ts::RunStore fresh(db_.toStdString());
      QVERIFY(fresh.find_run(3)->tags.empty());
      QCOMPARE(fresh.find_run(1)->tags.size(), std::size_t(1));
    }

    panel.selectRuns({2, 3});
    QVERIFY(panel.deleteSelected(false));
    QCOMPARE(table_model(panel)->rowCount(), 1);
    QVERIFY(panel.message().contains("#2"));
    {
      ts::RunStore fresh(db_.toStdString());
      QVERIFY(!fresh.find_run(2));
      QVERIFY(!fresh.find_run(3));
      QVERIFY(fresh.metric(2, "train_loss").empty());
      QVERIFY(fresh.find_run(1));
    }
  }

  void renameByEditingTheNameCell() {
    makeThreeRuns();
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    auto* m = table_model(panel);
    QVERIFY(m->setData(m->index(0, RunTableModel::Name), QStringLiteral("renamed in place")) == false);
    QVERIFY(test::wait_until([&] { return column(panel, RunTableModel::Name).contains("renamed in place"); }, 3000));
    ts::RunStore fresh(db_.toStdString());
    QCOMPARE(fresh.find_run(3)->name, std::string("renamed in place"));
  }

  void aRunNamedInArabicIsAlignedToTheRight() {
    {
      ts::RunStore store(db_.toStdString());
      RunSpec arabic;
      arabic.name = "\u062a\u062c\u0631\u0628\u0629 \u0623\u0648\u0644\u0649!";  // "a first try!" in Arabic
      add_run(store, arabic);
      RunSpec latin;
      latin.name = "first try!";
      add_run(store, latin);
    }
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    panel.resize(1400, 900);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    auto* table = panel.table();
    table->setColumnWidth(RunTableModel::Name, 420);  // much wider than either name
    table->clearSelection();                          // no highlight behind the text
    const auto ink_at = [&](const QString& name) {
      for (int row = 0; row < table->model()->rowCount(); ++row) {
        const QModelIndex index = table->model()->index(row, RunTableModel::Name);
        if (index.data().toString() != name) continue;
        const QRect cell = table->visualRect(index);
        const QImage image = table->viewport()->grab(cell).toImage();
        double sum = 0;
        int count = 0;
        for (int y = 0; y < image.height(); ++y)
          for (int x = 0; x < image.width(); ++x)
            if (qGray(image.pixel(x, y)) < 128) {
              sum += x;
              ++count;
            }
        return count > 0 ? sum / count / image.width() : -1.0;  // 0 = left edge, 1 = right edge
      }
      return -2.0;
    };
    const double arabic = ink_at(QString::fromUtf8("\u062a\u062c\u0631\u0628\u0629 \u0623\u0648\u0644\u0649!"));
    const double latin = ink_at(QStringLiteral("first try!"));
    QVERIFY2(arabic > 0.6, qPrintable(QString::number(arabic)));  // its leading edge is the right one
    QVERIFY2(latin >= 0 && latin < 0.4, qPrintable(QString::number(latin)));
  }

  void aRunWhoseProcessDiedIsClosedOffTheGuiThread() {
    qint64 id = 0;
    {
      ts::RunStore store(db_.toStdString());
      RunSpec spec;
      spec.name = "killed";
      spec.status = ts::RunStatus::kRunning;
      id = add_run(store, spec);  // "running", and nobody holds its lock: its process is gone
    }
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    QVERIFY(panel.storeOpen());
    // The panel's own store is read-only; the maintenance that writes runs on a worker thread and
    // refreshes the list when it has closed the run.
    QVERIFY(test::wait_until([&] { return column(panel, RunTableModel::Status) == QStringList{"interrupted"}; }, 5000));
    ts::RunStore fresh(db_.toStdString(), 200, ts::StoreAccess::kReadOnly);
    QCOMPARE(fresh.find_run(id)->status, ts::RunStatus::kInterrupted);
  }

  void deletingARunningRunIsRefused() {
    ts::RunStore store(db_.toStdString());
    RunSpec spec;
    spec.name = "live";
    spec.status = ts::RunStatus::kRunning;
    const auto id = add_run(store, spec);
    ts::RunLock lock(store.lock_path(id));  // alive: not marked interrupted when the panel opens the store
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    QCOMPARE(column(panel, RunTableModel::Status), (QStringList{"running"}));
    panel.selectRun(id);
    QVERIFY(!panel.deleteSelected(false));
    QVERIFY2(panel.message().contains("running"), qPrintable(panel.message()));
    QVERIFY(panel.findChild<QLabel*>(QStringLiteral("historyMessage"))->isVisibleTo(&panel));
    QVERIFY(store.find_run(id));
  }

  void exportsMetricsCsv() {
    makeThreeRuns();
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    panel.selectRuns({1, 3});
    const QString path = QDir(dir_->path()).filePath(QStringLiteral("metrics.csv"));
    QString error;
    QVERIFY2(panel.exportMetricsCsv(path, &error), qPrintable(error));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.front(), QStringLiteral("run_id,run_name,step,metric,value,time"));
    QCOMPARE(lines.size(), 1 + (10 + 3) + 8);  // run 1: 10 losses + 3 BLEU; run 3: 8 losses
    QVERIFY(lines.contains(QStringLiteral("1,small,10,train_loss,1,5.000")));
    QVERIFY(lines.contains(QStringLiteral("3,broken,80,train_loss,0.125,40.000")));
    QVERIFY(lines.contains(QStringLiteral("1,small,30,bleu,6,0.000")));

    panel.selectRuns({});
    QVERIFY(!panel.exportMetricsCsv(path, &error));
    QVERIFY(!error.isEmpty());
    panel.selectRun(1);
    QVERIFY(!panel.exportMetricsCsv(QStringLiteral("/nonexistent-dir/x.csv"), &error));
    QVERIFY2(error.contains("/nonexistent-dir/x.csv"), qPrintable(error));
  }

  void exportsAnHtmlReportOfOneRun() {
    makeThreeRuns();
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    auto* action = panel.findChild<QAction*>(QStringLiteral("historyExportReport"));
    QVERIFY(action);
    panel.selectRuns({1, 3});
    QVERIFY(!action->isEnabled());  // one run at a time
    panel.selectRun(1);
    QVERIFY(action->isEnabled());
    const QString path = QDir(dir_->path()).filePath(QStringLiteral("report.html"));
    QString error;
    QVERIFY2(panel.exportReport(path, &error), qPrintable(error));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString html = QString::fromUtf8(file.readAll());
    QVERIFY(html.startsWith(QStringLiteral("<!DOCTYPE html>"), Qt::CaseInsensitive));
    QVERIFY(html.contains(QStringLiteral("small")));      // the run's name
    QVERIFY(html.contains(QStringLiteral("<svg")));       // its curves
    QVERIFY(!html.contains(QStringLiteral("https://")));  // self-contained
    QVERIFY(!panel.exportReport(QStringLiteral("/nonexistent-dir/r.html"), &error));
    QVERIFY2(error.contains("/nonexistent-dir/r.html"), qPrintable(error));
  }

  void exportsTheChart() {
    makeThreeRuns();
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    panel.resize(1200, 800);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.selectRuns({1, 2});
    const QString png = QDir(dir_->path()).filePath(QStringLiteral("chart.png"));
    QString error;
    QVERIFY2(panel.exportChart(png, &error), qPrintable(error));
    QVERIFY(QFileInfo(png).size() > 1000);
    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() > 200);
    const QString pdf = QDir(dir_->path()).filePath(QStringLiteral("chart.pdf"));
    QVERIFY2(panel.exportChart(pdf, &error), qPrintable(error));
    QVERIFY(QFileInfo(pdf).size() > 500);
    QVERIFY(!panel.exportChart(QDir(dir_->path()).filePath(QStringLiteral("chart.svg")), &error));
    QVERIFY(error.contains("chart.svg"));
    panel.selectRuns({});
    QVERIFY(!panel.findChild<QAction*>(QStringLiteral("historyExportChart"))->isEnabled());
  }

  void missingCheckpointIsRefusedAndShown() {
    const QString missing = QDir(dir_->path()).filePath(QStringLiteral("gone/best.ckpt"));
    const QString present = QDir(dir_->path()).filePath(QStringLiteral("last.ckpt"));
    {
      QFile f(present);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("not a real checkpoint");
    }
    {
      ts::RunStore store(db_.toStdString());
      RunSpec a;
      a.name = "lost files";
      a.checkpoints = {{"last", missing.toStdString() + ".last"}, {"best", missing.toStdString()}};
      add_run(store, a);
      RunSpec b;
      b.name = "no checkpoint";
      add_run(store, b);
      RunSpec c;
      c.name = "bogus file";
      c.checkpoints = {{"last", present.toStdString()}};
      add_run(store, c);
    }
    StudioState state;
    state.setDatabasePath(db_);
    TranslationService service;
    HistoryPanel panel(&state, &service);
    auto* load = panel.findChild<QAction*>(QStringLiteral("historyLoad"));

    panel.selectRun(1);
    QVERIFY(!load->isEnabled());
    QVERIFY2(load->toolTip().contains("missing") && load->toolTip().contains("best.ckpt"), qPrintable(load->toolTip()));
    QSignalSpy requested(&panel, &HistoryPanel::checkpointRequested);
    QVERIFY(!panel.loadSelectedCheckpoint());
    QVERIFY2(panel.message().contains("missing") && panel.message().contains(missing), qPrintable(panel.message()));
    QCOMPARE(requested.count(), 0);
    // The checkpoint list shows both files as missing, best first.
    auto* checkpoints = panel.findChild<QTableWidget*>(QStringLiteral("historyCheckpoints"));
    QCOMPARE(checkpoints->rowCount(), 2);
    QCOMPARE(checkpoints->item(0, 1)->text(), QStringLiteral("best"));
    QCOMPARE(checkpoints->item(0, 5)->text(), QStringLiteral("missing"));

    panel.selectRun(2);
    QVERIFY(!load->isEnabled());
    QVERIFY(!panel.loadSelectedCheckpoint());
    QVERIFY2(panel.message().contains("no checkpoint"), qPrintable(panel.message()));

    // A file that exists is sent to the service; its refusal comes back as a visible message.
    panel.selectRun(3);
    QVERIFY(load->isEnabled());
    QSignalSpy failed(&service, &TranslationService::loadFailed);
    QVERIFY(panel.loadSelectedCheckpoint());
    QCOMPARE(requested.count(), 1);
    QCOMPARE(requested.at(0).at(0).toString(), present);
    QVERIFY(ts::ui::test::wait_for_signal(failed));
    QVERIFY(test::wait_until(
        [&] { return panel.message().contains("last.ckpt") && !panel.message().startsWith("Loading"); }));
  }

  void anUnreadableStoreShowsTheErrorAndRetries() {
    {
      QFile f(db_);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QByteArray(4096, 'x'));  // not a database
    }
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    QVERIFY(!panel.storeOpen());
    auto* bar = panel.findChild<QWidget*>(QStringLiteral("historyStoreError"));
    QVERIFY(bar->isVisibleTo(&panel));
    const QString text = panel.findChild<QLabel*>(QStringLiteral("historyStoreErrorText"))->text();
    QVERIFY2(text.contains(db_), qPrintable(text));
    QCOMPARE(table_model(panel)->rowCount(), 0);
    QVERIFY(!panel.findChild<QAction*>(QStringLiteral("historyTag"))->isEnabled());

    QFile::remove(db_);
    makeThreeRuns();
    panel.findChild<QPushButton*>(QStringLiteral("historyRetry"))->click();
    QVERIFY(panel.storeOpen());
    QVERIFY(!bar->isVisibleTo(&panel));
    QCOMPARE(table_model(panel)->rowCount(), 3);
  }

  void aLiveRunsCurveMovesWhileTheSelectionStays() {
    ts::RunStore writer(db_.toStdString());
    RunSpec done;
    done.name = "done";
    add_run(writer, done);
    RunSpec spec;
    spec.name = "live";
    spec.status = ts::RunStatus::kRunning;
    spec.steps = 50;
    const auto id = add_run(writer, spec);
    ts::RunLock lock(writer.lock_path(id));
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    panel.resize(1000, 700);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.selectRuns({1, id});
    QVERIFY(panel.setMetric(QStringLiteral("train_loss")));
    auto points_of_live = [&] {
      for (int i = 0; i < panel.chart()->graphCount(); ++i)
        if (panel.chart()->graph(i)->name().startsWith(QStringLiteral("#%1 ").arg(id)))
          return panel.chart()->graph(i)->data()->size();
      return -1;
    };
    QCOMPARE(points_of_live(), 5);
    ts::StoreBatch more;
    for (int s = 60; s <= 200; s += 10) more.metrics.push_back({id, s, "train_loss", 10.0 / s, s * 0.5});
    writer.write(more);
    writer.update_progress(id, 200, std::nullopt);
    QVERIFY(test::wait_until([&] { return points_of_live() == 20; }, 6000));
    QCOMPARE(panel.selectedRunIds().size(), 2);
    auto* m = table_model(panel);
    QVERIFY(column(panel, RunTableModel::Steps).contains("200"));
    (void)m;

    // The run ends: polling notices and stops.
    writer.finish_run(id, ts::RunStatus::kStopped, "", 200);
    QVERIFY(test::wait_until([&] { return column(panel, RunTableModel::Status).contains("stopped"); }, 6000));
  }

  void aNewRunIsFollowedWhenTheSelectionWasTheDefault() {
    makeThreeRuns();
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    QCOMPARE(panel.selectedRunIds(), (QList<qint64>{3}));
    {
      ts::RunStore store(db_.toStdString());
      RunSpec d;
      d.name = "fourth";
      add_run(store, d);
    }
    panel.refresh();
    QCOMPARE(panel.selectedRunIds(), (QList<qint64>{4}));
    panel.selectRun(2);  // the user's choice is kept from now on
    {
      ts::RunStore store(db_.toStdString());
      RunSpec e;
      e.name = "fifth";
      add_run(store, e);
    }
    panel.refresh();
    QCOMPARE(panel.selectedRunIds(), (QList<qint64>{2}));
    QCOMPARE(table_model(panel)->rowCount(), 5);
  }

  void longSeriesAreDrawnInFull() {
    qint64 id = 0;
    {
      ts::RunStore store(db_.toStdString());
      RunSpec spec;
      spec.name = "long";
      spec.steps = 0;
      id = add_run(store, spec);
      ts::StoreBatch batch;
      for (int s = 1; s <= 100000; ++s)
        batch.metrics.push_back({id, s, "train_loss", 5.0 / std::sqrt(s) + (s % 7) * 0.01, s * 0.1});
      store.write(batch);
    }
    StudioState state;
    state.setDatabasePath(db_);
    HistoryPanel panel(&state, nullptr);
    panel.resize(1200, 800);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QElapsedTimer clock;
    clock.start();
    panel.selectRuns({});
    panel.selectRun(id);
    QVERIFY(panel.setMetric(QStringLiteral("train_loss")));
    panel.chart()->replot(QCustomPlot::rpImmediateRefresh);
    const qint64 first = clock.restart();
    for (int i = 0; i < 5; ++i) panel.chart()->replot(QCustomPlot::rpImmediateRefresh);
    const qint64 replots = clock.elapsed();
    qInfo("100k points: read + first draw %lld ms, 5 redraws %lld ms", first, replots);
    QCOMPARE(panel.chart()->graph(0)->data()->size(), 100000);  // times: docs/benchmarks.md, not asserted here
  }
};

QTEST_MAIN(HistoryPanelTest)
#include "history_panel_test.moc"
