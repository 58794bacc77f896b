#include "ts/train/run_recorder.h"
#include "ts/train/trainer.h"

#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <thread>

#include "test_utils.h"

namespace ts {
namespace {

struct Fixture {
  test::TempDir dir;
  std::string db = dir.file("runs.db");
  ExperimentConfig config = test::tiny_config(/*dev=*/2, /*test=*/0);
  std::int64_t run_id = 0;
  Fixture() {
    RunStore store(db);
    const auto corpus = test::tiny_corpus();
    run_id = store.create_run(describe_new_run(config, corpus, parse_direction("de-en", corpus), dir.str()));
  }
};

TEST(RunRecorder, RecordsEveryStepValidationAndCheckpoint) {
  Fixture f;
  f.config.train.max_steps = 40;
  f.config.train.validate_every = 20;
  f.config.train.probe = "ein Satz";
  std::atomic<bool> stop{false};
  {
    RunRecorder recorder(f.db, f.run_id, &stop, {0.05, 60, true});
    Trainer(f.config, test::tiny_data(f.config), {f.dir.file("out"), "tiny-deu.txt", "", &stop}, &recorder).run();
  }
  RunStore store(f.db);
  const auto run = *store.find_run(f.run_id);
  EXPECT_EQ(run.status, "finished");
  EXPECT_EQ(run.steps, 40);
  EXPECT_TRUE(run.best_bleu.has_value());
  EXPECT_EQ(store.metric(f.run_id, "train_loss").size(), 40u);
  EXPECT_EQ(store.metric(f.run_id, "lr").size(), 40u);
  EXPECT_EQ(store.metric(f.run_id, "bleu").size(), 2u);
  EXPECT_EQ(store.samples(f.run_id).size(), 4u);  // 2 validations x 2 dev sentences
  const auto probes = store.probes(f.run_id);
  ASSERT_EQ(probes.size(), 2u);  // the probe sentence at each validation
  EXPECT_EQ(probes[0].step, 20);
  EXPECT_EQ(probes[1].step, 40);
  EXPECT_EQ(probes[1].probe["source"], "ein Satz");
  const auto checkpoints = store.checkpoints(f.run_id);
  ASSERT_GE(checkpoints.size(), 3u);  // best and last at the first validation, last (and maybe best) at the second
  const auto& last = checkpoints.back();
  EXPECT_EQ(read_checkpoint_header(last.path).sha256, last.sha256);
  EXPECT_EQ(store.find_run_by_path(f.dir.str()), f.run_id);       // the run's directory
  EXPECT_EQ(store.find_run_by_path(last.path), f.run_id);         // one of its checkpoints
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST(RunRecorder, ALockedStoreDoesNotStopTrainingAndCatchesUpAfterwards) {
  Fixture f;
  f.config.train.max_steps = 300;
  std::atomic<bool> stop{false};
  std::vector<std::string> logs;
  {
    RunRecorder recorder(f.db, f.run_id, &stop, {0.05, 60, true, /*busy_timeout_ms=*/100});
    recorder.set_log([&](const std::string& line) { logs.push_back(line); });
    SQLite::Database blocker(f.db, SQLite::OPEN_READWRITE);
    blocker.exec("BEGIN IMMEDIATE");  // another process holds the write lock
    std::thread release([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2000));
      blocker.exec("ROLLBACK");
    });
    const auto summary = Trainer(f.config, test::tiny_data(f.config), {f.dir.file("out"), "tiny-deu.txt", "", &stop}, &recorder).run();
    release.join();
    EXPECT_EQ(summary.status, "finished");
  }
  bool warned = false;
  for (const auto& line : logs) warned = warned || line.find("locked") != std::string::npos;
  EXPECT_TRUE(warned);
  RunStore store(f.db);
  EXPECT_EQ(store.metric(f.run_id, "train_loss").size(), 300u);
  EXPECT_EQ(store.find_run(f.run_id)->status, "finished");
}

TEST(RunRecorder, StopsTrainingCleanlyWhenTheStoreNeverRecovers) {
  Fixture f;
  f.config.train.max_steps = 1000000;
  std::atomic<bool> stop{false};
  SQLite::Database blocker(f.db, SQLite::OPEN_READWRITE);
  TrainingSummary summary;
  {
    RunRecorder recorder(f.db, f.run_id, &stop, {0.05, 0.5, true, /*busy_timeout_ms=*/100});
    blocker.exec("BEGIN IMMEDIATE");
    summary = Trainer(f.config, test::tiny_data(f.config), {f.dir.file("out"), "tiny-deu.txt", "", &stop}, &recorder).run();
    blocker.exec("ROLLBACK");
  }
  EXPECT_EQ(summary.status, "stopped");
  EXPECT_LT(summary.steps, 1000000);
  EXPECT_TRUE(std::filesystem::exists(f.dir.file("out/last.ckpt")));
}

}  // namespace
}  // namespace ts
