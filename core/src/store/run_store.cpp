// SPDX-License-Identifier: GPL-3.0-or-later
// SQLite run history (see ts/store/run_store.h).
#include "ts/store/run_store.h"

#include "ts/store/fault.h"
#include "ts/store/recovery.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include <SQLiteCpp/SQLiteCpp.h>
#include <SQLiteCpp/VariadicBind.h>
#include <sqlite3.h>

#include "ts/text/files.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

// Each entry moves the schema from version i to i + 1. Never edit one that has shipped: add another.
const char* const kMigrations[] = {
    // 0 -> 1: runs, metrics, samples, checkpoints
    R"(CREATE TABLE runs(
         id INTEGER PRIMARY KEY, name TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT,
         corpus_path TEXT, corpus_sha256 TEXT, corpus_bytes INTEGER, corpus_pairs INTEGER,
         direction TEXT, preset TEXT, machine TEXT, device TEXT, out_dir TEXT, config TEXT NOT NULL,
         status TEXT NOT NULL, message TEXT NOT NULL DEFAULT '', steps INTEGER NOT NULL DEFAULT 0, best_bleu REAL);
       CREATE TABLE metrics(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
         step INTEGER NOT NULL, name TEXT NOT NULL, value REAL NOT NULL, time REAL NOT NULL);
       CREATE INDEX metrics_by_run ON metrics(run_id, name, step);
       CREATE TABLE samples(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
         step INTEGER NOT NULL, idx INTEGER NOT NULL, source TEXT, reference TEXT, hypothesis TEXT);
       CREATE INDEX samples_by_run ON samples(run_id, step);
       CREATE TABLE checkpoints(id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
         step INTEGER NOT NULL, kind TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
         bytes INTEGER NOT NULL, metrics TEXT, created_at TEXT NOT NULL);)",
    // 1 -> 2: tags, and finding a run from one of its checkpoint paths
    R"(CREATE TABLE tags(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, tag TEXT NOT NULL,
         PRIMARY KEY(run_id, tag));
       CREATE INDEX checkpoints_by_path ON checkpoints(path);)",
    // 2 -> 3: the probe sentence's attention at each validation (train.probe)
    R"(CREATE TABLE probes(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
         step INTEGER NOT NULL, probe TEXT NOT NULL);
       CREATE INDEX probes_by_run ON probes(run_id, step);)",
    // 3 -> 4: what kind of run: a translation model or a language model (lm-train)
    R"(ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'translation';)",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == RunStore::kSchemaVersion, "one migration per version");

// What a SQLite failure means for the person reading the message, and for the caller acting on it.
[[noreturn]] void rethrow(const std::string& path, const std::string& operation, const SQLite::Exception& e) {
  switch (e.getErrorCode()) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      // SQLiteCpp words a busy step "Statement needs to be reseted"; SQLite's own words say more.
      throw StoreError(
          path, operation,
          std::string("the run database is locked by another process (") + sqlite3_errstr(e.getErrorCode()) + ")",
          StoreProblem::kLocked);
    case SQLITE_READONLY:
      throw StoreError(path, operation, std::string("the run database is read-only here (") + e.what() + ")",
                       StoreProblem::kReadOnly);
    case SQLITE_FULL:
      throw StoreError(path, operation, std::string("the disk is full (") + e.what() + ")", StoreProblem::kDiskFull);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      throw StoreError(path, operation,
                       std::string("not a Transformer Studio run database, or damaged (") + e.what() + ")",
                       StoreProblem::kNotADatabase);
    case SQLITE_CANTOPEN:
      throw StoreError(path, operation, "cannot open the run database (missing directory or no permission)",
                       StoreProblem::kCannotOpen);
    default:
      throw StoreError(path, operation, e.what(), StoreProblem::kOther);
  }
}

