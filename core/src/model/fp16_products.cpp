// SPDX-License-Identifier: GPL-3.0-or-later
// fp16 matrix products for training (see ts/model/fp16_products.h).
//
// C = A · B in three steps. Both operands are packed in one pass, 64 k (a chunk) at a time: every chunk
// of a row of A and of a column of B gets the power-of-two scale of its largest magnitude. A goes into
// blocks of 8 rows, each k one 32-byte line of the 8 rows' fp16 values, each twice in a 32-bit word that
// the kernel broadcasts from memory; B into blocks of 32 columns, each k one 64-byte line (a register).
// The kernel keeps 8 rows × 64 columns of fp16 sums in 16 registers and, at the end of every chunk,
// adds them into fp32 times the chunk's inverse scales. Both packings read the operands in whatever
// layout the linear layer's three products hand over (x, Wᵀ; dY, W; dYᵀ, x).
#include "ts/model/fp16_products.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "products_linear.h"
#include "ts/model/packed_weights.h"

// GCC 12 and Clang 14 are the first with AVX-512 FP16's intrinsics and _Float16 on x86-64.
#if (defined(__x86_64__) || defined(_M_X64)) && \
    ((defined(__clang__) && __clang_major__ >= 14) || (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 12))
#define TS_FP16_X86 1
#include <immintrin.h>

#include "avx512_transpose.h"
#else
#define TS_FP16_X86 0
#endif

namespace ts {

bool fp16_products_available() {
#if TS_FP16_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512fp16");
#else
  return false;
#endif
}

namespace {

#if TS_FP16_X86
constexpr std::int64_t kRows = 8;      // rows of A per block
constexpr std::int64_t kColumns = 32;  // columns of B per block (one register of fp16)
constexpr std::int64_t kChunk = 64;    // products summed in fp16 before their sum goes into fp32
constexpr int kTopExponent = 4;        // scaled magnitudes lie in [2^3, 2^4): 64 products of two sum to < 2^14

// A matrix view: element (i, k) at data[i * si + k * sk].
struct View {
  const float* data;
  std::int64_t rows, cols, si, sk;
  float at(std::int64_t i, std::int64_t k) const { return data[i * si + k * sk]; }
};

template <typename T>
T* scratch(std::vector<T>& buffer, std::int64_t count) {
  if (static_cast<std::int64_t>(buffer.size()) < count) buffer.resize(static_cast<std::size_t>(count));
  return buffer.data();
}

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c,avx512fp16"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,f16c,avx512fp16")
#endif

inline __mmask16 first16(std::int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1u);
}

inline __m256i to_half(__m512 x) { return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

inline std::uint16_t to_half(float x) {
  return static_cast<std::uint16_t>(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

inline __m512i join(__m256i low, __m256i high) { return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1); }

// For each lane, the power of two that brings its largest magnitude into [8, 16), and its inverse; 1
// for 0 or a value that is not finite (which then goes through the product as it would in fp32).
inline void scales_for(__m512 largest, __m512& scale, __m512& inverse) {
  const __mmask16 finite = _mm512_cmp_ps_mask(largest, _mm512_setzero_ps(), _CMP_GT_OQ) &
                           _mm512_cmp_ps_mask(largest, _mm512_set1_ps(FLT_MAX), _CMP_LE_OQ);
  // getexp: floor(log2(x)), subnormals included
  const __m512 up = _mm512_min_ps(
      _mm512_max_ps(_mm512_sub_ps(_mm512_set1_ps(kTopExponent - 1), _mm512_getexp_ps(largest)), _mm512_set1_ps(-126)),
      _mm512_set1_ps(126));
  const __m512 one = _mm512_set1_ps(1.0f);
  scale = _mm512_mask_scalef_ps(one, finite, one, up);
  inverse = _mm512_mask_scalef_ps(one, finite, one, _mm512_sub_ps(_mm512_setzero_ps(), up));
}

inline float largest_of(const float* run, std::int64_t count) {
  __m512 m = _mm512_setzero_ps();
  for (std::int64_t k = 0; k < count; k += 16)
    m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_maskz_loadu_ps(first16(count - k), run + k)));
  return _mm512_reduce_max_ps(m);
}

