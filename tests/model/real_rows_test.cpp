// SPDX-License-Identifier: GPL-3.0-or-later
// RealRows: the rows of real tokens gathered from a padded batch and scattered back, with gradients.
#include "ts/model/attention.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

namespace ts {
namespace {

TEST(RealRows, ScatterPutsEachRowBackAndZerosThePaddedOnesWithTheGatheredGradient) {
  // Padding first, last, and between real tokens (as left-padded or odd batches would have it).
  const auto tokens = at::tensor({0, 5, 6, 0, 7, 0, 0, 8, 9, 10, 11, 0}, at::kLong).view({3, 4});
  const auto rows = RealRows::of(tokens, 0);
  ASSERT_EQ(rows.count(), 7);
  at::manual_seed(11);
  const auto y = at::randn({7, 5}).requires_grad_(true);
  const auto out = rows.scatter(y);
  ASSERT_EQ(out.sizes(), (at::IntArrayRef{3, 4, 5}));
  const auto want = at::index_copy(at::zeros({12, 5}), 0, rows.index, y.detach()).view({3, 4, 5});
  EXPECT_TRUE(at::equal(out.detach(), want));
  const auto pad = tokens.eq(0).unsqueeze(-1).expand({3, 4, 5});
  EXPECT_EQ(out.detach().masked_select(pad).abs().sum().item<float>(), 0.0f);
  EXPECT_TRUE(at::equal(rows.gather(out.detach()), y.detach()));

  const auto g = at::randn({3, 4, 5});
  const auto dy = torch::autograd::grad({(out * g).sum()}, {y})[0];
  EXPECT_TRUE(at::equal(dy, g.reshape({12, 5}).index_select(0, rows.index)));
}

TEST(RealRows, GatherTakesTheRealRowsAndItsGradientIsThemScatteredBack) {
  const auto tokens = at::tensor({0, 5, 6, 0, 7, 0, 0, 8, 9, 10, 11, 0}, at::kLong).view({3, 4});
  const auto rows = RealRows::of(tokens, 0);
  at::manual_seed(12);
  const auto x = at::randn({3, 4, 5}).requires_grad_(true);
  const auto gathered = rows.gather(x);
  EXPECT_TRUE(at::equal(gathered.detach(), x.detach().reshape({12, 5}).index_select(0, rows.index)));
  const auto g = at::randn({7, 5});
  const auto dx = torch::autograd::grad({(gathered * g).sum()}, {x})[0];
  EXPECT_TRUE(at::equal(dx, at::index_copy(at::zeros({12, 5}), 0, rows.index, g).view({3, 4, 5})));
}

TEST(RealRows, ABatchWithoutPaddingOrWithoutRealRowsScattersToo) {
  const auto full = RealRows::of(at::tensor({1, 2, 3, 4}, at::kLong).view({2, 2}), 0);
  const auto y = at::arange(8, at::kFloat).view({4, 2});
  EXPECT_TRUE(at::equal(full.scatter(y), y.view({2, 2, 2})));
  const auto none = RealRows::of(at::zeros({2, 3}, at::kLong), 0);
  const auto empty = none.scatter(at::empty({0, 4}));
  EXPECT_TRUE(at::equal(empty, at::zeros({2, 3, 4})));
}

}  // namespace
}  // namespace ts