// Runs `body`, turning any failure underneath (SQLite, the file system, a damaged value) into a
// StoreError that names the database and the operation: callers handle one error type, one way.
template <class Body>
auto guarded(const std::string& path, const std::string& operation, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const StoreError&) {
    throw;
  } catch (const SQLite::Exception& e) {
    rethrow(path, operation, e);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw StoreError(path, operation, e.what(), StoreProblem::kOther);
  }
}

std::string of_run(const char* what, std::int64_t run_id) {
  return std::string(what) + " of run " + std::to_string(run_id);
}

std::optional<double> optional_double(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getDouble();
}

std::string text(const SQLite::Column& c) { return c.isNull() ? std::string() : c.getString(); }

nlohmann::json parse_json(const std::string& s) {
  auto j = nlohmann::json::parse(s, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? nlohmann::json() : j;
}

constexpr const char* kRunColumns =
    "id, name, started_at, ended_at, corpus_path, corpus_sha256, corpus_bytes, corpus_pairs, direction, preset, "
    "machine, device, out_dir, config, status, message, steps, best_bleu, kind";

RunInfo read_run(SQLite::Statement& q) {
  RunInfo r;
  r.id = q.getColumn(0).getInt64();
  r.name = text(q.getColumn(1));
  r.started_at = text(q.getColumn(2));
  r.ended_at = text(q.getColumn(3));
  r.corpus_path = text(q.getColumn(4));
  r.corpus_sha256 = text(q.getColumn(5));
  r.corpus_bytes = q.getColumn(6).getInt64();
  r.corpus_pairs = q.getColumn(7).getInt64();
  r.direction = text(q.getColumn(8));
  r.preset = text(q.getColumn(9));
  r.machine = text(q.getColumn(10));
  r.device = text(q.getColumn(11));
  r.out_dir = text(q.getColumn(12));
  r.config = parse_json(text(q.getColumn(13)));
  r.status = parse_run_status(text(q.getColumn(14))).value_or(RunStatus::kUnknown);
  r.message = text(q.getColumn(15));
  r.steps = q.getColumn(16).getInt64();
  r.best_bleu = optional_double(q.getColumn(17));
  r.kind = parse_run_kind(text(q.getColumn(18))).value_or(RunKind::kUnknown);
  return r;
}

// True when nobody holds the lock at `path` (the writer is gone).
bool lock_is_free(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return true;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

// Runs one parameterised statement as `operation`.
template <class... Args>
void execute(SQLite::Database& db, const std::string& path, const std::string& operation, const char* sql,
             const Args&... args) {
  guarded(path, operation, [&] {
    SQLite::Statement q(db, sql);
    SQLite::bind(q, args...);
    q.exec();
  });
}

}  // namespace

std::string utc_now() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void migrate_schema(SQLite::Database& db, int version) {
  int current = db.execAndGet("PRAGMA user_version").getInt();
  if (current > RunStore::kSchemaVersion)
    throw StoreError(db.getFilename() + ": created by a newer Transformer Studio (schema " + std::to_string(current) +
                     ", this one knows " + std::to_string(RunStore::kSchemaVersion) + ")");
  for (; current < version; ++current) {
    SQLite::Transaction transaction(db);
    db.exec(kMigrations[current]);
    db.exec("PRAGMA user_version = " + std::to_string(current + 1));
    fault_point("store.commit");
    transaction.commit();
  }
}

std::string RunStore::default_path() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  const char* home = std::getenv("HOME");
  fs::path base = (xdg && *xdg) ? fs::path(xdg) : fs::path(home ? home : ".") / ".local" / "share";
  return (base / "transformer-studio" / "runs.db").string();
}

