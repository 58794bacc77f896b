// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/lm/gpt.h"

#include <gtest/gtest.h>

#include "lm_test_utils.h"
#include "test_utils.h"

namespace ts {
namespace {

at::Tensor random_ids(std::int64_t batch, std::int64_t length, std::int64_t vocab) {
  at::manual_seed(3);
  return at::randint(vocab, {batch, length}, at::TensorOptions().dtype(at::kLong));
}

TEST(LmConfig, PresetsAreTheTutorials) {
  const auto small = lm_preset("shakespeare-char");
  EXPECT_EQ(small.kind, LmKind::kGpt);
  EXPECT_EQ(small.batch_size, 16);
  EXPECT_EQ(small.block_size, 32);
  EXPECT_EQ(small.n_layer, 4);
  EXPECT_EQ(small.n_head, 4);
  EXPECT_EQ(small.n_embd, 64);
  EXPECT_EQ(small.dropout, 0.0);
  EXPECT_EQ(small.lr, 1e-3);
  EXPECT_EQ(small.max_steps, 5000);
  EXPECT_EQ(small.eval_interval, 500);
  EXPECT_EQ(small.eval_iters, 200);
  const auto large = lm_preset("shakespeare-char-large");
  EXPECT_EQ(large.block_size, 256);
  EXPECT_EQ(large.n_embd, 384);
  EXPECT_EQ(large.n_layer, 6);
  EXPECT_EQ(large.dropout, 0.2);
  EXPECT_EQ(lm_preset("bigram").kind, LmKind::kBigram);
  EXPECT_THROW(lm_preset("nope"), ConfigError);
}

TEST(LmConfig, JsonRoundTripAndErrorsNameTheKey) {
  auto c = lm_preset("shakespeare-char-large");
  c.set("n_layer=3");
  c.set("tokenizer=bpe");
  EXPECT_EQ(c.n_layer, 3);
  EXPECT_EQ(c.tokenizer, LmTokenizer::kBpe);
  EXPECT_EQ(LmConfig::from_json(c.to_json()).to_json(), c.to_json());
  try {
    c.set("n_layers=3");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("n_layers: unknown key"), std::string::npos) << e.what();
  }
  try {
    c.set("lr=fast");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("lr: expected a number"), std::string::npos) << e.what();
  }
  try {
    c.set("kind=trigram");  // a closed set: refused by name when it is set
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("kind: unknown language-model kind \"trigram\" (expected gpt or bigram)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(c.kind, LmKind::kGpt);
  EXPECT_EQ(c.to_json()["kind"], "gpt");
  EXPECT_THROW(c.set("device=gpu"), ConfigError);
  c = lm_preset("shakespeare-char");
  c.set("precision=fp16");  // no loss scaling in the LM trainer
  EXPECT_EQ(c.problems(), std::vector<std::string>{"precision: \"fp16\" is not fp32 or bf16"});
  c = lm_preset("shakespeare-char");
  c.n_embd = 30;  // not divisible by 4 heads
  try {
    c.validate();
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("n_embd: 30 is not divisible by n_head 4"), std::string::npos) << e.what();
  }
}

TEST(Gpt, ChangingAFutureTokenNeverChangesEarlierLogits) {
  auto config = test::small_gpt_config();
  auto model = build_language_model(config, 20);
  test::spread_weights(model);
  model->eval();
  torch::NoGradGuard no_grad;
  auto idx = random_ids(2, 16, 20);
  const auto before = model->forward(idx);
  EXPECT_EQ(before.sizes(), (at::IntArrayRef{2, 16, 20}));
  for (std::int64_t t : {0, 7, 15}) {
    auto changed = idx.clone();
    changed.select(1, t).fill_((idx[0][t].item<std::int64_t>() + 1) % 20);
    const auto after = model->forward(changed);
    EXPECT_TRUE(at::equal(before.slice(1, 0, t), after.slice(1, 0, t))) << "position " << t;
    EXPECT_FALSE(test::tensors_near(before.slice(1, t), after.slice(1, t), 1e-4)) << "position " << t;
  }
}

TEST(Gpt, CachedFeedGivesTheFullForwardLogits) {
  auto config = test::small_gpt_config();
  auto model = build_language_model(config, 20);
  test::spread_weights(model);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto idx = random_ids(2, 16, 20);
  const auto full = model->forward(idx);
  // One token at a time.
  LmCache cache;
  for (std::int64_t t = 0; t < 16; ++t) {
    const auto step = model->feed(cache, idx.slice(1, t, t + 1));
    EXPECT_TRUE(test::tensors_near(step.select(1, 0), full.select(1, t), 1e-5)) << "position " << t;
  }
  EXPECT_EQ(cache.length, 16);
  // A prefix at once, then chunks: a chunk sees the cache and is causal within itself.
  LmCache chunked;
  const auto a = model->feed(chunked, idx.slice(1, 0, 5));
  const auto b = model->feed(chunked, idx.slice(1, 5, 12));
  const auto c = model->feed(chunked, idx.slice(1, 12, 16));
  EXPECT_TRUE(test::tensors_near(at::cat({a, b, c}, 1), full, 1e-5));
  // The cached path is causal too: a changed future token leaves the cached logits before it alone.
  auto changed = idx.clone();
  changed.select(1, 10).fill_((idx[0][10].item<std::int64_t>() + 1) % 20);
  LmCache other;
  const auto first = model->feed(other, changed.slice(1, 0, 11));
  EXPECT_TRUE(at::equal(first.slice(1, 0, 10), full.slice(1, 0, 10)) ||
              test::tensors_near(first.slice(1, 0, 10), full.slice(1, 0, 10), 1e-6));
  // Beyond the block size is refused.
  EXPECT_THROW(model->feed(cache, idx.slice(1, 0, 1)), std::invalid_argument);
}

TEST(Gpt, RecordsCausalAttentionPerLayerAndHead) {
  auto model = build_language_model(test::small_gpt_config(), 20);
  model->eval();
  torch::NoGradGuard no_grad;
  model->set_record_attention(true);
  model->forward(random_ids(1, 10, 20));
  const auto maps = model->recorded_attention();
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(maps[0].sizes(), (at::IntArrayRef{1, 2, 10, 10}));
  EXPECT_EQ(maps[1].triu(1).abs().sum().item<double>(), 0.0);
  EXPECT_TRUE(test::tensors_near(maps[0].sum(-1), at::ones({1, 2, 10})));
}

TEST(LmConfig, ParameterEstimateIsTheBuiltModelsCount) {
  for (const auto& name : lm_preset_names()) {
    auto config = lm_preset(name);
    if (config.kind == LmKind::kGpt) config = test::small_gpt_config();
    EXPECT_EQ(config.parameter_estimate(37), build_language_model(config, 37)->parameter_count()) << name;
  }
  auto config = test::small_gpt_config();
  config.n_layer = 3;
  config.n_embd = 48;
  config.block_size = 20;
  EXPECT_EQ(config.parameter_estimate(65), build_language_model(config, 65)->parameter_count());
}

// Found by tests/fuzz/fuzz_config: the same faults ExperimentConfig had.
TEST(LmConfig, RefusesBytesThatAreNotUtf8AndIntegersThatWouldWrap) {
  LmConfig c;
  EXPECT_THROW(c.set("lr=\x80"), ConfigError);
  EXPECT_THROW(c.set("preset=\xff"), ConfigError);
  EXPECT_NO_THROW(c.to_json().dump());  // nothing unwritable was kept
  try {
    c.set("n_layer=4294967297");
    FAIL() << "wrapped to " << c.n_layer;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("n_layer"), std::string::npos) << e.what();
  }
  EXPECT_EQ(c.n_layer, LmConfig().n_layer);
  EXPECT_THROW(LmConfig::from_json({{"n_embd", -5000000000LL}}), ConfigError);
  c.set("seed=18446744073709551615");  // the whole unsigned range is a valid seed
  EXPECT_EQ(c.seed, 18446744073709551615ULL);
  c.n_embd = -64;  // invalid, but the estimate stays defined
  EXPECT_GE(c.parameter_estimate(10), 0);
}

