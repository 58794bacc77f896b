#include "ts/model/attention.h"

#include <gtest/gtest.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cmath>

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

TEST(MultiHeadAttention, DoesNotRecordUnlessAsked) {
  torch::NoGradGuard no_grad;
  MultiHeadAttention attention(8, 2, 0.0, true);
  auto x = at::randn({1, 3, 8});
  attention->forward(x, x, at::Tensor());
  EXPECT_FALSE(attention->last_weights().defined());
}

}  // namespace
}  // namespace ts
