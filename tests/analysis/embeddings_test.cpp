// SPDX-License-Identifier: GPL-3.0-or-later
// Torch-free analysis of the model's tables: cosine similarity against closed forms, nearest
// neighbours of a constructed table (ties, exclusions, zero rows), PCA recovering known lines and
// planes with its sign convention, and the offset-only similarity of the sinusoidal table.
#include "ts/analysis/embeddings.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>

namespace ts {
namespace {

// The sinusoidal table of "Attention Is All You Need" ([positions × d], row-major), written out
// from the closed form: ts::sinusoidal_values (ts/model/positional.h) lives in ts_core, which this
// LibTorch-free test executable does not link; tests/model/positional_test.cpp checks that it equals
// this formula, and tests/ui/model_tables_test.cpp runs the same check on sinusoidal_values itself.
FloatMatrix sinusoidal(int positions, int d) {
  FloatMatrix m(positions, d);
  for (int pos = 0; pos < positions; ++pos)
    for (int i = 0; 2 * i < d; ++i) {
      const double angle = pos / std::pow(10000.0, 2.0 * i / d);
      m.at(pos, 2 * i) = static_cast<float>(std::sin(angle));
      if (2 * i + 1 < d) m.at(pos, 2 * i + 1) = static_cast<float>(std::cos(angle));
    }
  return m;
}

TEST(EmbeddingMatrix, SizesAreChecked) {
  const FloatMatrix zeros(2, 3);
  EXPECT_EQ(zeros.data.size(), 6u);
  EXPECT_EQ(zeros.at(1, 2), 0.0f);
  const FloatMatrix m(2, 2, {1, 2, 3, 4});
  EXPECT_EQ(m.at(1, 0), 3.0f);
  EXPECT_EQ(m.row(1)[1], 4.0f);
  EXPECT_THROW(FloatMatrix(2, 2, {1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(FloatMatrix(-1, 2), std::invalid_argument);
  const auto picked = select_rows(m, {1, 1, 0});
  EXPECT_EQ(picked.rows, 3);
  EXPECT_EQ(picked.at(0, 0), 3.0f);
  EXPECT_EQ(picked.at(2, 1), 2.0f);
  EXPECT_THROW(select_rows(m, {2}), std::out_of_range);
}

TEST(EmbeddingCosine, ClosedForms) {
  const float x[] = {1, 0}, diagonal[] = {1, 1}, y[] = {0, 3}, minus_x[] = {-2, 0}, zero[] = {0, 0};
  EXPECT_NEAR(cosine_similarity(x, diagonal, 2), 1 / std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(cosine_similarity(x, y, 2), 0.0, 1e-12);
  EXPECT_NEAR(cosine_similarity(x, minus_x, 2), -1.0, 1e-12);
  EXPECT_NEAR(cosine_similarity(diagonal, diagonal, 2), 1.0, 1e-12);
  EXPECT_EQ(cosine_similarity(x, zero, 2), 0.0);  // undefined angle: reported as unrelated
  // cos 60° between (1, 0, 0) and (1, √3, 0) scaled by 5; angle between 3-D vectors (1,2,2), (2,1,-2): 0.
  const float a[] = {1, 0, 0}, b[] = {5, 5 * std::sqrt(3.0f), 0}, u[] = {1, 2, 2}, w[] = {2, 1, -2};
  EXPECT_NEAR(cosine_similarity(a, b, 3), 0.5, 1e-6);
  EXPECT_NEAR(cosine_similarity(u, w, 3), 0.0, 1e-12);
}

TEST(EmbeddingCosine, SimilarityMatrixIsSymmetricWithUnitDiagonal) {
  const FloatMatrix m(4, 3, {1, 2, 3, -1, 0.5f, 2, 0, 0, 0, 4, -4, 1});
  const auto s = cosine_similarity_matrix(m);
  ASSERT_EQ(s.rows, 4);
  ASSERT_EQ(s.cols, 4);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(s.at(i, j), s.at(j, i));
      if (i == 2 || j == 2)
        EXPECT_EQ(s.at(i, j), 0.0f) << i << "," << j;  // the zero row, its own diagonal included
      else if (i == j)
        EXPECT_EQ(s.at(i, j), 1.0f);
      else
        EXPECT_NEAR(s.at(i, j), cosine_similarity(m.row(i), m.row(j), 3), 1e-6);
    }
  EXPECT_NEAR(s.at(0, 1), (-1 + 1 + 6) / (std::sqrt(14.0) * std::sqrt(5.25)), 1e-6);
  EXPECT_TRUE(cosine_similarity_matrix(FloatMatrix()).empty());
}

TEST(EmbeddingNeighbours, MostSimilarFirstWithStableTies) {
  // Row 0 points along x; rows 1 and 5 at 45° (an exact tie: 5 is 1 scaled by 2); row 2 at about
  // 26.6°, row 3 orthogonal, row 4 opposite, row 6 zero.
  const FloatMatrix m(7, 2, {1, 0, 1, 1, 2, 1, 0, 1, -1, 0, 2, 2, 0, 0});
  auto n = nearest_neighbours(m, 0, 3);
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(n[0].row, 2);
  EXPECT_NEAR(n[0].similarity, 2 / std::sqrt(5.0), 1e-12);
  EXPECT_EQ(n[1].row, 1);
  EXPECT_EQ(n[2].row, 5);  // same similarity as row 1: the lower index comes first
  EXPECT_EQ(n[1].similarity, n[2].similarity);
  EXPECT_NEAR(n[1].similarity, 1 / std::sqrt(2.0), 1e-12);

  // All of them: never itself, never the zero row, opposite last.
  n = nearest_neighbours(m, 0, 100);
  ASSERT_EQ(n.size(), 5u);
  EXPECT_EQ(n[3].row, 3);
  EXPECT_NEAR(n[3].similarity, 0.0, 1e-12);
  EXPECT_EQ(n[4].row, 4);
  EXPECT_NEAR(n[4].similarity, -1.0, 1e-12);
  for (const auto& x : n) EXPECT_NE(x.row, 0);

  // Excluded rows (e.g. special tokens) are skipped.
  n = nearest_neighbours(m, 0, 2, {2, 5});
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0].row, 1);
  EXPECT_EQ(n[1].row, 3);

  EXPECT_TRUE(nearest_neighbours(m, 0, 0).empty());
  EXPECT_TRUE(nearest_neighbours(m, 6, 3).empty());  // a zero row has no direction
  EXPECT_THROW(nearest_neighbours(m, 7, 3), std::out_of_range);
  EXPECT_THROW(nearest_neighbours(m, -1, 3), std::out_of_range);
}

TEST(EmbeddingPca, PointsOnALineGiveOneComponent) {
  // p = c + t u in 3-D with u = (1, 2, 2) / 3; the largest loadings are positive (both 2/3).
  const double u[] = {1.0 / 3, 2.0 / 3, 2.0 / 3}, c[] = {5, -1, 2};
  const double t[] = {-2, -1, 0, 1, 3};
  FloatMatrix m(5, 3);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j) m.at(i, j) = static_cast<float>(c[j] + t[i] * u[j]);
  const auto p = pca_2d(m);
  EXPECT_NEAR(p.explained[0], 1.0, 1e-6);
  EXPECT_NEAR(p.explained[1], 0.0, 1e-6);
  const double mean_t = 0.2;
  double var = 0;
  for (double ti : t) var += (ti - mean_t) * (ti - mean_t) / 5;
  EXPECT_NEAR(p.variance[0], var, 1e-5);
  for (int j = 0; j < 3; ++j) {
    EXPECT_NEAR(p.components.at(0, j), u[j], 1e-5) << j;
    EXPECT_NEAR(p.mean[j], c[j] + mean_t * u[j], 1e-5);
  }
  ASSERT_EQ(p.coordinates.rows, 5);
  ASSERT_EQ(p.coordinates.cols, 2);
  for (int i = 0; i < 5; ++i) {
    EXPECT_NEAR(p.coordinates.at(i, 0), t[i] - mean_t, 1e-5) << i;
    EXPECT_NEAR(p.coordinates.at(i, 1), 0.0, 1e-5) << i;
  }
}

TEST(EmbeddingPca, PointsOnAPlaneRecoverItsAxesAndTheSignConvention) {
  // A plane in 4-D spanned by u = (0.6, 0, 0.8, 0) (spread 3) and w = (0, -0.8, 0, 0.6)
  // (spread 1), shifted by c. w's largest loading is negative, so the second component is -w.
  const double u[] = {0.6, 0, 0.8, 0}, w[] = {0, -0.8, 0, 0.6}, c[] = {1, 2, 3, 4};
  std::vector<double> a, b;
  for (int i = -3; i <= 3; ++i)
    for (int k = -1; k <= 1; ++k) {
      a.push_back(3.0 * i);
      b.push_back(1.0 * k);
    }
  const int n = static_cast<int>(a.size());
  FloatMatrix m(n, 4);
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < 4; ++j) m.at(r, j) = static_cast<float>(c[j] + a[r] * u[j] + b[r] * w[j]);
  const auto p = pca_2d(m);
  // Variances: a is uniform on 3·{-3..3} (mean 0, variance 9·4 = 36); b on {-1, 0, 1} (2/3).
  EXPECT_NEAR(p.variance[0], 36.0, 1e-3);
  EXPECT_NEAR(p.variance[1], 2.0 / 3, 1e-4);
  EXPECT_NEAR(p.explained[0], 36.0 / (36.0 + 2.0 / 3), 1e-5);
  EXPECT_NEAR(p.explained[0] + p.explained[1], 1.0, 1e-5);
  for (int j = 0; j < 4; ++j) {
    EXPECT_NEAR(p.components.at(0, j), u[j], 1e-5) << j;
    EXPECT_NEAR(p.components.at(1, j), -w[j], 1e-5) << j;
  }
  for (int r = 0; r < n; ++r) {
    EXPECT_NEAR(p.coordinates.at(r, 0), a[r], 1e-4) << r;
    EXPECT_NEAR(p.coordinates.at(r, 1), -b[r], 1e-4) << r;
    const auto q = p.project(m.row(r));
    EXPECT_NEAR(q[0], p.coordinates.at(r, 0), 1e-5);
    EXPECT_NEAR(q[1], p.coordinates.at(r, 1), 1e-5);
  }
  // The same input gives the same output, bit for bit.
  const auto again = pca_2d(m);
  EXPECT_EQ(again.coordinates.data, p.coordinates.data);
  EXPECT_EQ(again.components.data, p.components.data);
}

TEST(EmbeddingPca, FewerPointsThanDimensions) {
  // 4 points in 10-D on a line along u (u's largest loading, index 3, is negative: the component
  // is -u), then 12 points in 40-D: the directions are unit, orthogonal, and the coordinates are
  // the centred points projected on them, with the reported variances.
  std::vector<double> u(10, 0.0);
  u[0] = 0.2, u[3] = -0.8, u[7] = 0.4, u[9] = 0.4;
  const double t[] = {-1, 0.5, 2, 4.5};
  FloatMatrix line(4, 10);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 10; ++j) line.at(i, j) = static_cast<float>(1.0 + t[i] * u[j]);
  const auto p = pca_2d(line);
  EXPECT_NEAR(p.explained[0], 1.0, 1e-6);
  EXPECT_EQ(p.explained[1], 0.0);
  for (int j = 0; j < 10; ++j) EXPECT_NEAR(p.components.at(0, j), -u[j], 1e-5) << j;
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(p.coordinates.at(i, 0), -(t[i] - 1.5), 1e-5) << i;

