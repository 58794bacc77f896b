// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/analysis/embeddings.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace ts {

namespace {

double dot(const float* a, const float* b, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

double norm(const float* a, int n) { return std::sqrt(dot(a, a, n)); }

void check_row(const FloatMatrix& m, int row) {
  if (row < 0 || row >= m.rows)
    throw std::out_of_range("row " + std::to_string(row) + " is not a row of a matrix with " + std::to_string(m.rows) +
                            " rows");
}

// The dominant eigenvector of the symmetric positive semi-definite `c` ([n × n], row-major),
// orthogonal to `against` when given. Deterministic: the start vector comes from a fixed linear
// congruential sequence (a constant start could be orthogonal to the answer in constructed cases).
std::vector<double> power_iteration(const std::vector<double>& c, int n, const std::vector<double>* against) {
  std::vector<double> v(static_cast<std::size_t>(n)), w(static_cast<std::size_t>(n));
  std::uint64_t state = 0x9E3779B97F4A7C15ULL;
  for (auto& x : v) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53) * 2.0 - 1.0;
  }
  auto orthogonalise = [&](std::vector<double>& x) {
    if (!against) return;
    double p = 0;
    for (int i = 0; i < n; ++i) p += x[i] * (*against)[i];
    for (int i = 0; i < n; ++i) x[i] -= p * (*against)[i];
  };
  auto normalise = [&](std::vector<double>& x) {
    double s = 0;
    for (double e : x) s += e * e;
    s = std::sqrt(s);
    if (s > 0)
      for (double& e : x) e /= s;
    return s;
  };
  orthogonalise(v);
  normalise(v);
  // Stops when the vector has settled, or when the variance it captures (the Rayleigh quotient
  // v·Cv) no longer grows: with nearly equal eigenvalues the vector wanders slowly inside their
  // span, where every direction shows the same variance, and waiting for it would cost seconds.
  constexpr int kMaxIterations = 300;
  double previous = -1;
  for (int it = 0; it < kMaxIterations; ++it) {
    double rayleigh = 0;
    for (int i = 0; i < n; ++i) {
      const double* row = c.data() + static_cast<std::size_t>(i) * n;
      double s = 0;
      for (int j = 0; j < n; ++j) s += row[j] * v[j];
      w[i] = s;
      rayleigh += s * v[i];
    }
    orthogonalise(w);                 // keeps rounding from bringing the deflated direction back
    if (normalise(w) == 0) return v;  // nothing left in this subspace: any unit vector will do
    double change = 0;
    for (int i = 0; i < n; ++i) change = std::max(change, std::abs(w[i] - v[i]));
    v.swap(w);
    if (change < 1e-12) break;
    if (previous > 0 && rayleigh - previous <= 1e-7 * rayleigh) break;
    previous = rayleigh;
  }
  return v;
}

double rayleigh(const std::vector<double>& c, int n, const std::vector<double>& v) {
  double s = 0;
  for (int i = 0; i < n; ++i) {
    const double* row = c.data() + static_cast<std::size_t>(i) * n;
    double r = 0;
    for (int j = 0; j < n; ++j) r += row[j] * v[j];
    s += v[i] * r;
  }
  return s;
}

// Sign convention: the largest-magnitude loading is positive (the first one on ties).
void fix_sign(std::vector<double>& v) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (std::abs(v[i]) > std::abs(v[best])) best = i;
  if (!v.empty() && v[best] < 0)
    for (double& x : v) x = -x;
}

}  // namespace

FloatMatrix::FloatMatrix(int r, int c, std::vector<float> values) : rows(r), cols(c), data(std::move(values)) {
  if (r < 0 || c < 0) throw std::invalid_argument("matrix sizes must not be negative");
  const auto n = static_cast<std::size_t>(r) * static_cast<std::size_t>(c);
  if (data.empty())
    data.assign(n, 0.0f);
  else if (data.size() != n)
    throw std::invalid_argument("matrix of " + std::to_string(r) + " x " + std::to_string(c) + " needs " +
                                std::to_string(n) + " values, got " + std::to_string(data.size()));
}

