// SPDX-License-Identifier: GPL-3.0-or-later
// The GPU path, checked where LibTorch sees a CUDA device (the GPU machine; skipped elsewhere):
// checkpoints move between the GPU and the CPU, a resumed GPU run continues the same losses, greedy
// translation on the GPU equals the CPU's in fp32, and batched translation on the GPU equals
// translating one sentence at a time there. Mixed precision on the GPU is in precision_test.cpp, the
// GPU's name in environment_test.cpp.
#include <gtest/gtest.h>

#include <torch/cuda.h>

#include "test_utils.h"
#include "ts/decode/search.h"
#include "ts/decode/translator.h"
#include "ts/train/checkpoint.h"
#include "ts/train/trainer.h"

namespace ts {
namespace {

using RecordingObserver = test::RecordingObserver;

#define SKIP_WITHOUT_CUDA() \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device"

ExperimentConfig gpu_config(int steps) {
  auto config = test::tiny_config();
  config.train.device = DeviceChoice::kCuda;
  config.train.precision = Precision::kFp32;
  config.train.max_steps = steps;
  return config;
}

// Decoding in fp32 on both sides. The CPU decodes with bf16 weights by default (DecodeConfig::weights)
// and the GPU with LibTorch's fp32 operations whatever the weights: compared so, the sentences' scores
// differed by 0.003-0.025 on the H200 (2026-11-30) and a near tie went the other way.
DecodeConfig fp32_decode(DecodeMode mode = DecodeMode::kGreedy) {
  DecodeConfig decode;
  decode.mode = mode;
  decode.beam = 3;
  decode.weights = DecodeWeights::kFloat32;
  return decode;
}

// A tiny model trained for 40 steps on the GPU in fp32, its checkpoints in a folder of its own.
struct GpuRun {
  ExperimentConfig config = gpu_config(40);
  PreparedData data = test::tiny_data(config);
  test::TempDir dir;
  TrainingSummary summary;
  bool trained_on_the_gpu = false;
  GpuRun() {
    Trainer trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr});
    summary = trainer.run();
    trained_on_the_gpu = trainer.model()->parameters().front().device().is_cuda();
  }
};

TEST(Cuda, ACheckpointWrittenOnTheGpuTranslatesAlikeOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  const GpuRun run;
  ASSERT_EQ(run.summary.status, RunStatus::kFinished) << run.summary.message;
  ASSERT_FALSE(run.summary.last_checkpoint.empty());
  EXPECT_TRUE(run.trained_on_the_gpu);
  auto on_cpu = load_translator(run.summary.last_checkpoint, at::Device(at::kCPU));
  auto on_gpu = load_translator(run.summary.last_checkpoint, at::Device(at::kCUDA));
  for (const auto& pair : run.data.text.train)
    for (const auto& decode : {fp32_decode(), fp32_decode(DecodeMode::kBeam)}) {
      const auto a = on_cpu.translate(pair.src, decode), b = on_gpu.translate(pair.src, decode);
      EXPECT_EQ(a.text, b.text) << pair.src << " (" << decode_mode_name(decode.mode) << ")";
      EXPECT_NEAR(a.best.score, b.best.score, 1e-3) << pair.src;
    }
}

// A run stopped and resumed on the GPU continues the loss curve of a run that never stopped: the
// weights, Adam's moments and the GPU's dropout generator all come back from the checkpoint. GPU
// kernels that sum with atomics (the embedding gradient) may round differently from run to run,
// hence a tolerance instead of equality.
TEST(Cuda, AResumedGpuRunContinuesTheSameLosses) {
  SKIP_WITHOUT_CUDA();
  auto config = gpu_config(12);
  config.model.dropout = 0.1;  // masks drawn on the GPU: its generator must be restored
  config.train.batch_sentences = 3;
  auto data = test::tiny_data(config);
  test::TempDir straight_dir, split_dir;
  RecordingObserver straight, first, second;
  Trainer(config, data, {straight_dir.str(), "tiny-deu.txt", "", nullptr}, &straight).run();
  config.train.max_steps = 5;
  Trainer(config, data, {split_dir.str(), "tiny-deu.txt", "", nullptr}, &first).run();
  config.train.max_steps = 12;
  const auto summary =
      Trainer(config, data, {split_dir.str(), "tiny-deu.txt", split_dir.file("last.ckpt"), nullptr}, &second).run();
  EXPECT_EQ(summary.steps, 12);
  ASSERT_EQ(straight.losses.size(), 12u);
  ASSERT_EQ(second.losses.size(), 7u);
  for (std::size_t i = 0; i < 7; ++i)
    EXPECT_NEAR(second.losses[i], straight.losses[i + 5], 1e-4 * straight.losses[i + 5]) << "step " << i + 6;
}

TEST(Cuda, GreedyTranslationOnTheGpuEqualsTheCpusInFp32) {
  SKIP_WITHOUT_CUDA();
  auto config = test::tiny_config();
  config.train.device = DeviceChoice::kCpu;
  config.train.max_steps = 60;
  auto data = test::tiny_data(config);
  test::TempDir dir;
  Trainer trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr});
  const auto summary = trainer.run();
  ASSERT_FALSE(summary.last_checkpoint.empty());
  auto on_cpu = load_translator(summary.last_checkpoint, at::Device(at::kCPU));
  auto on_gpu = load_translator(summary.last_checkpoint, at::Device(at::kCUDA));
  for (const auto& pair : data.text.train) {
    const auto a = on_cpu.translate(pair.src, fp32_decode()), b = on_gpu.translate(pair.src, fp32_decode());
    EXPECT_EQ(a.text, b.text) << pair.src;
    EXPECT_NEAR(a.best.score, b.best.score, 1e-3) << pair.src;
  }
}

// Translating a file on the GPU: length-sorted batches (greedy and beam 4, batches of 3 sentences of
// mixed lengths) give each sentence what translating it alone on the GPU gives, in input order.
TEST(Cuda, BatchedTranslationOnTheGpuEqualsOneAtATime) {
  SKIP_WITHOUT_CUDA();
  const GpuRun run;
  ASSERT_FALSE(run.summary.last_checkpoint.empty());
  auto on_gpu = load_translator(run.summary.last_checkpoint, at::Device(at::kCUDA));
  const auto& train = run.data.text.train;
  std::vector<std::string> sources;
  for (const auto& pair : train) sources.push_back(pair.src);
  sources.push_back("Haus.");
  sources.push_back(train.front().src + " " + train.back().src);
  // Batches of 3, and the GPU's default batch (512: every sentence here in one).
  for (const std::size_t batch : {std::size_t{3}, kDeviceBatch}) {
    for (const auto mode : {DecodeMode::kGreedy, DecodeMode::kBeam}) {
      DecodeConfig decode;
      decode.mode = mode;
      decode.beam = 4;
      std::vector<double> confidences;
      const auto all = on_gpu.translate_all(sources, decode, batch, &confidences);
      ASSERT_EQ(all.size(), sources.size());
      for (std::size_t i = 0; i < sources.size(); ++i) {
        const auto alone = on_gpu.translate(sources[i], decode);
        EXPECT_EQ(all[i], alone.text) << decode_mode_name(mode) << " sentence " << i << ", batch " << batch;
        EXPECT_NEAR(confidences[i], mean_token_log_prob(alone.best), 1e-3)
            << decode_mode_name(mode) << " sentence " << i << ", batch " << batch;
      }
    }
  }
}

}  // namespace
}  // namespace ts
