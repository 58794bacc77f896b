// SPDX-License-Identifier: GPL-3.0-or-later
// The best tokens of rows of scores (see ts/infer/row_select.h).
#include "ts/infer/row_select.h"

#include <algorithm>
#include <cmath>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define TS_SELECT_X86 1
#include <immintrin.h>
#else
#define TS_SELECT_X86 0
#endif

namespace ts {
namespace {

bool has_avx512() {
#if TS_SELECT_X86
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return yes;
#else
  return false;
#endif
}

std::int64_t first_argmax_scalar(const float* x, std::int64_t n) {
  std::int64_t best = 0;
  for (std::int64_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

// Puts `c` into `best` (sorted best first, at most k long) if it is better than the last.
void offer(std::vector<ScoredIndex>& best, std::int64_t k, ScoredIndex c) {
  const auto better = [](const ScoredIndex& a, const ScoredIndex& b) {
    return a.score > b.score || (a.score == b.score && a.index < b.index);
  };
  if (static_cast<std::int64_t>(best.size()) == k && !better(c, best.back())) return;
  best.insert(std::upper_bound(best.begin(), best.end(), c, better), c);
  if (static_cast<std::int64_t>(best.size()) > k) best.pop_back();
}

#if TS_SELECT_X86
__attribute__((target("avx512f"))) std::int64_t first_argmax_avx512(const float* x, std::int64_t n) {
  // The maximum 16 lanes at a time; a NaN anywhere leaves it to the plain loop (whose comparisons a
  // NaN never wins, which _mm512_max_ps does not reproduce).
  __m512 vmax = _mm512_set1_ps(-INFINITY);
  __mmask16 nan = 0;
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    vmax = _mm512_max_ps(vmax, v);
  }
  if (nan) return first_argmax_scalar(x, n);
  alignas(64) float lanes[16];  // reduced through memory: GCC 12's _mm512_reduce_* warn in its headers
  _mm512_store_ps(lanes, vmax);
  float max = lanes[0];
  for (int l = 1; l < 16; ++l) max = std::max(max, lanes[l]);
  for (; i < n; ++i) {
    if (std::isnan(x[i])) return first_argmax_scalar(x, n);
    max = std::max(max, x[i]);
  }
  if (!(max > x[0])) return 0;  // x[0] is a maximum (-inf everywhere included)
  const __m512 m = _mm512_set1_ps(max);
  for (i = 0; i + 16 <= n; i += 16) {
    const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), m, _CMP_EQ_OQ);
    if (hit) return i + __builtin_ctz(static_cast<unsigned>(hit));
  }
  for (; i < n; ++i)
    if (x[i] == max) return i;
  return 0;
}

__attribute__((target("avx512f"))) void select_top_k_avx512(const float* scores, std::int64_t n, float add,
                                                            std::int64_t first_index, std::int64_t k,
                                                            std::vector<ScoredIndex>& best) {
  std::int64_t i = 0;
  // Until `best` holds k, every score goes in.
  for (; i < n && static_cast<std::int64_t>(best.size()) < k; ++i) offer(best, k, {scores[i] + add, first_index + i});
  // Then only a score above the last one kept can enter (an equal one comes later, with a higher
  // index): 16 at a time, those above the bar one by one, in order.
  const __m512 a = _mm512_set1_ps(add);
  for (; i + 16 <= n; i += 16) {
    __mmask16 above = _mm512_cmp_ps_mask(_mm512_add_ps(_mm512_loadu_ps(scores + i), a),
                                         _mm512_set1_ps(best.back().score), _CMP_GT_OQ);
    while (above) {
      const int lane = __builtin_ctz(static_cast<unsigned>(above));
      above &= static_cast<__mmask16>(above - 1);
      const float s = scores[i + lane] + add;
      if (s > best.back().score) offer(best, k, {s, first_index + i + lane});  // the bar may have risen
    }
  }
  for (; i < n; ++i) offer(best, k, {scores[i] + add, first_index + i});
}
#endif

}  // namespace

std::int64_t first_argmax(const float* x, std::int64_t n) {
#if TS_SELECT_X86
  if (has_avx512()) return first_argmax_avx512(x, n);
#endif
  return first_argmax_scalar(x, n);
}

void select_top_k(const float* scores, std::int64_t n, float add, std::int64_t first_index, std::int64_t k,
                  std::vector<ScoredIndex>& best) {
  if (k <= 0) return;
#if TS_SELECT_X86
  if (has_avx512()) {
    select_top_k_avx512(scores, n, add, first_index, k, best);
    return;
  }
#endif
  for (std::int64_t i = 0; i < n; ++i) offer(best, k, {scores[i] + add, first_index + i});
}

}  // namespace ts
