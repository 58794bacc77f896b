// SPDX-License-Identifier: GPL-3.0-or-later
#include "history/run_checkpoint_table.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include <QDir>
#include <QFileInfo>
#include <QHeaderView>

#include "history/history_util.h"
#include "history/run_table_model.h"
#include "shell/studio_state.h"
#include "ts/train/events.h"

namespace ts::ui {

using history_util::q;

std::vector<CheckpointRow> current_checkpoints(const RunStore* store, qint64 run_id) {
  std::vector<CheckpointRow> rows;
  if (!store) return rows;
  std::map<std::string, CheckpointRow> latest;  // the newest registration of each file is what it holds now
  try {
    for (auto& c : store->checkpoints(run_id)) latest[c.path] = std::move(c);
  } catch (const std::exception&) {
    return rows;
  }
  for (auto& kv : latest) rows.push_back(std::move(kv.second));
  // The history holds the kind by name; one this version does not know sorts with the step files.
  auto rank = [](const std::string& name) {
    try {
      const auto kind = parse_checkpoint_kind(name);
      return kind == CheckpointKind::kBest ? 0 : kind == CheckpointKind::kLast ? 1 : 2;
    } catch (const std::invalid_argument&) {
      return 2;
    }
  };
  std::sort(rows.begin(), rows.end(), [&](const CheckpointRow& a, const CheckpointRow& b) {
    if (rank(a.kind) != rank(b.kind)) return rank(a.kind) < rank(b.kind);
    return a.step > b.step;
  });
  return rows;
}

std::optional<CheckpointRow> preferred_checkpoint(const RunStore* store, qint64 run_id) {
  const auto rows = current_checkpoints(store, run_id);
  if (rows.empty()) return std::nullopt;
  return rows.front();  // best, else last, else the latest step-N
}

RunCheckpointTable::RunCheckpointTable(QWidget* parent) : QTableWidget(0, 6, parent) {
  setObjectName(QStringLiteral("historyCheckpoints"));
  setHorizontalHeaderLabels({tr("Run"), tr("Kind"), tr("Step"), tr("BLEU"), tr("File"), tr("State")});
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setSelectionMode(QAbstractItemView::SingleSelection);
  verticalHeader()->hide();
  verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
  horizontalHeader()->setStretchLastSection(true);
  setWordWrap(false);
  setToolTip(tr("Double-click a checkpoint to load it into the Translate panel"));
  connect(this, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    if (auto* file = item(row, 4))
      Q_EMIT loadRequested(file->data(Qt::UserRole).toString(),
                           static_cast<RunKind>(file->data(Qt::UserRole + 1).toInt()));
  });
}

int RunCheckpointTable::showRuns(const std::vector<RunInfo>& runs, const RunStore* store) {
  setRowCount(0);
  setColumnHidden(0, runs.size() < 2);
  int row = 0;
  const QColor missing = RunTableModel::statusColor(RunStatus::kFailed);
  for (const auto& r : runs) {
    for (const auto& c : current_checkpoints(store, r.id)) {
      insertRow(row);
      const QString path = q(c.path);
      const QFileInfo info(path);
      const bool exists = info.exists();
      QString bleu = QStringLiteral("–");
      if (c.metrics.is_object() && c.metrics.contains("bleu") && c.metrics["bleu"].is_number())
        bleu = QString::number(c.metrics["bleu"].get<double>(), 'f', 2);
      QString state = exists ? tr("ok") : tr("missing");
      QString state_tip = exists ? tr("The file is on disk") : tr("The file was moved or deleted");
      if (exists && c.bytes > 0 && info.size() != c.bytes) {
        state = tr("changed");
        state_tip =
            tr("The file's size differs from the one recorded (%1 now, %2 recorded): it was replaced")
                .arg(format_bytes(static_cast<double>(info.size())), format_bytes(static_cast<double>(c.bytes)));
      }
      auto* run_item = new QTableWidgetItem(QStringLiteral("#%1").arg(r.id));
      run_item->setToolTip(q(r.name));
      auto* step_item = new QTableWidgetItem;
      step_item->setData(Qt::DisplayRole, QVariant::fromValue<qint64>(c.step));
      auto* file_item = new QTableWidgetItem(info.fileName());
      file_item->setData(Qt::UserRole, path);
      file_item->setData(Qt::UserRole + 1, static_cast<int>(r.kind));
      file_item->setToolTip(QDir::toNativeSeparators(path));
      auto* state_item = new QTableWidgetItem(state);
      state_item->setToolTip(state_tip);
      if (!exists) state_item->setForeground(missing);
      setItem(row, 0, run_item);
      setItem(row, 1, new QTableWidgetItem(q(c.kind)));
      setItem(row, 2, step_item);
      setItem(row, 3, new QTableWidgetItem(bleu));
      setItem(row, 4, file_item);
      setItem(row, 5, state_item);
      ++row;
    }
  }
  resizeColumnsToContents();
  return row;
}

}  // namespace ts::ui
