// SPDX-License-Identifier: GPL-3.0-or-later
// bf16 matrix products for training (see ts/model/bf16_products.h).
//
// C = A · B in three steps: A is packed row by row, each column pair (k, k+1) of a row one 32-bit word
// of two bf16 (k in the low half); B as blocks of 16 columns, each row pair one word per column; a
// kernel keeps 8 rows × 48 columns of sums in 24 registers and, for each pair of k, broadcasts a row's
// word and multiplies it into three blocks with vdpbf16ps (16 columns × 2 products added to fp32
// sums). Both packings read the operands in whatever layout the linear layer's three products hand
// over (x, Wᵀ; dY, W; dYᵀ, x), turning 16 × 16 tiles in registers where the layout is transposed.
#include "ts/model/bf16_products.h"

#include "ts/host/cpu.h"
#include "ts/infer/bf16.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>

#include "products_linear.h"

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define TS_BF16_X86 1
#include <immintrin.h>

#include "avx512_transpose.h"
#else
#define TS_BF16_X86 0
#endif

namespace ts {

bool bf16_dot_products_available() {
#if TS_BF16_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

namespace {
std::atomic<int> g_preference_override{-1};  // -1: the CPU decides; 0 or 1: a test's scope
}  // namespace

bool bf16_products_preferred() {
  const int given = g_preference_override.load(std::memory_order_relaxed);
  if (given >= 0) return given == 1;
  return bf16_dot_products_available() && !cpu_info().has("amx_bf16");
}

Bf16ProductsPreferenceScope::Bf16ProductsPreferenceScope(bool preferred)
    : previous_(g_preference_override.exchange(preferred ? 1 : 0)) {}

Bf16ProductsPreferenceScope::~Bf16ProductsPreferenceScope() { g_preference_override.store(previous_); }

namespace {

constexpr std::int64_t kRows = 8;      // rows of A per block
constexpr std::int64_t kColumns = 16;  // columns of B per block (one register)

inline std::uint32_t pair_word(float low, float high) {
  return static_cast<std::uint32_t>(float_to_bf16(low)) | (static_cast<std::uint32_t>(float_to_bf16(high)) << 16);
}

// A matrix view: element (i, k) at data[i * si + k * sk].
struct View {
  const float* data;
  std::int64_t rows, cols, si, sk;
  float at(std::int64_t i, std::int64_t k) const { return data[i * si + k * sk]; }
};

// The words of buffers reused from call to call on each thread (a step makes hundreds of products).
std::uint32_t* scratch(std::vector<std::uint32_t>& buffer, std::int64_t words) {
  if (static_cast<std::int64_t>(buffer.size()) < words) buffer.resize(static_cast<std::size_t>(words));
  return buffer.data();
}

#if TS_BF16_X86
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16")
#endif

// 16 words: low halves from `low`, high halves from `high`, each rounded to bf16.
inline __m512i pair_words(__m512 low, __m512 high) {
  const __m512i lo = _mm512_cvtepu16_epi32(reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(low)));
  const __m512i hi = _mm512_cvtepu16_epi32(reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(high)));
  return _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16));
}

// Sixteen rows of 16 words in, their transpose out: v[j] holds what was word j of every row.
inline void transpose16(__m512i v[16]) {
  __m512 r[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_castsi512_ps(v[i]);
  detail::transpose16(r);
  for (int i = 0; i < 16; ++i) v[i] = _mm512_castps_si512(r[i]);
}

inline __mmask16 first(std::int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1u);
}

// 16 words of pairs p0..p0+15 from 32 contiguous floats src[2 * p0 ...], `count` of them valid (0 after).
inline __m512i row_words(const float* src, std::int64_t count) {
  const __m512 lo = _mm512_maskz_loadu_ps(first(count), src);
  const __m512 hi = _mm512_maskz_loadu_ps(first(count - 16), src + 16);
  return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
}

