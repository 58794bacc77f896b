// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/model/attention.h"

#include <gtest/gtest.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "ts/model/torch_compat.h"

namespace ts {
namespace {

TEST(Masks, PaddingMaskHidesPadKeysOnly) {
  auto tokens = at::tensor({5, 6, 0, 0, 7, 8, 9, 0}, at::kLong).view({2, 4});
  auto mask = padding_mask(tokens, 0);
  ASSERT_EQ(mask.sizes(), (at::IntArrayRef{2, 1, 1, 4}));
  EXPECT_EQ(mask[0][0][0][0].item<float>(), 0.0f);
  EXPECT_TRUE(std::isinf(mask[0][0][0][2].item<float>()));
  EXPECT_TRUE(std::isinf(mask[1][0][0][3].item<float>()));
  EXPECT_EQ(mask[1][0][0][2].item<float>(), 0.0f);
}

TEST(Masks, CausalMaskHidesTheFuture) {
  auto mask = causal_mask(4, at::TensorOptions());
  ASSERT_EQ(mask.sizes(), (at::IntArrayRef{1, 1, 4, 4}));
  for (int q = 0; q < 4; ++q)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(std::isinf(mask[0][0][q][k].item<float>()), k > q) << q << "," << k;
}

TEST(MultiHeadAttention, RecordsNormalisedWeightsPerHead) {
  torch::NoGradGuard no_grad;
  at::manual_seed(0);
  MultiHeadAttention attention(16, 4, 0.0, /*self_attention=*/false);
  attention->set_record(true);
  auto query = at::randn({2, 3, 16});
  auto memory = at::randn({2, 5, 16});
  auto tokens = at::tensor({1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, at::kLong).view({2, 5});
  auto out = attention->forward(query, memory, padding_mask(tokens, 0));
  EXPECT_EQ(out.sizes(), (at::IntArrayRef{2, 3, 16}));
  const auto& w = attention->last_weights();
  ASSERT_EQ(w.sizes(), (at::IntArrayRef{2, 4, 3, 5}));
  EXPECT_TRUE(at::allclose(w.sum(-1), at::ones({2, 4, 3}), 1e-5, 1e-5));
  EXPECT_EQ(w[1].slice(2, 3, 5).abs().sum().item<float>(), 0.0f);  // padded keys get no weight
  EXPECT_GT(w[0].slice(2, 3, 5).abs().sum().item<float>(), 0.0f);
}

TEST(Linear, OneRowWithoutGradientsMatchesTheMatrixProductAndTrainingStaysDifferentiable) {
  at::manual_seed(3);
  torch::nn::Linear layer(16, 24);
  const auto x = at::randn({1, 1, 16});
  {
    torch::NoGradGuard no_grad;
    const auto fast = linear(layer, x);  // the matrix-vector path
    EXPECT_EQ(fast.sizes(), (at::IntArrayRef{1, 1, 24}));
    EXPECT_TRUE(at::allclose(fast, at::linear(x, layer->weight, layer->bias), 1e-5, 1e-6));
    const auto rows = at::randn({3, 2, 16});  // several rows: the ordinary product
    EXPECT_TRUE(at::allclose(linear(layer, rows), at::linear(rows, layer->weight, layer->bias), 1e-5, 1e-6));
  }
  // With gradients (training) the result carries them.
  const auto y = linear(layer, x).sum();
  y.backward();
  ASSERT_TRUE(layer->weight.grad().defined());
  EXPECT_TRUE(at::allclose(layer->weight.grad()[0], x.view({16}), 1e-6, 1e-6));
}

// TS_ATTENTION picks the kernel a new layer starts with (for benchmarks); without it, or with a name
// it does not know, a layer starts with auto. The names read back.
TEST(MultiHeadAttention, TheEnvironmentPicksTheKernelNewLayersStartWith) {
  for (const auto kernel : {AttentionKernel::kAuto, AttentionKernel::kExplicit, AttentionKernel::kFused})
    EXPECT_EQ(parse_attention_kernel(attention_kernel_name(kernel)), kernel);
  EXPECT_THROW(parse_attention_kernel("flash"), std::invalid_argument);
  const char* before = std::getenv("TS_ATTENTION");
  const std::string saved = before ? before : "";
  const auto kernel_with = [](const char* value) {
    if (value)
      setenv("TS_ATTENTION", value, 1);
    else
      unsetenv("TS_ATTENTION");
    return MultiHeadAttention(16, 4, 0.0, true)->kernel();
  };
  EXPECT_EQ(kernel_with(nullptr), AttentionKernel::kAuto);
  EXPECT_EQ(kernel_with("explicit"), AttentionKernel::kExplicit);
  EXPECT_EQ(kernel_with("fused"), AttentionKernel::kFused);
  EXPECT_EQ(kernel_with("flash"), AttentionKernel::kAuto);
#if TS_TORCH_AT_LEAST(2, 5)
  // A layer made, LibTorch's fused attention leaves out cuDNN's kernels (they plan every batch shape).
  const char* cudnn = std::getenv("TS_SDPA_CUDNN");
  if (!cudnn || std::string(cudnn) != "1") {
    EXPECT_FALSE(at::globalContext().userEnabledCuDNNSDP());
  }
#endif
  if (before)
    setenv("TS_ATTENTION", saved.c_str(), 1);
  else
    unsetenv("TS_ATTENTION");
}

TEST(MultiHeadAttention, DoesNotRecordUnlessAsked) {
  torch::NoGradGuard no_grad;
  MultiHeadAttention attention(8, 2, 0.0, true);
  auto x = at::randn({1, 3, 8});
  attention->forward(x, x, at::Tensor());
  EXPECT_FALSE(attention->last_weights().defined());
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// attention_matmul equals at::matmul, values and gradients, for the views the model passes (heads split
// out of a fused projection), widths around its 16-column vectors and 64-column blocks, and sizes
// past its limit (which go to at::matmul).
TEST(AttentionMatmul, EqualsLibTorchsProductsAndTheirGradients) {
  at::manual_seed(21);
  for (const bool transposed : {true, false}) {
    for (const std::int64_t n : {1, 15, 16, 17, 33, 64, 65, 70}) {
      const std::int64_t b = 3, h = 2, m = 7, k = transposed ? 24 : n, cols = transposed ? n : 24;
      // a: [b, h, m, k] as a transposed view; b: rows of `cols` (or of k when transposed) contiguous.
      const auto a_base = at::randn({b, m, h, k});
      const auto b_base = transposed ? at::randn({b, n, h, k}) : at::randn({b, k, h, cols});
      auto a1 = a_base.clone().requires_grad_(true), b1 = b_base.clone().requires_grad_(true);
      auto a2 = a_base.clone().requires_grad_(true), b2 = b_base.clone().requires_grad_(true);
      const auto ours = attention_matmul(a1.transpose(1, 2), b1.transpose(1, 2), transposed);
      const auto theirs =
          at::matmul(a2.transpose(1, 2), transposed ? b2.transpose(1, 2).transpose(-2, -1) : b2.transpose(1, 2));
      ASSERT_EQ(ours.sizes(), theirs.sizes()) << "n " << n;
      EXPECT_TRUE(at::allclose(ours, theirs, 1e-5, 1e-5)) << "n " << n << (transposed ? " a·bᵀ" : " a·b");
      const auto weights = at::randn(ours.sizes());
      (ours * weights).sum().backward();
      (theirs * weights).sum().backward();
      EXPECT_TRUE(at::allclose(a1.grad(), a2.grad(), 1e-4, 1e-5)) << "n " << n;
      EXPECT_TRUE(at::allclose(b1.grad(), b2.grad(), 1e-4, 1e-5)) << "n " << n;
    }
  }
  // Past the small-matrix limit, and in bf16: LibTorch's product, the same values.
  const auto big_a = at::randn({1, 1, 100, 64}), big_b = at::randn({1, 1, 100, 64});
  EXPECT_TRUE(
      at::allclose(attention_matmul(big_a, big_b, true), at::matmul(big_a, big_b.transpose(-2, -1)), 1e-4, 1e-4));
  const auto half_a = at::randn({2, 2, 5, 8}).to(at::kBFloat16), half_b = at::randn({2, 2, 8, 5}).to(at::kBFloat16);
  EXPECT_TRUE(at::equal(attention_matmul(half_a, half_b, false), at::matmul(half_a, half_b)));
}

TEST(FastDropout, DropsTheRightFractionAndScalesTheRest) {
  at::manual_seed(7);
  const auto x = at::ones({200, 500});
  for (const double p : {0.1, 0.3, 0.5}) {
    const auto y = fast_dropout(x, p, /*training=*/true);
    const double kept = y.ne(0).to(at::kDouble).mean().item<double>();
    EXPECT_NEAR(kept, 1 - p, 0.005) << "p " << p;  // 100,000 draws: sd ~0.0015
    const auto survivors = y.masked_select(y.ne(0));
    EXPECT_TRUE(at::allclose(survivors, at::full_like(survivors, 1 / (1 - p)))) << "p " << p;
    // The mean is preserved, as with inverted dropout.
    EXPECT_NEAR(y.mean().item<double>(), 1.0, 0.02) << "p " << p;
  }
  // Odd sizes (the last element of an unpaired hash) and other dtypes.
  const auto odd = fast_dropout(at::ones({3, 7}, at::kDouble), 0.5, true);
  EXPECT_EQ(odd.scalar_type(), at::kDouble);
  EXPECT_EQ(odd.sizes(), (std::vector<std::int64_t>{3, 7}));
  EXPECT_EQ(fast_dropout(at::ones({5}, at::kBFloat16), 0.5, true).scalar_type(), at::kBFloat16);
}

TEST(FastDropout, TheVectorPassGivesTheLoopsBits) {
  // Every size around the 16-element blocks and the thread split, fp32 and bf16, with a NaN, an
  // infinity, a subnormal and values whose product with the scale rounds in bf16.
  at::manual_seed(3);
  for (const auto dtype : {at::kFloat, at::kBFloat16}) {
    for (const std::int64_t n : {1, 2, 15, 16, 17, 31, 33, 100, 16385, 40001}) {
      auto x = (at::randn({n}) * 3).to(dtype);
      x[0] = std::numeric_limits<float>::quiet_NaN();
      if (n > 2) x[1] = std::numeric_limits<float>::infinity();
      if (n > 3) x[2] = 1e-40f;
      for (const double p : {0.1, 0.5}) {
        const auto vector = detail::hash_dropout(x, 12345, p, /*vectorised=*/true);
        const auto loop = detail::hash_dropout(x, 12345, p, /*vectorised=*/false);
        const auto as_bits = dtype == at::kFloat ? at::kInt : at::kShort;
        EXPECT_TRUE(at::equal(vector.view(as_bits), loop.view(as_bits))) << "n " << n << ", p " << p << ", " << dtype;
      }
    }
  }
}

TEST(FastDropout, IsReproducibleUnderTheSeedAndFreshOnEachCall) {
  const auto x = at::randn({64, 33});
  at::manual_seed(11);
  const auto a1 = fast_dropout(x, 0.2, true), a2 = fast_dropout(x, 0.2, true);
  at::manual_seed(11);
  const auto b1 = fast_dropout(x, 0.2, true);
  EXPECT_TRUE(at::equal(a1, b1));
  EXPECT_FALSE(at::equal(a1, a2));
  // Masks are not correlated between neighbouring elements of a pair.
  const auto m = fast_dropout(at::ones({100000}), 0.5, true).ne(0).to(at::kDouble).view({-1, 2});
  const double both = (m.select(1, 0) * m.select(1, 1)).mean().item<double>();
  EXPECT_NEAR(both, 0.25, 0.01);
}

TEST(FastDropout, ASeedScopeGivesItsOwnSequenceWhateverTheGeneratorDid) {
  const auto x = at::randn({64, 33});
  std::vector<at::Tensor> first, second;
  at::manual_seed(5);
  {
    DropoutSeeds seeds(99);
    first = {fast_dropout(x, 0.3, true), fast_dropout(x, 0.3, true)};
  }
  const auto after_scope = fast_dropout(x, 0.3, true);
  at::manual_seed(6);  // another generator state, another order of draws outside
  fast_dropout(x, 0.3, true);
  {
    DropoutSeeds seeds(99);
    second = {fast_dropout(x, 0.3, true)};
    {
      DropoutSeeds inner(7);  // the inner scope applies while it lives
      EXPECT_FALSE(at::equal(fast_dropout(x, 0.3, true), first[1]));
    }
    second.push_back(fast_dropout(x, 0.3, true));
  }
  EXPECT_TRUE(at::equal(first[0], second[0]));
  EXPECT_TRUE(at::equal(first[1], second[1]));
  EXPECT_FALSE(at::equal(first[0], first[1]));
  // Outside a scope the seeds come from the generator again, and the scope drew nothing from it.
  at::manual_seed(5);
  EXPECT_TRUE(at::equal(fast_dropout(x, 0.3, true), after_scope));
}

TEST(FastDropout, IsTheIdentityInEvaluationAndPassesGradientsThroughTheMask) {
  const auto x = at::randn({4, 6});
  EXPECT_TRUE(at::equal(fast_dropout(x, 0.5, /*training=*/false), x));
  EXPECT_TRUE(at::equal(fast_dropout(x, 0.0, true), x));
  EXPECT_TRUE(at::equal(fast_dropout(x, 1.0, true), at::zeros_like(x)));
  auto leaf = at::randn({8, 8}).requires_grad_(true);
  const auto y = fast_dropout(leaf, 0.5, true);
  y.sum().backward();
  // d(sum)/dx is the mask itself: 0 where dropped, 2 where kept.
  EXPECT_TRUE(at::equal(leaf.grad().ne(0), y.ne(0)));
  EXPECT_TRUE(at::allclose(leaf.grad().masked_select(leaf.grad().ne(0)), at::full({1}, 2.0)));
}

// relu_dropout is at::relu then fast_dropout in one pass: the same bits forward and backward, the same
// masks, and the same seeds drawn (the call after it gets what the call after the pair would get),
// with and without dropout, in training and in evaluation, across the 16-element blocks and an odd
// last pair, with a NaN, infinities, zeros and a subnormal.
TEST(ReluDropout, GivesReluThenFastDropoutsBitsForwardAndBackward) {
  at::manual_seed(21);
  for (const std::int64_t n : {1, 2, 17, 33, 16385, 40001}) {
    auto base = at::randn({n}) * 3;
    base[0] = std::numeric_limits<float>::quiet_NaN();
    if (n > 4) {
      base[1] = std::numeric_limits<float>::infinity();
      base[2] = -std::numeric_limits<float>::infinity();
      base[3] = 0.0f;
      base[4] = 1e-40f;
    }
    const auto weights = at::randn({n});
    for (const double p : {0.0, 0.1, 0.5}) {
      for (const bool training : {true, false}) {
        auto ours = base.clone().requires_grad_(true), theirs = base.clone().requires_grad_(true);
        at::Tensor y_ours, y_theirs, next_ours, next_theirs;
        {
          DropoutSeeds seeds(77);
          y_ours = relu_dropout(ours, p, training);
          next_ours = fast_dropout(at::ones({9}), 0.5, true);
        }
        {
          DropoutSeeds seeds(77);
          y_theirs = fast_dropout(at::relu(theirs), p, training);
          next_theirs = fast_dropout(at::ones({9}), 0.5, true);
        }
        const auto where = "n " + std::to_string(n) + ", p " + std::to_string(p) + (training ? "" : ", evaluation");
        EXPECT_TRUE(at::equal(y_ours.view(at::kInt), y_theirs.view(at::kInt))) << where;
        EXPECT_TRUE(at::equal(next_ours, next_theirs)) << where << ": the seeds drawn";
        (y_ours.nan_to_num(0) * weights).sum().backward();
        (y_theirs.nan_to_num(0) * weights).sum().backward();
        EXPECT_TRUE(at::equal(ours.grad().view(at::kInt), theirs.grad().view(at::kInt))) << where;
      }
    }
  }
  // bf16 forward, and no gradient asked for.
  const auto half = (at::randn({1001}) * 2).to(at::kBFloat16);
  {
    DropoutSeeds seeds(5);
    const auto ours = relu_dropout(half, 0.2, true);
    DropoutSeeds again(5);
    EXPECT_TRUE(at::equal(ours.view(at::kShort), fast_dropout(at::relu(half), 0.2, true).view(at::kShort)));
  }
  // Where it does not apply (here double): relu then fast_dropout themselves.
  const auto doubles = at::randn({50}, at::kDouble);
  at::manual_seed(8);
  const auto ours = relu_dropout(doubles, 0.3, true);
  at::manual_seed(8);
  EXPECT_TRUE(at::equal(ours, fast_dropout(at::relu(doubles), 0.3, true)));
  // The masks are the dropout's: a fraction p of the positive values dropped.
  const auto kept = relu_dropout(at::ones({100000}), 0.25, true).ne(0).to(at::kDouble).mean().item<double>();
  EXPECT_NEAR(kept, 0.75, 0.01);
}

TEST(ReluDropout, TheVectorPassesGiveTheLoopsBits) {
  at::manual_seed(4);
  for (const std::int64_t n : {1, 2, 15, 16, 17, 31, 33, 100, 16385, 40001}) {
    for (const auto dtype : {at::kFloat, at::kBFloat16}) {
      auto x = (at::randn({n}) * 3).to(dtype);
      x[0] = std::numeric_limits<float>::quiet_NaN();
      if (n > 2) x[1] = -std::numeric_limits<float>::infinity();
      if (n > 3) x[2] = -0.0f;
      const auto as_bits = dtype == at::kFloat ? at::kInt : at::kShort;
      for (const double p : {0.0, 0.1, 0.5}) {
        const auto vector = detail::relu_hash_dropout(x, 999, p, /*vectorised=*/true);
        const auto loop = detail::relu_hash_dropout(x, 999, p, /*vectorised=*/false);
        EXPECT_TRUE(at::equal(vector.view(as_bits), loop.view(as_bits))) << "n " << n << ", p " << p << ", " << dtype;
        const auto g = at::randn({n}).to(dtype);
        const double scale = 1.0 / (1.0 - p);
        EXPECT_TRUE(at::equal(detail::relu_dropout_backward(g, vector, scale, true).view(as_bits),
                              detail::relu_dropout_backward(g, vector, scale, false).view(as_bits)))
            << "backward, n " << n << ", p " << p << ", " << dtype;
      }
    }
  }
}

// The attention's weights in one pass against LibTorch's softmax of the scaled, masked scores, with
// gradients: no mask, a padding mask [B, 1, 1, S] and a causal one [1, 1, T, T], rows shorter and
// longer than a vector, the polynomial exponential and std::exp's loop. Masked weights are exactly 0.
TEST(AttentionSoftmax, EqualsLibTorchsSoftmaxOfTheScaledMaskedScoresWithGradients) {
  at::manual_seed(13);
  const double scale = 1.0 / std::sqrt(24.0);
  struct Shape {
    std::int64_t b, h, t, s;
  };
  for (const auto& shape :
       {Shape{2, 3, 5, 7}, Shape{1, 2, 12, 12}, Shape{3, 1, 16, 16}, Shape{2, 2, 17, 17}, Shape{1, 1, 3, 100}}) {
    for (const int which : {0, 1, 2}) {
      at::Tensor mask;
      if (which == 1) {
        mask = at::zeros({shape.b, 1, 1, shape.s});
        mask.select(0, 0).narrow(-1, shape.s / 2, shape.s - shape.s / 2).fill_(-INFINITY);
      } else if (which == 2) {
        if (shape.t != shape.s) continue;
        mask = causal_mask(shape.t, at::TensorOptions());
      }
      // A wide spread of logits too: exponentials far below 1, down to subnormals and 0.
      for (const double spread : {3.0, 60.0}) {
        const auto scores = at::randn({shape.b, shape.h, shape.t, shape.s}) * spread;
        auto leaf = scores.clone().requires_grad_(true);
        const auto theirs = at::softmax(mask.defined() ? leaf * scale + mask : leaf * scale, -1);
        const auto g = at::randn_like(scores);
        theirs.backward(g);
        for (const bool vectorised : {true, false}) {
          const auto where = "B " + std::to_string(shape.b) + " H " + std::to_string(shape.h) + " T " +
                             std::to_string(shape.t) + " S " + std::to_string(shape.s) + ", mask " +
                             std::to_string(which) + ", spread " + std::to_string(spread) +
                             (vectorised ? ", vector" : ", loop");
          const auto ours = detail::attention_softmax(scores, mask, scale, vectorised);
          EXPECT_TRUE(at::allclose(ours, theirs, 2e-6, 1e-12))
              << where << " max diff " << (ours - theirs).abs().max().item<double>();
          if (mask.defined()) {
            const auto masked = at::isinf(mask.expand_as(scores));
            EXPECT_TRUE(at::equal(ours.masked_select(masked), at::zeros({masked.sum().item<std::int64_t>()}))) << where;
          }
          const auto back = detail::attention_softmax_backward(g, ours, scale, vectorised);
          EXPECT_TRUE(at::allclose(back, leaf.grad(), 1e-5, 1e-7))
              << where << " max diff " << (back - leaf.grad()).abs().max().item<double>();
        }
      }
    }
  }
}

// The attention's output laid out with the heads inside ([B, M, H, N] in memory): the same bits as
// the plain layout, forward and backward, and joining the heads afterwards copies nothing.
TEST(AttentionMatmul, HeadsInsideGiveTheSameBitsAndJoinWithoutACopy) {
  at::manual_seed(17);
  const std::int64_t b = 3, h = 4, m = 9, k = 11, n = 6;
  const auto a_base = at::softmax(at::randn({b, h, m, k}), -1), v_base = at::randn({b, h, k, n});
  auto a1 = a_base.clone().requires_grad_(true), v1 = v_base.clone().requires_grad_(true);
  auto a2 = a_base.clone().requires_grad_(true), v2 = v_base.clone().requires_grad_(true);
  const auto plain = attention_matmul(a1, v1, /*b_transposed=*/false);
  const auto inside = attention_matmul(a2, v2, /*b_transposed=*/false, /*heads_inner=*/true);
  EXPECT_TRUE(at::equal(plain, inside));
  EXPECT_TRUE(inside.transpose(1, 2).is_contiguous());
  const auto joined_plain = plain.transpose(1, 2).reshape({b, m, h * n});
  const auto joined_inside = inside.transpose(1, 2).reshape({b, m, h * n});
  EXPECT_EQ(joined_inside.data_ptr(), inside.data_ptr()) << "joining the heads copied";
  const auto weights = at::randn({b, m, h * n});
  (joined_plain * weights).sum().backward();
  (joined_inside * weights).sum().backward();
  EXPECT_TRUE(at::equal(a1.grad(), a2.grad()));
  EXPECT_TRUE(at::equal(v1.grad(), v2.grad()));
}

}  // namespace
}  // namespace ts
