// SPDX-License-Identifier: GPL-3.0-or-later
// exp(x) for 16 floats on AVX-512, shared by the packed decoder's log-softmax (infer/packed_model) and
// training's attention softmax (model/attention). Header-only: each caller compiles it in a function
// of its own with target("avx512f") and calls it only where the CPU has AVX-512F.
#pragma once

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

namespace ts::simd {

/// exp(x) for 16 floats: range reduction by ln 2 (in two parts, Cody and Waite) and Cephes' degree-6
/// polynomial (relative error about 2e-7), times 2^n by vscalefps. Arguments are clamped to
/// [-88, 88]: below -88 (-inf included) it gives a tiny number (about 6e-39), not 0, harmless in a
/// sum whose largest term is 1; a caller that needs 0 there masks it.
__attribute__((target("avx512f"))) inline __m512 exp16(__m512 x) {
  x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.0F)), _mm512_set1_ps(-88.0F));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341F)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375F), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4F), r);
  __m512 p = _mm512_set1_ps(1.9875691500E-4F);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507E-3F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073E-3F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894E-2F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459E-1F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201E-1F));
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0F));
  return _mm512_scalef_ps(y, n);
}

}  // namespace ts::simd

#endif
