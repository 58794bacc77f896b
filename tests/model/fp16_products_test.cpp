// SPDX-License-Identifier: GPL-3.0-or-later
// The fp16 products for training: within fp16's rounding of LibTorch's fp32 product, the same bits in
// every layout the linear layer hands the operands over, rows and columns of any magnitude, and the
// linear layer's gradients.
#include "ts/model/fp16_products.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "ts/model/attention.h"
#include "weights_packed_once.h"

namespace ts {
namespace {

// Each element against the fp32 product, relative to the sum of the magnitudes of its products
// (what the rounding of the operands and of the fp16 sums is relative to): 11 significant bits in
// each operand, sums of up to 64 rounded to 11 bits.
void expect_close(const at::Tensor& got, const at::Tensor& a, const at::Tensor& b, const std::string& what,
                  double tolerance = 4e-3) {
  const auto want = at::matmul(a.to(at::kDouble), b.to(at::kDouble));
  const auto magnitude = at::matmul(a.abs().to(at::kDouble), b.abs().to(at::kDouble));
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const auto error = ((got.to(at::kDouble) - want).abs() / (magnitude + 1e-300)).max().item<double>();
  EXPECT_LT(error, tolerance) << what;
}

#define SKIP_WITHOUT_FP16() \
  if (!fp16_products_available()) GTEST_SKIP() << "this CPU has no AVX-512 FP16 multiply-adds"

TEST(Fp16Products, TheProductIsWithinFp16sRoundingAndTheSameInEveryLayout) {
  SKIP_WITHOUT_FP16();
  at::manual_seed(3);
  // Edges of every block: rows around 8 and 16, columns around 16, 32 and 64, inner sizes around 16
  // (the packing's tiles) and 64 (the fp16 sums).
  for (const std::int64_t m : {1, 7, 8, 9, 17, 40})
    for (const std::int64_t k : {1, 2, 15, 17, 64, 67, 130})
      for (const std::int64_t n : {1, 15, 16, 31, 33, 64, 65, 100}) {
        const auto a = at::randn({m, k}), b = at::randn({k, n}), bias = at::randn({n});
        const std::string shape = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
        const auto row_major = fp16_matmul(a, b);
        expect_close(row_major, a, b, shape);
        EXPECT_TRUE(at::equal(fp16_matmul(a, b, bias), row_major + bias)) << shape << " with bias";
        // a = Sᵀ and b = Wᵀ (the backward's dYᵀ and the forward's weights), and neither dimension
        // contiguous: the same values packed by other paths give the same bits.
        const auto at_ = a.t().contiguous().t(), bt = b.t().contiguous().t();
        EXPECT_TRUE(at::equal(fp16_matmul(at_, b), row_major)) << shape << " a transposed";
        EXPECT_TRUE(at::equal(fp16_matmul(a, bt), row_major)) << shape << " b transposed";
        EXPECT_TRUE(at::equal(fp16_matmul(at_, bt), row_major)) << shape << " both transposed";
        auto as = at::zeros({m, 2 * k}), bs = at::zeros({2 * k, 2 * n});
        as.slice(1, 0, 2 * k, 2).copy_(a);
        bs.slice(0, 0, 2 * k, 2).slice(1, 0, 2 * n, 2).copy_(b);
        EXPECT_TRUE(
            at::equal(fp16_matmul(as.slice(1, 0, 2 * k, 2), bs.slice(0, 0, 2 * k, 2).slice(1, 0, 2 * n, 2)), row_major))
            << shape << " strided";
      }
}

TEST(Fp16Products, RowsAndColumnsOfAnyMagnitudeKeepTheirPrecision) {
  SKIP_WITHOUT_FP16();
  at::manual_seed(4);
  // Rows from 1e-20 to 1e20 (fp16 alone spans 6e-8 to 65504), columns from 1e-10 to 1e10 (their
  // products within fp32's range): each is scaled by its own power of two, so none overflows or
  // loses its bits.
  const auto rows = at::pow(10.0, at::linspace(-20, 20, 24)).unsqueeze(1);
  const auto columns = at::pow(10.0, at::linspace(-10, 10, 40)).unsqueeze(0);
  const auto a = at::randn({24, 200}) * rows, b = at::randn({200, 40}) * columns;
  expect_close(fp16_matmul(a, b), a, b, "wide range");
  expect_close(fp16_matmul(a.t().contiguous().t(), b.t().contiguous().t()), a, b, "wide range, transposed");
  // Sums of 64 products of the largest magnitudes stay under fp16's 65,504 before they reach fp32.
  const auto large = at::full({3, 4096}, 15.99f), same = at::full({4096, 5}, 15.99f);
  EXPECT_TRUE(at::allclose(fp16_matmul(large, same), at::full({3, 5}, 4096.0 * 15.99 * 15.99), 1e-3));
  // A row of zeros stays zero beside rows of values.
  auto zero_row = at::randn({3, 10});
  zero_row[1].zero_();
  EXPECT_TRUE(at::equal(fp16_matmul(zero_row, at::randn({10, 4}))[1], at::zeros({4})));
}

TEST(Fp16Products, NonFiniteValuesGoThrough) {
  SKIP_WITHOUT_FP16();
  const auto one = at::tensor({1.0f, 0.0f}).view({2, 1}), two = at::tensor({0.0f, 1.0f}).view({2, 1});
  const auto inf = at::tensor({INFINITY, 1.0f}).view({1, 2});
  EXPECT_TRUE(std::isinf(fp16_matmul(inf, one).item<float>()));
  const auto nan = at::tensor({NAN, 1.0f}).view({1, 2});
  EXPECT_TRUE(std::isnan(fp16_matmul(nan, one).item<float>()));
  // Exact where fp16 holds the values: 1 + 2^-10 is one of them (bf16 would round it to 1).
  const auto exact = at::tensor({1.0f + 1.0f / 1024, 3.0f}).view({1, 2});
  EXPECT_FLOAT_EQ(fp16_matmul(exact, one).item<float>(), 1.0f + 1.0f / 1024);
  EXPECT_FLOAT_EQ(fp16_matmul(exact, two).item<float>(), 3.0f);
}

TEST(Fp16Products, ShapesAndTypesThatDoNotFitAreRefusedWithAMessage) {
  SKIP_WITHOUT_FP16();
  EXPECT_THROW(fp16_matmul(at::randn({2, 3}), at::randn({4, 2})), std::invalid_argument);
  EXPECT_THROW(fp16_matmul(at::randn({2, 3}), at::randn({3, 2}).to(at::kDouble)), std::invalid_argument);
  EXPECT_THROW(fp16_matmul(at::randn({2, 3}), at::randn({3, 2}), at::randn({3})), std::invalid_argument);
  EXPECT_EQ(fp16_matmul(at::randn({0, 3}), at::randn({3, 2})).sizes(), (std::vector<std::int64_t>{0, 2}));
  const auto empty_inner = fp16_matmul(at::randn({2, 0}), at::randn({0, 3}), at::ones({3}));
  EXPECT_TRUE(at::equal(empty_inner, at::ones({2, 3})));
}

// y = x Wᵀ + b over a [batch, positions, in] input; the gradients are the fp16 products
// dX = G W and dW = Gᵀ X, db the sum of G.
TEST(Fp16Products, TheLinearLayersGradientsAreFp16Products) {
  SKIP_WITHOUT_FP16();
  at::manual_seed(5);
  const auto x = at::randn({3, 11, 37}).requires_grad_(true);
  const auto w = at::randn({21, 37}).requires_grad_(true);
  const auto b = at::randn({21}).requires_grad_(true);
  const auto y = fp16_linear(x, w, b);
  ASSERT_EQ(y.sizes(), (std::vector<std::int64_t>{3, 11, 21}));
  EXPECT_TRUE(at::equal(y, (fp16_matmul(x.detach().view({-1, 37}), w.detach().t()) + b.detach()).view({3, 11, 21})));
  // A gradient 1e-8 small, as a loss averaged over many tokens gives: no loss scaling needed.
  const auto g = at::randn({3, 11, 21}) * 1e-8;
  torch::autograd::backward({y}, {g});
  const auto g2 = g.view({-1, 21});
  EXPECT_TRUE(at::equal(x.grad(), fp16_matmul(g2, w.detach()).view({3, 11, 37})));
  EXPECT_TRUE(at::equal(w.grad(), fp16_matmul(g2.t(), x.detach().view({-1, 37}))));
  expect_close(w.grad(), g2.t(), x.detach().view({-1, 37}), "dW");
  EXPECT_TRUE(at::allclose(b.grad(), g2.sum(0)));
  // Without a bias, and with a weight that needs no gradient.
  const auto x2 = at::randn({5, 37}).requires_grad_(true);
  const auto frozen = w.detach();
  torch::autograd::backward({fp16_linear(x2, frozen, at::Tensor()).sum()});
  expect_close(x2.grad(), at::ones({5, 21}), frozen, "dX, no bias");
}

TEST(Fp16Products, WeightsPackedOnceAStepForTwoThreadsGiveTheSameBitsAsEachPackingItsOwn) {
  SKIP_WITHOUT_FP16();
  const auto make_linear = []() -> test::Linear {
    return [](const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) { return fp16_linear(x, w, b); };
  };
  test::expect_weights_packed_once_a_step(make_linear, "fp16");
}

TEST(Fp16Products, TheScopeTurnsTheModelsLinearLayersIntoFp16ProductsOnItsThreadOnly) {
  SKIP_WITHOUT_FP16();
  const auto x = at::randn({4, 6, 32}), w = at::randn({8, 32}), b = at::randn({8});
  const auto fp32 = at::linear(x, w, b);
  ASSERT_FALSE(fp16_products_enabled());
  EXPECT_TRUE(at::equal(ts::linear(x, w, b), fp32));
  {
    Fp16ProductsScope scope;
    EXPECT_TRUE(fp16_products_enabled());
    const auto products = ts::linear(x, w, b);
    EXPECT_TRUE(at::equal(products, fp16_linear(x, w, b)));
    EXPECT_FALSE(at::equal(products, fp32));  // rounded operands: not fp32's result
    {
      Fp16ProductsScope off(false);
      EXPECT_TRUE(at::equal(ts::linear(x, w, b), fp32));
    }
    bool other_thread = true;
    std::thread([&] { other_thread = fp16_products_enabled(); }).join();
    EXPECT_FALSE(other_thread);
  }
  EXPECT_FALSE(fp16_products_enabled());
}

TEST(Fp16Products, LibTorchsThreadsGiveTheSameBitsAsOne) {
  SKIP_WITHOUT_FP16();
  at::manual_seed(6);
  const auto a = at::randn({300, 256}), b = at::randn({256, 1000});
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const auto one = fp16_matmul(a, b);
  at::set_num_threads(std::max(2, threads));
  const auto many = fp16_matmul(a, b);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, many));
}

TEST(Fp16Products, RefusedWhereTheCpuLacksThem) {
  if (!fp16_products_available()) {
    EXPECT_THROW(fp16_matmul(at::randn({2, 2}), at::randn({2, 2})), std::runtime_error);
  } else {
    EXPECT_NO_THROW(fp16_matmul(at::randn({2, 2}), at::randn({2, 2})));
  }
}

}  // namespace
}  // namespace ts
