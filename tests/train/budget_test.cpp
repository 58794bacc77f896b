// SPDX-License-Identifier: GPL-3.0-or-later
// The time budget (train.budget_minutes) on a simulated clock: every step "takes" one second, so
// the tests say exactly where the deadline falls, whatever the machine's speed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "test_utils.h"
#include "ts/train/batcher.h"
#include "ts/train/trainer.h"

namespace ts {
namespace {

struct BudgetObserver : test::RecordingObserver {
  std::vector<TrainingProgress> steps;
  void on_step(const TrainingProgress& p) override {
    RecordingObserver::on_step(p);
    steps.push_back(p);
  }
};

// A clock the test moves: one second per step (between_steps runs after each one).
struct SimulatedRun {
  double clock = 1000;
  double seconds_per_step = 1;
  std::atomic<bool> stop{false}, pause{false};
  std::function<void(SimulatedRun&, Trainer&)> hook;  // after the clock moved
  TrainerOptions options(const std::string& dir, const std::string& resume = "") {
    TrainerOptions o{dir, "tiny-deu.txt", resume, &stop, &pause};
    o.clock = [this] { return clock; };
    o.between_steps = [this](Trainer& t) {
      if (!pause.load()) clock += seconds_per_step;
      if (hook) hook(*this, t);
    };
    return o;
  }
};

ExperimentConfig budget_config(double minutes, LrSchedule schedule = LrSchedule::kLinear) {
  auto c = test::tiny_config();
  c.train.budget_minutes = minutes;
  c.train.schedule = schedule;
  c.train.warmup = 5;
  c.train.lr = 1e-3;
  return c;
}

// A run straight through on the simulated clock, to compare an interrupted one with.
BudgetObserver straight_run(const ExperimentConfig& config, const PreparedData& data, const std::string& dir) {
  SimulatedRun sim;
  BudgetObserver observer;
  Trainer(config, data, sim.options(dir), &observer).run();
  return observer;
}

TEST(Budget, TheRunEndsOnTimeWithTheLearningRateDecayedToZeroAtTheDeadline) {
  const auto config = budget_config(1.0);  // 60 simulated seconds
  const auto data = test::tiny_data(config);
  test::TempDir dir;
  SimulatedRun sim;
  BudgetObserver observer;
  const auto summary = Trainer(config, data, sim.options(dir.str()), &observer).run();
  EXPECT_EQ(summary.status, RunStatus::kFinished);
  EXPECT_NE(summary.message.find("time budget of 1 min used"), std::string::npos) << summary.message;
  // 2% of the budget is kept for the final validation until a validation has been timed; the one
  // half-way (two per minute-long budget) takes no simulated time, so the steps fill the budget.
  ASSERT_GE(observer.steps.size(), 57u);
  EXPECT_LE(observer.steps.size(), 60u);
  EXPECT_LE(sim.clock - 1000, 60.0);
  ASSERT_EQ(observer.validations.size(), 2u);
  // Warmup over 5 steps, the peak at step 5, then a straight line to zero at the deadline.
  EXPECT_NEAR(observer.steps[0].lr, 1e-3 / 5, 1e-12);
  EXPECT_NEAR(observer.steps[4].lr, 1e-3, 1e-12);
  for (std::size_t i = 5; i < observer.steps.size(); ++i)
    EXPECT_LT(observer.steps[i].lr, observer.steps[i - 1].lr) << i;
  EXPECT_LT(observer.steps.back().lr, 1e-3 * 0.03);
  // The fraction and the time left follow the budget.
  // Step 31 reports after 30 simulated seconds (the clock moves once a step has reported).
  EXPECT_NEAR(observer.steps[30].budget_left_s, 30.0, 1e-9);
  EXPECT_NEAR(observer.steps[30].fraction, 0.5, 1e-9);
  EXPECT_GE(observer.steps.back().budget_left_s, 0.0);
  // The checkpoint remembers how much of which budget was used.
  const auto position = read_checkpoint_meta(dir.file("last.ckpt")).position;
  EXPECT_DOUBLE_EQ(position.budget_seconds, 60.0);
  EXPECT_NEAR(position.budget_used_seconds, static_cast<double>(observer.steps.size()), 1e-9);
}

TEST(Budget, CosineAlsoReachesZeroAtTheDeadline) {
  const auto config = budget_config(1.0, LrSchedule::kCosine);
  const auto data = test::tiny_data(config);
  test::TempDir dir;
  SimulatedRun sim;
  BudgetObserver observer;
  Trainer(config, data, sim.options(dir.str()), &observer).run();
  ASSERT_GE(observer.steps.size(), 57u);
  EXPECT_NEAR(observer.steps[4].lr, 1e-3, 1e-12);
  EXPECT_LT(observer.steps.back().lr, 1e-3 * 0.01);
  // Half-way through the decay the cosine is at half the peak, as the linear decay is.
  const double warm_end = 4.0 / (60 - 1.2);  // step 5 starts after 4 s
  const double half = warm_end + (1 - warm_end) / 2;
  const auto at_half = static_cast<std::size_t>(half * (60 - 1.2));
  EXPECT_NEAR(observer.steps[at_half].lr, 0.5e-3, 0.05e-3);
}

TEST(Budget, PausedTimeDoesNotCountAndTheStepsAreTheSame) {
  const auto config = budget_config(1.0);
  const auto data = test::tiny_data(config);
  test::TempDir straight_dir, paused_dir;
  const auto a = straight_run(config, data, straight_dir.str());

  SimulatedRun paused;
  int polls = 0;
  paused.hook = [&](SimulatedRun& sim, Trainer&) {
    if (!sim.pause.load()) {
      if (polls == 0 && sim.clock - 1000 >= 20) sim.pause.store(true);  // "Pause" after 20 steps
      return;
    }
    sim.clock += 30;  // half an hour of simulated coffee, over 60 polls of the paused loop
    if (++polls == 60) sim.pause.store(false);
  };
  BudgetObserver b;
  const auto summary = Trainer(config, data, paused.options(paused_dir.str()), &b).run();
  EXPECT_EQ(summary.status, RunStatus::kFinished);
  EXPECT_EQ(polls, 60);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_NEAR(a.steps[i].lr, b.steps[i].lr, 1e-12) << "step " << i + 1;
    EXPECT_NEAR(a.steps[i].budget_left_s, b.steps[i].budget_left_s, 1e-9) << "step " << i + 1;
  }
}

TEST(Budget, ValidationsAreSpreadOverTheBudgetAndTheLastComesAtTheEnd) {
  auto config = budget_config(2.0);
  config.data.dev = 2;
  config.train.budget_validations = 4;
  config.train.validate_every = 5;  // a step cadence gives way to the budget's
  const auto data = test::tiny_data(config);
  test::TempDir dir;
  SimulatedRun sim;
  BudgetObserver observer;
  const auto summary = Trainer(config, data, sim.options(dir.str()), &observer).run();
  EXPECT_EQ(summary.status, RunStatus::kFinished);
  ASSERT_EQ(observer.validations.size(), 4u);
  // At a quarter, half and three quarters of the 120 s (less the final validation's reserve,
  // 2% until a validation has been timed), then after the last step.
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(static_cast<double>(observer.validations[k].step), 30.0 * (k + 1), 2.5) << k;
  EXPECT_GE(observer.steps.size(), 117u);
  EXPECT_LE(observer.steps.size(), 120u);
  EXPECT_EQ(observer.validations.back().step, static_cast<std::int64_t>(observer.steps.size()));
}

TEST(Budget, ResumingTheSameBudgetContinuesItsScheduleWhereItStood) {
  const auto config = budget_config(1.0);
  const auto data = test::tiny_data(config);
  test::TempDir straight_dir, split_dir;
  const auto a = straight_run(config, data, straight_dir.str());

  SimulatedRun first;
  first.hook = [](SimulatedRun& sim, Trainer&) {
    if (sim.clock - 1000 >= 20) sim.stop.store(true);
  };
  BudgetObserver b1;
  EXPECT_EQ(Trainer(config, data, first.options(split_dir.str()), &b1).run().status, RunStatus::kStopped);
  ASSERT_EQ(b1.steps.size(), 20u);
  SimulatedRun second;
  second.clock = 5000;  // another day: only the budget's own bookkeeping carries over
  BudgetObserver b2;
  const auto summary = Trainer(config, data, second.options(split_dir.str(), split_dir.file("last.ckpt")), &b2).run();
  EXPECT_EQ(summary.status, RunStatus::kFinished);
  ASSERT_EQ(b1.steps.size() + b2.steps.size(), a.steps.size());
  for (std::size_t i = 0; i < b2.steps.size(); ++i) {
    EXPECT_NEAR(b2.steps[i].lr, a.steps[i + 20].lr, 1e-12) << "step " << i + 21;
    EXPECT_NEAR(b2.steps[i].budget_left_s, a.steps[i + 20].budget_left_s, 1e-9) << "step " << i + 21;
  }
}

TEST(Budget, ResumingWithAnotherBudgetStartsANewScheduleOverIt) {
  const auto config = budget_config(1.0);
  const auto data = test::tiny_data(config);
  test::TempDir dir;
  SimulatedRun first;
  BudgetObserver a;
  Trainer(config, data, first.options(dir.str()), &a).run();
  const auto steps_before = static_cast<std::int64_t>(a.steps.size());

  auto longer = config;
  longer.train.budget_minutes = 0.5;  // 30 more seconds
  SimulatedRun second;
  BudgetObserver b;
  const auto summary = Trainer(longer, data, second.options(dir.str(), dir.file("last.ckpt")), &b).run();
  EXPECT_EQ(summary.status, RunStatus::kFinished);
  ASSERT_GE(b.steps.size(), 27u);
  EXPECT_LE(b.steps.size(), 30u);
  EXPECT_EQ(b.steps.front().step, steps_before + 1);
  EXPECT_NEAR(b.steps[0].lr, 1e-3 / 5, 1e-12);  // a new warmup from the step the new budget began
  EXPECT_NEAR(b.steps[4].lr, 1e-3, 1e-12);
  EXPECT_LT(b.steps.back().lr, 1e-3 * 0.05);
  EXPECT_EQ(read_checkpoint_meta(dir.file("last.ckpt")).position.schedule_start_step, steps_before);
}

TEST(Budget, PreciseBudgetsAreParsedAndSaid) {
  EXPECT_DOUBLE_EQ(parse_budget_minutes("20"), 20);
  EXPECT_DOUBLE_EQ(parse_budget_minutes("20m"), 20);
  EXPECT_DOUBLE_EQ(parse_budget_minutes("20min"), 20);
  EXPECT_DOUBLE_EQ(parse_budget_minutes("1h30m"), 90);
  EXPECT_DOUBLE_EQ(parse_budget_minutes("1h 30m"), 90);
  EXPECT_DOUBLE_EQ(parse_budget_minutes("2h"), 120);
  EXPECT_DOUBLE_EQ(parse_budget_minutes("90s"), 1.5);
  EXPECT_DOUBLE_EQ(parse_budget_minutes("0.5"), 0.5);
  for (const char* bad : {"", "0", "-5", "abc", "20x", "1h30", "nan", "inf", "1e3", "m", "20 20"})
    EXPECT_NE(test::message_of<ConfigError>([&] { parse_budget_minutes(bad); }).find("expected minutes"),
              std::string::npos)
        << bad;
  EXPECT_EQ(minutes_text(20), "20 min");
  EXPECT_EQ(minutes_text(90), "1 h 30 min");
  EXPECT_EQ(minutes_text(120), "2 h");
  EXPECT_EQ(minutes_text(0.75), "45 s");
  EXPECT_EQ(minutes_text(1.5), "1 min 30 s");
}

// The budget starts with the command: what came before the trainer (20 simulated seconds of reading
// and preparing) is spent already, so training gets the rest, and the log says where the time went.
TEST(Budget, TimeSpentBeforeTheTrainerCountsAgainstTheBudget) {
  const auto config = budget_config(1.0);  // 60 simulated seconds
  const auto data = test::tiny_data(config);
  test::TempDir dir;
  SimulatedRun sim;
  auto options = sim.options(dir.str());
  options.budget_start = sim.clock - 20;
  BudgetObserver observer;
  const auto summary = Trainer(config, data, options, &observer).run();
  EXPECT_EQ(summary.status, RunStatus::kFinished);
  ASSERT_GE(observer.steps.size(), 37u);  // 60 - 20 - the final validation's 2% reserve
  EXPECT_LE(observer.steps.size(), 40u);
  EXPECT_LE(sim.clock - options.budget_start, 60.0);
  EXPECT_NEAR(observer.steps[0].budget_left_s, 40.0, 1e-9);
  EXPECT_NEAR(observer.steps[0].fraction, 20.0 / 60, 1e-9);
  const auto has = [&](const std::string& text) {
    return std::any_of(observer.logs.begin(), observer.logs.end(),
                       [&](const std::string& l) { return l.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(
      has("20.0 s of it spent before training (loading the program, reading and preparing the data, "
          "fitting the recipe"));
  EXPECT_TRUE(has("time budget of 1 min spent: 20.0 s (33.3%) before training"));
  EXPECT_TRUE(has("s inside the budget"));
  // The passes it made: one step per batch, an epoch is the batcher's plan for it (whose length
  // varies from epoch to epoch with token-sized batches).
  const TokenBucketBatcher batcher(data.train, config.train.batch_tokens, config.train.batch_sentences,
                                   config.train.seed);
  std::int64_t left = summary.steps, epoch = 0;
  for (auto batches = static_cast<std::int64_t>(batcher.epoch_plan(epoch).size()); left >= batches;
       batches = static_cast<std::int64_t>(batcher.epoch_plan(epoch).size())) {
    left -= batches;
    ++epoch;
  }
  const double passes =
      static_cast<double>(epoch) + static_cast<double>(left) / static_cast<double>(batcher.epoch_plan(epoch).size());
  EXPECT_GT(passes, 0.0);
  EXPECT_TRUE(has(fmt::format("; {:.1f} passes over the training pairs made", passes))) << summary.steps << " steps";
}

}  // namespace
}  // namespace ts
