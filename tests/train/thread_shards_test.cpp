// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/train/thread_shards.h"

#include <gtest/gtest.h>

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ts {
namespace {

TEST(ThreadShares, EachShareRunsOnceOnAThreadOfItsOwnInsideOneParallelRegion) {
  if (!shares_run_on_threads()) GTEST_SKIP() << "built without OpenMP: shares run one after another";
  std::mutex m;
  std::set<std::thread::id> threads;
  std::vector<int> runs(3, 0);
  std::vector<int> nested(3, -1);
  run_shares_on_threads(3, [&](int share) {
    std::lock_guard<std::mutex> lock(m);
    threads.insert(std::this_thread::get_id());
    ++runs[static_cast<std::size_t>(share)];
    nested[static_cast<std::size_t>(share)] = at::in_parallel_region() ? 1 : 0;
  });
  EXPECT_EQ(runs, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(threads.size(), 3u);
  // LibTorch's own parallel regions see that they are inside one and stay on the share's thread.
  EXPECT_EQ(nested, (std::vector<int>{1, 1, 1}));
  EXPECT_FALSE(at::in_parallel_region());
}

TEST(ThreadShares, OneShareRunsOnTheCallingThread) {
  std::thread::id ran_on;
  run_shares_on_threads(1, [&](int) { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(ThreadShares, AFailingShareIsRethrownAfterTheOthersEnded) {
  std::atomic<int> finished{0};
  try {
    run_shares_on_threads(2, [&](int share) {
      if (share == 1) throw std::runtime_error("share 1 failed");
      ++finished;
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "share 1 failed");
  }
  EXPECT_EQ(finished.load(), 1);
}

TEST(ThreadShares, SharesStartWithTheCallersGradModeAndLeaveTheThreadCountAlone) {
  const int threads_before = at::get_num_threads();
  std::vector<int> grad_enabled(2, -1);
  {
    torch::NoGradGuard no_grad;
    run_shares_on_threads(
        2, [&](int share) { grad_enabled[static_cast<std::size_t>(share)] = torch::GradMode::is_enabled() ? 1 : 0; });
  }
  EXPECT_EQ(grad_enabled, (std::vector<int>{0, 0}));
  EXPECT_EQ(at::get_num_threads(), threads_before);
  run_shares_on_threads(
      2, [&](int share) { grad_enabled[static_cast<std::size_t>(share)] = torch::GradMode::is_enabled() ? 1 : 0; });
  EXPECT_EQ(grad_enabled, (std::vector<int>{1, 1}));
}

}  // namespace
}  // namespace ts