// A [rows, cols] into rows of pair words [row blocks × kRows][pairs]; the rows past the end are 0.
void pack_a(const View& a, std::int64_t pairs, std::uint32_t* out) {
  const std::int64_t padded = (a.rows + kRows - 1) / kRows * kRows;
  std::fill(out + a.rows * pairs, out + padded * pairs, 0u);
  if (a.sk == 1) {  // rows contiguous: round each row into its words
    for (std::int64_t i = 0; i < a.rows; ++i) {
      const float* src = a.data + i * a.si;
      for (std::int64_t p = 0; p < pairs; p += 16)
        _mm512_mask_storeu_epi32(out + i * pairs + p, first(pairs - p), row_words(src + 2 * p, a.cols - 2 * p));
    }
    return;
  }
  if (a.si == 1) {  // columns contiguous (A = Sᵀ): 16 pairs × 16 rows from two columns each, transposed
    __m512i v[16];
    for (std::int64_t p0 = 0; p0 < pairs; p0 += 16)
      for (std::int64_t i0 = 0; i0 < a.rows; i0 += 16) {
        const __mmask16 rows = first(a.rows - i0);
        for (std::int64_t q = 0; q < 16; ++q) {
          const std::int64_t k = 2 * (p0 + q);
          const __m512 low = k < a.cols ? _mm512_maskz_loadu_ps(rows, a.data + k * a.sk + i0) : _mm512_setzero_ps();
          const __m512 high =
              k + 1 < a.cols ? _mm512_maskz_loadu_ps(rows, a.data + (k + 1) * a.sk + i0) : _mm512_setzero_ps();
          v[q] = pair_words(low, high);
        }
        transpose16(v);
        for (std::int64_t j = 0; j < 16 && i0 + j < a.rows; ++j)
          _mm512_mask_storeu_epi32(out + (i0 + j) * pairs + p0, first(pairs - p0), v[j]);
      }
    return;
  }
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = 0; p < pairs; ++p) {
      const std::int64_t k = 2 * p;
      out[i * pairs + p] = pair_word(a.at(i, k), k + 1 < a.cols ? a.at(i, k + 1) : 0.0f);
    }
}

// B [rows = K, cols = N] into [column blocks][pairs][kColumns] words; padding 0.
void pack_b(const View& b, std::int64_t pairs, std::uint32_t* out) {
  const std::int64_t blocks = (b.cols + kColumns - 1) / kColumns;
  if (b.sk == 1) {  // columns along a row contiguous (B = S with S row-major [K, N])
    for (std::int64_t p = 0; p < pairs; ++p) {
      const float* r0 = b.data + 2 * p * b.si;
      const bool odd = 2 * p + 1 >= b.rows;
      const float* r1 = r0 + b.si;
      for (std::int64_t c = 0; c < blocks; ++c) {
        const std::int64_t n0 = c * kColumns;
        const __mmask16 mask = first(b.cols - n0);
        const __m512 low = _mm512_maskz_loadu_ps(mask, r0 + n0);
        const __m512 high = odd ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask, r1 + n0);
        _mm512_storeu_si512(out + (c * pairs + p) * kColumns, pair_words(low, high));
      }
    }
    return;
  }
  if (b.si == 1) {  // K contiguous for each column (B = Wᵀ with W row-major [N, K]): 16 columns × 16 pairs
    __m512i v[16];
    for (std::int64_t c = 0; c < blocks; ++c)
      for (std::int64_t p0 = 0; p0 < pairs; p0 += 16) {
        for (std::int64_t j = 0; j < 16; ++j) {
          const std::int64_t n = c * kColumns + j;
          v[j] = n < b.cols ? row_words(b.data + n * b.sk + 2 * p0, b.rows - 2 * p0) : _mm512_setzero_si512();
        }
        transpose16(v);
        for (std::int64_t q = 0; q < 16 && p0 + q < pairs; ++q)
          _mm512_storeu_si512(out + (c * pairs + p0 + q) * kColumns, v[q]);
      }
    return;
  }
  for (std::int64_t n = 0; n < blocks * kColumns; ++n)
    for (std::int64_t p = 0; p < pairs; ++p) {
      const std::int64_t k = 2 * p;
      out[((n / kColumns) * pairs + p) * kColumns + n % kColumns] =
          n < b.cols ? pair_word(b.at(k, n), k + 1 < b.rows ? b.at(k + 1, n) : 0.0f) : 0u;
    }
}

