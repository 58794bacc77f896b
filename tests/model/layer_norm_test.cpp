// SPDX-License-Identifier: GPL-3.0-or-later
// ts::layer_norm: the training's layer norm against LibTorch's, forward and backward, and where it
// leaves the work to LibTorch.
#include "ts/model/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>

namespace ts {
namespace {

bool has_avx512() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") != 0;
#else
  return false;
#endif
}

void expect_close(const at::Tensor& got, const at::Tensor& want, double tolerance, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const double error = (got - want).abs().max().item<double>();
  EXPECT_LT(error, tolerance * (want.abs().max().item<double>() + 1.0)) << what;
}

struct Gradients {
  at::Tensor y, dx, dw, db;
};

// y = layer_norm(x) and the gradients of sum(y · g), through `norm` (ours or LibTorch's).
template <class Norm>
Gradients run(const Norm& norm, const at::Tensor& x0, const at::Tensor& w0, const at::Tensor& b0, const at::Tensor& g) {
  const auto x = x0.detach().clone().requires_grad_(true), w = w0.detach().clone().requires_grad_(true),
             b = b0.detach().clone().requires_grad_(true);
  const auto y = norm(x, w, b);
  torch::autograd::backward({y}, {g});
  return {y.detach(), x.grad(), w.grad(), b.grad()};
}

const auto ours = [](const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  return layer_norm(x, w, b, 1e-6);
};
const auto theirs = [](const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  return at::layer_norm(x, {x.size(-1)}, w, b, 1e-6);
};

// Rows around the 64 whose weight and bias gradients are summed together, widths of the default
// recipe's models, values with an offset (the variance about the mean, not the mean square).
TEST(LayerNorm, MatchesLibTorchsForwardAndBackwardInEveryShape) {
  if (!has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512: ts::layer_norm is LibTorch's";
  at::manual_seed(4);
  for (const std::int64_t d : {16, 128, 192, 256})
    for (const std::vector<std::int64_t>& lead :
         std::vector<std::vector<std::int64_t>>{{1}, {63}, {64}, {65}, {3, 70}}) {
      auto sizes = lead;
      sizes.push_back(d);
      const auto x = at::randn(sizes) * 3 + 5;
      const auto w = at::randn({d}), b = at::randn({d}), g = at::randn(sizes);
      const auto a = run(ours, x, w, b, g), want = run(theirs, x, w, b, g);
      const std::string shape = "d " + std::to_string(d) + ", rows " + std::to_string(x.numel() / d);
      expect_close(a.y, want.y, 1e-5, shape + " y");
      expect_close(a.dx, want.dx, 1e-4, shape + " dx");
      expect_close(a.dw, want.dw, 1e-5, shape + " dw");
      expect_close(a.db, want.db, 1e-5, shape + " db");
    }
}

// A constant row has variance 0: it normalises to 0 exactly, so y is the bias, and its gradients are
// finite (1/σ is 1/√eps).
TEST(LayerNorm, AConstantRowGivesTheBias) {
  if (!has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512: ts::layer_norm is LibTorch's";
  const auto x = at::full({2, 32}, 2.5f), w = at::randn({32}), b = at::randn({32}), g = at::randn({2, 32});
  const auto a = run(ours, x, w, b, g);
  EXPECT_TRUE(at::equal(a.y, b.expand({2, 32})));
  EXPECT_TRUE(at::isfinite(a.dx).all().item<bool>());
  EXPECT_TRUE(at::equal(a.db, g[0] + g[1]));
}

// The weight's and bias's gradients are sums over blocks of 64 rows added in order: the same bits on one
// thread as on all of them.
TEST(LayerNorm, TheGradientsBitsDoNotDependOnTheThreads) {
  if (!has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512: ts::layer_norm is LibTorch's";
  at::manual_seed(8);
  const auto x = at::randn({300, 192}), w = at::randn({192}), b = at::randn({192}), g = at::randn({300, 192});
  const auto all = run(ours, x, w, b, g);
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const auto one = run(ours, x, w, b, g);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(all.y, one.y));
  EXPECT_TRUE(at::equal(all.dx, one.dx));
  EXPECT_TRUE(at::equal(all.dw, one.dw));
  EXPECT_TRUE(at::equal(all.db, one.db));
}

// Without gradients (translation, validation), at a width that is not a multiple of 16, and in double,
// it is LibTorch's own layer norm, bit for bit; a module that normalises more than the last dimension
// too. A NaN in a row stays in that row.
TEST(LayerNorm, LeavesWhatItDoesNotTrainToLibTorch) {
  at::manual_seed(2);
  const auto w = at::randn({192}), b = at::randn({192}), x = at::randn({5, 192});
  {
    at::NoGradGuard no_grad;
    EXPECT_TRUE(at::equal(layer_norm(x, w, b, 1e-6), at::layer_norm(x, {192}, w, b, 1e-6)));
  }
  const auto x17 = at::randn({5, 17}), w17 = at::randn({17}), b17 = at::randn({17}), g17 = at::randn({5, 17});
  const auto a = run(ours, x17, w17, b17, g17), want = run(theirs, x17, w17, b17, g17);
  EXPECT_TRUE(at::equal(a.y, want.y));
  EXPECT_TRUE(at::equal(a.dx, want.dx));
  const auto xd = x.to(at::kDouble).requires_grad_(true);
  EXPECT_TRUE(at::equal(layer_norm(xd, w.to(at::kDouble), b.to(at::kDouble), 1e-6),
                        at::layer_norm(xd, {192}, w.to(at::kDouble), b.to(at::kDouble), 1e-6)));
  torch::nn::LayerNorm two_dims(torch::nn::LayerNormOptions({4, 16}));
  const auto x2 = at::randn({3, 4, 16}).requires_grad_(true);
  EXPECT_TRUE(at::equal(layer_norm(two_dims, x2), two_dims->forward(x2)));
  auto with_nan = at::randn({3, 32});
  with_nan[1][5] = NAN;
  const auto y = layer_norm(with_nan.requires_grad_(true), at::ones({32}), at::zeros({32}), 1e-6);
  EXPECT_TRUE(at::isnan(y[1]).all().item<bool>());
  EXPECT_FALSE(at::isnan(y[0]).any().item<bool>());
  EXPECT_FALSE(at::isnan(y[2]).any().item<bool>());
}

}  // namespace
}  // namespace ts
