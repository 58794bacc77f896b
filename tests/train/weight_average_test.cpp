// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/train/weight_average.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "test_utils.h"
#include "ts/train/checkpoint.h"
#include "ts/train/trainer.h"

namespace ts {
namespace {

TEST(WeightAverage, RampsThenSettlesAtItsRate) {
  WeightAverage average(0.25, {at::zeros({1})});
  EXPECT_DOUBLE_EQ(average.weight(0), 0.9);
  EXPECT_DOUBLE_EQ(average.weight(1), 9.0 / 11);
  EXPECT_DOUBLE_EQ(average.weight(26), 0.25);  // 9 / 36
  EXPECT_DOUBLE_EQ(average.weight(1000), 0.25);
  WeightAverage marian(1e-4, {at::zeros({1})});
  EXPECT_DOUBLE_EQ(marian.weight(89990), 1e-4);
  EXPECT_DOUBLE_EQ(marian.weight(8990), 1e-3);
}

TEST(WeightAverage, MatchesTheClosedFormTowardsAConstant) {
  // From 0 towards a constant 1: after the ramp (updates 1..8, weights 9/(10+t) above 0.5) the
  // distance to 1 is prod (1 - 9/(10+t)) = prod (1+t)/(10+t) = (2*3*...*9) / (11*12*...*18);
  // each later update at weight 0.5 halves it.
  WeightAverage average(0.5, {at::zeros({3}, at::kFloat)});
  const auto one = at::ones({3}, at::kFloat);
  for (int t = 1; t <= 8; ++t) average.update({one}, t);
  double distance = 1;
  for (int t = 1; t <= 8; ++t) distance *= (1.0 + t) / (10.0 + t);
  EXPECT_NEAR(average.average()[0][0].item<double>(), 1 - distance, 1e-6);
  for (int t = 9; t <= 20; ++t) average.update({one}, t);
  EXPECT_NEAR(average.average()[0][1].item<double>(), 1 - distance * std::pow(0.5, 12), 1e-6);
}

TEST(WeightAverage, SwappingTwiceGivesBothBack) {
  auto p = at::full({2, 2}, 3.0);
  WeightAverage average(0.5, {at::zeros({2, 2})});
  average.swap_with({p});
  EXPECT_EQ(p.sum().item<double>(), 0.0);
  EXPECT_EQ(average.average()[0].sum().item<double>(), 12.0);
  average.swap_with({p});
  EXPECT_EQ(p.sum().item<double>(), 12.0);
  EXPECT_EQ(average.average()[0].sum().item<double>(), 0.0);
}

std::vector<at::Tensor> tensors_of(const CheckpointFile& file, const std::string& prefix, Transformer& model) {
  std::vector<at::Tensor> out;
  auto copy = copy_model(model, at::Device(at::kCPU));
  file.load_module(*copy, prefix);
  for (const auto& p : copy->parameters()) out.push_back(p.detach().clone());
  return out;
}

double max_difference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, (a[i] - b[i]).abs().max().item<double>());
  return d;
}

std::vector<at::Tensor> live_weights(Trainer& trainer) {
  std::vector<at::Tensor> out;
  for (const auto& p : trainer.model()->parameters()) out.push_back(p.detach().clone());
  return out;
}

TEST(WeightAverage, CheckpointsHoldTheAverageForReadersAndTheWeightsForResuming) {
  auto config = test::tiny_config();  // no dev pairs: nothing to compare, the average is kept
  config.train.max_steps = 30;
  config.train.ema = 0.05;
  const auto data = test::tiny_data(config);
  test::TempDir dir;
  Trainer trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr});
  ASSERT_EQ(trainer.run().status, RunStatus::kFinished);
  const auto file = CheckpointFile::open(dir.file("last.ckpt"));
  const auto live = live_weights(trainer);
  const auto raw = tensors_of(file, "raw.", trainer.model());
  const auto averaged = tensors_of(file, "model.", trainer.model());
  EXPECT_EQ(max_difference(raw, live), 0.0) << "raw.* are the weights as trained";
  EXPECT_GT(max_difference(averaged, live), 1e-4) << "model.* is the average, not the weights";
  // What eval and translation load is the average.
  const auto loaded = load_checkpoint(dir.file("last.ckpt"), at::Device(at::kCPU));
  std::vector<at::Tensor> loaded_weights;
  for (const auto& p : loaded.model->parameters()) loaded_weights.push_back(p.detach());
  EXPECT_EQ(max_difference(loaded_weights, averaged), 0.0);
}