// kRows rows × O column blocks of C: a_rows [kRows][pairs] words, b_block [O blocks][pairs][kColumns].
template <int O>
void kernel(const std::uint32_t* a_rows, const std::uint32_t* b_block, std::int64_t pairs, float* c, std::int64_t ldc,
            std::int64_t rows, std::int64_t n0, std::int64_t cols, const float* bias) {
  __m512 acc[kRows][O];
  for (int r = 0; r < kRows; ++r)
    for (int o = 0; o < O; ++o) acc[r][o] = _mm512_setzero_ps();
  for (std::int64_t p = 0; p < pairs; ++p) {
    __m512bh w[O];
    for (int o = 0; o < O; ++o)
      w[o] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(b_block + (o * pairs + p) * kColumns));
    for (int r = 0; r < kRows; ++r) {
      const auto xv = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(a_rows[r * pairs + p])));
      for (int o = 0; o < O; ++o) acc[r][o] = _mm512_dpbf16_ps(acc[r][o], w[o], xv);
    }
  }
  for (int o = 0; o < O; ++o) {
    const std::int64_t start = n0 + o * kColumns;
    const __mmask16 mask = first(cols - start);
    const __m512 b = bias ? _mm512_maskz_loadu_ps(mask, bias + start) : _mm512_setzero_ps();
    for (std::int64_t r = 0; r < rows; ++r)
      _mm512_mask_storeu_ps(c + r * ldc + start, mask, _mm512_add_ps(acc[r][o], b));
  }
}

void multiply(const View& a, const View& b, const float* bias, float* c) {
  const std::int64_t m = a.rows, n = b.cols, pairs = (a.cols + 1) / 2;
  const std::int64_t row_blocks = (m + kRows - 1) / kRows, column_blocks = (n + kColumns - 1) / kColumns;
  thread_local std::vector<std::uint32_t> a_buffer, b_buffer;
  std::uint32_t* ap = scratch(a_buffer, row_blocks * kRows * pairs);
  std::uint32_t* bp = scratch(b_buffer, column_blocks * pairs * kColumns);
  pack_a(a, pairs, ap);
  pack_b(b, pairs, bp);
  // Three column blocks at a time over every row block: their packed B (3 × pairs × 64 bytes) stays in
  // the core's cache while the rows stream past.
  for (std::int64_t cb = 0; cb < column_blocks; cb += 3) {
    const std::int64_t count = std::min<std::int64_t>(3, column_blocks - cb);
    const std::uint32_t* b_block = bp + cb * pairs * kColumns;
    for (std::int64_t rb = 0; rb < row_blocks; ++rb) {
      const std::uint32_t* a_rows = ap + rb * kRows * pairs;
      float* c_block = c + rb * kRows * n;
      const std::int64_t rows = std::min(kRows, m - rb * kRows);
      if (count == 3)
        kernel<3>(a_rows, b_block, pairs, c_block, n, rows, cb * kColumns, n, bias);
      else if (count == 2)
        kernel<2>(a_rows, b_block, pairs, c_block, n, rows, cb * kColumns, n, bias);
      else
        kernel<1>(a_rows, b_block, pairs, c_block, n, rows, cb * kColumns, n, bias);
    }
  }
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // TS_BF16_X86

View view_of(const at::Tensor& t) { return View{t.data_ptr<float>(), t.size(0), t.size(1), t.stride(0), t.stride(1)}; }

}  // namespace

at::Tensor bf16_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  bool done = false;
  auto c = detail::start_product("bf16_matmul", a, b, bias, bf16_dot_products_available(), "AVX-512 BF16 dot products",
                                 done);
  if (done) return c;
#if TS_BF16_X86
  const auto contiguous_bias = bias.defined() ? bias.contiguous() : bias;
  multiply(view_of(a), view_of(b), contiguous_bias.defined() ? contiguous_bias.data_ptr<float>() : nullptr,
           c.data_ptr<float>());
#endif
  return c;
}

namespace {

thread_local bool products_enabled = false;

}  // namespace

at::Tensor bf16_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return detail::products_linear<bf16_matmul>(x, weight, bias);
}

Bf16ProductsScope::Bf16ProductsScope(bool enable) : previous_(products_enabled) { products_enabled = enable; }
Bf16ProductsScope::~Bf16ProductsScope() { products_enabled = previous_; }
bool bf16_products_enabled() { return products_enabled; }

}  // namespace ts
