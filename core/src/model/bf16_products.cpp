// SPDX-License-Identifier: GPL-3.0-or-later
// bf16 matrix products for training (see ts/model/bf16_products.h).
//
// C = A · B in three steps: A is packed row by row, each column pair (k, k+1) of a row one 32-bit word
// of two bf16 (k in the low half); B as blocks of 16 columns, each row pair one word per column; a
// kernel keeps 8 rows × 48 columns of sums in 24 registers and, for each pair of k, broadcasts a row's
// word and multiplies it into three blocks with vdpbf16ps (16 columns × 2 products added to fp32
// sums). Both packings read the operands in whatever layout the linear layer's three products hand
// over (x, Wᵀ; dY, W; dYᵀ, x), turning 16 × 16 tiles in registers where the layout is transposed.
// On AMX the same words feed tdpbf16ps: B's blocks are already tiles (16 pairs × 16 columns), A is
// packed in bands of 16 rows cut into 16 × 16 blocks so each tile loads from 1 KB of contiguous memory,
// and the larger operand is read once (see multiply_tiles).
#include "ts/model/bf16_products.h"

#include "ts/host/amx_tiles.h"
#include "ts/infer/bf16.h"
#include "ts/model/packed_weights.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
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

bool bf16_kernel_available(Bf16Kernel kernel) {
  if (kernel == Bf16Kernel::kDotProducts) return bf16_dot_products_available();
  return amx::available();  // asked once per process
}

namespace {
thread_local int kernel_override = -1;  // -1: the CPU decides; else a Bf16KernelScope's kernel
}  // namespace

Bf16Kernel bf16_kernel() {
  if (kernel_override >= 0) return static_cast<Bf16Kernel>(kernel_override);
  return bf16_kernel_available(Bf16Kernel::kTiles) ? Bf16Kernel::kTiles : Bf16Kernel::kDotProducts;
}

Bf16KernelScope::Bf16KernelScope(Bf16Kernel kernel) : previous_(kernel_override) {
  kernel_override = static_cast<int>(kernel);
}
Bf16KernelScope::~Bf16KernelScope() { kernel_override = previous_; }

const char* bf16_kernel_name(Bf16Kernel kernel) {
  return kernel == Bf16Kernel::kTiles ? "AMX tiles" : "AVX-512 BF16 dot products";
}

namespace {
std::atomic<int> g_preference_override{-1};  // -1: the CPU decides; 0 or 1: a test's scope
}  // namespace

bool bf16_products_preferred() {
  const int given = g_preference_override.load(std::memory_order_relaxed);
  if (given >= 0) return given == 1;
  return bf16_dot_products_available();
}

Bf16ProductsPreferenceScope::Bf16ProductsPreferenceScope(bool preferred)
    : previous_(g_preference_override.exchange(preferred ? 1 : 0)) {}

Bf16ProductsPreferenceScope::~Bf16ProductsPreferenceScope() { g_preference_override.store(previous_); }