// The permutations that interleave 8 rows × 16 k of fp16 (z[j]: rows 2j and 2j + 1, 16 each) into 16
// lines of 8 rows: first 4 rows × 8 k per register, then 8 rows × 4 k.
struct Interleave {
  __m512i low_k, high_k, first_half, second_half;
  Interleave() {
    alignas(64) std::uint16_t lo[32], hi[32], a[32], b[32];
    for (int kk = 0; kk < 8; ++kk)
      for (int r = 0; r < 4; ++r) {
        const int source = (r < 2 ? 0 : 32) + (r % 2) * 16 + kk;
        lo[kk * 4 + r] = static_cast<std::uint16_t>(source);
        hi[kk * 4 + r] = static_cast<std::uint16_t>(source + 8);
      }
    for (int kq = 0; kq < 4; ++kq)
      for (int r = 0; r < 8; ++r) {
        const int within = r < 4 ? r : 32 + r - 4;
        a[kq * 8 + r] = static_cast<std::uint16_t>(kq * 4 + within);
        b[kq * 8 + r] = static_cast<std::uint16_t>((4 + kq) * 4 + within);
      }
    low_k = _mm512_load_si512(lo);
    high_k = _mm512_load_si512(hi);
    first_half = _mm512_load_si512(a);
    second_half = _mm512_load_si512(b);
  }
};

// 16 fp16 values, each twice in a 32-bit word.
inline __m512i doubled(__m256i halves) {
  const __m512i words = _mm512_cvtepu16_epi32(halves);
  return _mm512_or_si512(words, _mm512_slli_epi32(words, 16));
}