  FloatMatrix m(12, 40);
  std::uint32_t state = 12345;
  for (auto& v : m.data) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  for (int i = 0; i < 12; ++i) m.at(i, 5) += 3.0f * static_cast<float>(i);  // one dominant direction
  const auto q = pca_2d(m);
  EXPECT_GT(q.explained[0], 0.5);
  EXPECT_GT(q.explained[1], 0.0);
  EXPECT_GE(q.explained[0], q.explained[1]);
  double n0 = 0, n1 = 0, dot01 = 0;
  for (int j = 0; j < 40; ++j) {
    n0 += q.components.at(0, j) * q.components.at(0, j);
    n1 += q.components.at(1, j) * q.components.at(1, j);
    dot01 += q.components.at(0, j) * q.components.at(1, j);
  }
  EXPECT_NEAR(n0, 1.0, 1e-5);
  EXPECT_NEAR(n1, 1.0, 1e-5);
  EXPECT_NEAR(dot01, 0.0, 1e-5);
  EXPECT_GT(q.components.at(0, 5), 0.9f);  // along the dominant column, positive
  for (int c = 0; c < 2; ++c) {
    double var = 0;
    for (int i = 0; i < 12; ++i) {
      const auto proj = q.project(m.row(i));
      EXPECT_NEAR(proj[c], q.coordinates.at(i, c), 1e-4);
      var += static_cast<double>(q.coordinates.at(i, c)) * q.coordinates.at(i, c) / 12;
    }
    EXPECT_NEAR(var, q.variance[c], 1e-4 * q.variance[0]);
  }
}

