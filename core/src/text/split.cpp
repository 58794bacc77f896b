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
#include <unordered_map>

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include "ts/text/numbers.h"

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

const char* split_method_name(SplitMethod method) {
  return method == SplitMethod::kShuffledPairs ? "pairs" : "grouped";
}

SplitMethod parse_split_method(const std::string& name) {
  if (name == "grouped") return SplitMethod::kGroupedBySource;
  if (name == "pairs") return SplitMethod::kShuffledPairs;
  throw std::invalid_argument("unknown split \"" + name + "\" (use grouped or pairs)");
}

std::string describe_split(const SplitStats& stats) {
  if (stats.method == SplitMethod::kShuffledPairs)
    return "pairs shuffled one by one (the split of runs made before 2026-11-26): a dev or test source may also "
           "occur in training";
  return "grouped by source sentence: " + thousands(stats.shared_pairs) + " of " + thousands(stats.pairs) +
         " pairs share their source with another pair (" + thousands(stats.sources) +
         " distinct sources); no dev or test source occurs in training";
}

std::string source_key(const std::string& source) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc_cf = icu::Normalizer2::getNFKCCasefoldInstance(status);
  const auto text = icu::UnicodeString::fromUTF8(source);
  icu::UnicodeString folded = U_SUCCESS(status) ? nfkc_cf->normalize(text, status) : text;
  if (U_FAILURE(status)) folded = text;
  icu::UnicodeString kept;
  bool space = false;
  for (int32_t i = 0; i < folded.length();) {
    const UChar32 c = folded.char32At(i);
    i += U16_LENGTH(c);
    if (u_isUWhiteSpace(c)) {
      space = !kept.isEmpty();
      continue;
    }
    const auto category = U_GET_GC_MASK(c);
    if (category & (U_GC_P_MASK | U_GC_S_MASK)) continue;  // punctuation, symbols
    if (space) kept.append(static_cast<UChar>(' '));
    space = false;
    kept.append(c);
  }
  std::string out;
  kept.toUTF8String(out);
  return out;
}

DataSplit split_pairs(const std::vector<SentencePair>& pairs, const SplitConfig& config) {
  const std::size_t total = pairs.size();
  const std::size_t test_size = resolve_split_size(config.test, total);
  const std::size_t dev_size = resolve_split_size(config.dev, total);
  if (test_size + dev_size >= total) {
    throw std::invalid_argument("split leaves no training pair: test " + std::to_string(test_size) + " + dev " +
                                std::to_string(dev_size) + " of " + std::to_string(total) +
                                " pairs; lower the dev/test sizes or use a larger corpus");
  }
  // Groups in order of first occurrence; each pair its own group for the shuffled-pairs method.
  std::vector<std::vector<std::size_t>> groups;
  if (config.method == SplitMethod::kShuffledPairs) {
    groups.resize(total);
    for (std::size_t i = 0; i < total; ++i) groups[i] = {i};
  } else {
    std::unordered_map<std::string, std::size_t> group_of;
    group_of.reserve(total);
    for (std::size_t i = 0; i < total; ++i) {
      const auto [it, added] = group_of.emplace(source_key(pairs[i].src), groups.size());
      if (added) groups.emplace_back();
      groups[it->second].push_back(i);
    }
  }
  DataSplit split;
  split.stats.method = config.method;
  split.stats.pairs = total;
  split.stats.sources = groups.size();
  for (const auto& g : groups)
    if (g.size() > 1) split.stats.shared_pairs += g.size();
  split.test.reserve(test_size);
  split.dev.reserve(dev_size);
  split.train.reserve(total - test_size - dev_size);
  for (const std::size_t g : shuffled_indices(groups.size(), config.seed)) {
    const auto& members = groups[g];
    auto& part = split.test.size() + members.size() <= test_size ? split.test
                 : split.dev.size() + members.size() <= dev_size ? split.dev
                                                                 : split.train;
    for (const std::size_t i : members) part.push_back(pairs[i]);
  }
  if (split.train.empty())
    throw std::invalid_argument(
        "split leaves no training pair: every source sentence went to dev or test; "
        "lower the dev/test sizes or use a larger corpus");
  return split;
}

}  // namespace ts