// A [rows, K] is packed in blocks of kRows rows, each k a line of kRows words, each an fp16 value
// twice, every 64 k of a row scaled by its own power of two, whose inverses go beside, [chunks][kRows];
// the rows past the end are 0.
// Row block rb of A: out [K][kRows] words, inverse [chunks][kRows].
void pack_a_block(const View& a, std::int64_t rb, std::uint32_t* out, float* inverse) {
  const std::int64_t k_count = a.cols, chunks = (k_count + kChunk - 1) / kChunk;
  const std::int64_t rows = std::min(kRows, a.rows - rb * kRows);
  const auto row_mask = static_cast<__mmask16>(first16(rows) & 0xFF);
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    const std::int64_t k0 = chunk * kChunk, k1 = std::min(k_count, k0 + kChunk);
    std::uint32_t* lines = out + k0 * kRows;
    // The chunk's largest magnitude in each row.
    __m512 largest = _mm512_setzero_ps();
    if (a.si == 1) {  // each k holds a run of rows (A = Sᵀ)
      for (std::int64_t k = k0; k < k1; ++k)
        largest =
            _mm512_max_ps(largest, _mm512_abs_ps(_mm512_maskz_loadu_ps(row_mask, a.data + k * a.sk + rb * kRows)));
    } else {
      alignas(64) float each[16] = {};
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t i = rb * kRows + r;
        if (a.sk == 1) {
          each[r] = largest_of(a.data + i * a.si + k0, k1 - k0);
        } else {
          for (std::int64_t k = k0; k < k1; ++k) each[r] = std::max(each[r], std::fabs(a.at(i, k)));
        }
      }
      largest = _mm512_load_ps(each);
    }
    __m512 scale, inv;
    scales_for(largest, scale, inv);
    _mm256_storeu_ps(inverse + chunk * kRows, _mm512_castps512_ps256(inv));
    alignas(64) float scales[16];
    _mm512_store_ps(scales, scale);
    if (a.si == 1) {  // one line per k
      const __m256 s = _mm512_castps512_ps256(scale);
      for (std::int64_t k = k0; k < k1; ++k) {
        const __m256 x = _mm256_maskz_loadu_ps(static_cast<__mmask8>(row_mask), a.data + k * a.sk + rb * kRows);
        const __m128i h = _mm256_cvtps_ph(_mm256_mul_ps(x, s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256i words = _mm256_cvtepu16_epi32(h);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k * kRows),
                            _mm256_or_si256(words, _mm256_slli_epi32(words, 16)));
      }
    } else if (a.sk == 1) {  // rows contiguous: 8 rows × 16 k converted, then interleaved by k
      static const Interleave p;
      for (std::int64_t g = k0; g < k1; g += 16) {
        const __mmask16 mask = first16(k1 - g);
        __m256i half[kRows];
        for (std::int64_t r = 0; r < kRows; ++r) {
          const std::int64_t i = rb * kRows + r;
          half[r] = r < rows ? to_half(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, a.data + i * a.si + g),
                                                     _mm512_set1_ps(scales[r])))
                             : _mm256_setzero_si256();
        }
        const __m512i z0 = join(half[0], half[1]), z1 = join(half[2], half[3]);
        const __m512i z2 = join(half[4], half[5]), z3 = join(half[6], half[7]);
        const __m512i top_low = _mm512_permutex2var_epi16(z0, p.low_k, z1);  // rows 0-3, k 0-7
        const __m512i top_high = _mm512_permutex2var_epi16(z0, p.high_k, z1);
        const __m512i bottom_low = _mm512_permutex2var_epi16(z2, p.low_k, z3);  // rows 4-7
        const __m512i bottom_high = _mm512_permutex2var_epi16(z2, p.high_k, z3);
        const __m512i four[4] = {_mm512_permutex2var_epi16(top_low, p.first_half, bottom_low),
                                 _mm512_permutex2var_epi16(top_low, p.second_half, bottom_low),
                                 _mm512_permutex2var_epi16(top_high, p.first_half, bottom_high),
                                 _mm512_permutex2var_epi16(top_high, p.second_half, bottom_high)};
        for (std::int64_t q = 0; q < 8; ++q) {  // two k (16 words) at a time
          const std::int64_t valid = std::clamp<std::int64_t>(k1 - g - 2 * q, 0, 2);
          if (valid == 0) break;
          const __m512i line = four[q / 2];
          const __m256i halves = q % 2 == 0 ? _mm512_castsi512_si256(line) : _mm512_extracti64x4_epi64(line, 1);
          _mm512_mask_storeu_epi32(lines + (g - k0 + 2 * q) * kRows, first16(valid * kRows), doubled(halves));
        }
      }
    } else {
      for (std::int64_t k = k0; k < k1; ++k)
        for (std::int64_t r = 0; r < kRows; ++r) {
          const std::uint32_t h = r < rows ? to_half(a.at(rb * kRows + r, k) * scales[r]) : 0;
          lines[(k - k0) * kRows + r] = h | (h << 16);
        }
    }
  }
}

// All of A: [row blocks][K][kRows] words and [row blocks][chunks][kRows] inverses.
void pack_a(const View& a, std::uint32_t* out, float* inverse) {
  const std::int64_t chunks = (a.cols + kChunk - 1) / kChunk;
  for (std::int64_t rb = 0; rb * kRows < a.rows; ++rb)
    pack_a_block(a, rb, out + rb * kRows * a.cols, inverse + rb * chunks * kRows);
}

