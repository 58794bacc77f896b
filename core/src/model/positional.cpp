// SPDX-License-Identifier: GPL-3.0-or-later
// Torch-free position table, smoothed targets and masks (see ts/model/positional.h).
#include "ts/model/positional.h"

#include <algorithm>
#include <cmath>

namespace ts {

std::vector<float> sinusoidal_values(int positions, int d_model) {
  if (positions <= 0 || d_model <= 0) return {};
  std::vector<float> table(static_cast<std::size_t>(positions) * d_model);
  for (int j = 0; j < d_model; ++j) {
    // Columns 2i and 2i+1 share the frequency 10000^(-2i/d), as in sinusoidal_table().
    const double rate = std::exp(static_cast<double>(j - j % 2) * (-std::log(10000.0) / d_model));
    for (int pos = 0; pos < positions; ++pos) {
      const double angle = pos * rate;
      table[static_cast<std::size_t>(pos) * d_model + j] =
          static_cast<float>(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return table;
}

std::vector<float> label_smoothing_distribution(int vocab, int target, int pad, double smoothing) {
  if (vocab <= 0) return {};
  if (target == pad) return std::vector<float>(static_cast<std::size_t>(vocab), 0.0f);
  std::vector<float> q(static_cast<std::size_t>(vocab), static_cast<float>(smoothing / vocab));
  if (target >= 0 && target < vocab)
    q[static_cast<std::size_t>(target)] = static_cast<float>(1.0 - smoothing + smoothing / vocab);
  return q;
}

std::vector<std::uint8_t> causal_mask_values(int length) {
  if (length <= 0) return {};
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(length) * length, 0);
  for (int i = 0; i < length; ++i)
    for (int j = 0; j <= i; ++j) mask[static_cast<std::size_t>(i) * length + j] = 1;
  return mask;
}

std::vector<std::uint8_t> padding_mask_values(const std::vector<std::vector<std::int64_t>>& batch, std::int64_t pad) {
  std::size_t width = 0;
  for (const auto& row : batch) width = std::max(width, row.size());
  std::vector<std::uint8_t> mask(batch.size() * width, 0);
  for (std::size_t b = 0; b < batch.size(); ++b)
    for (std::size_t t = 0; t < batch[b].size(); ++t) mask[b * width + t] = batch[b][t] != pad ? 1 : 0;
  return mask;
}

}  // namespace ts
