// SPDX-License-Identifier: GPL-3.0-or-later
// bf16 products on AMX tiles (see ts/host/amx_tiles.h).
#include "ts/host/amx_tiles.h"

#include "ts/host/cpu.h"

#include <algorithm>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define TS_AMX_X86 1
#include <immintrin.h>
#else
#define TS_AMX_X86 0
#endif

#if TS_AMX_X86 && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace ts::amx {

bool available() {
  static const bool yes = [] {
#if TS_AMX_X86 && defined(__linux__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512bf16") || !cpu_info().has("amx_bf16") || !cpu_info().has("amx_tile"))
      return false;
    // Linux lets a process use AMX's tile data only once it has asked (ARCH_REQ_XCOMP_PERM for
    // XFEATURE_XTILEDATA); the answer holds for all its threads.
    constexpr long kRequestPermission = 0x1023, kTileData = 18;
    return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
#else
    return false;
#endif
  }();
  return yes;
}

#if TS_AMX_X86

namespace {

// The tile configuration's memory layout (palette 1), 64 bytes.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};

}  // namespace

#if defined(__clang__)
#pragma clang attribute push(                                                                          \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,amx-tile,amx-bf16,prfchw"))), \
    apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,amx-tile,amx-bf16,prfchw")
#endif

namespace {

inline __mmask16 first(std::int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1u);
}

// One tdpbf16ps adds a 16 × 32 block of A (16 rows of 16 pair words: one 1 KB block of packed A) times a
// 32 × 16 block of B (16 pairs of 16 column words: 1 KB of packed B's blocks) into 16 × 16 fp32 sums. The
// kernel keeps a 32 × 32 block of C in tiles 0-3 (0: rows 0-15 × columns 0-15, 1: rows 0-15 × 16-31, 2
// and 3 the same for rows 16-31), A in 4 and 5, B in 6 and 7.
//
// 32 rows × (Two ? 32 : 16) columns of C starting at row r0 and column n0: the sums start at the bias
// (each row of a tile loaded from the same 16 floats: stride 0), then every 16 pairs add four (or two)
// tile products. Full blocks are stored straight into C, edges through `edge`. While the products run,
// the block's lines of C are fetched for writing (prefetchw), a few rows each 16 pairs: the stores then
// find them in the core's cache. Where K is small (a layer's forward product), waiting for those lines
// took about a fifth of the block's time.
template <bool Two>
void tile_block(const std::uint32_t* a_rows, const std::uint32_t* b_blocks, std::int64_t pairs, const float* bias_row,
                float* c, std::int64_t m, std::int64_t n, std::int64_t r0, std::int64_t n0, float* edge) {
  constexpr std::int64_t width = Two ? 2 * kColumns : kColumns;
  _tile_loadd(0, bias_row, 0);
  _tile_loadd(2, bias_row, 0);
  if (Two) {
    _tile_loadd(1, bias_row + kColumns, 0);
    _tile_loadd(3, bias_row + kColumns, 0);
  }
  const std::uint32_t* a0 = a_rows;  // two bands of 16 rows, each a run of 1 KB tiles along the pairs
  const std::uint32_t* a1 = a_rows + kTileRows * pairs;
  const std::uint32_t* b0 = b_blocks;
  const std::uint32_t* b1 = b_blocks + pairs * kColumns;
  const std::int64_t rows = std::min<std::int64_t>(2 * kTileRows, m - r0);
  const std::int64_t rows_each = (rows * kTilePairs + pairs - 1) / pairs;  // C's rows fetched each 16 pairs
  float* const first_row = c + r0 * n + n0;
  std::int64_t fetched = 0;
  for (std::int64_t p = 0; p < pairs; p += kTilePairs) {
    for (const std::int64_t last = std::min(rows, fetched + rows_each); fetched < last; ++fetched) {
      _m_prefetchw(first_row + fetched * n);
      if (Two) _m_prefetchw(first_row + fetched * n + kColumns);
    }
    _tile_loadd(4, a0 + p * kTileRows, 64);
    _tile_loadd(6, b0 + p * kColumns, 64);
    _tile_loadd(5, a1 + p * kTileRows, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(2, 5, 6);
    if (Two) {
      _tile_loadd(7, b1 + p * kColumns, 64);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  const std::int64_t cols = std::min<std::int64_t>(width, n - n0);
  float* out = first_row;
  std::int64_t ld = n;
  if (rows < 2 * kTileRows || cols < width) {
    out = edge;
    ld = 2 * kColumns;
  }
  _tile_stored(0, out, ld * 4);
  _tile_stored(2, out + kTileRows * ld, ld * 4);
  if (Two) {
    _tile_stored(1, out + kColumns, ld * 4);
    _tile_stored(3, out + kTileRows * ld + kColumns, ld * 4);
  }
  if (out == edge)
    for (std::int64_t r = 0; r < rows; ++r) std::copy(edge + r * ld, edge + r * ld + cols, c + (r0 + r) * n + n0);
}

// Up to 16 rows (a single band, as a sentence or a few take in translation): the tiles of A and C
// configured to `m` rows, so no padded row is multiplied. C's tile 0 (and 1) hold the sums of columns
// n0..n0 + 15 (and n0 + 16..31), A is tile 4, B tiles 6 and 7.
template <bool Two>
void tile_band(const std::uint32_t* a_rows, const std::uint32_t* b_blocks, std::int64_t pairs, const float* bias_row,
               float* c, std::int64_t m, std::int64_t n, std::int64_t n0, float* edge) {
  constexpr std::int64_t width = Two ? 2 * kColumns : kColumns;
  _tile_loadd(0, bias_row, 0);
  if (Two) _tile_loadd(1, bias_row + kColumns, 0);
  const std::uint32_t* b0 = b_blocks;
  const std::uint32_t* b1 = b_blocks + pairs * kColumns;
  for (std::int64_t p = 0; p < pairs; p += kTilePairs) {
    _tile_loadd(4, a_rows + p * kTileRows, 64);
    _tile_loadd(6, b0 + p * kColumns, 64);
    _tile_dpbf16ps(0, 4, 6);
    if (Two) {
      _tile_loadd(7, b1 + p * kColumns, 64);
      _tile_dpbf16ps(1, 4, 7);
    }
  }
  const std::int64_t cols = std::min<std::int64_t>(width, n - n0);
  if (cols == width) {
    _tile_stored(0, c + n0, n * 4);
    if (Two) _tile_stored(1, c + n0 + kColumns, n * 4);
    return;
  }
  _tile_stored(0, edge, 2 * kColumns * 4);
  if (Two) _tile_stored(1, edge + kColumns, 2 * kColumns * 4);
  for (std::int64_t r = 0; r < m; ++r)
    std::copy(edge + r * 2 * kColumns, edge + r * 2 * kColumns + cols, c + r * n + n0);
}

}  // namespace

void pack_rows(const float* x, std::int64_t m, std::int64_t k, std::int64_t ld, std::int64_t pairs, std::uint32_t* a) {
  const std::int64_t padded = (m + kRowMultiple - 1) / kRowMultiple * kRowMultiple;
  std::fill(a + m / kTileRows * kTileRows * pairs, a + padded * pairs, 0u);  // the last band cleared whole
  for (std::int64_t i = 0; i < m; ++i) {
    const float* src = x + i * ld;
    std::uint32_t* band = a + (i / kTileRows) * kTileRows * pairs + (i % kTileRows) * kTilePairs;
    for (std::int64_t p = 0; p < pairs; p += kTilePairs) {
      const std::int64_t count = k - 2 * p;  // elements of this row left from pair p on
      const __m512 lo = _mm512_maskz_loadu_ps(first(count), src + 2 * p);
      const __m512 hi = _mm512_maskz_loadu_ps(first(count - 16), src + 2 * p + 16);
      _mm512_storeu_si512(band + p * kTileRows, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo)));
    }
  }
}