// B [K, N] into [column blocks][K][kColumns] fp16, every 64 k of a column scaled by its own power of
// two, whose inverses go to inverse [column blocks][chunks][kColumns]; the columns past the end are 0.
// Only the column blocks [first_block, last_block) where given (last_block -1: to the end), each where
// the whole packing keeps it.
void pack_b(const View& b, std::uint16_t* out, float* inverse, std::int64_t first_block = 0,
            std::int64_t last_block = -1) {
  const std::int64_t k_count = b.rows, blocks = last_block < 0 ? (b.cols + kColumns - 1) / kColumns : last_block;
  const std::int64_t chunks = (k_count + kChunk - 1) / kChunk;
  for (std::int64_t cb = first_block; cb < blocks; ++cb) {
    const std::int64_t n0 = cb * kColumns;
    const __mmask16 low = first16(b.cols - n0), high = first16(b.cols - n0 - 16);
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
      const std::int64_t k0 = chunk * kChunk, k1 = std::min(k_count, k0 + kChunk);
      // The chunk's largest magnitude in each column, 16 columns to a register.
      __m512 largest[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
      if (b.sk == 1) {  // each k's row contiguous (B = S, row-major)
        for (std::int64_t k = k0; k < k1; ++k) {
          const float* row = b.data + k * b.si + n0;
          largest[0] = _mm512_max_ps(largest[0], _mm512_abs_ps(_mm512_maskz_loadu_ps(low, row)));
          largest[1] = _mm512_max_ps(largest[1], _mm512_abs_ps(_mm512_maskz_loadu_ps(high, row + 16)));
        }
      } else {
        alignas(64) float each[kColumns] = {};
        for (std::int64_t j = 0; j < kColumns && n0 + j < b.cols; ++j) {
          if (b.si == 1) {  // each column contiguous along k (B = Wᵀ)
            each[j] = largest_of(b.data + (n0 + j) * b.sk + k0, k1 - k0);
          } else {
            for (std::int64_t k = k0; k < k1; ++k) each[j] = std::max(each[j], std::fabs(b.at(k, n0 + j)));
          }
        }
        largest[0] = _mm512_load_ps(each);
        largest[1] = _mm512_load_ps(each + 16);
      }
      __m512 scale[2], inv[2];
      for (int h = 0; h < 2; ++h) {
        scales_for(largest[h], scale[h], inv[h]);
        _mm512_storeu_ps(inverse + (cb * chunks + chunk) * kColumns + 16 * h, inv[h]);
      }
      std::uint16_t* lines = out + (cb * k_count + k0) * kColumns;
      if (b.sk == 1) {
        for (std::int64_t k = k0; k < k1; ++k) {
          const float* row = b.data + k * b.si + n0;
          const __m256i h0 = to_half(_mm512_mul_ps(_mm512_maskz_loadu_ps(low, row), scale[0]));
          const __m256i h1 = to_half(_mm512_mul_ps(_mm512_maskz_loadu_ps(high, row + 16), scale[1]));
          _mm512_storeu_si512(lines + (k - k0) * kColumns, join(h0, h1));
        }
      } else if (b.si == 1) {  // 16 columns × 16 k, transposed
        for (std::int64_t g = k0; g < k1; g += 16) {
          const __mmask16 mask = first16(k1 - g);
          __m256i half[2][16];
          for (std::int64_t h = 0; h < 2; ++h) {
            __m512 v[16];
            for (std::int64_t j = 0; j < 16; ++j) {
              const std::int64_t n = n0 + h * 16 + j;
              v[j] = n < b.cols ? _mm512_maskz_loadu_ps(mask, b.data + n * b.sk + g) : _mm512_setzero_ps();
            }
            detail::transpose16(v);
            for (std::int64_t q = 0; q < 16; ++q) half[h][q] = to_half(_mm512_mul_ps(v[q], scale[h]));
          }
          for (std::int64_t q = 0; q < 16 && g + q < k1; ++q)
            _mm512_storeu_si512(lines + (g - k0 + q) * kColumns, join(half[0][q], half[1][q]));
        }
      } else {
        alignas(64) float scales[kColumns];
        _mm512_store_ps(scales, scale[0]);
        _mm512_store_ps(scales + 16, scale[1]);
        for (std::int64_t k = k0; k < k1; ++k)
          for (std::int64_t j = 0; j < kColumns; ++j)
            lines[(k - k0) * kColumns + j] = n0 + j < b.cols ? to_half(b.at(k, n0 + j) * scales[j]) : 0;
      }
    }
  }
}

