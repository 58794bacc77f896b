// SPDX-License-Identifier: GPL-3.0-or-later
// The run history: one SQLite database per user recording every training run, its metrics,
// samples and checkpoints. WAL mode, foreign keys on, parameterised queries only, a schema version
// with forward migrations. A run being written holds an advisory lock file; a run still marked
// "running" whose lock is free was killed or crashed, and is marked "interrupted" on the next open.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ts/store/run_status.h"

namespace SQLite {
class Database;
}

namespace ts {

/// What went wrong with the run database, for callers that act on it (the message says it to people).
/// kMissing: a read-only open of a database that does not exist yet (nothing has been recorded there).
/// kOutdated: a read-only open of a database of an older schema (the next writer upgrades it).
enum class StoreProblem { kOther, kLocked, kReadOnly, kDiskFull, kNotADatabase, kCannotOpen, kMissing, kOutdated };

/// Every failure of the run store, whatever raised it underneath (SQLite, the file system, a damaged
/// row): the database's path, what the store was doing ("reading the metrics of run 3") and what went
/// wrong, in one message "<path>: <operation>: <problem>" for people, and as fields for callers.
class StoreError : public std::runtime_error {
 public:
  explicit StoreError(const std::string& message, StoreProblem problem = StoreProblem::kOther)
      : std::runtime_error(message), problem_(problem) {}
  StoreError(const std::string& path, const std::string& operation, const std::string& detail, StoreProblem problem)
      : std::runtime_error(path + ": " + operation + ": " + detail),
        problem_(problem),
        path_(path),
        operation_(operation) {}
  StoreProblem problem() const { return problem_; }
  /// The database, and what the store was doing; empty for errors raised outside a store operation.
  const std::string& path() const { return path_; }
  const std::string& operation() const { return operation_; }

 private:
  StoreProblem problem_;
  std::string path_, operation_;
};

/// How a RunStore opens its database. A reader (a panel listing runs, a chart reading curves) opens
/// it read-only: nothing is created, migrated or recovered, and every write is refused with a
/// StoreError (kReadOnly). Closing the runs of dead writers is left to a writer's explicit
/// mark_interrupted_runs(), off the GUI thread.
enum class StoreAccess { kReadWrite, kReadOnly };

struct RunInfo {
  std::int64_t id = 0;
  std::string name;
  std::string started_at, ended_at;  // ISO 8601 UTC
  std::string corpus_path, corpus_sha256;
  std::int64_t corpus_bytes = 0, corpus_pairs = 0;
  std::string direction, preset, machine, device, out_dir;
  RunStatus status = RunStatus::kRunning;
  std::string message;
  std::int64_t steps = 0;
  std::optional<double> best_bleu;
  nlohmann::json config;
  std::vector<std::string> tags;
  RunKind kind = RunKind::kTranslation;
};

struct NewRun {
  std::string name;
  std::string corpus_path, corpus_sha256;
  std::int64_t corpus_bytes = 0, corpus_pairs = 0;
  std::string direction, preset, machine, device, out_dir;
  nlohmann::json config;
  RunKind kind = RunKind::kTranslation;
};

struct MetricPoint {
  std::int64_t step = 0;
  double value = 0;
  double time = 0;  // seconds of training when logged
};

struct MetricRow {
  std::int64_t run_id = 0, step = 0;
  std::string name;  // train_loss, lr, tokens_per_s, dev_loss, dev_ppl, bleu, chrf
  double value = 0, time = 0;
};

struct SampleRow {
  std::int64_t run_id = 0, step = 0;
  int index = 0;
  std::string source, reference, hypothesis;
};

struct CheckpointRow {
  std::int64_t id = 0, run_id = 0, step = 0;
  std::string kind, path, sha256, created_at;
  std::int64_t bytes = 0;
  nlohmann::json metrics;
};

/// The probe sentence's attention at one validation (see TrainConfig::probe).
struct ProbeRow {
  std::int64_t run_id = 0, step = 0;
  nlohmann::json probe;  // {"source", "text", "source_tokens", "target_tokens", "cross": [layer][head][q][k]}
};

/// How a run ended, as the recorder writes it (and a recovery file carries it).
struct RunEnd {
  RunStatus status = RunStatus::kFinished;  // how it ended: is_end_status(status)
  std::string message;
  std::int64_t steps = 0;
  std::string ended_at;  // ISO 8601 UTC; empty = the moment it is written
};

/// One transaction's worth of writes from the recorder: rows, and the run's own fields when set.
/// Everything in a batch is committed together or not at all.
struct StoreBatch {
  std::vector<MetricRow> metrics;
  std::vector<SampleRow> samples;
  std::vector<CheckpointRow> checkpoints;
  std::vector<ProbeRow> probes;
  std::int64_t run_id = 0;            // the run the fields below belong to
  std::optional<std::int64_t> steps;  // progress
  std::optional<double> best_bleu;
  std::string device;         // empty = unchanged
  std::optional<RunEnd> end;  // the run's final status
  bool empty() const {
    return metrics.empty() && samples.empty() && checkpoints.empty() && probes.empty() && !steps && !best_bleu &&
           device.empty() && !end;
  }
  std::size_t rows() const { return metrics.size() + samples.size() + checkpoints.size() + probes.size(); }
  /// Adds `later`'s rows after this batch's; its run fields replace these where set.
  void append(StoreBatch&& later);
};

class RunStore {
 public:
  static constexpr int kSchemaVersion = 4;