RunStore::RunStore(const std::string& path, int busy_timeout_ms, StoreAccess access) : path_(path), access_(access) {
  const std::string operation =
      access == StoreAccess::kReadOnly ? "opening the run history to read" : "opening the run history";
  guarded(path_, operation, [&] {
    if (const auto kind = special_file_kind(path); !kind.empty())
      throw StoreError(path, operation, "cannot be a run database: it is " + kind, StoreProblem::kCannotOpen);
    std::error_code ec;
    if (access == StoreAccess::kReadOnly) {
      // A reader never creates, migrates or recovers: those are writes, and a reader may sit on the GUI thread.
      if (!fs::exists(path, ec))
        throw StoreError(path, operation, "no run has been recorded here yet", StoreProblem::kMissing);
      db_ = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READONLY, busy_timeout_ms);
      const int version = db_->execAndGet("PRAGMA user_version").getInt();
      if (version > kSchemaVersion)
        throw StoreError(path, operation,
                         "created by a newer Transformer Studio (schema " + std::to_string(version) +
                             ", this one knows " + std::to_string(kSchemaVersion) + ")",
                         StoreProblem::kNotADatabase);
      if (version < kSchemaVersion)
        throw StoreError(path, operation,
                         "recorded by an older Transformer Studio (schema " + std::to_string(version) +
                             "); the next run recorded, or `transformer-studio-cli runs list`, upgrades it",
                         StoreProblem::kOutdated);
      return;
    }
    const auto parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    db_ = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, busy_timeout_ms);
    db_->exec("PRAGMA foreign_keys = ON");
    db_->exec("PRAGMA journal_mode = WAL");
    db_->exec("PRAGMA synchronous = NORMAL");
    migrate_schema(*db_, kSchemaVersion);
    fs::create_directories(path_ + ".locks", ec);
  });
}

RunStore::~RunStore() = default;

int RunStore::schema_version() const {
  return guarded(path_, "reading the schema version", [&] { return db_->execAndGet("PRAGMA user_version").getInt(); });
}

std::string RunStore::lock_path_for(const std::string& db_path, std::int64_t run_id) {
  return db_path + ".locks/run-" + std::to_string(run_id) + ".lock";
}

void RunStore::require_writable(const std::string& operation) const {
  if (access_ == StoreAccess::kReadOnly)
    throw StoreError(path_, operation, "this store was opened read-only", StoreProblem::kReadOnly);
}

void RunStore::claim_run(std::int64_t run_id) {
  const auto operation = of_run("claiming the writer's lock", run_id);
  require_writable(operation);
  require_run(run_id);
  execute(*db_, path_, operation, "UPDATE runs SET status = 'running', message = '', ended_at = NULL WHERE id = ?",
          run_id);
}

std::vector<std::int64_t> RunStore::mark_interrupted_runs() {
  const std::string operation = "closing the runs whose training process died";
  require_writable(operation);
  std::vector<std::int64_t> dead;
  try {
    guarded(path_, operation, [&] {
      SQLite::Statement q(*db_, "SELECT id FROM runs WHERE status = 'running'");
      while (q.executeStep()) {
        const auto id = q.getColumn(0).getInt64();
        if (lock_is_free(lock_path(id))) dead.push_back(id);
      }
      for (auto id : dead) {
        try {
          if (import_recovery(id)) continue;
        } catch (const StoreError&) {
          continue;  // its recovery file could not be imported now (this store is busy too): it stays, for the next writer
        }
        SQLite::Statement u(*db_,
                            "UPDATE runs SET status = 'interrupted', ended_at = ?, "
                            "message = 'the training process ended without closing the run (killed or crashed)' "
                            "WHERE id = ? AND status = 'running'");
        u.bind(1, utc_now());
        u.bind(2, id);
        u.exec();
      }
    });
  } catch (const StoreError& e) {
    if (e.problem() != StoreProblem::kReadOnly) throw;  // a database file that refuses writes can still be read
  }
  return dead;
}

std::vector<std::string> RunStore::recovery_paths_for(const std::string& db_path, std::int64_t run_id,
                                                      const std::string& out_dir) {
  std::vector<std::string> paths;
  if (!out_dir.empty()) paths.push_back((fs::path(out_dir) / kRecoveryFileName).string());
  paths.push_back(db_path + ".locks/run-" + std::to_string(run_id) + ".recovery.json");
  return paths;
}

