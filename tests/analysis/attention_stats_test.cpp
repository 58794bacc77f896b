// SPDX-License-Identifier: GPL-3.0-or-later
// Attention statistics on synthetic maps whose answer is known: identity is "diagonal", a shifted
// identity "previous token", uniform rows "broad" with normalised entropy 1, an identity cross map
// a monotone alignment and a permuted one reordering; entropies against their closed forms.
#include "ts/analysis/attention_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ts {
namespace {

AttentionMatrix identity(std::size_t n) {
  AttentionMatrix m(n, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < n; ++i) m[i][i] = 1;
  return m;
}

// Row i attends to token i - 1 (row 0 to itself).
AttentionMatrix shifted(std::size_t n) {
  AttentionMatrix m(n, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < n; ++i) m[i][i == 0 ? 0 : i - 1] = 1;
  return m;
}

AttentionMatrix uniform(std::size_t rows, std::size_t columns) {
  return AttentionMatrix(rows, std::vector<double>(columns, 1.0 / static_cast<double>(columns)));
}

// Uniform over the causal part: row i spreads 1 / (i + 1) over keys 0..i, zeros above.
AttentionMatrix causal_uniform(std::size_t n) {
  AttentionMatrix m(n, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) m[i][j] = 1.0 / static_cast<double>(i + 1);
  return m;
}

double candidate(const HeadSummary& s, AttentionPattern p) {
  for (const auto& c : s.candidates)
    if (c.first == p) return c.second;
  return -1;
}

TEST(AttentionStats, IdentityIsDiagonal) {
  const auto s = summarize_head(identity(6), AttentionKind::EncoderSelf);
  EXPECT_EQ(s.pattern, AttentionPattern::Diagonal);
  EXPECT_DOUBLE_EQ(s.strength, 1.0);
  EXPECT_DOUBLE_EQ(s.mean_entropy, 0.0);
  EXPECT_DOUBLE_EQ(s.normalized_entropy, 0.0);
  EXPECT_DOUBLE_EQ(s.peakedness, 1.0);
  EXPECT_EQ(s.monotonicity, -1);  // self-attention has none
  EXPECT_EQ(s.description, "same token (diagonal) (100%)");
  EXPECT_EQ(s.caption, "diag 100%");
  EXPECT_NEAR(candidate(s, AttentionPattern::FirstToken), 1.0 / 6, 1e-12);
  EXPECT_NEAR(candidate(s, AttentionPattern::EndOfSentence), 1.0 / 6, 1e-12);
  EXPECT_DOUBLE_EQ(candidate(s, AttentionPattern::PreviousToken), 0.0);
}

TEST(AttentionStats, ShiftedIdentityIsPreviousToken) {
  for (auto kind : {AttentionKind::EncoderSelf, AttentionKind::DecoderSelf}) {
    const auto s = summarize_head(shifted(8), kind);
    EXPECT_EQ(s.pattern, AttentionPattern::PreviousToken);
    EXPECT_DOUBLE_EQ(s.strength, 1.0);
    EXPECT_EQ(s.caption, "prev 100%");
    EXPECT_EQ(s.description, "previous token (100%)");
  }
  // A blurred version: 0.7 on the previous token, 0.3 on itself.
  AttentionMatrix m(5, std::vector<double>(5, 0.0));
  m[0][0] = 1;
  for (std::size_t i = 1; i < 5; ++i) m[i][i - 1] = 0.7, m[i][i] = 0.3;
  const auto s = summarize_head(m, AttentionKind::EncoderSelf);
  EXPECT_EQ(s.pattern, AttentionPattern::PreviousToken);
  EXPECT_NEAR(s.strength, 0.7, 1e-12);
  EXPECT_EQ(s.description, "previous token (70%)");
  // Diagonal: row 0 gives 1, the others 0.3.
  EXPECT_NEAR(candidate(s, AttentionPattern::Diagonal), (1 + 4 * 0.3) / 5, 1e-12);
}

TEST(AttentionStats, NextFirstAndEndOfSentence) {
  AttentionMatrix next(5, std::vector<double>(5, 0.0));
  for (std::size_t i = 0; i < 5; ++i) next[i][std::min<std::size_t>(i + 1, 4)] = 1;
  EXPECT_EQ(summarize_head(next, AttentionKind::EncoderSelf).pattern, AttentionPattern::NextToken);

  AttentionMatrix first(5, std::vector<double>(5, 0.0));
  for (auto& row : first) row[0] = 0.9, row[2] = 0.1;
  auto s = summarize_head(first, AttentionKind::EncoderSelf);
  EXPECT_EQ(s.pattern, AttentionPattern::FirstToken);
  EXPECT_NEAR(s.strength, 0.9, 1e-12);

  AttentionMatrix eos(5, std::vector<double>(5, 0.0));
  for (auto& row : eos) row[4] = 0.8, row[1] = 0.2;
  s = summarize_head(eos, AttentionKind::EncoderSelf);
  EXPECT_EQ(s.pattern, AttentionPattern::EndOfSentence);
  EXPECT_NEAR(s.strength, 0.8, 1e-12);
  EXPECT_EQ(s.caption, "eos 80%");
}

TEST(AttentionStats, UniformIsBroadWithNormalisedEntropyOne) {
  const auto s = summarize_head(uniform(7, 7), AttentionKind::EncoderSelf);
  EXPECT_EQ(s.pattern, AttentionPattern::Broad);
  EXPECT_NEAR(s.normalized_entropy, 1.0, 1e-12);
  EXPECT_NEAR(s.strength, 1.0, 1e-12);
  EXPECT_NEAR(s.mean_entropy, std::log(7.0), 1e-12);
  EXPECT_EQ(s.description, "broad (normalised entropy 1.00)");

  const auto c = summarize_head(uniform(4, 9), AttentionKind::Cross);
  EXPECT_EQ(c.pattern, AttentionPattern::Broad);
  EXPECT_NEAR(c.normalized_entropy, 1.0, 1e-12);

  // Decoder self-attention uniform over the causal part: every row has normalised entropy 1, and
  // row 0 (one visible key) is left out of the normalised mean.
  const auto d = summarize_head(causal_uniform(6), AttentionKind::DecoderSelf);
  EXPECT_EQ(d.pattern, AttentionPattern::Broad);
  EXPECT_NEAR(d.normalized_entropy, 1.0, 1e-12);
  double mean = 0;
  for (int i = 1; i <= 6; ++i) mean += std::log(static_cast<double>(i)) / 6;
  EXPECT_NEAR(d.mean_entropy, mean, 1e-12);
}

TEST(AttentionStats, DecoderSelfIgnoresTheMaskedPart) {
  // Weight above the diagonal (which a causal model never produces) must not count: with the
  // causal part an identity, the head is diagonal however much sits above it.
  AttentionMatrix m = identity(5);
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = i + 1; j < 5; ++j) m[i][j] = 5.0;
  const auto s = summarize_head(m, AttentionKind::DecoderSelf);
  EXPECT_EQ(s.pattern, AttentionPattern::Diagonal);
  EXPECT_DOUBLE_EQ(s.strength, 1.0);
  EXPECT_DOUBLE_EQ(s.mean_entropy, 0.0);
  for (double h : row_entropies(m, true)) EXPECT_DOUBLE_EQ(h, 0.0);
  // Without the mask the same rows are far from one-hot.
  EXPECT_GT(mean_entropy(m, false), 0.5);
  // No "next token" or "</s>" candidates in the decoder: the future is masked.
  EXPECT_EQ(candidate(s, AttentionPattern::NextToken), -1);
  EXPECT_EQ(candidate(s, AttentionPattern::EndOfSentence), -1);
}