  /// $XDG_DATA_HOME/transformer-studio/runs.db, or ~/.local/share/transformer-studio/runs.db.
  static std::string default_path();

  /// How long a reader on a GUI thread (the history panel, Compare's run list) waits for a store busy
  /// with a training run's commit: it answers soon or the read fails and is retried later.
  static constexpr int kReaderBusyTimeoutMs = 200;

  /// Opens the database. Read-write: creates and migrates it as needed. Read-only: the database must
  /// exist (StoreProblem::kMissing otherwise) at the current schema (kOutdated); nothing is written.
  /// Opening never closes the runs of dead writers: a writer calls mark_interrupted_runs() for that.
  /// Every failure here and in the methods below is a StoreError naming the path and the operation.
  explicit RunStore(const std::string& path, int busy_timeout_ms = 5000, StoreAccess access = StoreAccess::kReadWrite);
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  const std::string& path() const { return path_; }
  bool read_only() const { return access_ == StoreAccess::kReadOnly; }
  int schema_version() const;

  std::int64_t create_run(const NewRun& run);
  /// Writes a batch in one transaction (throws StoreError; the caller keeps the batch to retry).
  /// Metric values that are NaN are left out (SQLite cannot store a NaN; ±inf are kept).
  /// `skip_existing`: rows already stored (same run, step and name/index/path) are left out, so
  /// writing the same batch twice stores it once (importing a recovery file).
  void write(const StoreBatch& batch, bool skip_existing = false);
  void update_progress(std::int64_t run_id, std::int64_t steps, std::optional<double> best_bleu);
  void set_device(std::int64_t run_id, const std::string& device);
  void finish_run(std::int64_t run_id, RunStatus status, const std::string& message, std::int64_t steps);
  /// Resuming: marks the run running again and drops metrics/samples logged after `step`
  /// (work lost with the process that died).
  void reopen_run(std::int64_t run_id, std::int64_t step);

  std::vector<RunInfo> list_runs() const;
  std::optional<RunInfo> find_run(std::int64_t run_id) const;
  /// The run that registered a checkpoint at `path` (or owns the directory `path`), if any.
  std::optional<std::int64_t> find_run_by_path(const std::string& path) const;
  std::vector<std::string> metric_names(std::int64_t run_id) const;
  std::vector<MetricPoint> metric(std::int64_t run_id, const std::string& name) const;
  std::vector<MetricRow> all_metrics(std::int64_t run_id) const;
  std::vector<SampleRow> samples(std::int64_t run_id) const;
  std::vector<CheckpointRow> checkpoints(std::int64_t run_id) const;
  /// The probe sentence's attention at every validation of a run, by step.
  std::vector<ProbeRow> probes(std::int64_t run_id) const;

  void rename_run(std::int64_t run_id, const std::string& name);
  void add_tag(std::int64_t run_id, const std::string& tag);
  void remove_tag(std::int64_t run_id, const std::string& tag);
  void delete_run(std::int64_t run_id);

  /// "ok" when SQLite's integrity check passes, otherwise its report.
  std::string integrity_check() const;

  /// The lock file that a live writer of `run_id` holds.
  std::string lock_path(std::int64_t run_id) const { return lock_path_for(path_, run_id); }
  static std::string lock_path_for(const std::string& db_path, std::int64_t run_id);
  /// Called by the writer once it holds the run's lock: marks the run running (undoing an
  /// "interrupted" set by another process in the moment between creating the run and locking it).
  void claim_run(std::int64_t run_id);
  /// Closes "running" runs whose lock is free (their writer is gone): a run that left a recovery
  /// file (see ts/store/recovery.h) gets its rows and its final status from it; any other is marked
  /// interrupted. Returns the ids of the runs closed.
  std::vector<std::int64_t> mark_interrupted_runs();
  /// Where the writer of `run` leaves its recovery file: beside its checkpoints, or, when that
  /// directory cannot be written, beside this database's lock files.
  std::vector<std::string> recovery_paths(const RunInfo& run) const;
  static std::vector<std::string> recovery_paths_for(const std::string& db_path, std::int64_t run_id,
                                                     const std::string& out_dir);

 private:
  void require_run(std::int64_t run_id) const;
  /// Throws StoreError (kReadOnly) naming `operation` when this store was opened read-only.
  void require_writable(const std::string& operation) const;
  /// Imports the recovery file of the dead run `run_id`, if it left one; true when one was found.
  bool import_recovery(std::int64_t run_id);
  std::string path_;
  StoreAccess access_ = StoreAccess::kReadWrite;
  std::unique_ptr<SQLite::Database> db_;
};

/// Applies the schema migrations up to `version` (tests use this to build an older database).
void migrate_schema(SQLite::Database& db, int version);

/// Holds a database's write lock from a connection of its own (BEGIN IMMEDIATE) until release() or
/// destruction, as another process writing to it would: the store.finish fault point and tests.
class WriteLockHolder {
 public:
  explicit WriteLockHolder(const std::string& db_path);  // throws StoreError
  ~WriteLockHolder();
  WriteLockHolder(const WriteLockHolder&) = delete;
  WriteLockHolder& operator=(const WriteLockHolder&) = delete;
  void release();
  bool held() const { return db_ != nullptr; }

 private:
  std::unique_ptr<SQLite::Database> db_;
  std::string path_;
};

/// Holds the advisory lock that marks a run as alive; released on destruction or process death.
class RunLock {
 public:
  explicit RunLock(const std::string& path);  // throws StoreError if another process holds it
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace ts