// Where C's block goes.
struct Output {
  float* c;                // row 0, column n0 of the block
  std::int64_t ldc, rows;  // C's row stride; the block's rows that exist
  std::int64_t columns;    // C's columns from n0 on that exist
  const float* bias;       // from n0, or null
};

// kRows rows × O column blocks: a_block [K][kRows] words and a_inverse [chunks][kRows], b_block
// [O blocks of b_stride][K][kColumns] and b_inverse [O blocks of inverse_stride][chunks][kColumns].
template <int O>
void kernel(const std::uint32_t* a_block, const float* a_inverse, const std::uint16_t* b_block, std::int64_t b_stride,
            const float* b_inverse, std::int64_t inverse_stride, std::int64_t k_count, const Output& o) {
  alignas(64) float sums[kRows][O * kColumns];
  for (std::int64_t k0 = 0, chunk = 0; k0 < k_count; k0 += kChunk, ++chunk) {
    __m512h acc[kRows][O];
    for (int r = 0; r < kRows; ++r)
      for (int j = 0; j < O; ++j) acc[r][j] = _mm512_setzero_ph();
    const std::int64_t k1 = std::min(k_count, k0 + kChunk);
    for (std::int64_t k = k0; k < k1; ++k) {
      __m512h w[O];
      for (int j = 0; j < O; ++j) w[j] = _mm512_castsi512_ph(_mm512_loadu_si512(b_block + j * b_stride + k * kColumns));
      // Each row's value twice in a 32-bit word: a 32-bit broadcast from memory is a load alone, where
      // a 16-bit one would also take the shuffle port the multiply-adds need.
      const std::uint32_t* x = a_block + k * kRows;
      for (int r = 0; r < kRows; ++r) {
        const __m512h xv = _mm512_castsi512_ph(_mm512_set1_epi32(static_cast<int>(x[r])));
        for (int j = 0; j < O; ++j) acc[r][j] = _mm512_fmadd_ph(xv, w[j], acc[r][j]);
      }
    }
    // Into fp32, each sum times its row's and its column's inverse scale for this chunk.
    __m512 columns[O][2];
    for (int j = 0; j < O; ++j)
      for (int h = 0; h < 2; ++h)
        columns[j][h] = _mm512_loadu_ps(b_inverse + j * inverse_stride + chunk * kColumns + 16 * h);
    for (int r = 0; r < kRows; ++r) {
      const __m512 row = _mm512_set1_ps(a_inverse[chunk * kRows + r]);
      for (int j = 0; j < O; ++j) {
        const __m512i v = _mm512_castph_si512(acc[r][j]);
        const __m512 low = _mm512_cvtxph_ps(_mm256_castsi256_ph(_mm512_castsi512_si256(v)));
        const __m512 high = _mm512_cvtxph_ps(_mm256_castsi256_ph(_mm512_extracti64x4_epi64(v, 1)));
        const __m512 scale_low = _mm512_mul_ps(row, columns[j][0]), scale_high = _mm512_mul_ps(row, columns[j][1]);
        float* s = sums[r] + j * kColumns;
        if (k0 == 0) {
          _mm512_store_ps(s, _mm512_mul_ps(low, scale_low));
          _mm512_store_ps(s + 16, _mm512_mul_ps(high, scale_high));
        } else {
          _mm512_store_ps(s, _mm512_fmadd_ps(low, scale_low, _mm512_load_ps(s)));
          _mm512_store_ps(s + 16, _mm512_fmadd_ps(high, scale_high, _mm512_load_ps(s + 16)));
        }
      }
    }
  }
  for (std::int64_t q = 0; q < 2 * O && 16 * q < o.columns; ++q) {
    const __mmask16 mask = first16(o.columns - 16 * q);
    const __m512 bias = o.bias ? _mm512_maskz_loadu_ps(mask, o.bias + 16 * q) : _mm512_setzero_ps();
    for (std::int64_t r = 0; r < o.rows; ++r)
      _mm512_mask_storeu_ps(o.c + r * o.ldc + 16 * q, mask, _mm512_add_ps(_mm512_load_ps(sums[r] + 16 * q), bias));
  }
}

