// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/train/batcher.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace ts {
namespace {

std::vector<Example> varied_examples(std::size_t n) {
  std::mt19937_64 rng(3);
  std::vector<Example> out(n);
  for (auto& e : out) {
    const std::size_t s = 3 + rng() % 40, t = s + rng() % 6;  // lengths correlate, as in real pairs
    e.src.assign(s, 7);
    e.src.back() = Vocab::kEos;
    e.tgt.assign(t, 9);
  }
  return out;
}

TEST(Batcher, RespectsTheTokenBudgetAndCoversEveryExampleOnce) {
  const auto examples = varied_examples(3000);
  TokenBucketBatcher batcher(examples, 1000, 0, 5);
  const auto plan = batcher.epoch_plan(0);
  std::multiset<std::size_t> seen;
  for (const auto& batch : plan) {
    std::size_t s = 0, t = 0;
    for (auto i : batch) {
      s = std::max(s, examples[i].src.size());
      t = std::max(t, examples[i].tgt.size() + 1);
      seen.insert(i);
    }
    EXPECT_LE(batch.size() * std::max(s, t), 1000u);
  }
  EXPECT_EQ(seen.size(), examples.size());
  EXPECT_EQ(std::set<std::size_t>(seen.begin(), seen.end()).size(), examples.size());
}

TEST(Batcher, BucketingKeepsPaddingLow) {
  const auto examples = varied_examples(3000);
  TokenBucketBatcher bucketed(examples, 1000, 0, 5);
  EXPECT_LT(bucketed.padding_fraction(bucketed.epoch_plan(0)), 0.15);
  // Unsorted batches of the same size pad far more: the bucketing is what keeps it low.
  std::vector<std::vector<std::size_t>> naive;
  for (std::size_t i = 0; i < examples.size(); i += 20) {
    naive.emplace_back();
    for (std::size_t j = i; j < std::min(examples.size(), i + 20); ++j) naive.back().push_back(j);
  }
  EXPECT_GT(bucketed.padding_fraction(naive), 0.3);
}

TEST(Batcher, DeterministicPerSeedAndEpoch) {
  const auto examples = varied_examples(500);
  TokenBucketBatcher a(examples, 0, 16, 9), b(examples, 0, 16, 9), c(examples, 0, 16, 10);
  EXPECT_EQ(a.epoch_plan(2), b.epoch_plan(2));
  EXPECT_NE(a.epoch_plan(2), a.epoch_plan(3));
  EXPECT_NE(a.epoch_plan(2), c.epoch_plan(2));
  for (const auto& batch : a.epoch_plan(0)) EXPECT_LE(batch.size(), 16u);
}

TEST(Batcher, MakeBatchPlacesBosEosAndPadding) {
  std::vector<Example> examples = {{{5, 6, Vocab::kEos}, {7, 8, 9}}, {{5, Vocab::kEos}, {7}}};
  auto batch = make_batch(examples, {0, 1}, at::Device(at::kCPU));
  EXPECT_EQ(batch.src.sizes(), (at::IntArrayRef{2, 3}));
  EXPECT_EQ(batch.tgt_in.sizes(), (at::IntArrayRef{2, 4}));
  EXPECT_TRUE(at::equal(batch.tgt_in[0], at::tensor({Vocab::kBos, 7L, 8L, 9L})));
  EXPECT_TRUE(at::equal(batch.tgt_out[0], at::tensor({7L, 8L, 9L, Vocab::kEos})));
  EXPECT_TRUE(at::equal(batch.tgt_in[1], at::tensor({Vocab::kBos, 7L, Vocab::kPad, Vocab::kPad})));
  EXPECT_TRUE(at::equal(batch.tgt_out[1], at::tensor({7L, Vocab::kEos, Vocab::kPad, Vocab::kPad})));
  EXPECT_TRUE(at::equal(batch.src[1], at::tensor({5L, Vocab::kEos, Vocab::kPad})));
  EXPECT_EQ(batch.src_tokens, 5);
  EXPECT_EQ(batch.tgt_tokens, 6);
}

}  // namespace
}  // namespace ts
