// SPDX-License-Identifier: GPL-3.0-or-later
// bf16 matrix products on AMX tiles (Intel's Advanced Matrix Extensions), shared by training's bf16
// products (ts/model/bf16_products.h) and translation's packed layers (ts/infer/packed_linear.h). No
// LibTorch here.
//
// C = A · B + bias with A [m, k] and B [k, n] rounded to bf16 and the sums in fp32. Both operands are
// packed in 32-bit words of two bf16 (element k in the low half, k + 1 in the high), the pairs of a row
// padded with zeros to whole tiles (padded_pairs):
//   A: bands of 16 rows, each band a run of 16 × 16-word blocks (1 KB, one tile) along the pairs, the
//      rows padded with zeros to a multiple of 32 (kRowMultiple);
//   B: blocks of 16 columns, [column blocks][pairs][16 words] (each 16 pairs of a block is one tile).
// Each output element is the same sequence of tile operations whatever the other rows are, so a row's
// result does not depend on how many rows share the call.
#pragma once

#include <cstdint>

namespace ts::amx {

constexpr std::int64_t kColumns = 16;      // columns of B per block, and of a tile of C
constexpr std::int64_t kTileRows = 16;     // rows of a tile of A or C
constexpr std::int64_t kTilePairs = 16;    // pair words in a row of a tile of A (64 bytes)
constexpr std::int64_t kRowMultiple = 32;  // packed A's rows are padded to this (two bands of tiles)

/// True where the CPU has AMX-BF16 (with AVX-512 BF16, which packing uses) and Linux let this process
/// use the tile data (ARCH_REQ_XCOMP_PERM, asked once; the answer holds for all its threads).
bool available();

/// The pair words a row of packed A or a column of packed B holds for k elements: whole tiles.
inline std::int64_t padded_pairs(std::int64_t k) { return ((k + 1) / 2 + kTilePairs - 1) / kTilePairs * kTilePairs; }
/// Column blocks of 16 for n columns.
inline std::int64_t column_blocks(std::int64_t n) { return (n + kColumns - 1) / kColumns; }
/// Words of packed A for m rows of `pairs` words: the rows padded to kRowMultiple.
inline std::int64_t packed_a_words(std::int64_t m, std::int64_t pairs) {
  return (m + kRowMultiple - 1) / kRowMultiple * kRowMultiple * pairs;
}

/// Rows x[i * ld + j] (i < m, j < k) rounded to bf16 (to nearest even) into packed A with `pairs`
/// words a row (padded_pairs(k) or more), padding zeros. Needs available().
void pack_rows(const float* x, std::int64_t m, std::int64_t k, std::int64_t ld, std::int64_t pairs, std::uint32_t* a);

/// c[i * n + j] = bias[j] + sum over the pairs of A's row i times B's column j, for i < m, j < n.
/// `a`: packed A (m rows); `b`: packed B (n columns); both with `pairs` words a row/column, a multiple
/// of kTilePairs; `bias`: column_blocks(n) * 16 + 16 floats (zeros past n), never null. Up to 16 rows
/// run in one band of tiles configured to m rows (a sentence or a few in translation: no padded row is
/// multiplied); more in blocks of 32. Runs on the calling thread (it loads the tile configuration and
/// releases the tiles). Needs available().
void multiply(const std::uint32_t* a, std::int64_t m, const std::uint32_t* b, std::int64_t n, std::int64_t pairs,
              const float* bias, float* c);

}  // namespace ts::amx
