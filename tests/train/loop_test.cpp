// SPDX-License-Identifier: GPL-3.0-or-later
// The one training loop (ts/train/loop.h) with a scripted body: the order of the calls, how each
// kind of end comes about, the non-finite-loss policies, pausing and errors. The two real bodies
// (Trainer, LmTrainer) are tested in trainer_test.cpp and lm/lm_trainer_test.cpp.
#include "ts/train/loop.h"

#include <gtest/gtest.h>

#include <optional>

#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts {
namespace {

// A body whose losses, update results and validation ends are scripted; it records every call.
struct ScriptedBody : LoopBody {
  std::int64_t steps = 0, max_steps = 5;
  std::vector<double> losses;            // loss of the n-th forward_backward (then 1.0)
  std::vector<bool> updates;             // result of the n-th update (then true)
  std::int64_t early_stop_at = -1;       // validate_if_due ends the run at this step
  std::int64_t throw_at_forward = -1;    // forward_backward throws on this call
  std::atomic<bool>* unpause = nullptr;  // cleared by between_steps while paused
  std::vector<std::string> calls, lines;
  int forwards = 0, update_calls = 0;
  double paused_seconds = 0;
  std::optional<LoopEnd> finished_with;  // what finish() was given, once it was called

  std::int64_t step() const override { return steps; }
  void begin() override { calls.push_back("begin"); }
  std::optional<LoopEnd> limit_reached() override {
    calls.push_back("limit");
    if (steps >= max_steps) return reached_max_steps(max_steps);
    return std::nullopt;
  }
  StepLoss forward_backward() override {
    calls.push_back("forward");
    if (forwards == throw_at_forward) throw std::runtime_error("disk full");
    const double loss = forwards < static_cast<int>(losses.size()) ? losses[static_cast<std::size_t>(forwards)] : 1.0;
    ++forwards;
    return {loss, 10};
  }
  bool update() override {
    calls.push_back("update");
    const bool ok =
        update_calls < static_cast<int>(updates.size()) ? updates[static_cast<std::size_t>(update_calls)] : true;
    ++update_calls;
    if (ok) ++steps;
    return ok;
  }
  void stepped(const StepLoss& loss, double seconds) override {
    calls.push_back("stepped");
    EXPECT_EQ(loss.tokens, 10);
    EXPECT_GE(seconds, 0.0);
  }
  std::optional<LoopEnd> validate_if_due() override {
    calls.push_back("validate");
    if (steps == early_stop_at) return LoopEnd{RunStatus::kEarlyStopped, "no improvement"};
    return std::nullopt;
  }
  void between_steps() override {
    calls.push_back("between");
    if (unpause) unpause->store(false);
  }
  void paused_for(double seconds) override { paused_seconds += seconds; }
  void finish(const LoopEnd& end) override {
    calls.push_back("finish");
    finished_with = end;
  }
  void log(const std::string& line) override { lines.push_back(line); }
};

const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(TrainingLoop, StepsInOrderUntilTheBodySaysALimitIsReached) {
  ScriptedBody body;
  body.max_steps = 2;
  const auto end = run_training_loop(body, {});
  EXPECT_EQ(end.status, RunStatus::kFinished);
  EXPECT_EQ(end.message, "reached max_steps 2");
  const std::vector<std::string> expected{"begin",    "limit",    "forward", "update",  "stepped",
                                          "validate", "between",  "limit",   "forward", "update",
                                          "stepped",  "validate", "between", "limit",   "finish"};
  EXPECT_EQ(body.calls, expected);
  ASSERT_TRUE(body.finished_with.has_value());
  EXPECT_EQ(body.finished_with->status, RunStatus::kFinished);
}

TEST(TrainingLoop, ANonFiniteLossFailsTheRunBeforeTheUpdateByDefault) {
  ScriptedBody body;
  body.losses = {0.5, kNaN};
  const auto end = run_training_loop(body, {});
  EXPECT_EQ(end.status, RunStatus::kFailed);
  EXPECT_EQ(end.message, nonfinite_loss(kNaN, 2).message);
  EXPECT_EQ(body.update_calls, 1);  // the first step only: the NaN never reached the weights
  EXPECT_EQ(body.steps, 1);
  ASSERT_TRUE(body.finished_with.has_value());
  EXPECT_EQ(body.finished_with->status, RunStatus::kFailed);  // finish() still runs (a last checkpoint may be kept)
}

TEST(TrainingLoop, TheSkipPolicySkipsNonFiniteUpdatesAndFailsAfterTwentyInARow) {
  ScriptedBody body;
  body.max_steps = 3;
  body.losses = {kNaN, 0.7, std::numeric_limits<double>::infinity(), 0.6, 0.5};
  LoopControls controls;
  controls.on_nonfinite = NonFinitePolicy::Skip;
  auto end = run_training_loop(body, controls);
  EXPECT_EQ(end.status, RunStatus::kFinished);
  EXPECT_EQ(body.steps, 3);
  EXPECT_EQ(body.update_calls, 3);  // two skipped losses never updated
  ASSERT_EQ(body.lines.size(), 2u);
  EXPECT_EQ(body.lines[0], "non-finite loss (nan) at step 1: update skipped (1 in a row)");
  EXPECT_EQ(body.lines[1], "non-finite loss (inf) at step 2: update skipped (1 in a row)");

  ScriptedBody stuck;
  stuck.losses.assign(100, kNaN);
  end = run_training_loop(stuck, controls);
  EXPECT_EQ(end.status, RunStatus::kFailed);
  EXPECT_EQ(end.message, nonfinite_loss(kNaN, 1, kMaxNonFiniteInARow).message);
  EXPECT_EQ(stuck.forwards, kMaxNonFiniteInARow);
  EXPECT_EQ(stuck.update_calls, 0);
}

TEST(TrainingLoop, ASkippedUpdateIsNeitherReportedNorValidated) {
  ScriptedBody body;
  body.max_steps = 1;
  body.updates = {false, true};  // fp16 overflow on the first try
  const auto end = run_training_loop(body, {});
  EXPECT_EQ(end.status, RunStatus::kFinished);
  const std::vector<std::string> expected{"begin",  "limit",   "forward",  "update",  "limit", "forward",
                                          "update", "stepped", "validate", "between", "limit", "finish"};
  EXPECT_EQ(body.calls, expected);
}

TEST(TrainingLoop, ValidationCanEndTheRun) {
  ScriptedBody body;
  body.early_stop_at = 2;
  const auto end = run_training_loop(body, {});
  EXPECT_EQ(end.status, RunStatus::kEarlyStopped);
  EXPECT_EQ(body.steps, 2);
  ASSERT_TRUE(body.finished_with.has_value());
  EXPECT_EQ(body.finished_with->status, RunStatus::kEarlyStopped);
}

TEST(TrainingLoop, AnErrorFailsTheRunWithItsMessageAndSkipsFinish) {
  ScriptedBody body;
  body.throw_at_forward = 1;
  const auto end = run_training_loop(body, {});
  EXPECT_EQ(end.status, RunStatus::kFailed);
  EXPECT_EQ(end.message, "disk full");
  EXPECT_EQ(body.steps, 1);
  EXPECT_FALSE(body.finished_with.has_value());
}

TEST(TrainingLoop, HoldsWhilePausedCallingBetweenStepsAndReportsThePause) {
  std::atomic<bool> pause{true};
  ScriptedBody body;
  body.max_steps = 1;
  body.unpause = &pause;  // the first idle call while paused resumes
  double fake_time = 100;
  LoopControls controls;
  controls.pause = &pause;
  controls.clock = [&fake_time] { return fake_time += 0.5; };
  const auto end = run_training_loop(body, controls);
  EXPECT_EQ(end.status, RunStatus::kFinished);
  ASSERT_GE(body.calls.size(), 3u);
  EXPECT_EQ(body.calls[1], "between");  // while paused, before the first step
  EXPECT_EQ(body.calls[2], "limit");
  EXPECT_GT(body.paused_seconds, 0.0);
  ASSERT_EQ(body.lines.size(), 2u);
  EXPECT_EQ(body.lines[0], "paused at step 0");
  EXPECT_EQ(body.lines[1].rfind("resumed after ", 0), 0u) << body.lines[1];
}

TEST(TrainingLoop, AStopRequestEndsAPauseAtOnce) {
  std::atomic<bool> pause{true}, stop{true};
  LoopControls controls;
  controls.pause = &pause;
  controls.stop = &stop;
  // The body decides that the stop ends the run; the loop only must not hold.
  struct StopsAtOnce : ScriptedBody {
    std::atomic<bool>* flag = nullptr;
    std::optional<LoopEnd> limit_reached() override {
      if (flag->load()) return stopped_by_request();
      return ScriptedBody::limit_reached();
    }
  } stops;
  stops.flag = &stop;
  const auto end = run_training_loop(stops, controls);
  EXPECT_EQ(end.status, RunStatus::kStopped);
  EXPECT_TRUE(stops.lines.empty());  // never paused
  EXPECT_EQ(stops.forwards, 0);
}

}  // namespace
}  // namespace ts
