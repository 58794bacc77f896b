// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/train/distributed.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "test_utils.h"
#include "ts/train/calibration.h"
#include "ts/train/trainer.h"

// Two ranks run as two threads of this process, each with its own TCPStore client and Gloo
// process group on a free loopback port: the same c10d code path as two processes, without
// starting any (the CLI test does that).
namespace ts {
namespace {

using RecordingObserver = test::RecordingObserver;

// Runs f(rank) on one thread per rank and rethrows the first failure.
template <typename F>
void on_ranks(int world, F f) {
  std::vector<std::thread> threads;
  std::vector<std::string> errors(world);
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      try {
        f(r);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) ASSERT_TRUE(errors[r].empty()) << "rank " << r << ": " << errors[r];
}

std::vector<std::shared_ptr<DataParallel>> connect_ranks(int world) {
  const int port = free_port();
  std::vector<std::shared_ptr<DataParallel>> ranks(world);
  on_ranks(world, [&](int r) {
    // Rank 0 serves the store; a client that finds no server yet retries only after a second.
    if (r > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto dp = std::make_shared<DataParallel>();
    dp->connect({world, r, "127.0.0.1", port, /*timeout_s=*/60}, at::Device(at::kCPU));
    ranks[r] = dp;
  });
  for (const auto& rank : ranks)
    if (!rank) return {};  // a rank failed to connect (on_ranks said why): callers assert the size
  return ranks;
}

bool dir_empty(const std::string& dir) { return std::filesystem::is_empty(dir); }

#define SKIP_WITHOUT_C10D() \
  if (!data_parallel_available()) GTEST_SKIP() << "built without c10d Gloo (libgloo-dev)"

TEST(DistributedConfig, ValidationNamesTheField) {
  const auto message = [](DistributedConfig c) {
    try {
      c.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message({}), "");
  EXPECT_NE(message({2, 2}).find("rank"), std::string::npos);
  EXPECT_NE(message({0, 0}).find("world_size"), std::string::npos);
  EXPECT_NE(message({2, 0, "127.0.0.1", 70000}).find("master_port"), std::string::npos);
  EXPECT_NE(message({2, 0, ""}).find("master_addr"), std::string::npos);
  EXPECT_NE(message({2, 0, "127.0.0.1", 29500, 0}).find("timeout_s"), std::string::npos);
}

TEST(DataParallel, CollectivesSumAndBroadcastAcrossRanks) {
  SKIP_WITHOUT_C10D();
  auto ranks = connect_ranks(2);
  ASSERT_EQ(ranks.size(), 2u);
  auto config = test::tiny_config();
  auto data = test::tiny_data(config);
  std::vector<Transformer> models;
  for (int r = 0; r < 2; ++r) {
    at::manual_seed(r);  // different weights on each rank
    models.push_back(build_model(config.model, static_cast<std::int64_t>(data.pipeline.src_vocab->size()),
                                 static_cast<std::int64_t>(data.pipeline.tgt_vocab->size()), Vocab::kPad, false));
  }
  std::vector<std::vector<double>> sums{{1, 2.5}, {10, 0.5}}, casts{{7, 8}, {0, 0}};
  on_ranks(2, [&](int r) {
    auto& dp = *ranks[r];
    EXPECT_EQ(dp.rank(), r);
    EXPECT_EQ(dp.world_size(), 2);
    EXPECT_EQ(dp.backend(), "Gloo");
    dp.all_reduce_sum(sums[r]);
    dp.broadcast(casts[r]);
    dp.broadcast_parameters(models[r]);
    // Rank 0 has a gradient of 1 for every parameter, rank 1 of 2 except for the first, which it
    // lacks: the sum is 3, and 1 where only rank 0 contributed; scaled by 0.5.
    auto params = models[r]->parameters();
    for (std::size_t i = 0; i < params.size(); ++i)
      if (r == 0 || i > 0) params[i].mutable_grad() = at::full_like(params[i], r == 0 ? 1.0 : 2.0);
    dp.all_reduce_gradients(models[r], 0.5);
    dp.barrier();
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(sums[r], (std::vector<double>{11, 3}));
    EXPECT_EQ(casts[r], (std::vector<double>{7, 8}));
    auto p0 = models[0]->parameters(), p = models[r]->parameters();
    for (std::size_t i = 0; i < p.size(); ++i) {
      EXPECT_TRUE(at::equal(p[i], p0[i])) << "rank " << r << " parameter " << i;
      ASSERT_TRUE(p[i].grad().defined());
      EXPECT_TRUE(at::allclose(p[i].grad(), at::full_like(p[i], i == 0 ? 0.5 : 1.5)))
          << "rank " << r << " parameter " << i;
    }
  }
}

struct DataParallelRun {
  std::vector<TrainingSummary> summaries;
  std::vector<RecordingObserver> observers;
  std::vector<std::vector<at::Tensor>> weights;
};

// Trains `config` on 2 ranks. The trainers are built one after the other (LibTorch's global RNG
// initialises the weights), then run side by side.
DataParallelRun train_two_ranks(const ExperimentConfig& config, const PreparedData& data,
                                const std::vector<std::string>& dirs,
                                std::vector<std::atomic<bool>*> stops = {nullptr, nullptr},
                                std::vector<ExperimentConfig> configs = {}) {
  auto ranks = connect_ranks(2);
  DataParallelRun run;
  run.summaries.resize(2);
  run.observers.resize(2);
  run.weights.resize(2);
  if (ranks.size() != 2) return run;  // the failure is reported; the caller's checks then fail, not crash
  std::vector<std::unique_ptr<Trainer>> trainers;
  for (int r = 0; r < 2; ++r) {
    TrainerOptions options{dirs[r], "tiny-deu.txt", "", stops[r]};
    options.parallel = ranks[r];
    trainers.push_back(
        std::make_unique<Trainer>(configs.empty() ? config : configs[r], data, options, &run.observers[r]));
  }
  on_ranks(2, [&](int r) { run.summaries[r] = trainers[r]->run(); });
  for (int r = 0; r < 2; ++r)
    for (const auto& p : trainers[r]->model()->parameters()) run.weights[r].push_back(p.detach().clone());
  return run;
}

void expect_same_as_one_process(ExperimentConfig config, int steps) {
  config.train.max_steps = steps;
  config.model.dropout = 0;  // the ranks draw no dropout masks, so the step is exactly one process's
  // The self-attention key bias has a true gradient of 0 (softmax ignores a constant per row), so
  // its gradient is float rounding, which Adam with eps 1e-9 turns into full-size steps of either
  // sign. A larger eps keeps such noise from moving weights; real gradients are far above it.
  config.train.adam_eps = 1e-6;
  auto data = test::tiny_data(config);

  test::TempDir single_dir, dir0, dir1;
  RecordingObserver single;
  Trainer trainer(config, data, {single_dir.str(), "tiny-deu.txt", "", nullptr}, &single);
  const auto single_summary = trainer.run();
  ASSERT_EQ(single_summary.status, RunStatus::kFinished);

  const auto run = train_two_ranks(config, data, {dir0.str(), dir1.str()});
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(run.summaries[r].status, RunStatus::kFinished) << "rank " << r << ": " << run.summaries[r].message;
    EXPECT_EQ(run.summaries[r].steps, steps);
    EXPECT_EQ(run.observers[r].finished, 1);
  }
  // Identical weights on both ranks, bit for bit, and the one-process weights within rounding.
  auto& one = trainer.model();
  const auto reference = one->parameters();
  ASSERT_EQ(run.weights[0].size(), reference.size());
  for (std::size_t i = 0; i < reference.size(); ++i) {
    EXPECT_TRUE(at::equal(run.weights[0][i], run.weights[1][i])) << "parameter " << i;
    EXPECT_TRUE(test::tensors_near(run.weights[0][i], reference[i], 1e-5))
        << "parameter " << i << " " << one->named_parameters().keys()[i] << ": max difference "
        << (run.weights[0][i] - reference[i]).abs().max().item<double>();
  }
  // The loss reported by rank 0 is the whole batch's; rank 1 reports nothing but its end.
  ASSERT_EQ(run.observers[0].losses.size(), single.losses.size());
  for (std::size_t i = 0; i < single.losses.size(); ++i)
    EXPECT_NEAR(run.observers[0].losses[i], single.losses[i], 1e-5) << "step " << i + 1;
  EXPECT_TRUE(run.observers[1].losses.empty());
  // Only rank 0 writes checkpoints.
  EXPECT_FALSE(run.observers[0].checkpoints.empty());
  EXPECT_TRUE(run.observers[1].checkpoints.empty());
  EXPECT_TRUE(std::filesystem::exists(dir0.file("last.ckpt")));
  EXPECT_TRUE(dir_empty(dir1.str()));
}

TEST(DataParallel, TwoRanksTrainLikeOneProcessOnTheCombinedBatches) {
  SKIP_WITHOUT_C10D();
  auto config = test::tiny_config();
  config.train.batch_sentences = 3;  // batches of 3, 3 and 2 sentences: uneven shares
  expect_same_as_one_process(config, 8);
}

TEST(DataParallel, RanksWithoutSentencesAndGradientAccumulation) {
  SKIP_WITHOUT_C10D();
  auto config = test::tiny_config();
  config.train.batch_sentences = 1;  // rank 1 never has a sentence: it contributes zero gradients
  config.train.accumulate = 2;
  config.train.optimizer = Optimizer::kAdamW;
  config.train.clip_norm = 0.5;
  expect_same_as_one_process(config, 4);
}

TEST(DataParallel, AStopRequestOnAnyRankStopsEveryRankAtTheSameStep) {
  SKIP_WITHOUT_C10D();
  auto config = test::tiny_config();
  config.train.max_steps = 1000;
  auto data = test::tiny_data(config);
  test::TempDir dir0, dir1;
  std::atomic<bool> stop0{false}, stop1{true};
  const auto run = train_two_ranks(config, data, {dir0.str(), dir1.str()}, {&stop0, &stop1});
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(run.summaries[r].status, RunStatus::kStopped) << "rank " << r;
    EXPECT_EQ(run.summaries[r].steps, 1) << "rank " << r;
  }
  EXPECT_TRUE(std::filesystem::exists(dir0.file("last.ckpt")));  // rank 0 saves when stopped
  EXPECT_TRUE(dir_empty(dir1.str()));
}

// The auto recipe's measurement on a data-parallel group: every rank takes the same timed steps (rank 0's
// clock ends them, or the collectives would hang) and gets rank 0's figure for the whole batch, so every
// rank fits the same recipe.
TEST(DataParallel, RanksTimeTheirStepsTogetherAndAllGetRankZerosFigure) {
  SKIP_WITHOUT_C10D();
  auto ranks = connect_ranks(2);
  ASSERT_EQ(ranks.size(), 2u);
  SpeedSettings settings;
  settings.device = DeviceChoice::kCpu;
  settings.threads = 1;
  std::vector<ThroughputMeasurement> measured(2);
  std::vector<MachineProfile> machines(2);
  on_ranks(2, [&](int r) {
    measured[r] = measure_data_parallel_throughput(settings, 60, *ranks[r], /*seconds=*/0.2);
    machines[r] = measure_data_parallel_machine(settings, *ranks[r]);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_GT(measured[r].tokens_per_second, 0) << "rank " << r;
    EXPECT_GE(measured[r].steps, 3) << "rank " << r;
    EXPECT_EQ(measured[r].target_tokens, 60) << "rank " << r;  // the whole batch: 6 sentences of 10
    EXPECT_EQ(machines[r].data_parallel_ranks, 2);
    EXPECT_NE(machines[r].describe().find("2 data-parallel ranks of 1 core each"), std::string::npos)
        << machines[r].describe();
  }
  EXPECT_EQ(measured[1].steps, measured[0].steps);
  EXPECT_EQ(measured[1].tokens_per_second, measured[0].tokens_per_second);  // rank 0's, exactly
  EXPECT_EQ(machines[1].measured_tokens_per_second, machines[0].measured_tokens_per_second);
  EXPECT_GT(machines[0].measured_tokens_per_second, 0);
}

TEST(DataParallel, RanksWithDifferentConfigurationsRefuseToTrain) {
  SKIP_WITHOUT_C10D();
  auto config = test::tiny_config();
  config.train.max_steps = 3;
  auto data = test::tiny_data(config);
  auto other = config;
  other.train.lr = 1e-3;
  test::TempDir dir0, dir1;
  const auto run = train_two_ranks(config, data, {dir0.str(), dir1.str()}, {nullptr, nullptr}, {config, other});
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(run.summaries[r].status, RunStatus::kFailed) << "rank " << r;
    EXPECT_EQ(run.summaries[r].steps, 0);
  }
  EXPECT_NE(run.summaries[1].message.find("rank 1 differs from rank 0 in: configuration"), std::string::npos)
      << run.summaries[1].message;
  EXPECT_NE(run.summaries[0].message.find("differ from rank 0"), std::string::npos) << run.summaries[0].message;
}

}  // namespace
}  // namespace ts
