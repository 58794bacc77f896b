// SPDX-License-Identifier: GPL-3.0-or-later
// ts::embedding_lookup and EmbeddingRowGradients: the lookup's values, and the table's gradient kept
// as rows and added afterwards, against LibTorch's embedding and its gradient.
#include "ts/model/embedding_rows.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

namespace ts {
namespace {

at::Tensor table_of(std::int64_t vocab, std::int64_t d, std::uint64_t seed) {
  at::manual_seed(seed);
  return at::randn({vocab, d}).requires_grad_(true);
}

// A tied model in miniature: the table looked up twice (two sides' tokens, one with repeats) and used
// whole as an output layer. Returns the loss.
at::Tensor tied_loss(const at::Tensor& table, const at::Tensor& src, const at::Tensor& tgt, double scale, bool ours) {
  const auto lookup = [&](const at::Tensor& tokens) {
    return ours ? embedding_lookup(table, tokens, scale) : at::embedding(table, tokens) * scale;
  };
  const auto x = lookup(src), y = lookup(tgt);   // [B, S, D], [B, T, D]
  const auto logits = at::matmul(y, table.t());  // the table as the output layer
  return (logits * logits).mean() + x.tanh().sum() * 0.25 + y.pow(3).mean();
}

TEST(EmbeddingRows, TheLookupGivesLibTorchsValuesBitForBitWithOrWithoutAScope) {
  const auto table = table_of(50, 32, 1);
  const auto tokens = at::tensor({3, 7, 7, 0, 49, 12}, at::kLong).view({2, 3});
  for (const double scale : {1.0, 13.856406460551018}) {
    const auto want = at::embedding(table, tokens) * scale;
    const auto plain = embedding_lookup(table, tokens, scale);
    EmbeddingRowGradients scope;
    const auto scoped = embedding_lookup(table, tokens, scale);
    ASSERT_EQ(scoped.sizes(), want.sizes());
    EXPECT_TRUE(at::equal(plain, want)) << "scale " << scale;
    EXPECT_TRUE(at::equal(scoped, want)) << "scale " << scale;
    EXPECT_TRUE(scoped.requires_grad());
  }
}

TEST(EmbeddingRows, RowsAddedAfterBackwardGiveTheTiedTablesWholeGradient) {
  const auto src = at::tensor({1, 4, 4, 9, 0, 2, 2, 2}, at::kLong).view({2, 4});
  const auto tgt = at::tensor({5, 1, 19, 3, 3, 0}, at::kLong).view({2, 3});
  const double scale = 4.0;

  const auto reference_table = table_of(20, 16, 2);
  const auto want = torch::autograd::grad({tied_loss(reference_table, src, tgt, scale, false)}, {reference_table})[0];

  const auto table = table_of(20, 16, 2);
  EmbeddingRowGradients scope;
  const auto loss = tied_loss(table, src, tgt, scale, true);
  auto grads = torch::autograd::grad({loss}, {table});
  EXPECT_EQ(scope.pending(), 2u);  // both lookups recorded, the table's autograd gradient only the output layer's
  const auto output_layer_only = grads[0].clone();
  scope.add_to({table}, grads);
  EXPECT_EQ(scope.pending(), 0u);
  EXPECT_FALSE(at::allclose(output_layer_only, want, 1e-4, 1e-6));
  EXPECT_TRUE(at::allclose(grads[0], want, 1e-5, 1e-6)) << (grads[0] - want).abs().max().item<double>();
}

TEST(EmbeddingRows, ATableWithNoOtherGradientGetsOneOfItsRows) {
  const auto table = table_of(10, 16, 3);
  const auto other = at::ones({16}).requires_grad_(true);
  const auto tokens = at::tensor({2, 2, 7}, at::kLong);
  const auto reference_table = table_of(10, 16, 3);
  const auto want =
      torch::autograd::grad({(at::embedding(reference_table, tokens) * 2.0 * other).sum()}, {reference_table})[0];

  EmbeddingRowGradients scope;
  const auto loss = (embedding_lookup(table, tokens, 2.0) * other).sum();
  auto grads = torch::autograd::grad({loss}, {table, other}, {}, false, false, /*allow_unused=*/true);
  EXPECT_FALSE(grads[0].defined());
  scope.add_to({table, other}, grads);
  ASSERT_TRUE(grads[0].defined());
  EXPECT_TRUE(at::equal(grads[0], want));
  EXPECT_EQ(grads[0].index({3}).abs().sum().item<float>(), 0.0f);  // rows never looked up stay 0
}

TEST(EmbeddingRows, BackwardIntoParametersOwnGradientsAddsToWhatTheyHold) {
  const auto src = at::tensor({1, 4, 4, 9}, at::kLong).view({1, 4});
  const auto tgt = at::tensor({5, 1, 3}, at::kLong).view({1, 3});
  const auto reference_table = table_of(12, 16, 4);
  tied_loss(reference_table, src, tgt, 1.0, false).backward();
  tied_loss(reference_table, src, tgt, 1.0, false).backward();  // accumulated twice

  const auto table = table_of(12, 16, 4);
  for (int pass = 0; pass < 2; ++pass) {
    EmbeddingRowGradients scope;
    tied_loss(table, src, tgt, 1.0, true).backward();
    scope.add_to_grads({table});
  }
  EXPECT_TRUE(at::allclose(table.grad(), reference_table.grad(), 1e-5, 1e-6));
}

TEST(EmbeddingRows, ABackwardAfterItsScopeEndedGivesTheGradientThroughAutograd) {
  const auto src = at::tensor({1, 4, 4, 9}, at::kLong).view({1, 4});
  const auto tgt = at::tensor({5, 1, 3}, at::kLong).view({1, 3});
  const auto reference_table = table_of(12, 16, 5);
  const auto want = torch::autograd::grad({tied_loss(reference_table, src, tgt, 2.0, false)}, {reference_table})[0];

  const auto table = table_of(12, 16, 5);
  at::Tensor loss;
  {
    EmbeddingRowGradients scope;
    loss = tied_loss(table, src, tgt, 2.0, true);
  }
  EmbeddingRowGradients another;  // not the one the lookups were made under: it records nothing
  const auto got = torch::autograd::grad({loss}, {table})[0];
  EXPECT_EQ(another.pending(), 0u);
  EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-6));
}

