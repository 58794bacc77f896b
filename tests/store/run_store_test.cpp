// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/store/run_store.h"

#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <thread>

#include "ts/store/recovery.h"
#include "ts/store/sha256.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

class TempDb {
 public:
  TempDb() {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("ts-store-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  ~TempDb() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path() const { return (dir_ / "runs.db").string(); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

NewRun sample_run(const std::string& name = "demo run") {
  NewRun r;
  r.name = name;
  r.corpus_path = "/data/deu.txt";
  r.corpus_pairs = 100;
  r.direction = "de-en";
  r.preset = "tiny";
  r.config = {{"model", {{"d_model", 32}}}};
  return r;
}

TEST(RunStore, CreatesTheSchemaInWalModeWithForeignKeys) {
  TempDb db;
  RunStore store(db.path());
  EXPECT_EQ(store.schema_version(), RunStore::kSchemaVersion);
  SQLite::Database raw(db.path());
  EXPECT_EQ(raw.execAndGet("PRAGMA journal_mode").getString(), "wal");
  EXPECT_TRUE(raw.tableExists("runs"));
  EXPECT_TRUE(raw.tableExists("tags"));
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST(RunStore, MigratesAnOlderDatabaseKeepingItsRuns) {
  TempDb db;
  {
    SQLite::Database old(db.path(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate_schema(old, 1);
    old.exec(
        "INSERT INTO runs(name, started_at, config, status) VALUES('old run', '2026-01-01T00:00:00Z', '{}', 'finished')");
    EXPECT_FALSE(old.tableExists("tags"));
  }
  RunStore store(db.path());
  EXPECT_EQ(store.schema_version(), RunStore::kSchemaVersion);
  EXPECT_EQ(store.probes(1).size(), 0u);  // the newest table exists too
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].name, "old run");
  EXPECT_EQ(runs[0].kind, RunKind::kTranslation);  // schema 4's column, defaulted for runs from before it
  NewRun lm;
  lm.name = "kjv";
  lm.kind = RunKind::kLanguageModel;
  const auto lm_id = store.create_run(lm);
  EXPECT_EQ(store.find_run(lm_id)->kind, RunKind::kLanguageModel);
  store.add_tag(runs[0].id, "kept");
  EXPECT_EQ(store.find_run(runs[0].id)->tags, std::vector<std::string>{"kept"});
}

TEST(RunStore, RefusesANewerSchemaAndForeignFiles) {
  TempDb db;
  {
    SQLite::Database future(db.path(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    future.exec("PRAGMA user_version = 99");
  }
  try {
    RunStore store(db.path());
    FAIL() << "newer schema accepted";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos);
  }
  std::ofstream(db.file("notes.db"))
      << "these are my notes, not a database at all, but long enough to look like a file";
  EXPECT_THROW(RunStore(db.file("notes.db")), StoreError);
}

TEST(RunStore, KeepsProbeAttentionPerValidationUntilTheRunIsDeleted) {
  TempDb db;
  RunStore store(db.path());
  const auto id = store.create_run(sample_run());
  const auto other = store.create_run(sample_run("other"));
  StoreBatch batch;
  for (int step : {200, 100}) {
    nlohmann::json probe = {{"source", "Ich habe das Buch gelesen."},
                            {"text", step == 100 ? "I book." : "I have read the book."},
                            {"cross", {{{{0.25, 0.75}}}}}};
    batch.probes.push_back({id, step, probe});
  }
  batch.probes.push_back({other, 100, {{"source", "x"}}});
  store.write(batch);
  const auto probes = store.probes(id);
  ASSERT_EQ(probes.size(), 2u);
  EXPECT_EQ(probes[0].step, 100);  // by step, whatever the order written
  EXPECT_EQ(probes[1].probe["text"], "I have read the book.");
  EXPECT_DOUBLE_EQ(probes[1].probe["cross"][0][0][0][1].get<double>(), 0.75);
  store.delete_run(id);
  EXPECT_TRUE(store.probes(id).empty());
  EXPECT_EQ(store.probes(other).size(), 1u);
}

TEST(RunStore, HostileNamesAreJustNames) {
  TempDb db;
  RunStore store(db.path());
  const std::string names[] = {"Robert'); DROP TABLE runs;--", "quote \" and ' both", "emoji 🚀 训练", "%_wildcards_%",
                               std::string("nul\0inside", 10)};
  for (const auto& name : names) {
    const auto id = store.create_run(sample_run(name));
    EXPECT_EQ(store.find_run(id)->name, name);
    store.add_tag(id, name);
    EXPECT_EQ(store.find_run(id)->tags.front(), name);
  }
  EXPECT_EQ(store.list_runs().size(), std::size(names));
  store.rename_run(1, "x'); DELETE FROM metrics; --");
  EXPECT_EQ(store.find_run(1)->name, "x'); DELETE FROM metrics; --");
}

TEST(RunStore, WritesAndReadsMetricsSamplesAndCheckpoints) {
  TempDb db;
  RunStore store(db.path());
  const auto id = store.create_run(sample_run());
  StoreBatch batch;
  for (int step = 1; step <= 5; ++step) batch.metrics.push_back({id, step, "train_loss", 5.0 - step, step * 0.5});
  batch.metrics.push_back({id, 5, "bleu", 12.5, 0});
  batch.samples.push_back({id, 5, 0, "Hallo", "Hello", "Hi"});
  batch.checkpoints.push_back({0, id, 5, "best", "/tmp/x/best.ckpt", std::string(64, 'a'), "", 1234, {{"bleu", 12.5}}});
  store.write(batch);
  store.update_progress(id, 5, 12.5);
  EXPECT_EQ(store.metric_names(id), (std::vector<std::string>{"bleu", "train_loss"}));
  const auto loss = store.metric(id, "train_loss");
  ASSERT_EQ(loss.size(), 5u);
  EXPECT_DOUBLE_EQ(loss[2].value, 2.0);
  EXPECT_EQ(store.samples(id).at(0).hypothesis, "Hi");
  EXPECT_EQ(store.checkpoints(id).at(0).metrics["bleu"], 12.5);
  EXPECT_EQ(store.find_run_by_path("/tmp/x/best.ckpt"), id);
  // A checkpoint the store never heard of (its writer died first) still belongs to its directory's run.
  auto with_dir = sample_run("with dir");
  with_dir.out_dir = "/tmp/runs/r7";
  const auto id7 = store.create_run(with_dir);
  EXPECT_EQ(store.find_run_by_path("/tmp/runs/r7/last.ckpt"), id7);
  EXPECT_EQ(store.find_run_by_path("/tmp/runs/r7"), id7);
  EXPECT_FALSE(store.find_run_by_path("/tmp/elsewhere/last.ckpt").has_value());
  EXPECT_DOUBLE_EQ(*store.find_run(id)->best_bleu, 12.5);
  store.delete_run(id);  // cascades
  EXPECT_TRUE(store.all_metrics(id).empty());
  EXPECT_TRUE(store.checkpoints(id).empty());
  EXPECT_THROW(store.delete_run(id), StoreError);
}

TEST(RunStore, ReopeningARunDropsWorkLoggedAfterTheCheckpoint) {
  TempDb db;
  RunStore store(db.path());
  const auto id = store.create_run(sample_run());
  StoreBatch batch;
  for (int step = 1; step <= 10; ++step) batch.metrics.push_back({id, step, "train_loss", 1.0, 0});
  store.write(batch);
  store.finish_run(id, RunStatus::kInterrupted, "killed", 10);
  store.reopen_run(id, 6);
  EXPECT_EQ(store.metric(id, "train_loss").size(), 6u);
  EXPECT_EQ(store.find_run(id)->status, RunStatus::kRunning);
}

TEST(RunStore, RunsWhoseWriterDiedAreMarkedInterrupted) {
  TempDb db;
  std::int64_t alive = 0, dead = 0;
  std::unique_ptr<RunLock> lock;
  {
    RunStore store(db.path());
    alive = store.create_run(sample_run("alive"));
    dead = store.create_run(sample_run("dead"));
    lock = std::make_unique<RunLock>(store.lock_path(alive));
    EXPECT_THROW(RunLock second(store.lock_path(alive)), StoreError);  // one writer per run
  }
  {
    RunStore store(db.path());
    EXPECT_EQ(store.find_run(dead)->status,
              RunStatus::kRunning);  // opening closes nothing: the writer does, explicitly
    EXPECT_EQ(store.mark_interrupted_runs(), (std::vector<std::int64_t>{dead}));
    EXPECT_EQ(store.find_run(alive)->status, RunStatus::kRunning);
    EXPECT_EQ(store.find_run(dead)->status, RunStatus::kInterrupted);
    EXPECT_NE(store.find_run(dead)->message.find("killed or crashed"), std::string::npos);
  }
  lock.reset();
  RunStore store(db.path());
  store.mark_interrupted_runs();
  EXPECT_EQ(store.find_run(alive)->status, RunStatus::kInterrupted);
}

TEST(RunStore, ReaderSeesConsistentDataWhileAWriterCommits) {
  TempDb db;
  RunStore writer(db.path());
  const auto id = writer.create_run(sample_run());
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::string reader_error;
  std::thread reader([&] {
    try {
      RunStore store(db.path());
      std::size_t last = 0;
      while (!done) {
        const auto points = store.metric(id, "train_loss");
        if (points.size() < last || points.size() % 50 != 0)
          throw std::runtime_error("saw a partial or shrinking batch");
        last = points.size();
        ++reads;
      }
    } catch (const std::exception& e) {
      reader_error = e.what();
    }
  });
  while (reads == 0 && reader_error.empty()) std::this_thread::yield();  // the reader is up
  const int reads_before = reads;
  for (int b = 0; b < 100; ++b) {
    StoreBatch batch;
    for (int i = 0; i < 50; ++i) batch.metrics.push_back({id, b * 50 + i, "train_loss", 1.0, 0});
    writer.write(batch);
    // Every tenth batch, let the reader read at least once more (an event, not a sleep: on one busy
    // core the writer could otherwise finish before the reader runs again).
    if (b % 10 == 0) {
      const int seen = reads;
      while (reads == seen && reader_error.empty()) std::this_thread::yield();
    }
  }
  const int reads_during = reads - reads_before;
  done = true;
  reader.join();
  EXPECT_EQ(reader_error, "");
  EXPECT_GT(reads_during, 0);
  EXPECT_EQ(writer.metric(id, "train_loss").size(), 5000u);
}

TEST(RunStore, ALockedDatabaseGivesAClearError) {
  TempDb db;
  RunStore store(db.path(), /*busy_timeout_ms=*/100);
  const auto id = store.create_run(sample_run());
  SQLite::Database other(db.path(), SQLite::OPEN_READWRITE);
  other.exec("BEGIN IMMEDIATE");
  StoreBatch batch;
  batch.metrics.push_back({id, 1, "train_loss", 1.0, 0});
  try {
    store.write(batch);
    FAIL() << "write went through a held lock";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("locked"), std::string::npos) << e.what();
  }
  other.exec("ROLLBACK");
  EXPECT_NO_THROW(store.write(batch));
}

// A run whose writer died (its lock free, its status still "running") after leaving a recovery file.
struct DeadRunWithRecovery {
  TempDb db;
  std::int64_t id = 0;
  std::string started_at, out_dir = db.file("run");
  RecoveryFile file;
  DeadRunWithRecovery() {
    RunStore store(db.path());
    auto run = sample_run();
    run.out_dir = out_dir;
    id = store.create_run(run);
    StoreBatch first;  // committed before the store started refusing
    first.metrics.push_back({id, 1, "train_loss", 5.0, 0.1});
    store.write(first);
    started_at = store.find_run(id)->started_at;
    file.database = db.path();
    file.run_id = id;
    file.run_started_at = started_at;
    file.written_at = "2026-11-24T10:00:00Z";
    file.reason = "the run database is locked by another process";
    for (int step = 2; step <= 4; ++step)
      file.batch.metrics.push_back({id, step, "train_loss", 5.0 - step, 0.1 * step});
    file.batch.samples.push_back({id, 4, 0, "ein Hund", "a dog", "a dog"});
    file.batch.checkpoints.push_back({0, id, 4, "last", out_dir + "/last.ckpt", "abc", "", 123, {{"bleu", 1.5}}});
    file.batch.probes.push_back({id, 4, {{"source", "ein Hund"}}});
    file.batch.steps = 4;
    file.batch.best_bleu = 1.5;
    file.batch.device = "cpu (test)";
    file.batch.end = RunEnd{RunStatus::kFinished, "reached max_steps 4", 4, "2026-11-24T09:59:59Z"};
  }
  std::string path() const { return (fs::path(out_dir) / kRecoveryFileName).string(); }
};

TEST(RunStore, ARecoveryFileIsImportedIntoItsDeadRunAndRemoved) {
  DeadRunWithRecovery f;
  write_recovery_file(f.path(), f.file);
  RunStore store(f.db.path());
  EXPECT_TRUE(fs::exists(f.path()));  // opening imports nothing
  store.mark_interrupted_runs();
  EXPECT_FALSE(fs::exists(f.path()));
  const auto run = *store.find_run(f.id);
  EXPECT_EQ(run.status, RunStatus::kFinished);
  EXPECT_EQ(run.steps, 4);
  EXPECT_EQ(run.ended_at, "2026-11-24T09:59:59Z");  // when training ended, not when it was imported
  EXPECT_EQ(run.device, "cpu (test)");
  ASSERT_TRUE(run.best_bleu.has_value());
  EXPECT_DOUBLE_EQ(*run.best_bleu, 1.5);
  EXPECT_EQ(run.message.rfind("reached max_steps 4 (the end of its history was recovered from " + f.path(), 0), 0u)
      << run.message;
  const auto losses = store.metric(f.id, "train_loss");
  ASSERT_EQ(losses.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(losses[i].step, i + 1);
  EXPECT_EQ(store.samples(f.id).size(), 1u);
  EXPECT_EQ(store.checkpoints(f.id).size(), 1u);
  EXPECT_EQ(store.checkpoints(f.id)[0].metrics["bleu"], 1.5);
  EXPECT_EQ(store.probes(f.id).size(), 1u);
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST(RunStore, ImportingTheSameRowsTwiceStoresThemOnce) {
  // A process killed after the import's commit and before it removed the file imports it again.
  DeadRunWithRecovery f;
  RunStore store(f.db.path());
  f.file.batch.run_id = f.id;
  store.write(f.file.batch, /*skip_existing=*/true);
  store.write(f.file.batch, /*skip_existing=*/true);
  EXPECT_EQ(store.metric(f.id, "train_loss").size(), 4u);  // the one committed before, and three
  EXPECT_EQ(store.samples(f.id).size(), 1u);
  EXPECT_EQ(store.checkpoints(f.id).size(), 1u);
  EXPECT_EQ(store.probes(f.id).size(), 1u);
  store.write(f.file.batch);  // without skip_existing every row is written
  EXPECT_EQ(store.metric(f.id, "train_loss").size(), 7u);
}

TEST(RunStore, ARecoveryFileWithoutAnEndLeavesTheRunInterruptedWithItsRows) {
  DeadRunWithRecovery f;
  f.file.batch.end.reset();  // the writer died while the store refused, before the run ended
  write_recovery_file(f.path(), f.file);
  RunStore store(f.db.path());
  store.mark_interrupted_runs();
  const auto run = *store.find_run(f.id);
  EXPECT_EQ(run.status, RunStatus::kInterrupted);
  EXPECT_NE(run.message.find("recovered from " + f.path()), std::string::npos) << run.message;
  EXPECT_EQ(store.metric(f.id, "train_loss").size(), 4u);
  EXPECT_FALSE(fs::exists(f.path()));
}

TEST(RunStore, ARecoveryFileOfAnotherDatabaseIsLeftAlone) {
  DeadRunWithRecovery f;
  f.file.run_started_at = "2001-01-01T00:00:00Z";  // same run id, another database's run
  write_recovery_file(f.path(), f.file);
  RunStore store(f.db.path());
  store.mark_interrupted_runs();
  EXPECT_EQ(store.find_run(f.id)->status, RunStatus::kInterrupted);
  EXPECT_EQ(store.metric(f.id, "train_loss").size(), 1u);
  EXPECT_TRUE(fs::exists(f.path()));
}

TEST(RunStore, ADamagedRecoveryFileIsNamedAndKept) {
  DeadRunWithRecovery f;
  write_recovery_file(f.path(), f.file);
  {
    std::ofstream damage(f.path(), std::ios::trunc);
    damage << R"({"format": "transformer-studio run-history recovery", "version": 1, "database": "x", "run_id": 1,
                 "run_started_at": "x", "written_at": "x", "reason": "x", "history": {"metrics": [[1, "loss"]]}})";
  }
  RunStore store(f.db.path());
  store.mark_interrupted_runs();
  const auto run = *store.find_run(f.id);
  EXPECT_EQ(run.status, RunStatus::kInterrupted);
  EXPECT_NE(run.message.find(f.path() + ": metrics[0]: expected [step, name, value, time]"), std::string::npos)
      << run.message;
  EXPECT_TRUE(fs::exists(f.path()));  // kept for a person to look at
  EXPECT_THROW(read_recovery_file(f.db.file("missing.json")), StoreError);
}

TEST(RunStore, ARecoveryFileWaitsWhileTheStoreIsLocked) {
  DeadRunWithRecovery f;
  write_recovery_file(f.path(), f.file);
  {
    WriteLockHolder blocker(f.db.path());
    RunStore store(f.db.path(), /*busy_timeout_ms=*/20);  // opens all the same
    store.mark_interrupted_runs();
    EXPECT_EQ(store.find_run(f.id)->status, RunStatus::kRunning);  // nothing could be written: the file waits
    EXPECT_TRUE(fs::exists(f.path()));
  }
  RunStore store(f.db.path());
  store.mark_interrupted_runs();
  EXPECT_EQ(store.find_run(f.id)->status, RunStatus::kFinished);
  EXPECT_EQ(store.metric(f.id, "train_loss").size(), 4u);
}

TEST(RunStore, AReadOnlyOpenWritesNothingAndRefusesWrites) {
  DeadRunWithRecovery f;  // a dead writer's run, with its recovery file waiting
  write_recovery_file(f.path(), f.file);
  const auto before = sha256_file(f.db.path());
  RunStore store(f.db.path(), RunStore::kReaderBusyTimeoutMs, StoreAccess::kReadOnly);
  EXPECT_TRUE(store.read_only());
  EXPECT_EQ(store.find_run(f.id)->status, RunStatus::kRunning);  // not closed: that is a writer's job
  EXPECT_EQ(store.metric(f.id, "train_loss").size(), 1u);
  const auto refused = [&](const char* what, const std::function<void()>& write) {
    try {
      write();
      ADD_FAILURE() << what << " wrote through a read-only store";
    } catch (const StoreError& e) {
      EXPECT_EQ(e.problem(), StoreProblem::kReadOnly) << what;
      EXPECT_EQ(e.path(), f.db.path()) << what;
      EXPECT_FALSE(e.operation().empty()) << what;
    }
  };
  refused("create_run", [&] { store.create_run(sample_run()); });
  refused("write", [&] { store.write(f.file.batch); });
  refused("rename_run", [&] { store.rename_run(f.id, "x"); });
  refused("add_tag", [&] { store.add_tag(f.id, "x"); });
  refused("delete_run", [&] { store.delete_run(f.id); });
  refused("finish_run", [&] { store.finish_run(f.id, RunStatus::kFinished, "", 1); });
  refused("mark_interrupted_runs", [&] { store.mark_interrupted_runs(); });
  EXPECT_TRUE(fs::exists(f.path()));  // the recovery file waits for a writer
  EXPECT_EQ(sha256_file(f.db.path()), before);
}

TEST(RunStore, AReadOnlyOpenOfAMissingDatabaseCreatesNothing) {
  TempDb db;
  try {
    RunStore store(db.path(), 200, StoreAccess::kReadOnly);
    FAIL() << "opened a database that does not exist";
  } catch (const StoreError& e) {
    EXPECT_EQ(e.problem(), StoreProblem::kMissing);
    EXPECT_NE(std::string(e.what()).find(db.path()), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(db.path()));
}

TEST(RunStore, AReadOnlyOpenOfAnOlderSchemaAsksForAWriterFirst) {
  TempDb db;
  {
    SQLite::Database old(db.path(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate_schema(old, RunStore::kSchemaVersion - 1);
  }
  try {
    RunStore store(db.path(), 200, StoreAccess::kReadOnly);
    FAIL() << "read an older schema without upgrading it";
  } catch (const StoreError& e) {
    EXPECT_EQ(e.problem(), StoreProblem::kOutdated) << e.what();
  }
  RunStore writer(db.path());  // upgrades it
  writer.create_run(sample_run());
  RunStore reader(db.path(), 200, StoreAccess::kReadOnly);
  EXPECT_EQ(reader.list_runs().size(), 1u);
}

TEST(RunStore, EveryFailureIsAStoreErrorNamingThePathAndTheOperation) {
  TempDb db;
  RunStore store(db.path());
  const auto id = store.create_run(sample_run());
  {
    SQLite::Database other(db.path(), SQLite::OPEN_READWRITE);  // a damaged database: its tables gone
    other.exec(
        "PRAGMA foreign_keys = OFF; DROP TABLE metrics; DROP TABLE samples; DROP TABLE probes; "
        "DROP TABLE checkpoints;");
  }
  const auto fails = [&](const char* what, const std::string& operation, const std::function<void()>& read) {
    try {
      read();
      ADD_FAILURE() << what << " did not fail";
    } catch (const StoreError& e) {
      EXPECT_EQ(e.path(), db.path()) << what;
      EXPECT_NE(e.operation().find(operation), std::string::npos) << what << ": " << e.operation();
      EXPECT_EQ(std::string(e.what()).rfind(db.path() + ": " + e.operation() + ": ", 0), 0u) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << " let another error type escape: " << e.what();
    }
  };
  fails("metric", "reading the metric \"bleu\" of run", [&] { store.metric(id, "bleu"); });
  fails("metric_names", "listing the metrics", [&] { store.metric_names(id); });
  fails("all_metrics", "reading the metrics", [&] { store.all_metrics(id); });
  fails("samples", "reading the sample translations", [&] { store.samples(id); });
  fails("probes", "reading the probe", [&] { store.probes(id); });
  fails("checkpoints", "reading the checkpoints", [&] { store.checkpoints(id); });
  fails("find_run_by_path", "finding the run of", [&] { store.find_run_by_path("/tmp/x.ckpt"); });
  StoreBatch batch;
  batch.run_id = id;
  batch.metrics.push_back({id, 1, "train_loss", 1.0, 0});
  fails("write", "writing 1 row of run", [&] { store.write(batch); });
}

TEST(RunStatus, EveryStatusReadsBackFromItsNameAndAnUnknownOneIsKeptApart) {
  for (auto status : {RunStatus::kRunning, RunStatus::kFinished, RunStatus::kStopped, RunStatus::kEarlyStopped,
                      RunStatus::kFailed, RunStatus::kInterrupted})
    EXPECT_EQ(parse_run_status(run_status_name(status)), status) << status;
  EXPECT_FALSE(parse_run_status("unknown").has_value());
  EXPECT_FALSE(parse_run_status("Finished").has_value());
  EXPECT_TRUE(is_end_status(RunStatus::kEarlyStopped));
  EXPECT_FALSE(is_end_status(RunStatus::kInterrupted));  // a writer marks it; training never ends so
  // A database written by a newer version, with a status this one does not know: listed, not refused.
  TempDb db;
  RunStore store(db.path());
  const auto id = store.create_run(sample_run());
  {
    SQLite::Database other(db.path(), SQLite::OPEN_READWRITE);
    other.exec("UPDATE runs SET status = 'paused-on-another-machine' WHERE id = " + std::to_string(id));
  }
  EXPECT_EQ(store.find_run(id)->status, RunStatus::kUnknown);
  store.finish_run(id, RunStatus::kEarlyStopped, "no improvement", 7);
  EXPECT_EQ(store.find_run(id)->status, RunStatus::kEarlyStopped);
}

TEST(Sha256, MatchesKnownDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  TempDb db;
  std::ofstream(db.file("abc.txt")) << "abc";
  EXPECT_EQ(sha256_file(db.file("abc.txt")), sha256_hex("abc"));
  EXPECT_THROW(sha256_file(db.file("missing")), std::runtime_error);
}

}  // namespace
}  // namespace ts