std::vector<std::string> RunStore::recovery_paths(const RunInfo& run) const {
  return recovery_paths_for(path_, run.id, run.out_dir);
}

bool RunStore::import_recovery(std::int64_t run_id) {
  const auto run = find_run(run_id);
  if (!run) return false;
  bool found = false;
  std::vector<std::string> problems;
  for (const auto& path : recovery_paths(*run)) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) continue;
    RecoveryFile file;
    try {
      file = read_recovery_file(path);
    } catch (const StoreError& e) {
      problems.push_back(e.what());
      continue;
    }
    if (file.run_id != run_id || file.run_started_at != run->started_at) continue;  // another database's run
    found = true;
    auto& batch = file.batch;
    batch.run_id = run_id;
    if (batch.end) {
      batch.end->message += (batch.end->message.empty() ? "" : " ") +
                            std::string("(the end of its history was recovered from ") + path + ")";
    } else {  // the writer died while it waited: everything it held, and the run marked interrupted
      batch.end = RunEnd{RunStatus::kInterrupted,
                         "the training process ended while the run database refused writes; its history was "
                         "recovered from " +
                             path,
                         batch.steps.value_or(run->steps), file.written_at};
    }
    write(batch, /*skip_existing=*/true);  // throws StoreError when this store cannot take it either: the file stays
    fs::remove(path, ec);
  }
  if (!found && !problems.empty()) {
    std::string message =
        "the training process ended without closing the run, and its recovery file could not be read: ";
    for (std::size_t i = 0; i < problems.size(); ++i) message += (i ? "; " : "") + problems[i];
    execute(*db_, path_, of_run("closing", run_id),
            "UPDATE runs SET status = 'interrupted', ended_at = ?, message = ? WHERE id = ? AND status = 'running'",
            utc_now(), message, run_id);
    return true;
  }
  return found;
}

std::int64_t RunStore::create_run(const NewRun& run) {
  const std::string operation = "recording a new run";
  require_writable(operation);
  return guarded(path_, operation, [&]() -> std::int64_t {
    SQLite::Statement q(*db_,
                        "INSERT INTO runs(name, started_at, corpus_path, corpus_sha256, corpus_bytes, corpus_pairs, "
                        "direction, preset, machine, device, out_dir, config, status, kind) "
                        "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)");
    int i = 1;
    q.bind(i++, run.name);
    q.bind(i++, utc_now());
    q.bind(i++, run.corpus_path);
    q.bind(i++, run.corpus_sha256);
    q.bind(i++, static_cast<std::int64_t>(run.corpus_bytes));
    q.bind(i++, static_cast<std::int64_t>(run.corpus_pairs));
    for (const auto* s : {&run.direction, &run.preset, &run.machine, &run.device, &run.out_dir}) q.bind(i++, *s);
    q.bind(i++, run.config.dump());
    q.bind(i++, std::string(run_kind_name(run.kind)));
    q.exec();
    return db_->getLastInsertRowid();
  });
}