namespace {

constexpr std::int64_t kRows = 8;      // rows of A per block
constexpr std::int64_t kColumns = 16;  // columns of B per block (one register)

// The pair words each column of packed B holds (and each row of packed A) for K rows of B: the tiles
// pad them to whole tiles.
std::int64_t pairs_for(Bf16Kernel kernel, std::int64_t k) {
  return kernel == Bf16Kernel::kTiles ? amx::padded_pairs(k) : (k + 1) / 2;
}

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

// 16 words: low halves from `low`, high halves from `high`, each rounded to bf16. One conversion of
// both (low's 16 bf16 first, then high's) and one permutation that interleaves them: two instructions
// where widening each half and shifting took six (the packings of A and B call this for every 16 words
// of a transposed operand).
inline __m512i pair_words(__m512 low, __m512 high) {
  const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                                              6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  return _mm512_permutexvar_epi16(interleave, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(high, low)));
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

// Where packed A keeps the words of row i from pair p0 on (p0 a multiple of 16): in rows of `pairs`
// words one after the other, or, for tiles, in bands of 16 rows, each band a run of 16 × 16 blocks (1 KB,
// one tile) along the pairs, so that a tile loads from contiguous memory (`pairs` a multiple of 16).
struct ALayout {
  std::int64_t pairs;
  bool tiles;
  std::int64_t at(std::int64_t i, std::int64_t p0) const {
    return tiles ? ((i / 16) * pairs + p0) * 16 + (i % 16) * 16 : i * pairs + p0;
  }
};

// row_words, the 32 floats also added into sums[0 .. count) (fp32, one row after another).
inline __m512i row_words_summing(const float* src, std::int64_t count, float* sums) {
  const __mmask16 low_mask = first(count), high_mask = first(count - 16);
  const __m512 lo = _mm512_maskz_loadu_ps(low_mask, src);
  const __m512 hi = _mm512_maskz_loadu_ps(high_mask, src + 16);
  _mm512_mask_storeu_ps(sums, low_mask, _mm512_add_ps(_mm512_maskz_loadu_ps(low_mask, sums), lo));
  _mm512_mask_storeu_ps(sums + 16, high_mask, _mm512_add_ps(_mm512_maskz_loadu_ps(high_mask, sums + 16), hi));
  return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
}

// A [rows, cols] into pair words, rows rounded up to `row_multiple` (a multiple of 16 for tiles); the
// rows past the end are 0, and so are the pairs past the end of a row where `pairs` is more than the
// columns need. `sums` (cols floats, zeros) where given, for A with contiguous rows only (the backward's
// G, whose sums are the bias gradient): each column of A added up in row order in fp32 in the packing's
// pass.
void pack_a(const View& a, std::int64_t pairs, std::int64_t row_multiple, std::uint32_t* out, bool tiles = false,
            float* sums = nullptr) {
  const ALayout layout{pairs, tiles};
  const std::int64_t padded = (a.rows + row_multiple - 1) / row_multiple * row_multiple;
  const std::int64_t first_padded = tiles ? a.rows / 16 * 16 : a.rows;  // tiles: the whole band is cleared
  std::fill(out + first_padded * pairs, out + padded * pairs, 0u);
  if (a.sk == 1) {  // rows contiguous: round each row into its words
    for (std::int64_t i = 0; i < a.rows; ++i) {
      const float* src = a.data + i * a.si;
      for (std::int64_t p = 0; p < pairs; p += 16)
        _mm512_mask_storeu_epi32(out + layout.at(i, p), first(pairs - p),
                                 sums ? row_words_summing(src + 2 * p, a.cols - 2 * p, sums + 2 * p)
                                      : row_words(src + 2 * p, a.cols - 2 * p));
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
          _mm512_mask_storeu_epi32(out + layout.at(i0 + j, p0), first(pairs - p0), v[j]);
      }
    return;
  }
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = 0; p < pairs; ++p) {
      const std::int64_t k = 2 * p;
      out[layout.at(i, p & ~std::int64_t{15}) + (p & 15)] =
          k < a.cols ? pair_word(a.at(i, k), k + 1 < a.cols ? a.at(i, k + 1) : 0.0f) : 0u;
    }
}

std::int64_t column_blocks_of(std::int64_t cols) { return (cols + kColumns - 1) / kColumns; }

