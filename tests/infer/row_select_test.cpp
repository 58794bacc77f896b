// SPDX-License-Identifier: GPL-3.0-or-later
// Choosing tokens from rows of scores: the vectorised selections against the plain loops they replace,
// on random rows with ties, -inf, NaN and every length around the vector width.
#include "ts/infer/row_select.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace ts {
namespace {

// The loops decoding ran before: the first of equal maxima; the k best of all the totals, sorted.
std::int64_t plain_argmax(const std::vector<float>& x) {
  std::int64_t best = 0;
  for (std::size_t i = 1; i < x.size(); ++i)
    if (x[i] > x[static_cast<std::size_t>(best)]) best = static_cast<std::int64_t>(i);
  return best;
}

// The k best of all the totals as decoding chose them before (its loop, over one array of every
// row's totals): NaNs take part as that loop let them.
std::vector<ScoredIndex> plain_top_k(const std::vector<std::vector<float>>& rows, const std::vector<float>& adds,
                                     std::int64_t k) {
  std::vector<float> scores;
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (const float v : rows[r]) scores.push_back(v + adds[r]);
  const auto better = [&scores](std::int64_t a, std::int64_t b) {
    return scores[static_cast<std::size_t>(a)] > scores[static_cast<std::size_t>(b)] ||
           (scores[static_cast<std::size_t>(a)] == scores[static_cast<std::size_t>(b)] && a < b);
  };
  std::vector<std::int64_t> out;
  k = std::min<std::int64_t>(k, static_cast<std::int64_t>(scores.size()));
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(scores.size()); ++i) {
    if (static_cast<std::int64_t>(out.size()) == k && !better(i, out.back())) continue;
    out.insert(std::upper_bound(out.begin(), out.end(), i, better), i);
    if (static_cast<std::int64_t>(out.size()) > k) out.pop_back();
  }
  std::vector<ScoredIndex> best;
  for (const auto i : out) best.push_back({scores[static_cast<std::size_t>(i)], i});
  return best;
}

// The same by sorting every total (no NaN among them).
std::vector<ScoredIndex> sorted_top_k(const std::vector<std::vector<float>>& rows, const std::vector<float>& adds,
                                      std::int64_t k) {
  std::vector<ScoredIndex> all;
  std::int64_t index = 0;
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (const float v : rows[r]) all.push_back({v + adds[r], index++});
  std::stable_sort(all.begin(), all.end(),
                   [](const ScoredIndex& a, const ScoredIndex& b) { return a.score > b.score; });
  if (static_cast<std::int64_t>(all.size()) > k) all.resize(static_cast<std::size_t>(k));
  return all;
}

// Random scores drawn from few values (ties), with some -inf and, if asked, a NaN.
std::vector<float> random_row(std::mt19937& rng, std::int64_t n, bool with_nan) {
  std::uniform_int_distribution<int> level(0, 40), special(0, 30);
  std::vector<float> row(static_cast<std::size_t>(n));
  for (auto& v : row) {
    const int s = special(rng);
    v = s == 0 ? -std::numeric_limits<float>::infinity() : -static_cast<float>(level(rng)) * 0.37F;
  }
  if (with_nan && n > 3) row[static_cast<std::size_t>(n / 2)] = std::numeric_limits<float>::quiet_NaN();
  return row;
}

TEST(RowSelect, FirstArgmaxIsThePlainLoopsChoiceForEveryLength) {
  std::mt19937 rng(7);
  for (std::int64_t n = 1; n <= 70; ++n)
    for (int trial = 0; trial < 20; ++trial) {
      const auto row = random_row(rng, n, trial % 5 == 4);
      EXPECT_EQ(first_argmax(row.data(), n), plain_argmax(row)) << "n " << n << " trial " << trial;
    }
  // The first of equal maxima, a maximum in the tail after the last full vector, and -inf everywhere.
  std::vector<float> row(37, 1.0F);
  row[20] = row[33] = 2.0F;
  EXPECT_EQ(first_argmax(row.data(), 37), 20);
  row[36] = 3.0F;
  EXPECT_EQ(first_argmax(row.data(), 37), 36);
  const std::vector<float> none(50, -std::numeric_limits<float>::infinity());
  EXPECT_EQ(first_argmax(none.data(), 50), 0);
  // +0 and -0 are equal: the first of them.
  const std::vector<float> zeros{-1.0F, -0.0F, 0.0F, -2.0F};
  EXPECT_EQ(first_argmax(zeros.data(), 4), 1);
}

TEST(RowSelect, TopKOfRowsOfferedInTurnIsTheKBestOfAllOfThem) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> rows_of(1, 5), length_of(1, 90), k_of(1, 12);
  for (int trial = 0; trial < 400; ++trial) {
    const int n = rows_of(rng);
    const std::int64_t V = length_of(rng), k = k_of(rng);
    std::vector<std::vector<float>> rows;
    std::vector<float> adds;
    for (int r = 0; r < n; ++r) {
      rows.push_back(random_row(rng, V, trial % 7 == 6 && r == 0));
      adds.push_back(r == 1 ? -std::numeric_limits<float>::infinity() : -0.37F * static_cast<float>(r));
    }
    std::vector<ScoredIndex> best;
    for (int r = 0; r < n; ++r)
      select_top_k(rows[static_cast<std::size_t>(r)].data(), V, adds[static_cast<std::size_t>(r)], r * V, k, best);
    const bool with_nan = trial % 7 == 6;
    const auto expected = with_nan ? plain_top_k(rows, adds, k) : sorted_top_k(rows, adds, k);
    ASSERT_EQ(best.size(), expected.size()) << "trial " << trial;
    for (std::size_t i = 0; i < best.size(); ++i) {
      EXPECT_EQ(best[i].index, expected[i].index) << "trial " << trial << " place " << i;
      if (!std::isnan(expected[i].score)) {
        EXPECT_EQ(best[i].score, expected[i].score) << "trial " << trial << " place " << i;
      }
    }
  }
}

TEST(RowSelect, TopKAddsInFloatAsTheSearchScoresCandidates) {
  // 1e8 + 1 and 1e8 + 2 round to the same float: equal totals, so the lower index comes first.
  const std::vector<float> row{1.0F, 2.0F, 0.0F};
  std::vector<ScoredIndex> best;
  select_top_k(row.data(), 3, 1e8F, 0, 2, best);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].index, 0);
  EXPECT_EQ(best[1].index, 1);
  EXPECT_EQ(best[0].score, 1e8F);
  best.clear();
  select_top_k(row.data(), 3, 0.0F, 0, 0, best);
  EXPECT_TRUE(best.empty());
}

}  // namespace
}  // namespace ts
