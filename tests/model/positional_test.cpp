// SPDX-License-Identifier: GPL-3.0-or-later
// Torch-free helpers for the "Model anatomy" views, checked against the closed form and against
// the LibTorch code the model and the loss really use.
#include "ts/model/positional.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "ts/model/attention.h"
#include "ts/model/transformer.h"

namespace ts {
namespace {

TEST(Positional, SinusoidalTableEqualsTheClosedForm) {
  const int positions = 50, d = 16;
  const auto values = sinusoidal_values(positions, d);
  ASSERT_EQ(values.size(), std::size_t(positions * d));
  for (int pos : {0, 1, 7, 49})
    for (int i : {0, 1, 3, 7}) {
      const double angle = pos / std::pow(10000.0, 2.0 * i / d);
      EXPECT_NEAR(values[pos * d + 2 * i], std::sin(angle), 1e-5) << pos << "," << 2 * i;
      EXPECT_NEAR(values[pos * d + 2 * i + 1], std::cos(angle), 1e-5) << pos << "," << 2 * i + 1;
    }
}

TEST(Positional, SinusoidalValuesMatchTheModelsTable) {
  for (int d : {8, 64, 256}) {
    const auto values = sinusoidal_values(100, d);
    const auto table = sinusoidal_table(100, d).contiguous();
    ASSERT_EQ(table.numel(), static_cast<std::int64_t>(values.size()));
    const float* t = table.data_ptr<float>();
    for (std::size_t k = 0; k < values.size(); ++k) ASSERT_NEAR(values[k], t[k], 1e-4) << "d=" << d << " k=" << k;
  }
  EXPECT_TRUE(sinusoidal_values(0, 8).empty());
}

TEST(LabelSmoothing, DistributionSumsToOneAndIgnoresPad) {
  const auto q = label_smoothing_distribution(8, 3, 0, 0.1);
  ASSERT_EQ(q.size(), 8u);
  EXPECT_NEAR(std::accumulate(q.begin(), q.end(), 0.0), 1.0, 1e-6);
  EXPECT_NEAR(q[3], 0.9 + 0.1 / 8, 1e-6);
  EXPECT_NEAR(q[0], 0.1 / 8, 1e-6);  // LibTorch smooths onto pad as well
  const auto ignored = label_smoothing_distribution(8, 0, 0, 0.1);
  EXPECT_EQ(std::accumulate(ignored.begin(), ignored.end(), 0.0), 0.0);
  const auto hard = label_smoothing_distribution(8, 5, 0, 0.0);
  EXPECT_EQ(hard[5], 1.0f);
}

TEST(LabelSmoothing, MatchesLibTorchCrossEntropy) {
  at::manual_seed(3);
  const int vocab = 11, rows = 6;
  const double smoothing = 0.1;
  auto logits = at::randn({rows, vocab}) * 3;
  auto targets = at::tensor({4, 0, 10, 1, 7, 0}, at::kLong);  // two pad rows (pad = 0)
  const double expected = at::cross_entropy_loss(logits, targets, {}, at::Reduction::Sum, 0, smoothing).item<double>();
  auto logp = at::log_softmax(logits, 1);
  double ours = 0;
  for (int r = 0; r < rows; ++r) {
    const auto q = label_smoothing_distribution(vocab, static_cast<int>(targets[r].item<std::int64_t>()), 0, smoothing);
    for (int c = 0; c < vocab; ++c) ours -= q[c] * logp[r][c].item<double>();
  }
  EXPECT_NEAR(ours, expected, 1e-4 * std::max(1.0, std::abs(expected)));
}

TEST(AnatomyMasks, CausalMaskIsZeroAboveTheDiagonalAndMatchesTheModel) {
  const int n = 6;
  const auto mask = causal_mask_values(n);
  ASSERT_EQ(mask.size(), std::size_t(n * n));
  const auto model_mask = causal_mask(n, at::TensorOptions());  // -inf where hidden
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      EXPECT_EQ(mask[i * n + j], j <= i ? 1 : 0) << i << "," << j;
      EXPECT_EQ(mask[i * n + j] == 0, std::isinf(model_mask[0][0][i][j].item<float>()));
    }
}

TEST(AnatomyMasks, PaddingMaskIsZeroOnPads) {
  const std::vector<std::vector<std::int64_t>> batch = {{5, 6, 7, 8}, {9, 4, 0, 0}, {3}};
  const auto mask = padding_mask_values(batch, 0);
  const std::vector<std::uint8_t> expected = {1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0};
  EXPECT_EQ(mask, expected);
  const auto model_mask = padding_mask(at::tensor({9, 4, 0, 0}, at::kLong).view({1, 4}), 0);
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mask[4 + t] == 0, std::isinf(model_mask[0][0][0][t].item<float>()));
}

}  // namespace
}  // namespace ts