// B [rows = K, cols = N] into [column blocks][pairs][kColumns] words; padding 0 (columns past N, and
// pairs past K where `pairs` is more than K needs). Only the column blocks [first, last) where given
// (last -1: to the end); each block's words are where the whole packing keeps them.
void pack_b(const View& b, std::int64_t pairs, std::uint32_t* out, std::int64_t first_block = 0,
            std::int64_t last_block = -1) {
  const std::int64_t blocks = last_block < 0 ? column_blocks_of(b.cols) : last_block;
  if (b.sk == 1) {  // columns along a row contiguous (B = S with S row-major [K, N])
    for (std::int64_t p = 0; p < pairs; ++p) {
      if (2 * p >= b.rows) {
        for (std::int64_t c = first_block; c < blocks; ++c)
          _mm512_storeu_si512(out + (c * pairs + p) * kColumns, _mm512_setzero_si512());
        continue;
      }
      const float* r0 = b.data + 2 * p * b.si;
      const bool odd = 2 * p + 1 >= b.rows;
      const float* r1 = r0 + b.si;
      for (std::int64_t c = first_block; c < blocks; ++c) {
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
    for (std::int64_t c = first_block; c < blocks; ++c)
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
  for (std::int64_t n = first_block * kColumns; n < blocks * kColumns; ++n)
    for (std::int64_t p = 0; p < pairs; ++p) {
      const std::int64_t k = 2 * p;
      out[((n / kColumns) * pairs + p) * kColumns + n % kColumns] =
          n < b.cols && k < b.rows ? pair_word(b.at(k, n), k + 1 < b.rows ? b.at(k + 1, n) : 0.0f) : 0u;
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

// B packed as pack_b does with `pairs` pair words a column (`packed`, or packed here where nullptr).
const std::uint32_t* packed_b(const View& b, std::int64_t pairs, const std::uint32_t* packed) {
  if (packed) return packed;
  thread_local std::vector<std::uint32_t> b_buffer;
  std::uint32_t* bp = scratch(b_buffer, column_blocks_of(b.cols) * pairs * kColumns);
  pack_b(b, pairs, bp);
  return bp;
}

// Gᵀ's rows from rows [r0, r0 + count) of G ([count, n] contiguous at g, r0 a multiple of 32): the 16 pair
// words from pair r0 / 2 on of every row of Gᵀ in `layout` (n rows), as pack_a packs Gᵀ whole (its
// transposed case), the pairs past G's rows 0.
void pack_transposed_band(const float* g, std::int64_t count, std::int64_t n, std::int64_t r0, const ALayout& layout,
                          std::uint32_t* out) {
  const std::int64_t p0 = r0 / 2;
  const __mmask16 pairs_mask = first(layout.pairs - p0);
  __m512i v[16];
  for (std::int64_t i0 = 0; i0 < n; i0 += 16) {
    const __mmask16 columns = first(n - i0);
    for (std::int64_t q = 0; q < 16; ++q) {
      const std::int64_t k = 2 * q;
      const __m512 low = k < count ? _mm512_maskz_loadu_ps(columns, g + k * n + i0) : _mm512_setzero_ps();
      const __m512 high = k + 1 < count ? _mm512_maskz_loadu_ps(columns, g + (k + 1) * n + i0) : _mm512_setzero_ps();
      v[q] = pair_words(low, high);
    }
    transpose16(v);
    for (std::int64_t j = 0; j < 16 && i0 + j < n; ++j)
      _mm512_mask_storeu_epi32(out + layout.at(i0 + j, p0), pairs_mask, v[j]);
  }
}

// C [m, n] = packed A (m rows, pack_a with kRows) times packed B (n columns), both `pairs` words a row.
void multiply_packed(const std::uint32_t* ap, std::int64_t m, const std::uint32_t* bp, std::int64_t n,
                     std::int64_t pairs, const float* bias, float* c) {
  const std::int64_t row_blocks = (m + kRows - 1) / kRows, column_blocks = column_blocks_of(n);
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

void multiply(const View& a, const View& b, const float* bias, float* c, const std::uint32_t* packed, float* a_sums) {
  const std::int64_t m = a.rows, pairs = pairs_for(Bf16Kernel::kDotProducts, a.cols);
  thread_local std::vector<std::uint32_t> a_buffer;
  std::uint32_t* ap = scratch(a_buffer, (m + kRows - 1) / kRows * kRows * pairs);
  pack_a(a, pairs, kRows, ap, /*tiles=*/false, a_sums);
  multiply_packed(ap, m, packed_b(b, pairs, packed), b.cols, pairs, bias, c);
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // TS_BF16_X86

#if TS_BF16_X86
// AMX (ts/host/amx_tiles.h): A packed in its bands of tiles, B's blocks are already tiles, the bias
// padded to whole column blocks (tile loads read 16 floats). C [m, n] = packed A (m rows in bands of
// tiles) times packed B (n columns), both `pairs` words a row.
void multiply_tiles_packed(const std::uint32_t* ap, std::int64_t m, const std::uint32_t* bp, std::int64_t n,
                           std::int64_t pairs, const float* bias, float* c) {
  thread_local std::vector<float> bias_buffer;
  bias_buffer.assign(static_cast<std::size_t>((column_blocks_of(n) + 1) * kColumns), 0.0f);
  if (bias) std::copy(bias, bias + n, bias_buffer.begin());
  amx::multiply(ap, m, bp, n, pairs, bias_buffer.data(), c);
}

void multiply_tiles(const View& a, const View& b, const float* bias, float* c, const std::uint32_t* packed,
                    float* a_sums) {
  const std::int64_t m = a.rows, pairs = pairs_for(Bf16Kernel::kTiles, a.cols);
  thread_local std::vector<std::uint32_t> a_buffer;
  std::uint32_t* ap = scratch(a_buffer, amx::packed_a_words(m, pairs));
  pack_a(a, pairs, amx::kRowMultiple, ap, /*tiles=*/true, a_sums);
  multiply_tiles_packed(ap, m, packed_b(b, pairs, packed), b.cols, pairs, bias, c);
}
#endif  // TS_BF16_X86

View view_of(const at::Tensor& t) { return View{t.data_ptr<float>(), t.size(0), t.size(1), t.stride(0), t.stride(1)}; }

}  // namespace

namespace {

#if TS_BF16_X86
// b (a view of a layer's weight) packed as B for `kernel` through this thread's PackedWeights, once a
// step; nullptr where the thread has none (the product packs b itself).
const std::uint32_t* weight_packing(Bf16Kernel kernel, const at::Tensor& b) {
  PackedWeights* weights = current_packed_weights();
  if (!weights) return nullptr;
  const View bv = view_of(b);
  const std::int64_t pairs = pairs_for(kernel, bv.rows), blocks = column_blocks_of(bv.cols);
  constexpr std::int64_t kChunk = 8;  // column blocks a chunk: 128 columns
  return weights->get({b.data_ptr(), bv.rows, bv.cols, bv.si, bv.sk, pairs}, static_cast<std::uint32_t>(b._version()),
                      blocks * pairs * kColumns, (blocks + kChunk - 1) / kChunk,
                      [&](std::int64_t chunk, std::uint32_t* out) {
                        pack_b(bv, pairs, out, chunk * kChunk, std::min(blocks, (chunk + 1) * kChunk));
                      });
}

// C [m, n] = packed A times packed B on `kernel` (A packed for it: in bands of tiles, or rows of kRows),
// without bias.
void multiply_packed_on(Bf16Kernel kernel, const std::uint32_t* ap, std::int64_t m, const std::uint32_t* bp,
                        std::int64_t n, std::int64_t pairs, float* c) {
  if (kernel == Bf16Kernel::kTiles)
    multiply_tiles_packed(ap, m, bp, n, pairs, nullptr, c);
  else
    multiply_packed(ap, m, bp, n, pairs, nullptr, c);
}
#endif

// bf16_matmul_on; `weight`: b is (a view of) a layer's weight, packed through this thread's
// PackedWeights where it has one; `a_sums` where given: set to a's column sums.
at::Tensor product(Bf16Kernel kernel, const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias, bool weight,
                   at::Tensor* a_sums = nullptr) {
  bool done = false;
  auto c =
      detail::start_product("bf16_matmul", a, b, bias, bf16_kernel_available(kernel), bf16_kernel_name(kernel), done);
  // a's column sums in the pass that packs it where its rows are contiguous, else column_sums' own pass
  const bool sums_in_packing = a_sums && !done && a.stride(1) == 1;
  if (a_sums) *a_sums = sums_in_packing ? at::zeros({a.size(1)}, a.options()) : detail::column_sums(a);
  if (done) return c;
  float* sums = sums_in_packing ? a_sums->data_ptr<float>() : nullptr;
#if TS_BF16_X86
  const auto contiguous_bias = bias.defined() ? bias.contiguous() : bias;
  const float* bias_data = contiguous_bias.defined() ? contiguous_bias.data_ptr<float>() : nullptr;
  const View bv = view_of(b);
  const std::uint32_t* packed = weight ? weight_packing(kernel, b) : nullptr;
  if (kernel == Bf16Kernel::kTiles)
    multiply_tiles(view_of(a), bv, bias_data, c.data_ptr<float>(), packed, sums);
  else
    multiply(view_of(a), bv, bias_data, c.data_ptr<float>(), packed, sums);
#else
  (void)weight;
  (void)sums;
#endif
  return c;
}

}  // namespace

at::Tensor bf16_matmul_on(Bf16Kernel kernel, const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  return product(kernel, a, b, bias, /*weight=*/false);
}

at::Tensor bf16_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  return product(bf16_kernel(), a, b, bias, /*weight=*/false);
}

at::Tensor bf16_weight_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  return product(bf16_kernel(), a, b, bias, /*weight=*/true);
}

at::Tensor bf16_weight_matmul_summing(const at::Tensor& a, const at::Tensor& b, at::Tensor& a_column_sums) {
  return product(bf16_kernel(), a, b, at::Tensor(), /*weight=*/true, &a_column_sums);
}

namespace {
// Bf16LinearGradients' packings of G and Gᵀ, reused from step to step on each thread.
thread_local std::vector<std::uint32_t> gradient_rows_buffer, gradient_columns_buffer;
thread_local bool gradients_in_use = false;
}  // namespace

Bf16LinearGradients::Bf16LinearGradients(std::int64_t rows, std::int64_t outputs)
    : kernel_(bf16_kernel()), rows_(rows), outputs_(outputs) {
  if (rows < 0 || outputs < 0) throw std::invalid_argument("Bf16LinearGradients: negative size");
  if (!bf16_kernel_available(kernel_))
    throw std::runtime_error(std::string("Bf16LinearGradients: this CPU has no ") + bf16_kernel_name(kernel_));
  if (gradients_in_use) throw std::logic_error("Bf16LinearGradients: another one is alive on this thread");
  output_pairs_ = pairs_for(kernel_, outputs);
  row_pairs_ = pairs_for(kernel_, rows);
  const bool tiles = kernel_ == Bf16Kernel::kTiles;
  const std::int64_t multiple = tiles ? amx::kRowMultiple : kRows;
  const auto padded = [multiple](std::int64_t n) { return (n + multiple - 1) / multiple * multiple; };
  g_ = scratch(gradient_rows_buffer, padded(rows) * output_pairs_);
  gt_ = scratch(gradient_columns_buffer, padded(outputs) * row_pairs_);
  // Gᵀ's rows past `outputs` are zeros (the bands write the real ones; G's padding is pack_a's).
  std::fill(gt_ + outputs * row_pairs_, gt_ + padded(outputs) * row_pairs_, 0u);
  sums_ = at::zeros({outputs}, at::TensorOptions().dtype(at::kFloat));
  gradients_in_use = true;
}

Bf16LinearGradients::~Bf16LinearGradients() { gradients_in_use = false; }

void Bf16LinearGradients::add_band(const float* band, std::int64_t count) {
  if (count <= 0 || added_ + count > rows_ || (added_ % kBandRows) != 0 ||
      (count < kBandRows && added_ + count != rows_))
    throw std::logic_error("Bf16LinearGradients::add_band: bands of " + std::to_string(kBandRows) +
                           " rows in order, only the last shorter");
#if TS_BF16_X86
  const bool tiles = kernel_ == Bf16Kernel::kTiles;
  pack_a(View{band, count, outputs_, outputs_, 1}, output_pairs_, tiles ? amx::kRowMultiple : kRows,
         g_ + added_ * output_pairs_, tiles, sums_.data_ptr<float>());
  pack_transposed_band(band, count, outputs_, added_, ALayout{row_pairs_, tiles}, gt_);
#else
  (void)band;
#endif
  added_ += count;
}

void Bf16LinearGradients::check_complete(const char* what) const {
  if (added_ != rows_)
    throw std::logic_error(std::string("Bf16LinearGradients::") + what + ": " + std::to_string(added_) + " of " +
                           std::to_string(rows_) + " rows given");
}

at::Tensor Bf16LinearGradients::input_gradient(const at::Tensor& weight) const {
  check_complete("input_gradient");
  if (weight.dim() != 2 || weight.size(0) != outputs_ || weight.scalar_type() != at::kFloat ||
      !weight.device().is_cpu())
    throw std::invalid_argument("Bf16LinearGradients::input_gradient: expected an fp32 CPU weight [" +
                                std::to_string(outputs_) + ", in]");
  auto c = at::empty({rows_, weight.size(1)}, weight.options());
  if (c.numel() == 0) return c;
  if (outputs_ == 0) return c.zero_();
#if TS_BF16_X86
  const View bv = view_of(weight);
  multiply_packed_on(kernel_, g_, rows_, packed_b(bv, output_pairs_, weight_packing(kernel_, weight)), bv.cols,
                     output_pairs_, c.data_ptr<float>());
#endif
  return c;
}

at::Tensor Bf16LinearGradients::weight_gradient(const at::Tensor& x) const {
  check_complete("weight_gradient");
  if (x.dim() != 2 || x.size(0) != rows_ || x.scalar_type() != at::kFloat || !x.device().is_cpu())
    throw std::invalid_argument("Bf16LinearGradients::weight_gradient: expected an fp32 CPU x [" +
                                std::to_string(rows_) + ", in]");
  auto c = at::empty({outputs_, x.size(1)}, x.options());
  if (c.numel() == 0) return c;
  if (rows_ == 0) return c.zero_();
#if TS_BF16_X86
  const View bv = view_of(x);
  multiply_packed_on(kernel_, gt_, outputs_, packed_b(bv, row_pairs_, nullptr), bv.cols, row_pairs_,
                     c.data_ptr<float>());
#endif
  return c;
}

at::Tensor Bf16LinearGradients::bias_gradient() const {
  check_complete("bias_gradient");
  return sums_;
}

namespace {

thread_local bool products_enabled = false;

}  // namespace

at::Tensor bf16_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return detail::products_linear<bf16_matmul, bf16_weight_matmul, bf16_weight_matmul_summing>(x, weight, bias);
}

Bf16ProductsScope::Bf16ProductsScope(bool enable) : previous_(products_enabled) { products_enabled = enable; }
Bf16ProductsScope::~Bf16ProductsScope() { products_enabled = previous_; }
bool bf16_products_enabled() { return products_enabled; }

}  // namespace ts