TEST(EmbeddingPca, DegenerateInputs) {
  const auto none = pca_2d(FloatMatrix(0, 4));
  EXPECT_EQ(none.coordinates.rows, 0);
  EXPECT_EQ(none.explained[0], 0.0);

  const auto single = pca_2d(FloatMatrix(1, 3, {1, 2, 3}));
  ASSERT_EQ(single.coordinates.rows, 1);
  EXPECT_EQ(single.coordinates.at(0, 0), 0.0f);
  EXPECT_EQ(single.coordinates.at(0, 1), 0.0f);
  EXPECT_EQ(single.explained[0], 0.0);
  EXPECT_EQ(single.mean[2], 3.0f);

  const auto same = pca_2d(FloatMatrix(3, 2, {1, 1, 1, 1, 1, 1}));
  for (float v : same.coordinates.data) EXPECT_EQ(v, 0.0f);
  EXPECT_EQ(same.explained[0] + same.explained[1], 0.0);

  // One column: the first component is that column, there is no second.
  const auto column = pca_2d(FloatMatrix(3, 1, {1, 2, 6}));
  EXPECT_NEAR(column.explained[0], 1.0, 1e-12);
  EXPECT_EQ(column.explained[1], 0.0);
  EXPECT_EQ(column.components.at(0, 0), 1.0f);
  EXPECT_EQ(column.components.at(1, 0), 0.0f);
  EXPECT_NEAR(column.coordinates.at(2, 0), 3.0, 1e-6);
  EXPECT_EQ(column.coordinates.at(2, 1), 0.0f);

  // Zero rows among others are ordinary points (at the origin).
  const auto with_zero = pca_2d(FloatMatrix(3, 2, {0, 0, 2, 0, 4, 0}));
  EXPECT_NEAR(with_zero.explained[0], 1.0, 1e-12);
  EXPECT_NEAR(with_zero.coordinates.at(0, 0), -2.0, 1e-6);
}

