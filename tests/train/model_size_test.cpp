// SPDX-License-Identifier: GPL-3.0-or-later
// Training memory from a configuration (ts/train/model_size.h): the parameters are the model's own
// count (tests/model/transformer_test.cpp checks it against build_model), the rest grows with the batch.
#include <gtest/gtest.h>

#include "ts/train/model_size.h"

namespace ts {
namespace {

ExperimentConfig small_config() {
  ExperimentConfig c;
  c.model.encoder_layers = 3;
  c.model.decoder_layers = 2;
  c.model.d_model = 16;
  c.model.heads = 4;
  c.model.d_ff = 32;
  c.model.pre_norm = true;
  return c;
}

TEST(ModelSize, WeightsAreTheParameterCountInFp32AndTrainingNeedsMore) {
  for (const bool share : {false, true}) {
    auto config = small_config();
    config.model.share_embeddings = share;
    config.data.shared_vocab = share;
    const std::int64_t src = share ? 24 : 20, tgt = 24;
    const auto size = estimate_model_size(config, src, tgt);
    EXPECT_EQ(static_cast<double>(size.parameters), parameter_count(config.model, src, tgt));
    EXPECT_EQ(size.weight_bytes, 4 * size.parameters);
    EXPECT_GT(size.training_bytes, 4 * size.weight_bytes);  // weights, gradients, Adam moments, activations
  }
}

TEST(ModelSize, TrainingMemoryGrowsWithTheBatch) {
  auto config = small_config();
  config.train.batch_tokens = 1000;
  const auto small = estimate_model_size(config, 100, 100);
  config.train.batch_tokens = 4000;
  const auto large = estimate_model_size(config, 100, 100);
  EXPECT_EQ(small.parameters, large.parameters);
  EXPECT_EQ(large.batch_tokens, 4000);
  EXPECT_GT(large.training_bytes, small.training_bytes);
}

}  // namespace
}  // namespace ts
