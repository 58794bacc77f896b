// SPDX-License-Identifier: GPL-3.0-or-later
// The training loss in one node equals LibTorch's cross-entropy with label smoothing: the value and
// the gradient, with padding, with and without smoothing, from fp32 and from bf16 logits.
#include "ts/train/loss.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ts/model/bf16_products.h"

namespace ts {
namespace {

constexpr std::int64_t kPad = 0;

// Logits [N, V] and targets [N] with some rows of padding.
std::pair<at::Tensor, at::Tensor> example(std::int64_t n, std::int64_t v) {
  at::manual_seed(5);
  auto logits = at::randn({n, v}) * 3;
  auto targets = at::randint(1, v, {n}, at::kLong);
  targets.index_put_({at::arange(0, n, 3)}, kPad);
  return {logits, targets};
}

TEST(SmoothedCrossEntropy, EqualsLibTorchsValueAndGradient) {
  for (const double smoothing : {0.0, 0.1, 0.3}) {
    const auto [logits, targets] = example(37, 53);
    auto a = logits.clone().requires_grad_(true);
    auto b = logits.clone().requires_grad_(true);
    const auto ours = smoothed_cross_entropy_sum(a, targets, kPad, smoothing);
    const auto theirs = at::cross_entropy_loss(b, targets, {}, at::Reduction::Sum, kPad, smoothing);
    EXPECT_NEAR(ours.item<double>(), theirs.item<double>(), 1e-4 * std::abs(theirs.item<double>())) << smoothing;
    (ours * 0.5).backward();
    (theirs * 0.5).backward();
    EXPECT_TRUE(at::allclose(a.grad(), b.grad(), 1e-5, 1e-6)) << smoothing;
    // Padding rows get no gradient.
    EXPECT_EQ(a.grad().index({targets.eq(kPad)}).abs().sum().item<double>(), 0.0);
  }
}

TEST(SmoothedCrossEntropy, Bf16LogitsGetABf16GradientOfTheFp32Loss) {
  const auto [logits, targets] = example(20, 31);
  auto low = logits.to(at::kBFloat16).requires_grad_(true);
  auto reference = low.detach().to(at::kFloat).requires_grad_(true);
  const auto ours = smoothed_cross_entropy_sum(low, targets, kPad, 0.1);
  const auto theirs = at::cross_entropy_loss(reference, targets, {}, at::Reduction::Sum, kPad, 0.1);
  EXPECT_EQ(ours.scalar_type(), at::kFloat);
  EXPECT_NEAR(ours.item<double>(), theirs.item<double>(), 1e-4 * std::abs(theirs.item<double>()));
  ours.backward();
  theirs.backward();
  ASSERT_EQ(low.grad().scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::allclose(low.grad().to(at::kFloat), reference.grad(), 1e-2, 1e-3));
}

TEST(SmoothedCrossEntropy, AllPaddingGivesZero) {
  auto logits = at::randn({4, 9}).requires_grad_(true);
  const auto loss = smoothed_cross_entropy_sum(logits, at::zeros({4}, at::kLong), kPad, 0.1);
  EXPECT_EQ(loss.item<double>(), 0.0);
  loss.backward();
  EXPECT_EQ(logits.grad().abs().sum().item<double>(), 0.0);
}

// A vocabulary of thousands, logits far apart (up to ±80: e^-160 and below underflow) and a row of
// equal logits: on a CPU with AVX-512 the fp32 loss runs its own exponential (loss.cpp).
TEST(SmoothedCrossEntropy, WideRowsAndExtremeLogitsMatchLibTorch) {
  for (const double smoothing : {0.0, 0.1}) {
    at::manual_seed(9);
    auto logits = at::randn({19, 4001}) * 20;
    logits.index_put_({3}, 80.0);
    logits.index_put_({4, 7}, -80.0);
    logits.index_put_({5}, 0.25);  // every logit equal
    auto targets = at::randint(1, 4001, {19}, at::kLong);
    targets.index_put_({6}, kPad);
    auto a = logits.clone().requires_grad_(true);
    auto b = logits.clone().requires_grad_(true);
    const auto ours = smoothed_cross_entropy_sum(a, targets, kPad, smoothing);
    const auto theirs = at::cross_entropy_loss(b, targets, {}, at::Reduction::Sum, kPad, smoothing);
    EXPECT_NEAR(ours.item<double>(), theirs.item<double>(), 1e-5 * std::abs(theirs.item<double>())) << smoothing;
    ours.backward();
    theirs.backward();
    EXPECT_TRUE(at::allclose(a.grad(), b.grad(), 1e-4, 1e-6)) << smoothing;
  }
}

// Where the thread trains on bf16 products, the output layer and the loss are one node whose backward
// packs G band by band: the loss and the three gradients are those of bf16_linear and the loss as two
// nodes, bit for bit, on every kernel, with and without smoothing, padding rows, rows around the bands
// of 32 and a vocabulary that ends inside a block of 16 columns.
TEST(SmoothedCrossEntropy, TheOutputLayerAndTheLossInOneNodeEqualTheTwoNodesBitForBit) {
  if (!bf16_dot_products_available()) GTEST_SKIP() << "this CPU has no AVX-512 BF16 dot products";
  for (const auto kernel : {Bf16Kernel::kDotProducts, Bf16Kernel::kTiles}) {
    if (!bf16_kernel_available(kernel)) continue;
    const Bf16KernelScope on(kernel);
    for (const std::int64_t n : {2, 32, 77})  // row 0 is padding (example)
      for (const double smoothing : {0.0, 0.1}) {
        const std::string what = std::string(bf16_kernel_name(kernel)) + " rows " + std::to_string(n) + " smoothing " +
                                 std::to_string(smoothing);
        const auto [hidden0, targets] = example(n, 36);  // hidden [n, 36]; targets below 36 of 1,001
        const auto weight0 = at::randn({1001, 36}) * 0.3, bias0 = at::randn({1001}) * 0.1;
        std::vector<at::Tensor> got, want;
        at::Tensor got_loss, want_loss;
        for (const bool fused : {true, false}) {
          auto h = hidden0.clone().requires_grad_(true), w = weight0.clone().requires_grad_(true),
               b = bias0.clone().requires_grad_(true);
          Bf16ProductsScope products;
          const auto loss = fused ? projected_cross_entropy_sum(h, w, b, targets, kPad, smoothing)
                                  : smoothed_cross_entropy_sum(bf16_linear(h, w, b), targets, kPad, smoothing);
          (loss * 0.25).backward();
          (fused ? got_loss : want_loss) = loss.detach();
          auto& grads = fused ? got : want;
          for (const auto* t : {&h, &w, &b}) grads.emplace_back(t->grad());
        }
        EXPECT_TRUE(at::equal(got_loss, want_loss)) << what;
        EXPECT_TRUE(at::equal(got[0], want[0])) << what << " hidden";
        EXPECT_TRUE(at::equal(got[1], want[1])) << what << " weight";
        EXPECT_TRUE(at::equal(got[2], want[2])) << what << " bias";
        EXPECT_GT(got[1].abs().sum().item<double>(), 0.0) << what;
      }
  }
}

TEST(SmoothedCrossEntropy, TheOutputLayerAndTheLossWithoutBf16ProductsAreTsLinearAndTheLoss) {
  const auto [hidden, targets] = example(9, 12);
  const auto weight = at::randn({40, 12}), bias = at::randn({40});
  EXPECT_TRUE(at::equal(projected_cross_entropy_sum(hidden, weight, bias, targets, kPad, 0.1),
                        smoothed_cross_entropy_sum(at::linear(hidden, weight, bias), targets, kPad, 0.1)));
}

TEST(SmoothedCrossEntropy, ATargetOutsideTheVocabularyIsAnErrorNotARead) {
  auto logits = at::randn({3, 9}).requires_grad_(true);
  EXPECT_ANY_THROW(smoothed_cross_entropy_sum(logits, at::tensor({1, 9, 2}, at::kLong), kPad, 0.0));
}

TEST(SmoothedCrossEntropy, NonFiniteLogitsGiveANonFiniteLoss) {
  auto logits = at::randn({3, 40});
  logits.index_put_({1, 5}, std::numeric_limits<float>::quiet_NaN());
  const auto loss = smoothed_cross_entropy_sum(logits, at::tensor({1, 2, 3}, at::kLong), kPad, 0.1);
  EXPECT_FALSE(std::isfinite(loss.item<double>()));
}

}  // namespace
}  // namespace ts
