// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/text/split.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

namespace ts {
namespace {

std::vector<SentencePair> numbered_pairs(std::size_t n) {
  std::vector<SentencePair> pairs;
  for (std::size_t i = 0; i < n; ++i) {
    pairs.push_back({"s" + std::to_string(i), "t" + std::to_string(i)});
  }
  return pairs;
}

std::vector<std::string> sources(const std::vector<SentencePair>& pairs) {
  std::vector<std::string> out;
  for (const SentencePair& pair : pairs) out.push_back(pair.src);
  return out;
}

SplitConfig config(double dev, double test, std::uint64_t seed = 1234) {
  SplitConfig c;
  c.dev = dev;
  c.test = test;
  c.seed = seed;
  return c;
}

TEST(Split, SameSeedGivesSameSplit) {
  const auto pairs = numbered_pairs(50);
  const DataSplit a = split_pairs(pairs, config(0.2, 0.2, 7));
  const DataSplit b = split_pairs(pairs, config(0.2, 0.2, 7));
  EXPECT_EQ(sources(a.train), sources(b.train));
  EXPECT_EQ(sources(a.dev), sources(b.dev));
  EXPECT_EQ(sources(a.test), sources(b.test));
}

TEST(Split, DifferentSeedGivesDifferentSplit) {
  const auto pairs = numbered_pairs(50);
  const DataSplit a = split_pairs(pairs, config(0.2, 0.2, 7));
  const DataSplit b = split_pairs(pairs, config(0.2, 0.2, 8));
  EXPECT_NE(sources(a.test), sources(b.test));
  EXPECT_NE(sources(a.train), sources(b.train));
}

TEST(Split, ShufflesAndKeepsTargetsWithTheirSources) {
  const auto pairs = numbered_pairs(100);
  const DataSplit split = split_pairs(pairs, config(0.1, 0.1));
  const std::vector<SentencePair> first_80(pairs.begin(), pairs.begin() + 80);
  EXPECT_NE(sources(split.train), sources(first_80));
  for (const SentencePair& pair : split.train) EXPECT_EQ("t" + pair.src.substr(1), pair.tgt);
}

// mt19937_64's output is fixed by the standard and the Fisher-Yates loop is ours, so this order
// must be the same with every compiler and standard library.
TEST(Split, MatchesRecordedOrder) {
  const DataSplit split = split_pairs(numbered_pairs(10), config(2, 3, 1234));
  EXPECT_EQ(sources(split.test), (std::vector<std::string>{"s0", "s3", "s4"}));
  EXPECT_EQ(sources(split.dev), (std::vector<std::string>{"s7", "s9"}));
  EXPECT_EQ(sources(split.train), (std::vector<std::string>{"s8", "s5", "s6", "s1", "s2"}));
}

TEST(Split, FractionsGiveProportionalSizes) {
  const DataSplit split = split_pairs(numbered_pairs(100), config(0.1, 0.1));
  EXPECT_EQ(split.train.size(), 80u);
  EXPECT_EQ(split.dev.size(), 10u);
  EXPECT_EQ(split.test.size(), 10u);
}

TEST(Split, CountsGiveExactSizes) {
  const DataSplit split = split_pairs(numbered_pairs(100), config(5, 7));
  EXPECT_EQ(split.train.size(), 88u);
  EXPECT_EQ(split.dev.size(), 5u);
  EXPECT_EQ(split.test.size(), 7u);
}

TEST(Split, ZeroDevOrTestIsAllowed) {
  const DataSplit split = split_pairs(numbered_pairs(10), config(0, 0.3));
  EXPECT_EQ(split.train.size(), 7u);
  EXPECT_TRUE(split.dev.empty());
  EXPECT_EQ(split.test.size(), 3u);
}

TEST(Split, TestIsCutBeforeDev) {
  // Changing the dev size must not change which pairs are held out for testing.
  const auto pairs = numbered_pairs(60);
  const DataSplit small_dev = split_pairs(pairs, config(3, 6));
  const DataSplit large_dev = split_pairs(pairs, config(20, 6));
  EXPECT_EQ(sources(small_dev.test), sources(large_dev.test));
}

TEST(Split, PartsAreDisjointAndCoverTheInput) {
  const auto pairs = numbered_pairs(237);
  const DataSplit split = split_pairs(pairs, config(0.15, 0.05, 99));
  std::multiset<std::string> seen;
  for (const auto* part : {&split.train, &split.dev, &split.test}) {
    for (const SentencePair& pair : *part) seen.insert(pair.src);
  }
  const auto expected = sources(pairs);
  EXPECT_EQ(seen, std::multiset<std::string>(expected.begin(), expected.end()));
}

TEST(Split, ThrowsWhenNothingIsLeftToTrain) {
  const auto pairs = numbered_pairs(10);
  EXPECT_THROW(split_pairs(pairs, config(5, 5)), std::invalid_argument);
  EXPECT_THROW(split_pairs(pairs, config(0.5, 0.5)), std::invalid_argument);
  EXPECT_THROW(split_pairs(pairs, config(20, 0)), std::invalid_argument);
  EXPECT_THROW(split_pairs({}, config(0, 0)), std::invalid_argument);
  EXPECT_NO_THROW(split_pairs(pairs, config(4, 5)));
  try {
    split_pairs(pairs, config(5, 5));
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no training pair"), std::string::npos) << e.what();
  }
}

TEST(Split, RejectsNegativeSizes) {
  EXPECT_THROW(split_pairs(numbered_pairs(10), config(-0.1, 0.1)), std::invalid_argument);
  EXPECT_THROW(split_pairs(numbered_pairs(10), config(0.1, -2)), std::invalid_argument);
}

TEST(Split, ResolvesFractionsToNearestCount) {
  EXPECT_EQ(resolve_split_size(0.1, 100), 10u);
  EXPECT_EQ(resolve_split_size(0.1, 95), 10u);  // 9.5 rounds up
  EXPECT_EQ(resolve_split_size(0.1, 94), 9u);   // 9.4 rounds down
  EXPECT_EQ(resolve_split_size(0.5, 3), 2u);
}

TEST(Split, ResolvesTinyFractionsToAtLeastOne) {
  EXPECT_EQ(resolve_split_size(0.001, 10), 1u);
  EXPECT_EQ(resolve_split_size(0.001, 0), 0u);
  EXPECT_EQ(resolve_split_size(0.0, 100), 0u);
}

TEST(Split, ResolvesWholeNumbersAsCounts) {
  EXPECT_EQ(resolve_split_size(1, 100), 1u);
  EXPECT_EQ(resolve_split_size(250, 100), 250u);  // split_pairs rejects it, not resolve
}

TEST(Split, RejectsInvalidSizeValues) {
  EXPECT_THROW(resolve_split_size(-0.1, 100), std::invalid_argument);
  EXPECT_THROW(resolve_split_size(-3, 100), std::invalid_argument);
  EXPECT_THROW(resolve_split_size(2.5, 100), std::invalid_argument);
  EXPECT_THROW(resolve_split_size(std::nan(""), 100), std::invalid_argument);
}

}  // namespace
}  // namespace ts
