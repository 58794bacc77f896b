// SPDX-License-Identifier: GPL-3.0-or-later
// The bf16 products for training: the same as LibTorch's fp32 product of the operands rounded to bf16,
// in every layout the linear layer hands them over, and the linear layer's gradients.
#include "ts/model/bf16_products.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "ts/model/attention.h"
#include "ts/model/packed_weights.h"
#include "weights_packed_once.h"

namespace ts {
namespace {

at::Tensor rounded(const at::Tensor& t) { return t.to(at::kBFloat16).to(at::kFloat); }

// Sums of up to a few hundred products in a different order: equal to fp32 rounding.
void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const double scale = want.abs().max().item<double>() + 1.0;
  const double error = (got - want).abs().max().item<double>();
  EXPECT_LT(error, 1e-5 * scale) << what;
}

#define SKIP_WITHOUT_DOT_PRODUCTS() \
  if (!bf16_dot_products_available()) GTEST_SKIP() << "this CPU has no AVX-512 BF16 dot products"

// The kernels this CPU can run bf16_matmul on.
std::vector<Bf16Kernel> kernels() {
  std::vector<Bf16Kernel> found;
  for (const auto kernel : {Bf16Kernel::kDotProducts, Bf16Kernel::kTiles})
    if (bf16_kernel_available(kernel)) found.push_back(kernel);
  return found;
}

TEST(Bf16Products, TheProductIsLibTorchsOnOperandsRoundedToBf16InEveryLayoutOnEveryKernel) {
  SKIP_WITHOUT_DOT_PRODUCTS();
  at::manual_seed(3);
  for (const auto kernel : kernels()) {
    const auto product = [kernel](const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias = {}) {
      return bf16_matmul_on(kernel, a, b, bias);
    };
    // Edges of every block: rows around 8, 16 and 32, columns around 16, 32 and 48, inner sizes odd and
    // even, around the 32 values of a tile's row.
    for (const std::int64_t m : {1, 7, 8, 9, 17, 32, 40, 65})
      for (const std::int64_t k : {1, 2, 3, 31, 33, 64, 67})
        for (const std::int64_t n : {1, 15, 16, 17, 32, 48, 50}) {
          const auto a = at::randn({m, k}), b = at::randn({k, n}), bias = at::randn({n});
          const auto want = at::matmul(rounded(a), rounded(b));
          const std::string shape = std::string(bf16_kernel_name(kernel)) + " " + std::to_string(m) + "x" +
                                    std::to_string(k) + "x" + std::to_string(n);
          expect_close(product(a, b), want, shape + " row-major");
          expect_close(product(a, b, bias), want + bias, shape + " with bias");
          // a = Sᵀ and b = Wᵀ: the backward's dYᵀ and the forward's weights
          const auto at_ = a.t().contiguous().t(), bt = b.t().contiguous().t();
          expect_close(product(at_, b), want, shape + " a transposed");
          expect_close(product(a, bt), want, shape + " b transposed");
          expect_close(product(at_, bt, bias), want + bias, shape + " both transposed, with bias");
          // neither dimension contiguous: every second element of a wider matrix
          const auto as = at::randn({m, 2 * k}).slice(1, 0, 2 * k, 2),
                     bs = at::randn({2 * k, 2 * n}).slice(0, 0, 2 * k, 2);
          const auto bs2 = bs.slice(1, 0, 2 * n, 2);
          expect_close(product(as, bs2), at::matmul(rounded(as), rounded(bs2)), shape + " strided");
        }
  }
}

// Wide products (a vocabulary's projection): on the tiles, B passes in chunks of columns that fit the
// core's L2 cache (1 MB of packed words; 3,001 columns of 96 pairs make two, the second odd), each chunk
// over every band of rows. Every chunk's columns, and the edges of the last, are the product.
TEST(Bf16Products, WideProductsInChunksOfColumnsOnEveryKernel) {
  SKIP_WITHOUT_DOT_PRODUCTS();
  at::manual_seed(5);
  for (const auto kernel : kernels())
    for (const std::int64_t m : {9, 70}) {
      const auto a = at::randn({m, 192}), b = at::randn({192, 3001}), bias = at::randn({3001});
      const auto want = at::matmul(rounded(a), rounded(b)) + bias;
      expect_close(bf16_matmul_on(kernel, a, b, bias), want,
                   std::string(bf16_kernel_name(kernel)) + " " + std::to_string(m) + " rows");
      const auto bt = b.t().contiguous().t();
      expect_close(bf16_matmul_on(kernel, a, bt, bias), want,
                   std::string(bf16_kernel_name(kernel)) + " b transposed, " + std::to_string(m) + " rows");
    }
}

// bf16_matmul runs on AMX's tiles where the CPU and the operating system allow them; a scope picks a
// kernel on its thread; a kernel the CPU lacks is refused with its name.
TEST(Bf16Products, TilesWhereAvailableAndAScopePicksTheKernelOnItsThread) {
  SKIP_WITHOUT_DOT_PRODUCTS();
  const bool tiles = bf16_kernel_available(Bf16Kernel::kTiles);
  EXPECT_EQ(bf16_kernel(), tiles ? Bf16Kernel::kTiles : Bf16Kernel::kDotProducts);
  {
    Bf16KernelScope dots(Bf16Kernel::kDotProducts);
    EXPECT_EQ(bf16_kernel(), Bf16Kernel::kDotProducts);
    Bf16Kernel other = Bf16Kernel::kDotProducts;
    std::thread([&] { other = bf16_kernel(); }).join();
    EXPECT_EQ(other, tiles ? Bf16Kernel::kTiles : Bf16Kernel::kDotProducts);
  }
  EXPECT_EQ(bf16_kernel(), tiles ? Bf16Kernel::kTiles : Bf16Kernel::kDotProducts);
  if (!tiles) {
    try {
      bf16_matmul_on(Bf16Kernel::kTiles, at::randn({2, 2}), at::randn({2, 2}));
      ADD_FAILURE() << "tiles ran on a CPU without them";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("AMX tiles"), std::string::npos) << e.what();
    }
    return;
  }
  // Both kernels on the training's shapes: the same sums up to fp32 rounding, on two threads at once
  // (each thread configures its own tiles).
  at::manual_seed(11);
  const auto a = at::randn({500, 256}), b = at::randn({256, 1024}), bias = at::randn({1024});
  const auto dots = bf16_matmul_on(Bf16Kernel::kDotProducts, a, b, bias);
  at::Tensor first, second;
  std::thread one([&] { first = bf16_matmul_on(Bf16Kernel::kTiles, a, b, bias); });
  std::thread two([&] { second = bf16_matmul_on(Bf16Kernel::kTiles, a.t().contiguous().t(), b, bias); });
  one.join();
  two.join();
  expect_close(first, dots, "tiles against dot products");
  EXPECT_TRUE(at::equal(first, second)) << "the tiles' sums depend only on the values, not on the layout";
}

