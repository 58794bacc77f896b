// SPDX-License-Identifier: GPL-3.0-or-later
// Torch-free analysis of the model's tables (position table, token embeddings) for the anatomy
// views: cosine similarity between rows, nearest neighbours of a row, and a 2-D PCA projection.
// Plain row-major float matrices, so the GUI can use them without LibTorch. Sums are in double.
#pragma once

#include <cstddef>
#include <vector>

namespace ts {

/// A row-major [rows × cols] float matrix.
struct FloatMatrix {
  int rows = 0;
  int cols = 0;
  std::vector<float> data;  // rows * cols values

  FloatMatrix() = default;
  /// Zero-filled when `values` is empty; throws std::invalid_argument when the sizes disagree or
  /// are negative.
  FloatMatrix(int rows, int cols, std::vector<float> values = {});

  float at(int row, int col) const { return data[static_cast<std::size_t>(row) * cols + col]; }
  float& at(int row, int col) { return data[static_cast<std::size_t>(row) * cols + col]; }
  const float* row(int r) const { return data.data() + static_cast<std::size_t>(r) * cols; }
  bool empty() const { return rows == 0 || cols == 0; }
};

/// The rows `indices` of `m`, in that order (throws std::out_of_range for a bad index).
FloatMatrix select_rows(const FloatMatrix& m, const std::vector<int>& indices);

/// cos(a, b) = a·b / (|a| |b|) over `n` values; 0 when either vector is all zeros (the angle is
/// undefined, and 0 reads as "unrelated" in a heatmap).
double cosine_similarity(const float* a, const float* b, int n);

/// Cosine similarity between every pair of rows: [rows × rows], symmetric, 1 on the diagonal
/// except for all-zero rows (0 against every row, themselves included).
FloatMatrix cosine_similarity_matrix(const FloatMatrix& m);

struct Neighbour {
  int row = 0;
  double similarity = 0;
};

/// The `k` rows most similar to row `row` by cosine similarity, most similar first; `row` itself
/// and the rows in `exclude` (e.g. special tokens) are never returned. Equal similarities keep
/// the lower row index first. Empty when k <= 0 or when row `row` is all zeros; all-zero candidate
/// rows are skipped. Throws std::out_of_range when `row` is not a row of `m`.
std::vector<Neighbour> nearest_neighbours(const FloatMatrix& m, int row, int k, const std::vector<int>& exclude = {});

/// A 2-D principal component projection.
struct Projection2D {
  /// [points × 2]: the coordinates of each input row on the two components (centred data).
  FloatMatrix coordinates;
  /// [2 × cols]: the unit principal directions. A direction's sign is chosen so that its
  /// largest-magnitude loading is positive (the first such on ties), making the plot reproducible.
  FloatMatrix components;
  std::vector<float> mean;  // [cols]: subtracted before projecting
  /// Variance along each component divided by the total variance (0 when there is none).
  double explained[2] = {0, 0};
  /// Variance along each component (eigenvalues of the covariance, divided by the row count).
  double variance[2] = {0, 0};

  /// Projects a new point (cols values) with the same centre and directions.
  std::vector<float> project(const float* point) const;
};

/// Centres the rows of `m` and projects them on the top two principal components of their
/// covariance, found by power iteration with deflation (deterministic start, capped iterations;
/// with fewer rows than columns the iteration runs on the rows' Gram matrix, which has the same
/// eigenvalues, and maps the result back). Degenerate input is handled: no rows gives empty
/// coordinates; identical rows, a single row or a single column give zero coordinates (and a zero
/// direction where none exists) on the missing components and explained ratios of 0.
Projection2D pca_2d(const FloatMatrix& m);

}  // namespace ts