// B packed as pack_b does: its fp16 values, then the inverses of their scales.
struct PackedB {
  const std::uint16_t* values;
  const float* inverses;
};

// The 32-bit words a packed B [K, N] takes: its fp16 values (two a word), then its inverse scales.
std::int64_t value_words(std::int64_t k_count, std::int64_t n) {
  return ((n + kColumns - 1) / kColumns * kColumns * k_count + 1) / 2;
}
std::int64_t packed_b_words(std::int64_t k_count, std::int64_t n) {
  return value_words(k_count, n) + (n + kColumns - 1) / kColumns * ((k_count + kChunk - 1) / kChunk) * kColumns;
}
PackedB packed_b_in(const std::uint32_t* words, std::int64_t k_count, std::int64_t n) {
  return {reinterpret_cast<const std::uint16_t*>(words),
          reinterpret_cast<const float*>(words + value_words(k_count, n))};
}
// pack_b of B [K, N] (its columns blocks [first_block, last_block)) into `words` as packed_b_in reads them.
void pack_b_into(const View& b, std::uint32_t* words, std::int64_t first_block = 0, std::int64_t last_block = -1) {
  pack_b(b, reinterpret_cast<std::uint16_t*>(words), reinterpret_cast<float*>(words + value_words(b.rows, b.cols)),
         first_block, last_block);
}

// `packed`: B packed already (a weight packed once a step), or nullptr to pack it here.
void multiply(const View& a, const View& b, const float* bias, float* c, const std::uint32_t* packed) {
  const std::int64_t m = a.rows, k_count = a.cols, n = b.cols;
  const std::int64_t row_blocks = (m + kRows - 1) / kRows, column_blocks = (n + kColumns - 1) / kColumns;
  const std::int64_t chunks = (k_count + kChunk - 1) / kChunk;
  const std::int64_t pairs = (column_blocks + 1) / 2, b_stride = k_count * kColumns, inverse_stride = chunks * kColumns;
  if (!packed) {
    thread_local std::vector<std::uint32_t> b_buffer;
    std::uint32_t* words = scratch(b_buffer, packed_b_words(k_count, n));
    pack_b_into(b, words);
    packed = words;
  }
  const PackedB packed_b = packed_b_in(packed, k_count, n);
  const std::uint16_t* bp = packed_b.values;
  const float* b_inverse = packed_b.inverses;
  // One row block against the column pairs [begin, end).
  const auto block = [&](const std::uint32_t* a_block, const float* a_inv, std::int64_t rb, std::int64_t begin,
                         std::int64_t end) {
    for (std::int64_t pair = begin; pair < end; ++pair) {
      const std::int64_t cb = 2 * pair, n0 = cb * kColumns;
      const Output out{c + rb * kRows * n + n0, n, std::min(kRows, m - rb * kRows), n - n0, bias ? bias + n0 : nullptr};
      if (cb + 1 < column_blocks)
        kernel<2>(a_block, a_inv, bp + cb * b_stride, b_stride, b_inverse + cb * inverse_stride, inverse_stride,
                  k_count, out);
      else
        kernel<1>(a_block, a_inv, bp + cb * b_stride, b_stride, b_inverse + cb * inverse_stride, inverse_stride,
                  k_count, out);
    }
  };
  // About 100,000 multiply-adds before a thread is worth waking. Where the caller is not one share's
  // thread, the row blocks (or the column pairs) go to LibTorch's threads.
  const std::int64_t work = std::max<std::int64_t>(1, k_count * kRows * n);  // per row block
  if (m >= n) {
    // More rows than columns (a gradient's dW = dYᵀ X, with a row per output feature): B is packed whole
    // and stays in cache; A is packed a row block at a time just before its products, so each of its
    // elements is read from memory once.
    at::parallel_for(0, row_blocks, std::max<std::int64_t>(1, 100000 / work),
                     [&](std::int64_t begin, std::int64_t end) {
                       thread_local std::vector<std::uint32_t> a_buffer;
                       thread_local std::vector<float> a_inverse_buffer;
                       std::uint32_t* ap = scratch(a_buffer, kRows * k_count);
                       float* a_inv = scratch(a_inverse_buffer, chunks * kRows);
                       for (std::int64_t rb = begin; rb < end; ++rb) {
                         pack_a_block(a, rb, ap, a_inv);
                         block(ap, a_inv, rb, 0, pairs);
                       }
                     });
    return;
  }
  // More columns (the output layer's logits): A is packed whole; two column blocks at a time go over
  // every row block, their packed B in the core's cache while the rows stream past.
  thread_local std::vector<std::uint32_t> a_buffer;
  thread_local std::vector<float> a_inverse_buffer;
  std::uint32_t* ap = scratch(a_buffer, row_blocks * kRows * k_count);
  float* a_inverse = scratch(a_inverse_buffer, row_blocks * chunks * kRows);
  pack_a(a, ap, a_inverse);
  const std::int64_t pair_work = std::max<std::int64_t>(1, m * k_count * 2 * kColumns);
  at::parallel_for(0, pairs, std::max<std::int64_t>(1, 100000 / pair_work), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t pair = begin; pair < end; ++pair)
      for (std::int64_t rb = 0; rb < row_blocks; ++rb)
        block(ap + rb * kRows * k_count, a_inverse + rb * chunks * kRows, rb, pair, pair + 1);
  });
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