FloatMatrix select_rows(const FloatMatrix& m, const std::vector<int>& indices) {
  FloatMatrix out(static_cast<int>(indices.size()), m.cols);
  for (std::size_t i = 0; i < indices.size(); ++i) {
    check_row(m, indices[i]);
    std::copy(m.row(indices[i]), m.row(indices[i]) + m.cols,
              out.data.begin() + static_cast<std::ptrdiff_t>(i * m.cols));
  }
  return out;
}

double cosine_similarity(const float* a, const float* b, int n) {
  const double na = norm(a, n), nb = norm(b, n);
  if (na == 0 || nb == 0) return 0;
  return std::clamp(dot(a, b, n) / (na * nb), -1.0, 1.0);
}

FloatMatrix cosine_similarity_matrix(const FloatMatrix& m) {
  FloatMatrix out(m.rows, m.rows);
  std::vector<double> norms(static_cast<std::size_t>(m.rows));
  for (int i = 0; i < m.rows; ++i) norms[i] = norm(m.row(i), m.cols);
  for (int i = 0; i < m.rows; ++i) {
    if (norms[i] == 0) continue;  // the row (and column) stays 0
    out.at(i, i) = 1.0f;
    for (int j = i + 1; j < m.rows; ++j) {
      if (norms[j] == 0) continue;
      const auto s = static_cast<float>(std::clamp(dot(m.row(i), m.row(j), m.cols) / (norms[i] * norms[j]), -1.0, 1.0));
      out.at(i, j) = out.at(j, i) = s;
    }
  }
  return out;
}

std::vector<Neighbour> nearest_neighbours(const FloatMatrix& m, int row, int k, const std::vector<int>& exclude) {
  check_row(m, row);
  std::vector<Neighbour> all;
  const double nq = norm(m.row(row), m.cols);
  if (k <= 0 || nq == 0) return all;
  const std::unordered_set<int> skip(exclude.begin(), exclude.end());
  all.reserve(static_cast<std::size_t>(m.rows));
  for (int r = 0; r < m.rows; ++r) {
    if (r == row || skip.count(r)) continue;
    const double nr = norm(m.row(r), m.cols);
    if (nr == 0) continue;
    all.push_back({r, std::clamp(dot(m.row(row), m.row(r), m.cols) / (nq * nr), -1.0, 1.0)});
  }
  const auto keep = std::min(all.size(), static_cast<std::size_t>(k));
  // Rows were pushed in index order; ties compare equal, so partial_sort + index tie-break is stable.
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(),
                    [](const Neighbour& a, const Neighbour& b) {
                      return a.similarity != b.similarity ? a.similarity > b.similarity : a.row < b.row;
                    });
  all.resize(keep);
  return all;
}

std::vector<float> Projection2D::project(const float* point) const {
  std::vector<float> out(2, 0.0f);
  const int d = components.cols;
  for (int c = 0; c < components.rows && c < 2; ++c) {
    double s = 0;
    for (int j = 0; j < d; ++j) s += (static_cast<double>(point[j]) - mean[j]) * components.at(c, j);
    out[c] = static_cast<float>(s);
  }
  return out;
}

