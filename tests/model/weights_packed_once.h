// SPDX-License-Identifier: GPL-3.0-or-later
// What the bf16 and fp16 products' tests both check of their weights packed once a step
// (ts/model/packed_weights.h): two threads' shares through one PackedWeights give the same bits as each
// thread packing its own, each layout of the weight is packed once a step, a change between steps is
// packed again, and a change within a step is packed by the product itself.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "ts/model/packed_weights.h"

namespace ts::test {

struct LinearResult {
  at::Tensor y, dx, dw, db;
};
/// A linear layer's forward of x (weight w, bias b) and its backward of the output gradient g.
using Linear = std::function<at::Tensor(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b)>;

inline LinearResult forward_backward(const Linear& linear, const at::Tensor& x_in, const at::Tensor& w,
                                     const at::Tensor& b, const at::Tensor& g) {
  const auto x = x_in.clone().requires_grad_(true);
  const auto y = linear(x, w, b);
  const auto grads = torch::autograd::grad({y}, {x, w, b}, {g});
  return {y.detach(), grads[0], grads[1], grads[2]};
}

/// `make_linear` is called on each thread before its share (a kernel's scope can live there).
inline void expect_weights_packed_once_a_step(const std::function<Linear()>& make_linear, const std::string& name) {
  at::manual_seed(9);
  // A vocabulary-sized layer (many chunks of columns) with odd sizes, and each thread's own share.
  const auto w = at::randn({1003, 75}).requires_grad_(true);
  const auto b = at::randn({1003}).requires_grad_(true);
  const std::vector<at::Tensor> xs = {at::randn({37, 75}), at::randn({51, 75})};
  const std::vector<at::Tensor> gs = {at::randn({37, 1003}), at::randn({51, 1003})};
  const auto on_two_threads = [&](PackedWeights* weights) {
    std::vector<LinearResult> results(2);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < 2; ++i)
      threads.emplace_back([&, i] {
        PackedWeightsScope packed(weights);
        const auto linear = make_linear();
        results[i] = forward_backward(linear, xs[i], w, b, gs[i]);
      });
    for (auto& thread : threads) thread.join();
    return results;
  };
  const auto expect_same = [&](const std::vector<LinearResult>& got, const std::vector<LinearResult>& want,
                               const std::string& what) {
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(at::equal(got[i].y, want[i].y)) << name << ", " << what << ": y, share " << i;
      EXPECT_TRUE(at::equal(got[i].dx, want[i].dx)) << name << ", " << what << ": dX, share " << i;
      EXPECT_TRUE(at::equal(got[i].dw, want[i].dw)) << name << ", " << what << ": dW, share " << i;
      EXPECT_TRUE(at::equal(got[i].db, want[i].db)) << name << ", " << what << ": db, share " << i;
    }
  };
  const auto alone = on_two_threads(nullptr);
  PackedWeights weights;
  weights.next_step();
  expect_same(on_two_threads(&weights), alone, "packed once");
  EXPECT_EQ(weights.packings(), 2) << name;  // Wᵀ for the forward, W for dX: once for both threads
  // The optimizer changes the weight between steps: the next step packs it again.
  {
    at::NoGradGuard no_grad;
    w.mul_(0.5).add_(0.25);
  }
  weights.next_step();
  const auto changed = on_two_threads(&weights);
  EXPECT_EQ(weights.packings(), 4) << name;
  expect_same(changed, on_two_threads(nullptr), "after a change");
  EXPECT_FALSE(at::equal(changed[0].y, alone[0].y)) << name;
  // Changed within a step (no next_step): each product packs its own, from the new values.
  {
    at::NoGradGuard no_grad;
    w.add_(1.0);
  }
  expect_same(on_two_threads(&weights), on_two_threads(nullptr), "changed within a step");
  EXPECT_EQ(weights.packings(), 4) << name;
}

}  // namespace ts::test