View view_of(const at::Tensor& t) { return View{t.data_ptr<float>(), t.size(0), t.size(1), t.stride(0), t.stride(1)}; }
#endif  // TS_FP16_X86

thread_local bool products_enabled = false;

}  // namespace

namespace {

// fp16_matmul; `weight`: b is (a view of) a layer's weight, packed through this thread's PackedWeights
// where it has one.
at::Tensor product(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias, bool weight) {
  bool done = false;
  auto c =
      detail::start_product("fp16_matmul", a, b, bias, fp16_products_available(), "AVX-512 FP16 multiply-adds", done);
  if (done) return c;
#if TS_FP16_X86
  const auto contiguous_bias = bias.defined() ? bias.contiguous() : bias;
  const View bv = view_of(b);
  const std::uint32_t* packed = nullptr;
  if (PackedWeights* weights = weight ? current_packed_weights() : nullptr) {
    const std::int64_t blocks = (bv.cols + kColumns - 1) / kColumns;
    constexpr std::int64_t kBlocksAChunk = 4;  // 128 columns
    constexpr std::int64_t kFp16Layout = -1;   // bf16's layouts are their pair counts
    packed = weights->get({b.data_ptr(), bv.rows, bv.cols, bv.si, bv.sk, kFp16Layout},
                          static_cast<std::uint32_t>(b._version()), packed_b_words(bv.rows, bv.cols),
                          (blocks + kBlocksAChunk - 1) / kBlocksAChunk, [&](std::int64_t chunk, std::uint32_t* out) {
                            pack_b_into(bv, out, chunk * kBlocksAChunk, std::min(blocks, (chunk + 1) * kBlocksAChunk));
                          });
  }
  multiply(view_of(a), bv, contiguous_bias.defined() ? contiguous_bias.data_ptr<float>() : nullptr, c.data_ptr<float>(),
           packed);
#else
  (void)weight;
#endif
  return c;
}

}  // namespace

at::Tensor fp16_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  return product(a, b, bias, /*weight=*/false);
}

at::Tensor fp16_weight_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  return product(a, b, bias, /*weight=*/true);
}

at::Tensor fp16_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return detail::products_linear<fp16_matmul, fp16_weight_matmul>(x, weight, bias);
}

Fp16ProductsScope::Fp16ProductsScope(bool enable) : previous_(products_enabled) { products_enabled = enable; }
Fp16ProductsScope::~Fp16ProductsScope() { products_enabled = previous_; }
bool fp16_products_enabled() { return products_enabled; }

}  // namespace ts
