// SPDX-License-Identifier: GPL-3.0-or-later
// Recovery files: what a run recorder could not commit to the run history before it had to give
// up (the database locked, read-only or on a full disk for longer than its give-up time, or the
// process ending while it waited). The recorder writes the rows it holds and the run's final
// status to a small JSON file beside the run's checkpoints; the next RunStore that opens the
// database and finds the run's writer gone imports the file in one transaction (rows already
// stored are skipped, so an import that is interrupted and repeated stores everything once) and
// removes it. docs/reliability.md ("The history at the finish line") tells the whole story.
#pragma once

#include <cstdint>
#include <string>

#include "ts/store/run_store.h"

namespace ts {

/// The file's name inside a run directory.
inline constexpr const char* kRecoveryFileName = "run-history-recovery.json";

struct RecoveryFile {
  std::string database;  // the run database it belongs to (for people; matching uses the two below)
  std::int64_t run_id = 0;
  std::string run_started_at;  // the run's started_at: a file is never imported into another database's run
  std::string written_at;      // ISO 8601 UTC
  std::string reason;          // why the rows did not reach the database
  StoreBatch batch;            // the rows, progress and (when training ended) the final status
};

/// The current time in ISO 8601 UTC ("2026-11-24T10:00:00Z"), as the store writes its times.
std::string utc_now();

/// Writes `file` atomically (throws FileWriteError naming the path).
void write_recovery_file(const std::string& path, const RecoveryFile& file);

/// Reads one back (throws StoreError naming the file and what is wrong with it).
RecoveryFile read_recovery_file(const std::string& path);

}  // namespace ts
