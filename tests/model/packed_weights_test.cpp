// SPDX-License-Identifier: GPL-3.0-or-later
// Weights packed once a step for every thread: each chunk packed by exactly one thread, every thread
// handed the whole packing, a new step packing again into the same memory, a change within a step
// left to the caller.
#include "ts/model/packed_weights.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace ts {
namespace {

TEST(PackedWeights, EachChunkIsPackedOnceByOneOfTheThreadsThatAskAtOnce) {
  PackedWeights weights;
  weights.next_step();
  constexpr int kThreads = 4;
  constexpr std::int64_t kChunks = 64, kWordsPerChunk = 100;
  std::vector<std::atomic<int>> packed(kChunks);
  std::atomic<int> arrived{0};
  std::vector<const std::uint32_t*> got(kThreads, nullptr);
  const auto pack = [&](std::int64_t chunk, std::uint32_t* out) {
    packed[static_cast<std::size_t>(chunk)].fetch_add(1);
    for (std::int64_t i = 0; i < kWordsPerChunk; ++i)
      out[chunk * kWordsPerChunk + i] = static_cast<std::uint32_t>(chunk * 1000 + i);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      arrived.fetch_add(1);
      while (arrived.load() < kThreads) std::this_thread::yield();  // all ask at once
      got[static_cast<std::size_t>(t)] =
          weights.get({&weights, 3, 4, 4, 1, 16}, 0, kChunks * kWordsPerChunk, kChunks, pack);
    });
  for (auto& thread : threads) thread.join();
  for (std::int64_t c = 0; c < kChunks; ++c) EXPECT_EQ(packed[static_cast<std::size_t>(c)].load(), 1) << "chunk " << c;
  EXPECT_EQ(weights.packings(), 1);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(got[static_cast<std::size_t>(t)], got[0]);
    for (std::int64_t c = 0; c < kChunks; ++c)
      for (std::int64_t i = 0; i < kWordsPerChunk; ++i)
        ASSERT_EQ(got[0][c * kWordsPerChunk + i], static_cast<std::uint32_t>(c * 1000 + i));
  }
}

TEST(PackedWeights, ANewStepPacksAgainAndAChangeWithinAStepIsLeftToTheCaller) {
  PackedWeights weights;
  int calls = 0;
  std::uint32_t value = 7;
  const auto pack = [&](std::int64_t, std::uint32_t* out) {
    ++calls;
    out[0] = value;
  };
  const PackedWeights::Key key{&calls, 2, 2, 2, 1, 1};
  weights.next_step();
  const std::uint32_t* first = weights.get(key, 5, 1, 1, pack);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first[0], 7u);
  EXPECT_EQ(weights.get(key, 5, 1, 1, pack), first);  // the same step: not packed again
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(weights.get(key, 6, 1, 1, pack), nullptr);  // changed within the step: the caller packs
  EXPECT_EQ(calls, 1);
  // Another layout of the same memory is another packing.
  PackedWeights::Key other = key;
  other.layout = 2;
  EXPECT_NE(weights.get(other, 5, 1, 1, pack), nullptr);
  EXPECT_EQ(calls, 2);
  // The next step: packed again from the new values, into the same memory.
  weights.next_step();
  value = 8;
  const std::uint32_t* second = weights.get(key, 6, 1, 1, pack);
  EXPECT_EQ(second, first);
  EXPECT_EQ(second[0], 8u);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(weights.packings(), 3);
}

TEST(PackedWeights, TheScopeSetsTheThreadsPackingsAndNests) {
  PackedWeights outer_weights, inner_weights;
  EXPECT_EQ(current_packed_weights(), nullptr);
  {
    PackedWeightsScope outer(&outer_weights);
    EXPECT_EQ(current_packed_weights(), &outer_weights);
    {
      PackedWeightsScope inner(&inner_weights);
      EXPECT_EQ(current_packed_weights(), &inner_weights);
      PackedWeights* other_thread = &inner_weights;
      std::thread([&] { other_thread = current_packed_weights(); }).join();
      EXPECT_EQ(other_thread, nullptr);
    }
    EXPECT_EQ(current_packed_weights(), &outer_weights);
  }
  EXPECT_EQ(current_packed_weights(), nullptr);
}

}  // namespace
}  // namespace ts