TEST(AttentionStats, CrossIdentityIsMonotoneAlignment) {
  const auto s = summarize_head(identity(6), AttentionKind::Cross);
  EXPECT_EQ(s.pattern, AttentionPattern::Alignment);
  EXPECT_DOUBLE_EQ(s.monotonicity, 1.0);
  EXPECT_DOUBLE_EQ(s.strength, 1.0);
  EXPECT_EQ(s.description, "alignment (100%, monotone 100%)");
  EXPECT_EQ(s.caption, "align 100%");
}

TEST(AttentionStats, CrossPermutationIsReordering) {
  // Target i aligned to source perm[i]; the last row (</s>) to the source </s>.
  const std::size_t perm[] = {3, 0, 4, 1, 2, 5};
  AttentionMatrix m(6, std::vector<double>(6, 0.0));
  for (std::size_t i = 0; i < 6; ++i) m[i][perm[i]] = 0.9, m[i][5] += 0.1;
  const auto s = summarize_head(m, AttentionKind::Cross);
  EXPECT_EQ(s.pattern, AttentionPattern::Reordering);
  // Moves: 3→0 back, 0→4, 4→1 back, 1→2, 2→5: 3 of 5 forward.
  EXPECT_NEAR(s.monotonicity, 3.0 / 5, 1e-12);
  EXPECT_NEAR(s.strength, (5 * 0.9 + 1.0) / 6, 1e-12);

  // German verb-final: one backward jump in ten rows stays an alignment.
  const std::size_t verb_final[] = {0, 1, 2, 7, 3, 4, 5, 6, 8, 9};
  AttentionMatrix g(10, std::vector<double>(10, 0.0));
  for (std::size_t i = 0; i < 10; ++i) g[i][verb_final[i]] = 1;
  const auto a = summarize_head(g, AttentionKind::Cross);
  EXPECT_EQ(a.pattern, AttentionPattern::Alignment);
  EXPECT_NEAR(a.monotonicity, 8.0 / 9, 1e-12);
}

