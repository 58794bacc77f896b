// SPDX-License-Identifier: GPL-3.0-or-later
// Deterministic train/dev/test split (see ts/text/split.h). The shuffle uses only std::mt19937_64,
// whose output the standard fixes, and our own Fisher-Yates loop, so a seed gives the same split
// on every platform (std::shuffle and std::uniform_int_distribution are implementation-defined).
#include "ts/text/split.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ts {

namespace {

std::string format_value(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Uniform integer in [0, bound) without modulo bias: draws above the last whole multiple of
// `bound` are rejected.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t limit = std::mt19937_64::max() - std::mt19937_64::max() % bound;
  std::uint64_t draw = rng();
  while (draw >= limit) draw = rng();
  return draw % bound;
}

std::vector<std::size_t> shuffled_indices(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> indices(n);
  std::iota(indices.begin(), indices.end(), std::size_t{0});
  std::mt19937_64 rng(seed);
  for (std::size_t i = n; i > 1; --i) {
    const auto j = static_cast<std::size_t>(uniform_below(rng, i));
    std::swap(indices[i - 1], indices[j]);
  }
  return indices;
}

}  // namespace

std::size_t resolve_split_size(double value, std::size_t total) {
  if (!std::isfinite(value) || value < 0) {
    throw std::invalid_argument("split size " + format_value(value) +
                                " must be a fraction in (0, 1) or a whole number of pairs >= 0");
  }
  if (value >= 1) {
    if (value != std::floor(value)) {
      throw std::invalid_argument("split size " + format_value(value) +
                                  " is neither a fraction in (0, 1) nor a whole number of pairs");
    }
    return static_cast<std::size_t>(value);
  }
  if (value == 0 || total == 0) return 0;
  // A requested held-out set is never rounded away to nothing.
  const auto rounded = static_cast<std::size_t>(std::llround(value * static_cast<double>(total)));
  return std::max<std::size_t>(rounded, 1);
}

DataSplit split_pairs(const std::vector<SentencePair>& pairs, const SplitConfig& config) {
  const std::size_t total = pairs.size();
  const std::size_t test_size = resolve_split_size(config.test, total);
  const std::size_t dev_size = resolve_split_size(config.dev, total);
  if (test_size + dev_size >= total) {
    throw std::invalid_argument("split leaves no training pair: test " +
                                std::to_string(test_size) + " + dev " + std::to_string(dev_size) +
                                " of " + std::to_string(total) +
                                " pairs; lower the dev/test sizes or use a larger corpus");
  }
  const std::vector<std::size_t> order = shuffled_indices(total, config.seed);
  DataSplit split;
  split.test.reserve(test_size);
  split.dev.reserve(dev_size);
  split.train.reserve(total - test_size - dev_size);
  for (std::size_t k = 0; k < total; ++k) {
    auto& part = k < test_size ? split.test : k < test_size + dev_size ? split.dev : split.train;
    part.push_back(pairs[order[k]]);
  }
  return split;
}

}  // namespace ts
