// SPDX-License-Identifier: GPL-3.0-or-later
// A 16 × 16 transpose of 32-bit elements in AVX-512 registers, for the training products' packing
// (bf16_products.cpp, fp16_products.cpp). Include after <immintrin.h>, on x86-64 with GCC or Clang only.
#pragma once

#include <immintrin.h>

namespace ts::detail {

// Sixteen rows of 16 elements in, their transpose out: v[j] holds what was element j of every row.
__attribute__((target("avx512f"))) inline void transpose16(__m512 v[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    v[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    v[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    v[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    v[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(v[i], v[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(v[i], v[i + 4], 0xdd);
    t[i + 8] = _mm512_shuffle_f32x4(v[i + 8], v[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(v[i + 8], v[i + 12], 0xdd);
  }
  for (int i = 0; i < 8; ++i) {
    v[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    v[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
}

}  // namespace ts::detail