TEST(EmbeddingRows, GradientsAddedToAreNotOnesAnotherParameterShares) {
  const auto table = table_of(6, 16, 6);
  const auto tokens = at::tensor({1, 1, 4}, at::kLong);
  EmbeddingRowGradients scope;
  const auto loss = embedding_lookup(table, tokens, 1.0).sum();
  auto grads = torch::autograd::grad({loss}, {table}, {}, false, false, /*allow_unused=*/true);
  EXPECT_FALSE(grads[0].defined());  // the lookup's rows are the table's only gradient: all recorded
  const auto shared = at::ones({6, 16});
  const auto other = at::zeros({1}).requires_grad_(true);
  std::vector<at::Tensor> all{shared, shared};  // one tensor handed to two parameters
  scope.add_to({table, other}, all);
  EXPECT_TRUE(at::equal(shared, at::ones({6, 16})));  // not written in place
  EXPECT_EQ(all[0].index({1}).sum().item<float>(), 16.0f * 3.0f);
  EXPECT_EQ(all[0].index({0}).sum().item<float>(), 16.0f);
}

TEST(EmbeddingRows, BadTokensAndForeignTablesAreClearErrors) {
  const auto table = table_of(5, 16, 7);
  EXPECT_THROW(embedding_lookup(table, at::tensor({1, 5}, at::kLong), 1.0), std::exception);
  EXPECT_THROW(embedding_lookup(table, at::tensor({-1}, at::kLong), 1.0), std::exception);
  {
    EmbeddingRowGradients scope;
    try {
      embedding_lookup(table, at::tensor({0, 5}, at::kLong), 1.0);
      FAIL() << "no error for token 5 of a 5-row table";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("token 5"), std::string::npos) << e.what();
    }
    const auto loss = embedding_lookup(table, at::tensor({0, 4}, at::kLong), 1.0).sum();
    auto grads = torch::autograd::grad({loss}, {table}, {}, false, false, /*allow_unused=*/true);
    const auto stranger = at::zeros({5, 16}).requires_grad_(true);
    std::vector<at::Tensor> one{at::Tensor()};
    EXPECT_THROW(scope.add_to({stranger}, one), std::logic_error);
  }
}

TEST(EmbeddingRows, WithoutGradientsOrScopeItIsLibTorchsEmbedding) {
  const auto table = table_of(8, 16, 8);
  const auto tokens = at::tensor({0, 3, 7}, at::kLong);
  EmbeddingRowGradients scope;
  {
    at::NoGradGuard no_grad;
    const auto x = embedding_lookup(table, tokens, 3.0);
    EXPECT_FALSE(x.requires_grad());
    EXPECT_TRUE(at::equal(x, at::embedding(table, tokens) * 3.0));
  }
  const auto frozen = table.detach();  // needs no gradient: nothing to record
  const auto y = embedding_lookup(frozen, tokens, 1.0);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(scope.pending(), 0u);
}

}  // namespace
}  // namespace ts