TEST(WeightAverage, TheFinalValidationScoresBothAndKeepsTheBetter) {
  for (const double rate : {0.01, 0.5}) {
    auto config = test::tiny_config(/*dev=*/2, /*test=*/0);
    config.train.max_steps = 40;
    config.train.ema = rate;
    const auto data = test::tiny_data(config);
    test::TempDir dir;
    test::RecordingObserver observer;
    Trainer trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr}, &observer);
    ASSERT_EQ(trainer.run().status, RunStatus::kFinished);
    ASSERT_FALSE(observer.validations.empty());
    const auto& v = observer.validations.back();
    ASSERT_GE(v.bleu_as_trained, 0.0);
    const auto said = std::find_if(observer.logs.begin(), observer.logs.end(),
                                   [](const std::string& l) { return l.rfind("weight averaging: dev BLEU", 0) == 0; });
    ASSERT_NE(said, observer.logs.end());
    const bool kept_trained = said->find("keeping the weights as trained") != std::string::npos;
    const auto file = CheckpointFile::open(dir.file("last.ckpt"));
    const auto saved = tensors_of(file, "model.", trainer.model());
    const auto live = live_weights(trainer);
    if (kept_trained) {
      EXPECT_GE(v.bleu_as_trained, v.bleu);
      EXPECT_DOUBLE_EQ(v.bleu, v.bleu_as_trained) << "the scores are the kept weights'";
      EXPECT_EQ(max_difference(saved, live), 0.0) << rate;
      EXPECT_FALSE(file.contains("raw." + trainer.model()->named_parameters().begin()->key()));
    } else {
      EXPECT_GE(v.bleu, v.bleu_as_trained);
      EXPECT_GT(max_difference(saved, live), 0.0) << rate;
    }
  }
}

TEST(WeightAverage, ResumingGivesTheSameAverageAsTrainingStraightThrough) {
  auto config = test::tiny_config();
  config.train.ema = 0.05;
  config.train.batch_sentences = 3;
  const auto data = test::tiny_data(config);
  test::TempDir straight_dir, split_dir;
  config.train.max_steps = 24;
  Trainer straight(config, data, {straight_dir.str(), "tiny-deu.txt", "", nullptr});
  straight.run();
  config.train.max_steps = 10;
  Trainer(config, data, {split_dir.str(), "tiny-deu.txt", "", nullptr}).run();
  config.train.max_steps = 24;
  Trainer resumed(config, data, {split_dir.str(), "tiny-deu.txt", split_dir.file("last.ckpt"), nullptr});
  resumed.run();
  const auto a = tensors_of(CheckpointFile::open(straight_dir.file("last.ckpt")), "model.", straight.model());
  const auto b = tensors_of(CheckpointFile::open(split_dir.file("last.ckpt")), "model.", resumed.model());
  EXPECT_LT(max_difference(a, b), 1e-5);
  // Switched off, the checkpoint holds the weights alone.
  config.train.ema = 0;
  test::TempDir plain_dir;
  config.train.max_steps = 5;
  Trainer plain(config, data, {plain_dir.str(), "tiny-deu.txt", "", nullptr});
  plain.run();
  const auto first = plain.model()->named_parameters().begin()->key();
  const auto file = CheckpointFile::open(plain_dir.file("last.ckpt"));
  EXPECT_TRUE(file.contains("model." + first));
  EXPECT_FALSE(file.contains("raw." + first));
}

}  // namespace
}  // namespace ts