void StoreBatch::append(StoreBatch&& later) {
  const auto move_rows = [](auto& into, auto& from) {
    into.insert(into.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  move_rows(metrics, later.metrics);
  move_rows(samples, later.samples);
  move_rows(checkpoints, later.checkpoints);
  move_rows(probes, later.probes);
  if (later.run_id) run_id = later.run_id;
  if (later.steps) steps = later.steps;
  if (later.best_bleu) best_bleu = later.best_bleu;
  if (!later.device.empty()) device = std::move(later.device);
  if (later.end) end = std::move(later.end);
}

void RunStore::write(const StoreBatch& batch, bool skip_existing) {
  if (batch.empty()) return;
  // With skip_existing each insert is guarded by a lookup of the same row (through the indexes).
  const auto insert_sql = [skip_existing](const char* insert, const char* columns, const char* exists) {
    return skip_existing ? std::string(insert) + " SELECT " + columns + " WHERE NOT EXISTS (" + exists + ")"
                         : std::string(insert) + " VALUES(" + columns + ")";
  };
  const auto operation = "writing " + std::to_string(batch.rows()) + (batch.rows() == 1 ? " row" : " rows") +
                         " of run " + std::to_string(batch.run_id);
  require_writable(operation);
  guarded(path_, operation, [&] {
    SQLite::Transaction transaction(*db_);
    SQLite::Statement m(*db_, insert_sql("INSERT INTO metrics(run_id, step, name, value, time)", "?1, ?2, ?3, ?4, ?5",
                                         "SELECT 1 FROM metrics WHERE run_id = ?1 AND name = ?3 AND step = ?2"));
    for (const auto& row : batch.metrics) {
      if (std::isnan(row.value)) continue;  // SQLite stores NaN as NULL, which a metric cannot be: a NaN is no point
      m.bind(1, static_cast<std::int64_t>(row.run_id));
      m.bind(2, static_cast<std::int64_t>(row.step));
      m.bind(3, row.name);
      m.bind(4, row.value);
      m.bind(5, row.time);
      m.exec();
      m.reset();
    }
    SQLite::Statement s(*db_, insert_sql("INSERT INTO samples(run_id, step, idx, source, reference, hypothesis)",
                                         "?1, ?2, ?3, ?4, ?5, ?6",
                                         "SELECT 1 FROM samples WHERE run_id = ?1 AND step = ?2 AND idx = ?3"));
    for (const auto& row : batch.samples) {
      s.bind(1, static_cast<std::int64_t>(row.run_id));
      s.bind(2, static_cast<std::int64_t>(row.step));
      s.bind(3, row.index);
      s.bind(4, row.source);
      s.bind(5, row.reference);
      s.bind(6, row.hypothesis);
      s.exec();
      s.reset();
    }
    SQLite::Statement c(
        *db_, insert_sql("INSERT INTO checkpoints(run_id, step, kind, path, sha256, bytes, metrics, created_at)",
                         "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8",
                         "SELECT 1 FROM checkpoints WHERE path = ?4 AND run_id = ?1 AND step = ?2 AND sha256 = ?5"));
    for (const auto& row : batch.checkpoints) {
      c.bind(1, static_cast<std::int64_t>(row.run_id));
      c.bind(2, static_cast<std::int64_t>(row.step));
      c.bind(3, row.kind);
      c.bind(4, row.path);
      c.bind(5, row.sha256);
      c.bind(6, static_cast<std::int64_t>(row.bytes));
      c.bind(7, row.metrics.dump());
      c.bind(8, row.created_at.empty() ? utc_now() : row.created_at);
      c.exec();
      c.reset();
    }
    SQLite::Statement p(*db_, insert_sql("INSERT INTO probes(run_id, step, probe)", "?1, ?2, ?3",
                                         "SELECT 1 FROM probes WHERE run_id = ?1 AND step = ?2"));
    for (const auto& row : batch.probes) {
      p.bind(1, static_cast<std::int64_t>(row.run_id));
      p.bind(2, static_cast<std::int64_t>(row.step));
      p.bind(3, row.probe.dump());
      p.exec();
      p.reset();
    }
    const auto run_id = static_cast<std::int64_t>(batch.run_id);
    if (batch.steps) {
      SQLite::Statement u(*db_, "UPDATE runs SET steps = ? WHERE id = ?");
      SQLite::bind(u, *batch.steps, run_id);
      u.exec();
    }
    if (batch.best_bleu) {
      SQLite::Statement u(*db_, "UPDATE runs SET best_bleu = ? WHERE id = ?");
      SQLite::bind(u, *batch.best_bleu, run_id);
      u.exec();
    }
    if (!batch.device.empty()) {
      SQLite::Statement u(*db_, "UPDATE runs SET device = ? WHERE id = ?");
      SQLite::bind(u, batch.device, run_id);
      u.exec();
    }
    if (batch.end) {
      SQLite::Statement u(*db_, "UPDATE runs SET status = ?, message = ?, steps = ?, ended_at = ? WHERE id = ?");
      SQLite::bind(u, std::string(run_status_name(batch.end->status)), batch.end->message, batch.end->steps,
                   batch.end->ended_at.empty() ? utc_now() : batch.end->ended_at, run_id);
      u.exec();
    }
    fault_point("store.commit");
    transaction.commit();
  });
}

void RunStore::update_progress(std::int64_t run_id, std::int64_t steps, std::optional<double> best_bleu) {
  const auto operation = of_run("recording the progress", run_id);
  require_writable(operation);
  if (best_bleu) {
    execute(*db_, path_, operation, "UPDATE runs SET steps = ?, best_bleu = ? WHERE id = ?", steps, *best_bleu, run_id);
  } else {
    execute(*db_, path_, operation, "UPDATE runs SET steps = ? WHERE id = ?", steps, run_id);
  }
}

void RunStore::set_device(std::int64_t run_id, const std::string& device) {
  const auto operation = of_run("recording the device", run_id);
  require_writable(operation);
  execute(*db_, path_, operation, "UPDATE runs SET device = ? WHERE id = ?", device, run_id);
}

void RunStore::finish_run(std::int64_t run_id, RunStatus status, const std::string& message, std::int64_t steps) {
  const auto operation = of_run("recording the end", run_id);
  require_writable(operation);
  execute(*db_, path_, operation, "UPDATE runs SET status = ?, message = ?, steps = ?, ended_at = ? WHERE id = ?",
          std::string(run_status_name(status)), message, steps, utc_now(), run_id);
}

void RunStore::reopen_run(std::int64_t run_id, std::int64_t step) {
  const auto operation = "reopening run " + std::to_string(run_id) + " to resume it";
  require_writable(operation);
  require_run(run_id);
  guarded(path_, operation, [&] {
    SQLite::Transaction transaction(*db_);
    for (const char* sql :
         {"DELETE FROM metrics WHERE run_id = ? AND step > ?", "DELETE FROM samples WHERE run_id = ? AND step > ?"}) {
      SQLite::Statement q(*db_, sql);
      q.bind(1, static_cast<std::int64_t>(run_id));
      q.bind(2, static_cast<std::int64_t>(step));
      q.exec();
    }
    SQLite::Statement q(*db_,
                        "UPDATE runs SET status = 'running', message = '', ended_at = NULL, steps = ? WHERE id = ?");
    q.bind(1, static_cast<std::int64_t>(step));
    q.bind(2, static_cast<std::int64_t>(run_id));
    q.exec();
    fault_point("store.commit");
    transaction.commit();
  });
}

std::vector<RunInfo> RunStore::list_runs() const {
  std::vector<RunInfo> runs;
  guarded(path_, "listing the runs", [&] {
    SQLite::Statement q(*db_, std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id");
    while (q.executeStep()) runs.push_back(read_run(q));
    SQLite::Statement t(*db_, "SELECT run_id, tag FROM tags ORDER BY tag");
    while (t.executeStep())
      for (auto& r : runs)
        if (r.id == t.getColumn(0).getInt64()) r.tags.push_back(t.getColumn(1).getString());
  });
  return runs;
}

std::optional<RunInfo> RunStore::find_run(std::int64_t run_id) const {
  return guarded(path_, "reading run " + std::to_string(run_id), [&]() -> std::optional<RunInfo> {
    SQLite::Statement q(*db_, std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?");
    q.bind(1, static_cast<std::int64_t>(run_id));
    if (!q.executeStep()) return std::nullopt;
    auto run = read_run(q);
    SQLite::Statement t(*db_, "SELECT tag FROM tags WHERE run_id = ? ORDER BY tag");
    t.bind(1, static_cast<std::int64_t>(run_id));
    while (t.executeStep()) run.tags.push_back(t.getColumn(0).getString());
    return run;
  });
}

std::optional<std::int64_t> RunStore::find_run_by_path(const std::string& path) const {
  return guarded(path_, "finding the run of " + path, [&]() -> std::optional<std::int64_t> {
    const auto absolute = fs::weakly_canonical(fs::absolute(path)).string();
    SQLite::Statement q(*db_, "SELECT run_id FROM checkpoints WHERE path = ? ORDER BY id DESC LIMIT 1");
    q.bind(1, absolute);
    if (q.executeStep()) return q.getColumn(0).getInt64();
    // Not registered yet (the process died before its first commit): the run whose directory it is.
    SQLite::Statement d(*db_, "SELECT id FROM runs WHERE out_dir = ? OR out_dir = ? ORDER BY id DESC LIMIT 1");
    d.bind(1, absolute);
    d.bind(2, fs::path(absolute).parent_path().string());
    if (d.executeStep()) return d.getColumn(0).getInt64();
    return std::nullopt;
  });
}

std::vector<std::string> RunStore::metric_names(std::int64_t run_id) const {
  std::vector<std::string> names;
  guarded(path_, of_run("listing the metrics", run_id), [&] {
    SQLite::Statement q(*db_, "SELECT DISTINCT name FROM metrics WHERE run_id = ? ORDER BY name");
    q.bind(1, static_cast<std::int64_t>(run_id));
    while (q.executeStep()) names.push_back(q.getColumn(0).getString());
  });
  return names;
}

std::vector<MetricPoint> RunStore::metric(std::int64_t run_id, const std::string& name) const {
  std::vector<MetricPoint> points;
  guarded(path_, of_run(("reading the metric \"" + name + "\"").c_str(), run_id), [&] {
    SQLite::Statement q(*db_,
                        "SELECT step, value, time FROM metrics WHERE run_id = ? AND name = ? ORDER BY step, rowid");
    q.bind(1, static_cast<std::int64_t>(run_id));
    q.bind(2, name);
    while (q.executeStep())
      points.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getDouble(), q.getColumn(2).getDouble()});
  });
  return points;
}

std::vector<MetricRow> RunStore::all_metrics(std::int64_t run_id) const {
  std::vector<MetricRow> rows;
  guarded(path_, of_run("reading the metrics", run_id), [&] {
    SQLite::Statement q(*db_, "SELECT step, name, value, time FROM metrics WHERE run_id = ? ORDER BY step, rowid");
    q.bind(1, static_cast<std::int64_t>(run_id));
    while (q.executeStep())
      rows.push_back({run_id, q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getDouble(),
                      q.getColumn(3).getDouble()});
  });
  return rows;
}

std::vector<SampleRow> RunStore::samples(std::int64_t run_id) const {
  std::vector<SampleRow> rows;
  guarded(path_, of_run("reading the sample translations", run_id), [&] {
    SQLite::Statement q(
        *db_, "SELECT step, idx, source, reference, hypothesis FROM samples WHERE run_id = ? ORDER BY step, idx");
    q.bind(1, static_cast<std::int64_t>(run_id));
    while (q.executeStep())
      rows.push_back({run_id, q.getColumn(0).getInt64(), q.getColumn(1).getInt(), text(q.getColumn(2)),
                      text(q.getColumn(3)), text(q.getColumn(4))});
  });
  return rows;
}

std::vector<ProbeRow> RunStore::probes(std::int64_t run_id) const {
  std::vector<ProbeRow> rows;
  guarded(path_, of_run("reading the probe sentence's attention", run_id), [&] {
    SQLite::Statement q(*db_, "SELECT step, probe FROM probes WHERE run_id = ? ORDER BY step, rowid");
    q.bind(1, static_cast<std::int64_t>(run_id));
    while (q.executeStep()) {
      // A damaged row is skipped rather than failing the whole replay.
      auto probe = nlohmann::json::parse(text(q.getColumn(1)), nullptr, /*allow_exceptions=*/false);
      if (!probe.is_discarded()) rows.push_back({run_id, q.getColumn(0).getInt64(), std::move(probe)});
    }
  });
  return rows;
}

std::vector<CheckpointRow> RunStore::checkpoints(std::int64_t run_id) const {
  std::vector<CheckpointRow> rows;
  guarded(path_, of_run("reading the checkpoints", run_id), [&] {
    SQLite::Statement q(*db_,
                        "SELECT id, step, kind, path, sha256, bytes, metrics, created_at FROM checkpoints "
                        "WHERE run_id = ? ORDER BY id");
    q.bind(1, static_cast<std::int64_t>(run_id));
    while (q.executeStep())
      rows.push_back({q.getColumn(0).getInt64(), run_id, q.getColumn(1).getInt64(), q.getColumn(2).getString(),
                      q.getColumn(3).getString(), q.getColumn(4).getString(), q.getColumn(7).getString(),
                      q.getColumn(5).getInt64(), parse_json(text(q.getColumn(6)))});
  });
  return rows;
}

void RunStore::require_run(std::int64_t run_id) const {
  if (!find_run(run_id))
    throw StoreError(path_, "finding run " + std::to_string(run_id), "there is no run with this id",
                     StoreProblem::kOther);
}

void RunStore::rename_run(std::int64_t run_id, const std::string& name) {
  const auto operation = "renaming run " + std::to_string(run_id);
  require_writable(operation);
  require_run(run_id);
  execute(*db_, path_, operation, "UPDATE runs SET name = ? WHERE id = ?", name, run_id);
}

void RunStore::add_tag(std::int64_t run_id, const std::string& tag) {
  const auto operation = "tagging run " + std::to_string(run_id);
  require_writable(operation);
  require_run(run_id);
  execute(*db_, path_, operation, "INSERT OR IGNORE INTO tags(run_id, tag) VALUES(?, ?)", run_id, tag);
}

void RunStore::remove_tag(std::int64_t run_id, const std::string& tag) {
  const auto operation = "removing a tag of run " + std::to_string(run_id);
  require_writable(operation);
  execute(*db_, path_, operation, "DELETE FROM tags WHERE run_id = ? AND tag = ?", run_id, tag);
}

void RunStore::delete_run(std::int64_t run_id) {
  const auto operation = "deleting run " + std::to_string(run_id);
  require_writable(operation);
  require_run(run_id);
  // Metrics, samples, checkpoints, tags and probes go with it (ON DELETE CASCADE).
  execute(*db_, path_, operation, "DELETE FROM runs WHERE id = ?", run_id);
}

std::string RunStore::integrity_check() const {
  std::string report;
  guarded(path_, "checking the database's integrity", [&] {
    SQLite::Statement q(*db_, "PRAGMA integrity_check");
    while (q.executeStep()) report += (report.empty() ? "" : "\n") + q.getColumn(0).getString();
  });
  return report;
}

WriteLockHolder::WriteLockHolder(const std::string& db_path) : path_(db_path) {
  try {
    db_ = std::make_unique<SQLite::Database>(db_path, SQLite::OPEN_READWRITE, 1000);
    db_->exec("BEGIN IMMEDIATE");
  } catch (const SQLite::Exception& e) {
    db_.reset();
    rethrow(db_path, "holding the write lock", e);
  }
}

WriteLockHolder::~WriteLockHolder() { release(); }

void WriteLockHolder::release() {
  if (!db_) return;
  try {
    db_->exec("ROLLBACK");
  } catch (const SQLite::Exception&) {
    // Closing the connection below ends the transaction all the same.
  }
  db_.reset();
}

RunLock::RunLock(const std::string& path) : path_(path) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw StoreError(path + ": cannot create the run lock");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    throw StoreError("this run is being written by another process (lock " + path + ")");
  }
}

RunLock::~RunLock() {
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace ts
