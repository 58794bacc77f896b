// SPDX-License-Identifier: GPL-3.0-or-later
// Choosing tokens from rows of scores, as greedy decoding and beam search do at every step: the best
// of a row, and the k best of several rows with a constant added to each. Over a vocabulary of
// thousands this ran as long as the decoder layers; here most of a row is passed over 16 scores at a
// time where the CPU has AVX-512, with exactly the choices of the plain loops (tests compare them).
// No LibTorch here.
#pragma once

#include <cstdint>
#include <vector>

namespace ts {

/// Index of the largest of x[0..n), the first of equal maxima; 0 when nothing is larger than x[0]
/// (every score NaN or -inf). n >= 1.
std::int64_t first_argmax(const float* x, std::int64_t n);

/// A candidate of select_top_k: its total score and its index among all the rows offered.
struct ScoredIndex {
  float score;
  std::int64_t index;
};

/// Offers scores[i] + add (rounded to float) with indices first_index + i, i < n, to `best`: the k best
/// candidates offered so far, best first, among equal scores the lower index first. Offering rows in
/// increasing index order leaves in `best` the k best of all of them, as sorting them all would.
void select_top_k(const float* scores, std::int64_t n, float add, std::int64_t first_index, std::int64_t k,
                  std::vector<ScoredIndex>& best);

}  // namespace ts
