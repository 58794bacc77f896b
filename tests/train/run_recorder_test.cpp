// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/train/run_recorder.h"
#include "ts/store/recovery.h"
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
  EXPECT_EQ(run.status, RunStatus::kFinished);
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
  EXPECT_EQ(store.find_run_by_path(f.dir.str()), f.run_id);  // the run's directory
  EXPECT_EQ(store.find_run_by_path(last.path), f.run_id);    // one of its checkpoints
  EXPECT_EQ(store.integrity_check(), "ok");
}

// Without dev pairs a "validation" writes checkpoints and decodes the probe, and measures nothing:
// the history gets the probes and the checkpoints, and no dev loss, BLEU or chrF of 0.
TEST(RunRecorder, ARunWithoutDevPairsRecordsNoScores) {
  Fixture f;
  f.config = test::tiny_config(/*dev=*/0, /*test=*/0);
  f.config.train.max_steps = 20;
  f.config.train.validate_every = 10;
  f.config.train.probe = "ein Satz";
  std::atomic<bool> stop{false};
  struct Seen : TrainingObserver {
    std::vector<ValidationResult> validations;
    void on_validation(const ValidationResult& v) override { validations.push_back(v); }
  };
  TrainingSummary summary;
  {
    RunRecorder recorder(f.db, f.run_id, &stop, {0.05, 60, true});
    Seen seen;
    ObserverList both({&recorder, &seen});
    summary = Trainer(f.config, test::tiny_data(f.config), {f.dir.file("out"), "tiny-deu.txt", "", &stop}, &both).run();
    ASSERT_EQ(seen.validations.size(), 2u);
    for (const auto& v : seen.validations) EXPECT_FALSE(v.scored);
  }
  EXPECT_FALSE(summary.validated);
  RunStore store(f.db);
  const auto run = *store.find_run(f.run_id);
  EXPECT_EQ(run.status, RunStatus::kFinished);
  EXPECT_FALSE(run.best_bleu.has_value());
  EXPECT_EQ(store.metric(f.run_id, "train_loss").size(), 20u);
  for (const char* name : {"bleu", "chrf", "dev_loss", "dev_ppl"})
    EXPECT_TRUE(store.metric(f.run_id, name).empty()) << name;
  EXPECT_EQ(store.probes(f.run_id).size(), 2u);
  const auto checkpoints = store.checkpoints(f.run_id);
  ASSERT_FALSE(checkpoints.empty());
  for (const auto& c : checkpoints) EXPECT_FALSE(c.metrics.is_object() && c.metrics.contains("bleu")) << c.path;
}

// Another writer holds the database's write lock from before training starts until the recorder
// says, at the end of the run, that it waits: every commit during training and the first try at the
// end fail, whatever the machine's speed. The recorder must keep everything and store it all once
// the lock is released (no sleep: the release is triggered by the recorder's own "waiting" line).
TEST(RunRecorder, ALockedStoreDoesNotStopTrainingAndCatchesUpAfterwards) {
  Fixture f;
  f.config.train.max_steps = 300;
  std::atomic<bool> stop{false};
  std::vector<std::string> logs;
  TrainingSummary summary;
  std::string recovery;
  {
    RunRecorder recorder(f.db, f.run_id, &stop, {0.05, 3600, true, /*busy_timeout_ms=*/20});
    WriteLockHolder blocker(f.db);  // another process holds the write lock
    bool released_while_waiting = false;
    recorder.set_log([&](const std::string& line) { logs.push_back(line); });
    std::vector<HistoryWait> waits;
    recorder.set_wait_observer([&](const HistoryWait& w) {
      waits.push_back(w);
      if (w.state == HistoryWaitState::kWaiting && blocker.held()) {
        EXPECT_EQ(w.problem, StoreProblem::kLocked);
        EXPECT_TRUE(w.in_recovery_file);
        EXPECT_EQ(w.words, logs.back());  // the same as the log says
        released_while_waiting = true;
        recovery = recorder.recovery_file();  // written before it started waiting
        EXPECT_TRUE(std::filesystem::exists(recovery)) << recovery;
        blocker.release();
      }
    });
    summary =
        Trainer(f.config, test::tiny_data(f.config), {f.dir.file("out"), "tiny-deu.txt", "", &stop}, &recorder).run();
    EXPECT_EQ(summary.status, RunStatus::kFinished);
    EXPECT_TRUE(released_while_waiting) << "the lock was not held when training ended";
    EXPECT_EQ(recorder.recovery_file(), "");
    ASSERT_FALSE(waits.empty());
    EXPECT_EQ(waits.back().state, HistoryWaitState::kStoredAfterWaiting);  // typed: nobody reads the words
  }
  bool warned = false, stored = false;
  for (const auto& line : logs) {
    warned = warned || line.find("locked") != std::string::npos;
    stored = stored || line.rfind("run history: stored after waiting", 0) == 0;
  }
  EXPECT_TRUE(warned);
  EXPECT_TRUE(stored);
  EXPECT_FALSE(std::filesystem::exists(recovery)) << "the recovery file is removed once the store has everything";
  RunStore store(f.db);
  EXPECT_EQ(store.metric(f.run_id, "train_loss").size(), 300u);
  EXPECT_EQ(store.metric(f.run_id, "lr").size(), 300u);
  const auto run = *store.find_run(f.run_id);
  EXPECT_EQ(run.status, RunStatus::kFinished);
  EXPECT_EQ(run.steps, 300);
  EXPECT_FALSE(store.checkpoints(f.run_id).empty());
  EXPECT_EQ(store.integrity_check(), "ok");
}

