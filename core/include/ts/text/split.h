// SPDX-License-Identifier: GPL-3.0-or-later
// Deterministic train/dev/test split from a seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ts/text/corpus.h"

namespace ts {

/// Sizes of the held-out splits. A value in (0, 1) is a fraction of the corpus, a value >= 1 is
/// a number of pairs. Defaults: 10% dev and 10% test (80/10/10).
struct SplitConfig {
  double dev = 0.1;
  double test = 0.1;
  std::uint64_t seed = 1234;
};

struct DataSplit {
  std::vector<SentencePair> train, dev, test;
};

/// Shuffles indices with a fixed-algorithm PRNG (std::mt19937_64 + our own Fisher-Yates, so the
/// result is identical on every platform and standard library) and cuts test, then dev, then train.
/// Throws std::invalid_argument if the sizes leave no training pair or one is invalid.
DataSplit split_pairs(const std::vector<SentencePair>& pairs, const SplitConfig& config);

/// The number of pairs a SplitConfig value means for a corpus of `total` pairs. A fraction rounds
/// to the nearest count, but never to 0 when value > 0 and total > 0; a whole number >= 1 is a
/// count (split_pairs checks it against the corpus). Throws std::invalid_argument for negative,
/// non-finite or fractional values >= 1 (2.5).
std::size_t resolve_split_size(double value, std::size_t total);

}  // namespace ts
