// SPDX-License-Identifier: GPL-3.0-or-later
// Deterministic train/dev/test split from a seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ts/text/corpus.h"

namespace ts {

/// How pairs are dealt to train, dev and test.
enum class SplitMethod {
  /// Pairs sharing a source sentence (after source_key's normalisation) go to the same part, so dev
  /// and test hold no source that training has seen. Tatoeba repeats a sentence with each of its
  /// translations: a plain shuffle put 108 of deu.txt's 1,000 German test sources into training.
  kGroupedBySource,
  /// Each pair on its own (the split of runs made before 2026-11-26, kept so they still evaluate on
  /// the test pairs they were trained beside; their test sources may occur in training).
  kShuffledPairs,
};
/// "grouped" and "pairs", as configuration files and the run history spell them.
const char* split_method_name(SplitMethod method);
/// Throws std::invalid_argument naming the choices for any other text.
SplitMethod parse_split_method(const std::string& name);

/// Sizes of the held-out splits. A value in (0, 1) is a fraction of the corpus, a value >= 1 is
/// a number of pairs. Defaults: 10% dev and 10% test (80/10/10).
struct SplitConfig {
  double dev = 0.1;
  double test = 0.1;
  std::uint64_t seed = 1234;
  SplitMethod method = SplitMethod::kGroupedBySource;
};

/// What a split did, for the log, the Dataset panel and the split file.
struct SplitStats {
  SplitMethod method = SplitMethod::kGroupedBySource;
  std::size_t pairs = 0;         // all pairs split
  std::size_t sources = 0;       // distinct sources (source_key); == pairs for kShuffledPairs
  std::size_t shared_pairs = 0;  // pairs whose source another pair also has
};

struct DataSplit {
  std::vector<SentencePair> train, dev, test;
  SplitStats stats;
};

/// One line for logs and panels: how the pairs were dealt, e.g. "grouped by source sentence: 31,734
/// of 169,813 pairs share their source with another pair (152,109 distinct sources); no dev or test
/// source occurs in training".
std::string describe_split(const SplitStats& stats);

/// The form in which two sources count as the same sentence: Unicode NFKC with case folding, then
/// punctuation and symbols removed and white space collapsed ("Tom ran!" and "tom ran." are one
/// source). At least as coarse as any tokenizer's normalisation, so no tokenizer can see a dev or
/// test source in training.
std::string source_key(const std::string& source);

/// Shuffles with a fixed-algorithm PRNG (std::mt19937_64 + our own Fisher-Yates, so the result is
/// identical on every platform and standard library) and deals test, then dev, then train. Grouped
/// (the default), it shuffles the groups of pairs that share a source and deals whole groups: test
/// and dev take a group only while it fits in the size asked for, so their sizes are exact unless
/// every remaining group is too large. With distinct sources both methods give the same split.
/// Throws std::invalid_argument if the sizes leave no training pair or one is invalid.
DataSplit split_pairs(const std::vector<SentencePair>& pairs, const SplitConfig& config);

/// The number of pairs a SplitConfig value means for a corpus of `total` pairs. A fraction rounds
/// to the nearest count, but never to 0 when value > 0 and total > 0; a whole number >= 1 is a
/// count (split_pairs checks it against the corpus). Throws std::invalid_argument for negative,
/// non-finite or fractional values >= 1 (2.5).
std::size_t resolve_split_size(double value, std::size_t total);

}  // namespace ts
