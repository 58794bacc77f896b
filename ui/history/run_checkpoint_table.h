// SPDX-License-Identifier: GPL-3.0-or-later
// The Run history panel's Checkpoints tab: every checkpoint file the selected runs registered, with
// whether it is still on disk as recorded; and which checkpoint "Load" takes for a run.
#pragma once

#include <optional>
#include <vector>

#include <QTableWidget>

#include "ts/store/run_store.h"

namespace ts::ui {

/// The checkpoints of a run as they are now: the newest registration of each file, best and last
/// first, then by step, newest first. Empty without a store or when it cannot be read.
std::vector<CheckpointRow> current_checkpoints(const RunStore* store, qint64 run_id);
/// The checkpoint "Load" uses for a run: newest "best", else newest "last", else newest any.
std::optional<CheckpointRow> preferred_checkpoint(const RunStore* store, qint64 run_id);

class RunCheckpointTable : public QTableWidget {
  Q_OBJECT
 public:
  explicit RunCheckpointTable(QWidget* parent = nullptr);

  /// Lists the checkpoints of `runs` (the selection, in table order; the Run column shows with
  /// several). Returns how many rows it lists.
  int showRuns(const std::vector<RunInfo>& runs, const RunStore* store);

 Q_SIGNALS:
  /// A checkpoint was double-clicked; `kind` is its run's (language-model ones go to the
  /// language-model window).
  void loadRequested(const QString& path, ts::RunKind kind);
};

}  // namespace ts::ui