TEST(AttentionStats, CrossEndOfSentenceIsNotAlignment) {
  // Every target row parks its attention on the source </s>: the argmax never moves, but this is
  // no alignment.
  AttentionMatrix m(5, std::vector<double>(7, 0.02));
  for (auto& row : m) row[6] = 1 - 6 * 0.02;
  const auto s = summarize_head(m, AttentionKind::Cross);
  EXPECT_EQ(s.pattern, AttentionPattern::EndOfSentence);
  EXPECT_NEAR(s.strength, 0.88, 1e-12);
}

TEST(AttentionStats, MixedWhenNothingReachesTheThreshold) {
  // Weight split between the first token, the token itself and another: none explains 60%.
  AttentionMatrix m(6, std::vector<double>(6, 0.0));
  m[0][0] = 1;
  for (std::size_t i = 1; i < 6; ++i) {
    m[i][0] += 0.35;
    m[i][i] += 0.35;
    m[i][(i + 2) % 6] += 0.3;
  }
  AttentionSummaryOptions strict;
  strict.min_strength = 0.6;
  const auto s = summarize_head(m, AttentionKind::EncoderSelf, strict);
  EXPECT_EQ(s.pattern, AttentionPattern::Mixed);
  EXPECT_EQ(s.caption, "mixed");
  EXPECT_EQ(s.description.rfind("mixed (best: ", 0), 0u) << s.description;
  EXPECT_GT(s.strength, 0.3);
  EXPECT_LT(s.strength, 0.6);
}

TEST(AttentionStats, AverageOfHeads) {
  const auto avg = average_heads({identity(3), shifted(3)});
  ASSERT_EQ(avg.size(), 3u);
  const AttentionMatrix expected = {{1, 0, 0}, {0.5, 0.5, 0}, {0, 0.5, 0.5}};
  for (std::size_t r = 0; r < 3; ++r) {
    ASSERT_EQ(avg[r].size(), 3u);
    for (std::size_t c = 0; c < 3; ++c) EXPECT_DOUBLE_EQ(avg[r][c], expected[r][c]) << r << "," << c;
  }
  // Ragged heads: padded with zeros to the largest shape.
  const auto ragged = average_heads({{{1.0}}, {{0.0, 1.0}, {0.5, 0.5}}});
  ASSERT_EQ(ragged.size(), 2u);
  EXPECT_DOUBLE_EQ(ragged[0][0], 0.5);
  EXPECT_DOUBLE_EQ(ragged[0][1], 0.5);
  EXPECT_DOUBLE_EQ(ragged[1][0], 0.25);
  EXPECT_TRUE(average_heads({}).empty());
}