TEST(Bf16Products, RoundingIsToNearestEvenAndNonFiniteValuesGoThrough) {
  SKIP_WITHOUT_DOT_PRODUCTS();
  // 1 + 2^-8 lies halfway between two bf16 values: nearest even is 1; 1 + 3·2^-8 rounds up to 1 + 2^-6.
  const auto a = at::tensor({1.0f + 1.0f / 256, 1.0f + 3.0f / 256}).view({1, 2});
  const auto one = at::tensor({1.0f, 0.0f}).view({2, 1}), two = at::tensor({0.0f, 1.0f}).view({2, 1});
  EXPECT_FLOAT_EQ(bf16_matmul(a, one).item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(bf16_matmul(a, two).item<float>(), 1.0f + 4.0f / 256);
  const auto inf = at::tensor({INFINITY, 1.0f}).view({1, 2});
  EXPECT_TRUE(std::isinf(bf16_matmul(inf, one).item<float>()));
  const auto nan = at::tensor({NAN, 1.0f}).view({1, 2});
  EXPECT_TRUE(std::isnan(bf16_matmul(nan, one).item<float>()));
}

TEST(Bf16Products, ShapesAndTypesThatDoNotFitAreRefusedWithAMessage) {
  SKIP_WITHOUT_DOT_PRODUCTS();
  EXPECT_THROW(bf16_matmul(at::randn({2, 3}), at::randn({4, 2})), std::invalid_argument);
  EXPECT_THROW(bf16_matmul(at::randn({2, 3}), at::randn({3, 2}).to(at::kDouble)), std::invalid_argument);
  EXPECT_THROW(bf16_matmul(at::randn({2, 3}), at::randn({3, 2}), at::randn({3})), std::invalid_argument);
  EXPECT_EQ(bf16_matmul(at::randn({0, 3}), at::randn({3, 2})).sizes(), (std::vector<std::int64_t>{0, 2}));
  const auto empty_inner = bf16_matmul(at::randn({2, 0}), at::randn({0, 3}), at::ones({3}));
  EXPECT_TRUE(at::equal(empty_inner, at::ones({2, 3})));
}

// y = x Wᵀ + b over a [batch, positions, in] input; the gradients are the products of the rounded
// operands: dX = round(G) round(W), dW = round(G)ᵀ round(X), db = the sum of G.
TEST(Bf16Products, TheLinearLayersGradientsAreProductsOfTheRoundedOperands) {
  SKIP_WITHOUT_DOT_PRODUCTS();
  at::manual_seed(5);
  const auto x = at::randn({3, 11, 37}).requires_grad_(true);
  const auto w = at::randn({21, 37}).requires_grad_(true);
  const auto b = at::randn({21}).requires_grad_(true);
  const auto y = bf16_linear(x, w, b);
  ASSERT_EQ(y.sizes(), (std::vector<std::int64_t>{3, 11, 21}));
  expect_close(y, at::matmul(rounded(x.detach()), rounded(w.detach()).t()) + b.detach(), "forward");
  const auto g = at::randn({3, 11, 21});
  torch::autograd::backward({y}, {g});
  const auto g2 = g.view({-1, 21});
  expect_close(x.grad(), at::matmul(rounded(g2), rounded(w.detach())).view({3, 11, 37}), "dX");
  expect_close(w.grad(), at::matmul(rounded(g2).t(), rounded(x.detach().view({-1, 37}))), "dW");
  expect_close(b.grad(), g2.sum(0), "db");
  // Without a bias, and with a weight that needs no gradient.
  const auto x2 = at::randn({5, 37}).requires_grad_(true);
  const auto frozen = w.detach();
  const auto y2 = bf16_linear(x2, frozen, at::Tensor());
  torch::autograd::backward({y2.sum()});
  expect_close(x2.grad(), at::matmul(at::ones({5, 21}), rounded(frozen)), "dX, no bias");
}

// The backward's dX = G W also adds up G's columns (the bias gradient) while it packs G: the same bits
// as adding G's rows one after another in fp32, and the same product, on every kernel, for every layout
// of G (contiguous rows in the packing's pass, other layouts in a pass of their own) and for the column
// counts around a tile's 32 values.
TEST(Bf16Products, TheProductThatSumsGsColumnsGivesTheRowOrderSumsAndTheSameProduct) {
  SKIP_WITHOUT_DOT_PRODUCTS();
  at::manual_seed(9);
  for (const auto kernel : kernels()) {
    const Bf16KernelScope on(kernel);
    for (const std::int64_t m : {1, 17, 40})
      for (const std::int64_t k : {1, 15, 16, 17, 33, 70}) {
        const auto w = at::randn({k, 23});
        const auto contiguous = at::randn({m, k}) * 100;
        for (const auto& g :
             {contiguous, contiguous.t().contiguous().t(), at::randn({m, 2 * k}).slice(1, 0, 2 * k, 2)}) {
          auto want = at::zeros({k});
          for (std::int64_t i = 0; i < m; ++i) want += g[i];
          at::Tensor sums;
          const auto product = bf16_weight_matmul_summing(g, w, sums);
          const std::string shape = std::string(bf16_kernel_name(kernel)) + " " + std::to_string(m) + "x" +
                                    std::to_string(k) + (g.is_contiguous() ? "" : " not contiguous");
          EXPECT_TRUE(at::equal(sums, want)) << shape;
          EXPECT_TRUE(at::equal(product, bf16_weight_matmul(g, w))) << shape;
        }
      }
    at::Tensor sums;
    EXPECT_EQ(bf16_weight_matmul_summing(at::randn({0, 5}), at::randn({5, 3}), sums).sizes(),
              (std::vector<std::int64_t>{0, 3}));
    EXPECT_TRUE(at::equal(sums, at::zeros({5})));
    const auto no_columns = at::randn({4, 3});  // C is empty; the sums are still G's
    bf16_weight_matmul_summing(no_columns, at::randn({3, 0}), sums);
    EXPECT_TRUE(at::equal(sums, no_columns[0] + no_columns[1] + no_columns[2] + no_columns[3]));
  }
}

TEST(Bf16Products, WeightsPackedOnceAStepForTwoThreadsGiveTheSameBitsAsEachPackingItsOwn) {
  SKIP_WITHOUT_DOT_PRODUCTS();
  for (const auto kernel : kernels()) {
    // Each thread's products on `kernel`: the scope lives as long as the thread's layer.
    const auto make_linear = [kernel]() -> test::Linear {
      auto on = std::make_shared<Bf16KernelScope>(kernel);
      return [on](const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) { return bf16_linear(x, w, b); };
    };
    test::expect_weights_packed_once_a_step(make_linear, bf16_kernel_name(kernel));
  }
}

TEST(Bf16Products, TheScopeTurnsTheModelsLinearLayersIntoBf16ProductsOnItsThreadOnly) {
  SKIP_WITHOUT_DOT_PRODUCTS();
  const auto x = at::randn({4, 6, 32}), w = at::randn({8, 32}), b = at::randn({8});
  const auto fp32 = at::linear(x, w, b);
  ASSERT_FALSE(bf16_products_enabled());
  EXPECT_TRUE(at::equal(ts::linear(x, w, b), fp32));
  {
    Bf16ProductsScope scope;
    EXPECT_TRUE(bf16_products_enabled());
    const auto products = ts::linear(x, w, b);
    EXPECT_TRUE(at::equal(products, bf16_linear(x, w, b)));
    EXPECT_FALSE(at::equal(products, fp32));  // rounded operands: not fp32's result
    {
      Bf16ProductsScope off(false);
      EXPECT_TRUE(at::equal(ts::linear(x, w, b), fp32));
    }
    EXPECT_TRUE(bf16_products_enabled());
    bool other_thread = true;
    std::thread([&] { other_thread = bf16_products_enabled(); }).join();
    EXPECT_FALSE(other_thread);
  }
  EXPECT_FALSE(bf16_products_enabled());
}

// A caller that makes G in bands of rows (the training loss) gets the gradients bf16_linear's backward
// gives for the whole G, bit for bit, on every kernel: G's rows around a band's 32 (one band, a short
// last band, several), its columns around blocks of 16 and a tile's 32 values, with and without weights
// packed once a step.
TEST(Bf16Products, TheLinearGradientsFromBandsOfGAreTheWholeGsBitForBit) {
  SKIP_WITHOUT_DOT_PRODUCTS();
  at::manual_seed(13);
  constexpr std::int64_t kBand = Bf16LinearGradients::kBandRows;
  for (const auto kernel : kernels()) {
    const Bf16KernelScope on(kernel);
    for (const bool packed_weights : {false, true})
      for (const std::int64_t m : {1, 31, 32, 33, 77, 96})
        for (const std::int64_t n : {1, 17, 33, 333})
          for (const std::int64_t in : {8, 40}) {
            const std::string shape = std::string(bf16_kernel_name(kernel)) + " " + std::to_string(m) + "x" +
                                      std::to_string(n) + "x" + std::to_string(in) +
                                      (packed_weights ? " packed once" : "");
            PackedWeights weights;
            PackedWeightsScope scope(packed_weights ? &weights : nullptr);
            const auto x = at::randn({m, in}).requires_grad_(true);
            const auto w = at::randn({n, in}).requires_grad_(true);
            const auto b = at::randn({n}).requires_grad_(true);
            const auto g = at::randn({m, n}) * 10;
            torch::autograd::backward({bf16_linear(x, w, b)}, {g});
            Bf16LinearGradients bands(m, n);
            for (std::int64_t r0 = 0; r0 < m; r0 += kBand)
              bands.add_band(g.data_ptr<float>() + r0 * n, std::min(kBand, m - r0));
            EXPECT_TRUE(at::equal(bands.input_gradient(w.detach()), x.grad())) << shape << " dX";
            EXPECT_TRUE(at::equal(bands.weight_gradient(x.detach()), w.grad())) << shape << " dW";
            EXPECT_TRUE(at::equal(bands.bias_gradient(), b.grad())) << shape << " db";
          }
  }
}

TEST(Bf16Products, TheLinearGradientsRefuseBandsOutOfTurnAndAnswersBeforeTheLastBand) {
  SKIP_WITHOUT_DOT_PRODUCTS();
  const auto g = at::randn({70, 9});
  const float* rows = g.data_ptr<float>();
  {
    Bf16LinearGradients bands(70, 9);
    EXPECT_THROW(Bf16LinearGradients(5, 9), std::logic_error);  // one alive per thread
    EXPECT_THROW(bands.add_band(rows, 31), std::logic_error);   // short, not the last
    bands.add_band(rows, 32);
    EXPECT_THROW(bands.input_gradient(at::randn({9, 4})), std::logic_error);  // 32 of 70 rows
    EXPECT_THROW(bands.bias_gradient(), std::logic_error);
    EXPECT_THROW(bands.add_band(rows, 40), std::logic_error);  // past the rows
    bands.add_band(rows + 32 * 9, 32);
    bands.add_band(rows + 64 * 9, 6);
    EXPECT_THROW(bands.add_band(rows, 1), std::logic_error);
    EXPECT_THROW(bands.input_gradient(at::randn({8, 4})), std::invalid_argument);  // 9 outputs
    EXPECT_THROW(bands.weight_gradient(at::randn({69, 4})), std::invalid_argument);
    EXPECT_EQ(bands.weight_gradient(at::randn({70, 4})).sizes(), (std::vector<std::int64_t>{9, 4}));
  }
  Bf16LinearGradients again(0, 9);  // the first one gone; no rows: zero gradients
  EXPECT_TRUE(at::equal(again.input_gradient(at::randn({9, 4})), at::zeros({0, 4})));
  EXPECT_TRUE(at::equal(again.weight_gradient(at::randn({0, 4})), at::zeros({9, 4})));
  EXPECT_THROW(Bf16LinearGradients(-1, 2), std::invalid_argument);
}

TEST(Bf16Products, PreferredOnlyWhereTheDotProductsExist) {
  if (bf16_products_preferred()) {
    EXPECT_TRUE(bf16_dot_products_available());
  }
  if (!bf16_dot_products_available()) {
    EXPECT_THROW(bf16_matmul(at::randn({2, 2}), at::randn({2, 2})), std::runtime_error);
  }
}

}  // namespace
}  // namespace ts