Projection2D pca_2d(const FloatMatrix& m) {
  Projection2D p;
  const int n = m.rows, d = m.cols;
  p.coordinates = FloatMatrix(n, 2);
  p.components = FloatMatrix(2, d);
  p.mean.assign(static_cast<std::size_t>(d), 0.0f);
  if (n == 0 || d == 0) return p;

  std::vector<double> mean(static_cast<std::size_t>(d), 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) mean[j] += m.at(i, j);
  for (int j = 0; j < d; ++j) {
    mean[j] /= n;
    p.mean[j] = static_cast<float>(mean[j]);
  }
  // Centred data in double.
  std::vector<double> x(static_cast<std::size_t>(n) * d);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) x[static_cast<std::size_t>(i) * d + j] = m.at(i, j) - mean[j];
  const auto xrow = [&](int i) { return x.data() + static_cast<std::size_t>(i) * d; };

  // The covariance C = XᵀX / n (d × d; divided by n: the variance of the points shown). With
  // fewer points than dimensions (500 tokens of a 1024-wide model) the same eigenvalues come from
  // the smaller G = XXᵀ / n (n × n), whose eigenvector u gives the direction Xᵀu: the power
  // iteration then costs n² instead of d² per step.
  const bool dual = n < d;
  const int k = dual ? n : d;
  std::vector<double> s(static_cast<std::size_t>(k) * k, 0.0);
  if (dual) {
    for (int a = 0; a < n; ++a)
      for (int b = a; b < n; ++b) {
        double v = 0;
        const double *ra = xrow(a), *rb = xrow(b);
        for (int j = 0; j < d; ++j) v += ra[j] * rb[j];
        s[static_cast<std::size_t>(a) * k + b] = v;
      }
  } else {
    for (int i = 0; i < n; ++i) {
      const double* r = xrow(i);
      for (int a = 0; a < d; ++a) {
        if (r[a] == 0) continue;
        double* out = s.data() + static_cast<std::size_t>(a) * k;
        for (int b = a; b < d; ++b) out[b] += r[a] * r[b];
      }
    }
  }
  double trace = 0;
  for (int a = 0; a < k; ++a) {
    for (int b = a; b < k; ++b) {
      s[static_cast<std::size_t>(a) * k + b] /= n;
      s[static_cast<std::size_t>(b) * k + a] = s[static_cast<std::size_t>(a) * k + b];
    }
    trace += s[static_cast<std::size_t>(a) * k + a];
  }
  if (!(trace > 0)) return p;  // all points identical: nothing to project

  // Power iteration for the top eigenvector, then on the deflated S' = S - l1 u1 u1ᵀ for the next.
  std::vector<double> u1 = power_iteration(s, k, nullptr);
  double l1 = std::max(0.0, rayleigh(s, k, u1));
  std::vector<double> u2;
  double l2 = 0;
  if (k >= 2) {
    std::vector<double> deflated = s;
    for (int a = 0; a < k; ++a)
      for (int b = 0; b < k; ++b) deflated[static_cast<std::size_t>(a) * k + b] -= l1 * u1[a] * u1[b];
    u2 = power_iteration(deflated, k, &u1);
    l2 = std::max(0.0, rayleigh(s, k, u2));
    if (l2 > l1) {  // an early stop among nearly equal eigenvalues: keep them in order
      std::swap(u1, u2);
      std::swap(l1, l2);
    }
  }
  // A component whose variance is rounding noise next to the total is reported as none.
  const double negligible = 1e-12 * trace;
  if (l1 <= negligible) l1 = 0;
  if (l2 <= negligible) l2 = 0;

  // The directions in model space (unit length, sign convention applied).
  const auto direction = [&](const std::vector<double>& u, double lambda) {
    std::vector<double> v(static_cast<std::size_t>(d), 0.0);
    if (u.empty()) return v;
    if (!dual) {
      v = u;
    } else {
      if (lambda == 0) return v;  // no such direction among these points
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < d; ++j) v[j] += u[i] * xrow(i)[j];
      double norm2 = 0;
      for (double e : v) norm2 += e * e;
      if (norm2 == 0) return v;
      for (double& e : v) e /= std::sqrt(norm2);
    }
    fix_sign(v);
    return v;
  };
  const std::vector<double> dirs[2] = {direction(u1, l1), direction(u2, l2)};
  const double lambdas[2] = {l1, l2};
  for (int c = 0; c < 2; ++c) {
    p.variance[c] = lambdas[c];
    p.explained[c] = std::min(1.0, lambdas[c] / trace);
    for (int j = 0; j < d; ++j) p.components.at(c, j) = static_cast<float>(dirs[c][j]);
    if (lambdas[c] == 0) continue;  // coordinates stay 0 rather than rounding noise
    for (int i = 0; i < n; ++i) {
      double v = 0;
      for (int j = 0; j < d; ++j) v += xrow(i)[j] * dirs[c][j];
      p.coordinates.at(i, c) = static_cast<float>(v);
    }
  }
  return p;
}

}  // namespace ts