TEST(AttentionStats, EntropyClosedForms) {
  // Two-point row (p, 1 - p): H = -p ln p - (1-p) ln(1-p); normalised by ln 2.
  const double p = 0.2;
  const double h = -p * std::log(p) - (1 - p) * std::log(1 - p);
  const AttentionMatrix m = {{p, 1 - p}, {1, 0}, {0.5, 0.5}};
  const auto hs = row_entropies(m);
  ASSERT_EQ(hs.size(), 3u);
  EXPECT_NEAR(hs[0], h, 1e-12);
  EXPECT_DOUBLE_EQ(hs[1], 0.0);
  EXPECT_NEAR(hs[2], std::log(2.0), 1e-12);
  const auto ns = normalized_row_entropies(m);
  EXPECT_NEAR(ns[0], h / std::log(2.0), 1e-12);
  EXPECT_NEAR(ns[2], 1.0, 1e-12);
  EXPECT_NEAR(mean_entropy(m), (h + std::log(2.0)) / 3, 1e-12);
  EXPECT_NEAR(mean_normalized_entropy(m), (h / std::log(2.0) + 1) / 3, 1e-12);
  // Rows that do not sum to one are renormalised: (2, 2, 2, 2) is uniform over four keys.
  EXPECT_NEAR(row_entropies({{2, 2, 2, 2}})[0], std::log(4.0), 1e-12);
  // Causal: row i of a uniform-over-all-keys matrix only counts keys 0..i.
  const auto causal = row_entropies(uniform(4, 4), true);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(causal[i], std::log(static_cast<double>(i + 1)), 1e-12);
}

TEST(AttentionStats, DegenerateInputsDoNotCrash) {
  const auto empty = summarize_head({}, AttentionKind::EncoderSelf);
  EXPECT_EQ(empty.pattern, AttentionPattern::Undetermined);
  EXPECT_EQ(empty.caption, "n/a");
  EXPECT_EQ(summarize_head({{}, {}}, AttentionKind::Cross).pattern, AttentionPattern::Undetermined);
  EXPECT_TRUE(row_entropies({}).empty());
  EXPECT_EQ(mean_entropy({}), 0.0);
  EXPECT_EQ(mean_normalized_entropy({{}}), 0.0);

  // 1×1: a single key tells nothing, whatever the kind.
  for (auto kind : {AttentionKind::EncoderSelf, AttentionKind::DecoderSelf, AttentionKind::Cross}) {
    const auto s = summarize_head({{1.0}}, kind);
    EXPECT_EQ(s.pattern, AttentionPattern::Undetermined);
    EXPECT_EQ(s.mean_entropy, 0.0);
    EXPECT_EQ(s.normalized_entropy, 0.0);
  }
  // Decoder self with one token: row 0 only sees <s>.
  EXPECT_EQ(summarize_head({{1.0}}, AttentionKind::DecoderSelf).description, "too few tokens");

  // Ragged rows, zero rows, NaN and negative weights.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const AttentionMatrix ragged = {{1.0}, {0.0, 1.0, 0.0}, {0.0, 0.0}, {nan, -1.0, 1.0}};
  const auto s = summarize_head(ragged, AttentionKind::EncoderSelf);
  // Rows 0 and 1 are one-hot on themselves, row 2 is empty (skipped), row 3 has no key 3.
  EXPECT_EQ(s.pattern, AttentionPattern::Diagonal);
  EXPECT_TRUE(std::isfinite(s.mean_entropy));
  EXPECT_DOUBLE_EQ(s.mean_entropy, 0.0);
  const auto hs = row_entropies(ragged);
  ASSERT_EQ(hs.size(), 4u);
  EXPECT_DOUBLE_EQ(hs[2], 0.0);  // all-zero row
  const auto sc = summarize_head(ragged, AttentionKind::Cross);
  EXPECT_TRUE(std::isfinite(sc.monotonicity));
  EXPECT_TRUE(std::isfinite(summarize_head(ragged, AttentionKind::DecoderSelf).strength));
}

TEST(AttentionStats, PatternNames) {
  EXPECT_EQ(attention_pattern_name(AttentionPattern::PreviousToken), "previous token");
  EXPECT_EQ(attention_pattern_name(AttentionPattern::Diagonal), "same token (diagonal)");
  EXPECT_EQ(attention_pattern_short_name(AttentionPattern::Alignment), "align");
  EXPECT_EQ(attention_pattern_short_name(AttentionPattern::Reordering), "reord");
}

}  // namespace
}  // namespace ts