TEST(EmbeddingSinusoidal, SimilarityDependsOnlyOnTheOffset) {
  const int positions = 64, d = 32;
  const auto table = sinusoidal(positions, d);
  const auto s = cosine_similarity_matrix(table);
  for (int i = 0; i < positions; ++i) {
    EXPECT_NEAR(s.at(i, i), 1.0, 1e-6);
    for (int j = 0; j < positions; ++j) {
      const int offset = std::abs(i - j);
      ASSERT_NEAR(s.at(i, j), s.at(0, offset), 2e-5) << i << "," << j;
      // Closed form: every row has norm √(d/2) and PE(i)·PE(j) = Σ_k cos(ω_k (i − j)).
      double sum = 0;
      for (int k = 0; k < d / 2; ++k) sum += std::cos(offset / std::pow(10000.0, 2.0 * k / d));
      ASSERT_NEAR(s.at(i, j), sum / (d / 2), 2e-5) << i << "," << j;
    }
  }
  // Neighbouring positions are the most similar: position 20's nearest neighbours are 19 and 21
  // (equally similar), then 18 and 22.
  const auto n = nearest_neighbours(table, 20, 4);
  ASSERT_EQ(n.size(), 4u);
  EXPECT_EQ((std::set<int>{n[0].row, n[1].row}), (std::set<int>{19, 21}));
  EXPECT_EQ((std::set<int>{n[2].row, n[3].row}), (std::set<int>{18, 22}));
  EXPECT_NEAR(n[0].similarity, n[1].similarity, 1e-5);
  EXPECT_LT(n[2].similarity, n[0].similarity);

  // The sinusoidal positions trace a smooth curve: PCA's first two components hold a clear share
  // of the variance, and the projection of consecutive positions moves by small steps.
  const auto p = pca_2d(table);
  EXPECT_GT(p.explained[0], p.explained[1]);
  EXPECT_GT(p.explained[0] + p.explained[1], 0.1);
  EXPECT_LE(p.explained[0] + p.explained[1], 1.0 + 1e-9);
}

}  // namespace
}  // namespace ts