void multiply(const std::uint32_t* a, std::int64_t m, const std::uint32_t* b, std::int64_t n, std::int64_t pairs,
              const float* bias, float* c) {
  if (m <= 0 || n <= 0) return;
  const std::int64_t row_blocks = (m + 2 * kTileRows - 1) / (2 * kTileRows);
  const std::int64_t blocks = column_blocks(n);
  const bool one_band = m <= kTileRows;
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    // One band: A's tile and C's as many rows as there are (each row's sums are computed alike however
    // many rows a tile has).
    config.rows[t] = static_cast<std::uint8_t>(one_band && t != 6 && t != 7 ? m : kTileRows);
    config.bytes_per_row[t] = 64;
  }
  _tile_loadconfig(&config);
  alignas(64) float edge[2 * kTileRows * 2 * kColumns];
  if (one_band) {
    for (std::int64_t cb = 0; cb < blocks; cb += 2) {
      const std::uint32_t* b_blocks = b + cb * pairs * kColumns;
      if (cb + 1 < blocks)
        tile_band<true>(a, b_blocks, pairs, bias + cb * kColumns, c, m, n, cb * kColumns, edge);
      else
        tile_band<false>(a, b_blocks, pairs, bias + cb * kColumns, c, m, n, cb * kColumns, edge);
    }
    _tile_release();
    return;
  }
  const auto block = [&](std::int64_t rb, std::int64_t cb) {
    const std::uint32_t* a_rows = a + rb * 2 * kTileRows * pairs;
    const std::uint32_t* b_blocks = b + cb * pairs * kColumns;
    const float* bias_row = bias + cb * kColumns;
    if (cb + 1 < blocks)
      tile_block<true>(a_rows, b_blocks, pairs, bias_row, c, m, n, rb * 2 * kTileRows, cb * kColumns, edge);
    else
      tile_block<false>(a_rows, b_blocks, pairs, bias_row, c, m, n, rb * 2 * kTileRows, cb * kColumns, edge);
  };
  // B in chunks of columns whose packed words stay in the core's L2 cache (2 MB on the Xeons with AMX);
  // over each chunk, a band of 32 rows at a time: A's panel stays in L1 while the chunk passes it, and
  // C is written along its rows. Storing C dominates where K is small (a layer's forward product:
  // without the stores the tiles ran 1.4 to 3 times as fast), and column strips of C, each row in another
  // page, ran the vocabulary's projection (352 × 2,816, K 192) at half the speed of bands. Where B fits
  // in one chunk A is read once.
  constexpr std::int64_t kChunkBytes = 1 << 20;
  const std::int64_t chunk = std::max<std::int64_t>(2, kChunkBytes / (pairs * kColumns * 4) / 2 * 2);
  for (std::int64_t c0 = 0; c0 < blocks; c0 += chunk) {
    const std::int64_t c1 = std::min(blocks, c0 + chunk);
    for (std::int64_t rb = 0; rb < row_blocks; ++rb)
      for (std::int64_t cb = c0; cb < c1; cb += 2) block(rb, cb);
  }
  _tile_release();
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#else  // not x86-64: available() is false, and nothing calls these

void pack_rows(const float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::uint32_t*) {}
void multiply(const std::uint32_t*, std::int64_t, const std::uint32_t*, std::int64_t, std::int64_t, const float*,
              float*) {}

#endif  // TS_AMX_X86

}  // namespace ts::amx