// Takes the store's write lock at the first training step and holds it until it goes away.
class LockAtTheFirstStep : public TrainingObserver {
 public:
  explicit LockAtTheFirstStep(const std::string& db) : db_(db) {}
  void on_step(const TrainingProgress&) override {
    if (!holder_) holder_ = std::make_unique<WriteLockHolder>(db_);
  }

 private:
  std::string db_;
  std::unique_ptr<WriteLockHolder> holder_;
};

// The store refuses for good: training stops cleanly after give_up_seconds, the end of the run waits
// as long again, then leaves everything in a recovery file that the next open of the store imports.
// The store refuses from the first step on: taken before, a slow start (a loaded machine) let the
// recorder give up before any step, and a run stopped before its first step has no checkpoint.
TEST(RunRecorder, StopsTrainingCleanlyWhenTheStoreNeverRecoversAndLosesNothing) {
  Fixture f;
  f.config.train.max_steps = 1000000;
  std::atomic<bool> stop{false};
  TrainingSummary summary;
  std::vector<std::string> logs;
  std::string recovery;
  {
    LockAtTheFirstStep blocker(f.db);  // from the first step on, and after the recorder is gone
    {
      RunRecorder recorder(f.db, f.run_id, &stop, {0.05, 0.5, true, /*busy_timeout_ms=*/20});
      recorder.set_log([&](const std::string& line) { logs.push_back(line); });
      ObserverList observers({&blocker, &recorder});
      summary = Trainer(f.config, test::tiny_data(f.config), {f.dir.file("out"), "tiny-deu.txt", "", &stop}, &observers)
                    .run();
      recovery = recorder.recovery_file();
    }
    ASSERT_FALSE(recovery.empty());
    EXPECT_EQ(recovery,
              (std::filesystem::path(f.dir.str()) / kRecoveryFileName).string())  // beside the run's checkpoints
        << recovery;
    EXPECT_TRUE(std::filesystem::exists(recovery));
  }  // the other writer lets go; the recorder is long gone
  EXPECT_EQ(summary.status, RunStatus::kStopped);
  EXPECT_LT(summary.steps, 1000000);
  EXPECT_TRUE(std::filesystem::exists(f.dir.file("out/last.ckpt")));
  bool gave_up = false;
  for (const auto& line : logs) gave_up = gave_up || line.rfind("run history: gave up waiting", 0) == 0;
  EXPECT_TRUE(gave_up);

  RunStore store(f.db);
  EXPECT_TRUE(std::filesystem::exists(recovery));  // opening imports nothing
  store.mark_interrupted_runs();                   // the next writer imports the recovery file
  EXPECT_FALSE(std::filesystem::exists(recovery));
  const auto run = *store.find_run(f.run_id);
  EXPECT_EQ(run.status, RunStatus::kStopped);
  EXPECT_EQ(run.steps, summary.steps);
  EXPECT_NE(run.message.find("recovered from"), std::string::npos) << run.message;
  EXPECT_EQ(store.metric(f.run_id, "train_loss").size(), static_cast<std::size_t>(summary.steps));
  const auto checkpoints = store.checkpoints(f.run_id);
  ASSERT_FALSE(checkpoints.empty());
  EXPECT_EQ(checkpoints.back().path, std::filesystem::weakly_canonical(f.dir.file("out/last.ckpt")).string());
  RunStore again(f.db);  // a second writer finds nothing more to import
  EXPECT_TRUE(again.mark_interrupted_runs().empty());
  EXPECT_EQ(again.metric(f.run_id, "train_loss").size(), static_cast<std::size_t>(summary.steps));
}

// A run that ends badly (a NaN loss here) is stored the same way: its status and message arrive
// even though the store was locked when it ended.
TEST(RunRecorder, AFailedRunIsRecordedThroughALockToo) {
  Fixture f;
  f.config.train.max_steps = 50;
  f.config.train.lr = 1e30;  // diverges at once
  f.config.train.on_nonfinite = NonFinitePolicy::Fail;
  std::atomic<bool> stop{false};
  TrainingSummary summary;
  {
    RunRecorder recorder(f.db, f.run_id, &stop, {0.05, 3600, true, /*busy_timeout_ms=*/20});
    WriteLockHolder blocker(f.db);
    recorder.set_wait_observer([&](const HistoryWait& w) {
      if (w.state == HistoryWaitState::kWaiting) blocker.release();
    });
    summary =
        Trainer(f.config, test::tiny_data(f.config), {f.dir.file("out"), "tiny-deu.txt", "", &stop}, &recorder).run();
    ASSERT_EQ(summary.status, RunStatus::kFailed) << summary.message;
    EXPECT_FALSE(blocker.held());
  }
  RunStore store(f.db);
  const auto run = *store.find_run(f.run_id);
  EXPECT_EQ(run.status, summary.status);
  EXPECT_EQ(run.message, summary.message);
  EXPECT_EQ(store.metric(f.run_id, "train_loss").size(), static_cast<std::size_t>(summary.steps));
}

}  // namespace
}  // namespace ts