TEST(Gpt, CopyIsIndependentAndComputesTheSameLogits) {
  auto model = build_language_model(test::small_gpt_config(), 20);
  test::spread_weights(model);
  auto copy = copy_language_model(*model, at::Device(at::kCPU));
  EXPECT_FALSE(copy->is_training());
  model->eval();
  torch::NoGradGuard no_grad;
  const auto idx = random_ids(2, 12, 20);
  EXPECT_TRUE(at::equal(copy->forward(idx), model->forward(idx)));
  // Changing the original afterwards leaves the copy alone.
  const auto before = copy->forward(idx);
  for (auto& p : model->parameters()) p.add_(1.0);
  EXPECT_TRUE(at::equal(copy->forward(idx), before));
  EXPECT_FALSE(at::equal(model->forward(idx), before));
}

TEST(Bigram, LogitsAreRowsOfTheTable) {
  auto config = lm_preset("bigram");
  auto model = build_language_model(config, 12);
  EXPECT_EQ(model->parameter_count(), 144);
  torch::NoGradGuard no_grad;
  const auto idx = random_ids(2, 8, 12);
  const auto logits = model->forward(idx);
  EXPECT_EQ(logits.sizes(), (at::IntArrayRef{2, 8, 12}));
  const auto table = model->parameters().front();
  EXPECT_TRUE(at::equal(logits[1][3], table[idx[1][3].item<std::int64_t>()]));
  LmCache cache;
  EXPECT_TRUE(at::equal(model->feed(cache, idx.slice(1, 0, 4)), logits.slice(1, 0, 4)));
}

}  // namespace
}  // namespace ts
