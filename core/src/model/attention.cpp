// SPDX-License-Identifier: GPL-3.0-or-later
// Multi-head scaled dot-product attention with optional weight recording.
#include "ts/model/attention.h"

#include "ts/model/bf16_products.h"
#include "ts/model/fp16_products.h"
#include "ts/model/float_mode.h"
#include "ts/model/torch_compat.h"
#include "ts/host/simd_exp.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <ATen/Dispatch.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/custom_function.h>

namespace ts {

at::Tensor padding_mask(const at::Tensor& tokens, std::int64_t pad_id) {
  auto options = at::TensorOptions().dtype(at::kFloat).device(tokens.device());
  auto mask = at::zeros(tokens.sizes(), options);
  mask.masked_fill_(tokens.eq(pad_id), -std::numeric_limits<float>::infinity());
  return mask.unsqueeze(1).unsqueeze(1);  // [B, 1, 1, S]
}

at::Tensor causal_mask(std::int64_t length, const at::TensorOptions& options) {
  auto mask = at::full({length, length}, -std::numeric_limits<float>::infinity(), options.dtype(at::kFloat));
  return mask.triu(/*diagonal=*/1).unsqueeze(0).unsqueeze(0);  // [1, 1, T, T]
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (x.dim() >= 1 && x.numel() == x.size(-1) && x.device().is_cpu() && !at::GradMode::is_enabled()) {
    auto sizes = x.sizes().vec();
    sizes.back() = weight.size(0);
    const auto row = x.reshape({-1});
    return (bias.defined() ? at::addmv(bias, weight, row) : at::mv(weight, row)).view(sizes);
  }
  if (x.device().is_cpu() && x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat) {
    if (fp16_products_enabled()) return fp16_linear(x, weight, bias);
    if (bf16_products_enabled()) return bf16_linear(x, weight, bias);
  }
  return at::linear(x, weight, bias);
}

namespace {
inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
constexpr std::uint64_t kPairStride = 0xd1342543de82ef95ULL;  // pair k hashes seed + k * this

#if defined(__x86_64__)
#define TS_HASH_DROPOUT_AVX512 1
// Pairs [k, end) of fp32 or bf16 elements, 8 pairs (16 elements) at a time: the 8 64-bit hashes of a
// register are, read as 16 32-bit lanes, the uniforms of elements 2k, 2k+1, ... in order, exactly as
// the one-element loop uses them. Returns the first pair not done (the loop finishes the rest).
// kRelu: max(0, x) first (relu_dropout's forward; a NaN stays NaN, -0 stays -0, as the loop's relu_of).
template <class T, bool kRelu>
__attribute__((target("avx512f,avx512dq,avx512bw"))) std::int64_t hash_dropout_avx512(
    const T* src, T* dst, std::int64_t k, std::int64_t end, std::uint64_t seed, std::uint32_t threshold, float scale) {
  const __m512i stride = _mm512_set1_epi64(static_cast<long long>(kPairStride));
  const __m512i golden = _mm512_set1_epi64(static_cast<long long>(0x9e3779b97f4a7c15ULL));
  const __m512i m1 = _mm512_set1_epi64(static_cast<long long>(0xbf58476d1ce4e5b9ULL));
  const __m512i m2 = _mm512_set1_epi64(static_cast<long long>(0x94d049bb133111ebULL));
  const __m512i base = _mm512_set1_epi64(static_cast<long long>(seed));
  const __m512i lanes = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i limit = _mm512_set1_epi32(static_cast<int>(threshold));
  const __m512 factor = _mm512_set1_ps(scale);
  for (; k + 8 <= end; k += 8) {
    const __m512i index = _mm512_add_epi64(_mm512_set1_epi64(k), lanes);
    __m512i z = _mm512_add_epi64(_mm512_add_epi64(base, _mm512_mullo_epi64(index, stride)), golden);
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)), m1);
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)), m2);
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
    const __mmask16 keep = _mm512_cmpge_epu32_mask(z, limit);
    if constexpr (std::is_same_v<T, float>) {
      __m512 x = _mm512_loadu_ps(src + 2 * k);
      if constexpr (kRelu) x = _mm512_max_ps(_mm512_setzero_ps(), x);  // the second operand where either is NaN
      _mm512_storeu_ps(dst + 2 * k, _mm512_maskz_mul_ps(keep, x, factor));
    } else {
      // bf16 -> fp32, the product, then back with round-to-nearest-even (c10::BFloat16's rounding;
      // a NaN becomes its canonical 0x7FC0).
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * k));
      __m512 x = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(raw), 16));
      if constexpr (kRelu) x = _mm512_max_ps(_mm512_setzero_ps(), x);
      const __m512i bits = _mm512_castps_si512(_mm512_maskz_mul_ps(keep, x, factor));
      const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
      __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF))), 16);
      const __mmask16 nan = _mm512_cmp_ps_mask(_mm512_castsi512_ps(bits), _mm512_castsi512_ps(bits), _CMP_UNORD_Q);
      rounded = _mm512_mask_mov_epi32(rounded, nan, _mm512_set1_epi32(0x7FC0));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * k), _mm512_cvtepi32_epi16(rounded));
    }
  }
  return k;
}

// relu_dropout's backward, 16 at a time: g · scale where y is not 0 (a NaN is not 0), else 0.
__attribute__((target("avx512f"))) std::int64_t relu_dropout_backward_avx512(const float* g, const float* y, float* out,
                                                                             std::int64_t i, std::int64_t end,
                                                                             float scale) {
  const __m512 factor = _mm512_set1_ps(scale), zero = _mm512_setzero_ps();
  for (; i + 16 <= end; i += 16) {
    const __mmask16 live = _mm512_cmp_ps_mask(_mm512_loadu_ps(y + i), zero, _CMP_NEQ_UQ);
    _mm512_storeu_ps(out + i, _mm512_maskz_mul_ps(live, _mm512_loadu_ps(g + i), factor));
  }
  return i;
}

bool hash_dropout_avx512_available() {
  static const bool yes =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
  return yes;
}
#endif

}  // namespace

namespace detail {

// max(0, v) for relu_dropout, as at::relu gives it: a NaN stays NaN (and -0 stays -0: it compares equal to 0).
template <class T>
inline T relu_of(T v) {
  return v < static_cast<T>(0) ? static_cast<T>(0) : v;
}

// out[i] = in[i] * scale where the hash of (seed, i) keeps element i, else 0 (kRelu: max(0, in[i])
// for in[i]). Each 64-bit hash gives two 32-bit uniforms, one per element of a pair.
template <bool kRelu>
at::Tensor hash_dropout_pass(const at::Tensor& input, std::uint64_t seed, double p, bool vectorised) {
  const auto in = input.contiguous();
  auto out = at::empty_like(in);
  const std::int64_t n = in.numel();
  const auto threshold = static_cast<std::uint32_t>(std::min(p * 4294967296.0, 4294967295.0));
  const double scale = 1.0 / (1.0 - p);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, in.scalar_type(), "fast_dropout", [&] {
    const auto* src = in.data_ptr<scalar_t>();
    auto* dst = out.data_ptr<scalar_t>();
    const auto s = static_cast<scalar_t>(scale);
    const auto value = [](scalar_t v) { return kRelu ? relu_of(v) : v; };
    const auto mode = FloatMode::current();
    at::parallel_for(0, (n + 1) / 2, 8192, [&](std::int64_t begin, std::int64_t end) {
      const FloatMode::Scope same(mode);
      std::int64_t k = begin;
#ifdef TS_HASH_DROPOUT_AVX512
      if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, at::BFloat16>) {
        // Whole pairs only; the vector multiplies by the scale as the loop does (bf16: rounded first).
        if (vectorised && hash_dropout_avx512_available())
          k = hash_dropout_avx512<scalar_t, kRelu>(src, dst, k, std::min(end, n / 2), seed, threshold,
                                                   static_cast<float>(s));
      }
#endif
      for (; k < end; ++k) {
        const std::uint64_t h = splitmix64(seed + static_cast<std::uint64_t>(k) * kPairStride);
        dst[2 * k] =
            static_cast<std::uint32_t>(h) >= threshold ? static_cast<scalar_t>(value(src[2 * k]) * s) : scalar_t(0);
        if (2 * k + 1 < n)
          dst[2 * k + 1] = static_cast<std::uint32_t>(h >> 32) >= threshold
                               ? static_cast<scalar_t>(value(src[2 * k + 1]) * s)
                               : scalar_t(0);
      }
    });
  });
  return out;
}

at::Tensor hash_dropout(const at::Tensor& input, std::uint64_t seed, double p, bool vectorised) {
  return hash_dropout_pass<false>(input, seed, p, vectorised);
}

at::Tensor relu_hash_dropout(const at::Tensor& input, std::uint64_t seed, double p, bool vectorised) {
  if (p > 0) return hash_dropout_pass<true>(input, seed, p, vectorised);
  const auto in = input.contiguous();  // no dropout: max(0, x) alone, without hashing
  auto out = at::empty_like(in);
  const std::int64_t n = in.numel();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, in.scalar_type(), "relu_dropout", [&] {
    const auto* src = in.data_ptr<scalar_t>();
    auto* dst = out.data_ptr<scalar_t>();
    at::parallel_for(0, n, 16384, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) dst[i] = relu_of(src[i]);
    });
  });
  return out;
}

at::Tensor relu_dropout_backward(const at::Tensor& grad, const at::Tensor& output, double scale, bool vectorised) {
  const auto g = grad.contiguous(), y = output.contiguous();
  TORCH_CHECK(g.sizes() == y.sizes() && g.scalar_type() == y.scalar_type(),
              "relu_dropout_backward: the gradient and the output differ in shape or type");
  auto out = at::empty_like(g);
  const std::int64_t n = g.numel();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, g.scalar_type(), "relu_dropout_backward", [&] {
    const auto* pg = g.data_ptr<scalar_t>();
    const auto* py = y.data_ptr<scalar_t>();
    auto* dst = out.data_ptr<scalar_t>();
    const auto s = static_cast<scalar_t>(scale);
    const auto mode = FloatMode::current();
    at::parallel_for(0, n, 16384, [&](std::int64_t begin, std::int64_t end) {
      const FloatMode::Scope same(mode);
      std::int64_t i = begin;
#ifdef TS_HASH_DROPOUT_AVX512
      if constexpr (std::is_same_v<scalar_t, float>)
        if (vectorised && hash_dropout_avx512_available())
          i = relu_dropout_backward_avx512(reinterpret_cast<const float*>(pg), reinterpret_cast<const float*>(py),
                                           reinterpret_cast<float*>(dst), i, end, static_cast<float>(s));
#endif
      for (; i < end; ++i) dst[i] = py[i] != scalar_t(0) ? static_cast<scalar_t>(pg[i] * s) : scalar_t(0);
    });
  });
  return out;
}

}  // namespace detail

namespace {

// ---- Small batched products for attention (attention_matmul) ----

// Matrices up to this many multiply-adds go through small_nn; bigger ones are LibTorch's.
constexpr std::int64_t kSmallProduct = 64 * 64 * 64;

// C (M x N, rows c_rs apart, each contiguous) = A (M x K, element (i, p) at a[i * a_rs + p * a_cs]) times
// B (K x N, rows b_rs apart, each contiguous). One row of C at a time, added up over p in order.
void small_nn_generic(const float* a, std::int64_t a_rs, std::int64_t a_cs, const float* b, std::int64_t b_rs, float* c,
                      std::int64_t c_rs, std::int64_t m, std::int64_t n, std::int64_t k) {
  for (std::int64_t i = 0; i < m; ++i) {
    float* __restrict row = c + i * c_rs;
    for (std::int64_t j = 0; j < n; ++j) row[j] = 0.0f;
    for (std::int64_t p = 0; p < k; ++p) {
      const float x = a[i * a_rs + p * a_cs];
      const float* __restrict brow = b + p * b_rs;
      for (std::int64_t j = 0; j < n; ++j) row[j] += x * brow[j];
    }
  }
}

#if defined(__x86_64__)
// The first n of 16 lanes (all 16 from n = 16 on; n >= 1).
inline __mmask16 lanes_left(std::int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

// NV vectors of 16 columns of one row of C held in registers while p runs over K: one broadcast of
// A(i, p) and NV fused multiply-adds per step; the last vector masked to the columns there are.
template <int NV>
__attribute__((target("avx512f"))) void small_nn_rows_avx512(const float* a, std::int64_t a_rs, std::int64_t a_cs,
                                                             const float* b, std::int64_t b_rs, float* c,
                                                             std::int64_t c_rs, std::int64_t m, std::int64_t k,
                                                             std::int64_t width) {
  __mmask16 mask[NV];
  for (int v = 0; v < NV; ++v) {
    const std::int64_t left = width - 16 * v;
    mask[v] = lanes_left(left);
  }
  for (std::int64_t i = 0; i < m; ++i) {
    __m512 acc[NV];
    for (int v = 0; v < NV; ++v) acc[v] = _mm512_setzero_ps();
    const float* arow = a + i * a_rs;
    for (std::int64_t p = 0; p < k; ++p) {
      const __m512 x = _mm512_set1_ps(arow[p * a_cs]);
      const float* brow = b + p * b_rs;
      for (int v = 0; v < NV; ++v) acc[v] = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(mask[v], brow + 16 * v), acc[v]);
    }
    for (int v = 0; v < NV; ++v) _mm512_mask_storeu_ps(c + i * c_rs + 16 * v, mask[v], acc[v]);
  }
}

__attribute__((target("avx512f"))) void small_nn_avx512(const float* a, std::int64_t a_rs, std::int64_t a_cs,
                                                        const float* b, std::int64_t b_rs, float* c, std::int64_t c_rs,
                                                        std::int64_t m, std::int64_t n, std::int64_t k) {
  for (std::int64_t j0 = 0; j0 < n; j0 += 64) {  // 64 columns of C at a time
    const std::int64_t width = std::min<std::int64_t>(64, n - j0);
    switch ((width + 15) / 16) {
      case 1:
        small_nn_rows_avx512<1>(a, a_rs, a_cs, b + j0, b_rs, c + j0, c_rs, m, k, width);
        break;
      case 2:
        small_nn_rows_avx512<2>(a, a_rs, a_cs, b + j0, b_rs, c + j0, c_rs, m, k, width);
        break;
      case 3:
        small_nn_rows_avx512<3>(a, a_rs, a_cs, b + j0, b_rs, c + j0, c_rs, m, k, width);
        break;
      default:
        small_nn_rows_avx512<4>(a, a_rs, a_cs, b + j0, b_rs, c + j0, c_rs, m, k, width);
        break;
    }
  }
}
#endif

void small_nn(const float* a, std::int64_t a_rs, std::int64_t a_cs, const float* b, std::int64_t b_rs, float* c,
              std::int64_t c_rs, std::int64_t m, std::int64_t n, std::int64_t k) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return small_nn_avx512(a, a_rs, a_cs, b, b_rs, c, c_rs, m, n, k);
#endif
  small_nn_generic(a, a_rs, a_cs, b, b_rs, c, c_rs, m, n, k);
}

// a [B, H, M, K] (any strides) times b [B, H, K, N], or times the transpose of b [B, H, N, K]: a new
// [B, H, M, N], contiguous, or with `heads_inner` the transpose of a contiguous [B, M, H, N] (the
// layout the attention's output takes next). The rows of b (or of its transpose, copied per matrix)
// must be contiguous.
at::Tensor small_batched_matmul(const at::Tensor& a, at::Tensor b, bool b_transposed, bool heads_inner = false) {
  if (b.stride(3) != 1) b = b.contiguous();
  const std::int64_t batches = a.size(0), heads = a.size(1), m = a.size(2), k = a.size(3);
  const std::int64_t n = b_transposed ? b.size(2) : b.size(3);
  auto c = heads_inner ? at::empty({batches, m, heads, n}, a.options()).transpose(1, 2)
                       : at::empty({batches, heads, m, n}, a.options());
  const std::int64_t c_rs = c.stride(2), c_batch = c.stride(0), c_head = c.stride(1);
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  const auto as = a.strides(), bs = b.strides();
  const auto mode = FloatMode::current();
  const std::int64_t grain = std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(1, m * n * k));
  at::parallel_for(0, batches * heads, grain, [&](std::int64_t begin, std::int64_t end) {
    const FloatMode::Scope same(mode);
    std::vector<float> transposed(b_transposed ? static_cast<std::size_t>(k * n) : 0);
    for (std::int64_t x = begin; x < end; ++x) {
      const std::int64_t bi = x / heads, hi = x % heads;
      const float* am = pa + bi * as[0] + hi * as[1];
      const float* bm = pb + bi * bs[0] + hi * bs[1];
      std::int64_t b_rs = bs[2];
      if (b_transposed) {  // b is N x K with contiguous rows: its transpose K x N, row by row
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t p = 0; p < k; ++p) transposed[static_cast<std::size_t>(p * n + j)] = bm[j * bs[2] + p];
        bm = transposed.data();
        b_rs = n;
      }
      small_nn(am, as[2], as[3], bm, b_rs, pc + bi * c_batch + hi * c_head, c_rs, m, n, k);
    }
  });
  return c;
}

// ---- The attention's weights: softmax(scores · scale + mask) in one pass a row ----

// Where an element's logit z lies below this, exp(z) is 0 in fp32 (below the smallest subnormal).
constexpr float kExpUnderflow = -103.97f;

#if defined(__x86_64__)
// One row of `width` logits: w = softmax(s · scale + m), 16 at a time (the mask row contiguous, or
// null for none).
__attribute__((target("avx512f"))) void softmax_row_avx512(const float* s, const float* m, float* w, std::int64_t width,
                                                           float scale) {
  const __m512 factor = _mm512_set1_ps(scale);
  __m512 top = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (std::int64_t j = 0; j < width; j += 16) {
    const __mmask16 lanes = lanes_left(width - j);
    __m512 z = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, s + j), factor);
    if (m) z = _mm512_add_ps(z, _mm512_maskz_loadu_ps(lanes, m + j));
    _mm512_mask_storeu_ps(w + j, lanes, z);
    top = _mm512_mask_max_ps(top, lanes, top, z);
  }
  const __m512 biggest = _mm512_set1_ps(_mm512_reduce_max_ps(top));
  __m512 total = _mm512_setzero_ps();
  for (std::int64_t j = 0; j < width; j += 16) {
    const __mmask16 lanes = lanes_left(width - j);
    const __m512 z = _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, w + j), biggest);
    // exp16 gives about 6e-39 below -88; a masked key (-inf) and anything under exp's underflow are 0.
    const __mmask16 live = _mm512_cmp_ps_mask(z, _mm512_set1_ps(kExpUnderflow), _CMP_GE_OQ);
    const __m512 e = _mm512_maskz_mov_ps(live, simd::exp16(z));
    _mm512_mask_storeu_ps(w + j, lanes, e);
    total = _mm512_mask_add_ps(total, lanes, total, e);
  }
  const __m512 inverse = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(total));
  for (std::int64_t j = 0; j < width; j += 16) {
    const __mmask16 lanes = lanes_left(width - j);
    _mm512_mask_storeu_ps(w + j, lanes, _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, w + j), inverse));
  }
}

// One row of the backward: out = (w · (g - Σ g w)) · scale.
__attribute__((target("avx512f"))) void softmax_backward_row_avx512(const float* g, const float* w, float* out,
                                                                    std::int64_t width, float scale) {
  __m512 dot = _mm512_setzero_ps();
  for (std::int64_t j = 0; j < width; j += 16) {
    const __mmask16 lanes = lanes_left(width - j);
    dot = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(lanes, g + j), _mm512_maskz_loadu_ps(lanes, w + j), dot);
  }
  const __m512 sum = _mm512_set1_ps(_mm512_reduce_add_ps(dot)), factor = _mm512_set1_ps(scale);
  for (std::int64_t j = 0; j < width; j += 16) {
    const __mmask16 lanes = lanes_left(width - j);
    const __m512 wj = _mm512_maskz_loadu_ps(lanes, w + j);
    const __m512 gz = _mm512_mul_ps(wj, _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, g + j), sum));
    _mm512_mask_storeu_ps(out + j, lanes, _mm512_mul_ps(gz, factor));
  }
}
#endif

void softmax_row(const float* s, const float* m, float* w, std::int64_t width, float scale, bool vectorised) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (vectorised && avx512) return softmax_row_avx512(s, m, w, width, scale);
#endif
  float biggest = -std::numeric_limits<float>::infinity();
  for (std::int64_t j = 0; j < width; ++j) {
    w[j] = s[j] * scale + (m ? m[j] : 0.0f);
    biggest = std::max(biggest, w[j]);
  }
  float total = 0;
  for (std::int64_t j = 0; j < width; ++j) {
    const float z = w[j] - biggest;
    w[j] = z < kExpUnderflow ? 0.0f : std::exp(z);
    total += w[j];
  }
  const float inverse = 1.0f / total;
  for (std::int64_t j = 0; j < width; ++j) w[j] *= inverse;
}

void softmax_backward_row(const float* g, const float* w, float* out, std::int64_t width, float scale,
                          bool vectorised) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (vectorised && avx512) return softmax_backward_row_avx512(g, w, out, width, scale);
#endif
  float dot = 0;
  for (std::int64_t j = 0; j < width; ++j) dot += g[j] * w[j];
  for (std::int64_t j = 0; j < width; ++j) out[j] = w[j] * (g[j] - dot) * scale;
}

struct AttentionSoftmax : public torch::autograd::Function<AttentionSoftmax> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& scores, const at::Tensor& mask,
                            double scale) {
    auto weights = detail::attention_softmax(scores, mask.numel() > 0 ? mask : at::Tensor(), scale);
    ctx->save_for_backward({weights});
    ctx->saved_data["scale"] = scale;
    return weights;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    return {detail::attention_softmax_backward(grads[0], saved[0], ctx->saved_data["scale"].toDouble()), at::Tensor(),
            at::Tensor()};
  }
};

// Whether x [B, H, T, K] is a view of [B, T, H, K] rows (heads inside tokens, each head's K values
// contiguous, the heads side by side), whatever the tokens' stride.
bool heads_inner_layout(const at::Tensor& x) {
  return x.dim() == 4 && x.size(1) > 1 && x.stride(3) == 1 && x.stride(1) == x.size(3) &&
         x.stride(2) >= x.size(1) * x.size(3);
}

struct AttentionMatmul : public torch::autograd::Function<AttentionMatmul> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            bool b_transposed, bool heads_inner) {
    ctx->save_for_backward({a, b});
    ctx->saved_data["b_transposed"] = b_transposed;
    return small_batched_matmul(a, b, b_transposed, heads_inner);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& a = saved[0];
    const auto& b = saved[1];
    const bool b_transposed = ctx->saved_data["b_transposed"].toBool();
    // [B, H, M, N]; any strides but the last (the products read rows of G in place).
    const auto g = grads[0].stride(3) == 1 ? grads[0] : grads[0].contiguous();
    // Each gradient laid out as its input was where that is heads inside tokens ([B, T, H, K] seen as
    // [B, H, T, K], as split_heads makes them): the view back to [B, T, D] then copies nothing (a copy
    // there took 1.1% of a bf16 training step).
    const bool a_inner = heads_inner_layout(a), b_inner = heads_inner_layout(b);
    at::Tensor grad_a, grad_b;
    if (b_transposed) {  // C = A Bᵀ: dA = G B, dB = Gᵀ A
      grad_a = small_batched_matmul(g, b, false, a_inner);
      grad_b = small_batched_matmul(g.transpose(2, 3), a, false, b_inner);
    } else {  // C = A B: dA = G Bᵀ, dB = Aᵀ G
      grad_a = small_batched_matmul(g, b, true, a_inner);
      grad_b = small_batched_matmul(a.transpose(2, 3), g, false, b_inner);
    }
    return {grad_a, grad_b, at::Tensor(), at::Tensor()};
  }
};

// Dropout that keeps nothing for backward but its seed: the gradient goes through the same mask,
// regenerated from the hash. LibTorch's dropout keeps a mask as large as the activation.
struct HashDropout : public torch::autograd::Function<HashDropout> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, double p, std::int64_t seed) {
    ctx->saved_data["p"] = p;
    ctx->saved_data["seed"] = seed;
    return detail::hash_dropout(x, static_cast<std::uint64_t>(seed), p);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto seed = static_cast<std::uint64_t>(ctx->saved_data["seed"].toInt());
    return {detail::hash_dropout(grads[0], seed, ctx->saved_data["p"].toDouble()), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

namespace detail {

at::Tensor attention_softmax(const at::Tensor& scores, const at::Tensor& mask, double scale, bool vectorised) {
  TORCH_CHECK(scores.dim() == 4 && scores.scalar_type() == at::kFloat && scores.device().is_cpu(),
              "attention_softmax: expected fp32 CPU scores [B, H, T, S]");
  const auto s = scores.contiguous();
  auto w = at::empty_like(s);
  const std::int64_t heads = s.size(1), queries = s.size(2), width = s.size(3);
  const std::int64_t rows = width == 0 ? 0 : s.numel() / width;
  at::Tensor m;
  std::array<std::int64_t, 3> ms{0, 0, 0};  // the mask row's steps per batch, head and query
  if (mask.defined()) {
    TORCH_CHECK(mask.scalar_type() == at::kFloat && mask.device().is_cpu(), "attention_softmax: expected an fp32 mask");
    m = mask.expand(s.sizes());
    if (m.stride(3) != 1 && width > 1) m = m.contiguous();
    ms = {m.stride(0), m.stride(1), m.stride(2)};
  }
  const float* ps = s.data_ptr<float>();
  const float* pm = m.defined() ? m.data_ptr<float>() : nullptr;
  float* pw = w.data_ptr<float>();
  const auto factor = static_cast<float>(scale);
  const auto mode = FloatMode::current();
  at::parallel_for(0, rows, std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(1, width)),
                   [&](std::int64_t begin, std::int64_t end) {
                     const FloatMode::Scope same(mode);
                     for (std::int64_t r = begin; r < end; ++r) {
                       const std::int64_t q = r % queries, h = (r / queries) % heads, b = r / (queries * heads);
                       const float* mask_row = pm ? pm + b * ms[0] + h * ms[1] + q * ms[2] : nullptr;
                       softmax_row(ps + r * width, mask_row, pw + r * width, width, factor, vectorised);
                     }
                   });
  return w;
}

at::Tensor attention_softmax_backward(const at::Tensor& grad, const at::Tensor& weights, double scale,
                                      bool vectorised) {
  const auto g = grad.contiguous(), w = weights.contiguous();
  TORCH_CHECK(g.sizes() == w.sizes() && g.scalar_type() == at::kFloat && w.scalar_type() == at::kFloat,
              "attention_softmax_backward: the gradient and the weights differ in shape or type");
  auto out = at::empty_like(g);
  const std::int64_t width = w.dim() == 0 ? 1 : w.size(-1);
  const std::int64_t rows = width == 0 ? 0 : w.numel() / width;
  const float* pg = g.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const auto factor = static_cast<float>(scale);
  const auto mode = FloatMode::current();
  at::parallel_for(0, rows, std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(1, width)),
                   [&](std::int64_t begin, std::int64_t end) {
                     const FloatMode::Scope same(mode);
                     for (std::int64_t r = begin; r < end; ++r)
                       softmax_backward_row(pg + r * width, pw + r * width, po + r * width, width, factor, vectorised);
                   });
  return out;
}

}  // namespace detail

at::Tensor attention_matmul(const at::Tensor& a, const at::Tensor& b, bool b_transposed, bool heads_inner) {
  const bool small = a.dim() == 4 && b.dim() == 4 && a.device().is_cpu() && b.device().is_cpu() &&
                     a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat && a.size(0) == b.size(0) &&
                     a.size(1) == b.size(1) && a.size(3) == b.size(b_transposed ? 3 : 2) &&
                     a.size(2) * a.size(3) * b.size(b_transposed ? 2 : 3) <= kSmallProduct;
  if (!small || a.numel() == 0 || b.numel() == 0) return at::matmul(a, b_transposed ? b.transpose(-2, -1) : b);
  return AttentionMatmul::apply(a, b, b_transposed, heads_inner);
}

// max(0, x), then dropout, in one pass; the output is all backward needs (see relu_dropout).
struct ReluDropout : public torch::autograd::Function<ReluDropout> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, double p, std::int64_t seed) {
    auto y = detail::relu_hash_dropout(x, static_cast<std::uint64_t>(seed), p);
    ctx->save_for_backward({y});
    ctx->saved_data["scale"] = 1.0 / (1.0 - p);
    return y;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    return {detail::relu_dropout_backward(grads[0], saved[0], ctx->saved_data["scale"].toDouble()), at::Tensor(),
            at::Tensor()};
  }
};

namespace {

#if defined(__x86_64__)
// Layer norm's rows [begin, end) of d floats (a multiple of 16): y = (x - mean) / σ · w + b, with the
// mean and 1/σ of each row kept. The variance is the mean square about the mean (two passes over the row,
// which stays in L1), as a layer norm's biased variance.
__attribute__((target("avx512f"))) void layer_norm_rows_avx512(const float* x, const float* w, const float* b, float* y,
                                                               float* mean, float* rstd, std::int64_t begin,
                                                               std::int64_t end, std::int64_t d, float eps) {
  const float inverse_d = 1.0f / static_cast<float>(d);
  for (std::int64_t r = begin; r < end; ++r) {
    const float* row = x + r * d;
    __m512 sum = _mm512_setzero_ps();
    for (std::int64_t j = 0; j < d; j += 16) sum = _mm512_add_ps(sum, _mm512_loadu_ps(row + j));
    const float m = _mm512_reduce_add_ps(sum) * inverse_d;
    const __m512 mv = _mm512_set1_ps(m);
    __m512 squares = _mm512_setzero_ps();
    for (std::int64_t j = 0; j < d; j += 16) {
      const __m512 t = _mm512_sub_ps(_mm512_loadu_ps(row + j), mv);
      squares = _mm512_fmadd_ps(t, t, squares);
    }
    const float s = 1.0f / std::sqrt(_mm512_reduce_add_ps(squares) * inverse_d + eps);
    const __m512 sv = _mm512_set1_ps(s);
    float* out = y + r * d;
    for (std::int64_t j = 0; j < d; j += 16) {
      const __m512 normalised = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(row + j), mv), sv);
      _mm512_storeu_ps(out + j, _mm512_fmadd_ps(normalised, _mm512_loadu_ps(w + j), _mm512_loadu_ps(b + j)));
    }
    mean[r] = m;
    rstd[r] = s;
  }
}

// Layer norm's backward for rows [begin, end): with x̂ = (x - mean) / σ and h = g · w,
// dx = (h - mean(h) - x̂ · mean(h · x̂)) / σ; g · x̂ and g added into `dw` and `db` (d floats each).
__attribute__((target("avx512f"))) void layer_norm_backward_rows_avx512(const float* x, const float* w,
                                                                        const float* mean, const float* rstd,
                                                                        const float* g, float* dx, float* dw, float* db,
                                                                        std::int64_t begin, std::int64_t end,
                                                                        std::int64_t d) {
  const float inverse_d = 1.0f / static_cast<float>(d);
  for (std::int64_t r = begin; r < end; ++r) {
    const float* row = x + r * d;
    const float* grad = g + r * d;
    const __m512 mv = _mm512_set1_ps(mean[r]), sv = _mm512_set1_ps(rstd[r]);
    __m512 h_sum = _mm512_setzero_ps(), hx_sum = _mm512_setzero_ps();
    for (std::int64_t j = 0; j < d; j += 16) {
      const __m512 normalised = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(row + j), mv), sv);
      const __m512 h = _mm512_mul_ps(_mm512_loadu_ps(grad + j), _mm512_loadu_ps(w + j));
      h_sum = _mm512_add_ps(h_sum, h);
      hx_sum = _mm512_fmadd_ps(h, normalised, hx_sum);
    }
    const __m512 h_mean = _mm512_set1_ps(_mm512_reduce_add_ps(h_sum) * inverse_d);
    const __m512 hx_mean = _mm512_set1_ps(_mm512_reduce_add_ps(hx_sum) * inverse_d);
    float* out = dx + r * d;
    for (std::int64_t j = 0; j < d; j += 16) {
      const __m512 normalised = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(row + j), mv), sv);
      const __m512 gv = _mm512_loadu_ps(grad + j);
      const __m512 h = _mm512_mul_ps(gv, _mm512_loadu_ps(w + j));
      _mm512_storeu_ps(out + j,
                       _mm512_mul_ps(sv, _mm512_sub_ps(_mm512_sub_ps(h, h_mean), _mm512_mul_ps(normalised, hx_mean))));
      _mm512_storeu_ps(dw + j, _mm512_fmadd_ps(gv, normalised, _mm512_loadu_ps(dw + j)));
      _mm512_storeu_ps(db + j, _mm512_add_ps(_mm512_loadu_ps(db + j), gv));
    }
  }
}
#endif

constexpr std::int64_t kLayerNormBlock = 64;  // rows whose weight and bias gradients are summed together

bool layer_norm_is_ours(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
#else
  constexpr bool avx512 = false;
#endif
  if (!at::GradMode::is_enabled() || !avx512 || x.dim() < 1 || x.numel() == 0) return false;
  if (!(x.requires_grad() || weight.requires_grad() || bias.requires_grad())) return false;
  const std::int64_t d = x.size(-1);
  const auto is_vector = [d](const at::Tensor& t) {
    return t.defined() && t.dim() == 1 && t.size(0) == d && t.scalar_type() == at::kFloat && t.device().is_cpu();
  };
  return x.device().is_cpu() && x.scalar_type() == at::kFloat && d % 16 == 0 && is_vector(weight) && is_vector(bias);
}

struct LayerNormRows : public torch::autograd::Function<LayerNormRows> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x_in, const at::Tensor& weight_in,
                            const at::Tensor& bias_in, double eps) {
    const auto x = x_in.contiguous(), weight = weight_in.contiguous(), bias = bias_in.contiguous();
    const std::int64_t d = x.size(-1), rows = x.numel() / d;
    auto y = at::empty_like(x);
    auto mean = at::empty({rows}, x.options()), rstd = at::empty({rows}, x.options());
#if defined(__x86_64__)
    const float* xp = x.data_ptr<float>();
    const float *wp = weight.data_ptr<float>(), *bp = bias.data_ptr<float>();
    float *yp = y.data_ptr<float>(), *mp = mean.data_ptr<float>(), *sp = rstd.data_ptr<float>();
    at::parallel_for(0, rows, kLayerNormBlock, [&](std::int64_t begin, std::int64_t end) {
      layer_norm_rows_avx512(xp, wp, bp, yp, mp, sp, begin, end, d, static_cast<float>(eps));
    });
#endif
    ctx->save_for_backward({x, weight, mean, rstd});
    return y;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &weight = saved[1], &mean = saved[2], &rstd = saved[3];
    const auto g = grads[0].contiguous();
    const std::int64_t d = x.size(-1), rows = x.numel() / d;
    const std::int64_t blocks = (rows + kLayerNormBlock - 1) / kLayerNormBlock;
    auto dx = at::empty_like(x);
    auto partial = at::zeros({blocks, 2, d}, x.options());  // each block's weight and bias gradients
#if defined(__x86_64__)
    const float *xp = x.data_ptr<float>(), *wp = weight.data_ptr<float>(), *gp = g.data_ptr<float>();
    const float *mp = mean.data_ptr<float>(), *sp = rstd.data_ptr<float>();
    float *dxp = dx.data_ptr<float>(), *pp = partial.data_ptr<float>();
    at::parallel_for(0, blocks, 1, [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t k = first; k < last; ++k)
        layer_norm_backward_rows_avx512(xp, wp, mp, sp, gp, dxp, pp + k * 2 * d, pp + k * 2 * d + d,
                                        k * kLayerNormBlock, std::min(rows, (k + 1) * kLayerNormBlock), d);
    });
#endif
    at::Tensor dw, db;
    if (ctx->needs_input_grad(1) || ctx->needs_input_grad(2)) {
      auto sums = at::empty({2, d}, x.options());  // the blocks added in order: the same sums whatever the threads
      const float* block = partial.data_ptr<float>();
      float* out = sums.data_ptr<float>();
      std::copy(block, block + 2 * d, out);
      for (std::int64_t k = 1; k < blocks; ++k)
        for (std::int64_t j = 0; j < 2 * d; ++j) out[j] += block[k * 2 * d + j];
      if (ctx->needs_input_grad(1)) dw = sums[0];
      if (ctx->needs_input_grad(2)) db = sums[1];
    }
    return {ctx->needs_input_grad(0) ? dx : at::Tensor(), dw, db, at::Tensor()};
  }
};

}  // namespace

at::Tensor layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps) {
  if (layer_norm_is_ours(x, weight, bias)) return LayerNormRows::apply(x, weight, bias, eps);
  return at::layer_norm(x, {x.size(-1)}, weight, bias, eps);
}

at::Tensor layer_norm(torch::nn::LayerNorm module, const at::Tensor& x) {
  const auto& shape = module->options.normalized_shape();
  if (shape.size() == 1 && layer_norm_is_ours(x, module->weight, module->bias))  // its weight [d] is x's width
    return LayerNormRows::apply(x, module->weight, module->bias, module->options.eps());
  return module->forward(x);
}

at::Tensor relu_dropout(const at::Tensor& x, double p, bool training) {
  if (!training) p = 0;
  const bool ours = x.device().is_cpu() && x.numel() > 0 && p < 1 &&
                    (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16);
  if (!ours) return fast_dropout(at::relu(x), p, training);
  if (p <= 0 && !(at::GradMode::is_enabled() && x.requires_grad())) return at::relu(x);
  const auto seed = p > 0 ? DropoutSeeds::next() : 0;  // drawn where fast_dropout would draw it
  return ReluDropout::apply(x, p, static_cast<std::int64_t>(seed));
}

at::Tensor fast_dropout(const at::Tensor& x, double p, bool training) {
  if (!training || p <= 0 || x.numel() == 0) return x;
  if (!x.device().is_cpu()) return at::dropout(x, p, true);
  if (p >= 1) return x * 0;
  return HashDropout::apply(x, p, static_cast<std::int64_t>(DropoutSeeds::next()));
}

namespace {
thread_local DropoutSeeds* innermost_seeds = nullptr;
}  // namespace

DropoutSeeds::DropoutSeeds(std::uint64_t base) : base_(base), outer_(innermost_seeds) { innermost_seeds = this; }

DropoutSeeds::~DropoutSeeds() { innermost_seeds = outer_; }

std::uint64_t DropoutSeeds::draw_base() {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return at::check_generator<at::CPUGeneratorImpl>(generator)->random64();
}

std::uint64_t DropoutSeeds::next() {
  DropoutSeeds* scope = innermost_seeds;
  if (!scope) return draw_base();
  return splitmix64(scope->base_ + scope->count_++ * kPairStride);
}

MultiHeadAttentionImpl::MultiHeadAttentionImpl(std::int64_t d_model, std::int64_t heads, double dropout,
                                               bool self_attention)
    : d_model_(d_model), heads_(heads), head_dim_(d_model / heads), self_attention_(self_attention) {
  TORCH_CHECK(d_model % heads == 0, "heads (", heads, ") must divide d_model (", d_model, ")");
  if (self_attention_) {
    qkv_ = register_module("qkv", torch::nn::Linear(d_model, 3 * d_model));
  } else {
    q_ = register_module("q", torch::nn::Linear(d_model, d_model));
    kv_ = register_module("kv", torch::nn::Linear(d_model, 2 * d_model));
  }
  out_ = register_module("out", torch::nn::Linear(d_model, d_model));
  dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
  kernel_ = default_attention_kernel();
}

at::Tensor MultiHeadAttentionImpl::split_heads(const at::Tensor& x) const {
  return x.view({x.size(0), x.size(1), heads_, head_dim_}).transpose(1, 2);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> MultiHeadAttentionImpl::project_self(const at::Tensor& x) {
  auto parts = linear(qkv_, x).chunk(3, /*dim=*/-1);  // 3 x [B, T, D]
  return {split_heads(parts[0]), split_heads(parts[1]), split_heads(parts[2])};
}

at::Tensor MultiHeadAttentionImpl::project_query(const at::Tensor& x) { return split_heads(linear(q_, x)); }

std::pair<at::Tensor, at::Tensor> MultiHeadAttentionImpl::project_keys_values(const at::Tensor& x) {
  auto parts = linear(kv_, x).chunk(2, /*dim=*/-1);
  return {split_heads(parts[0]), split_heads(parts[1])};
}

bool fused_attention_available() { return TS_TORCH_AT_LEAST(2, 0); }

const char* attention_kernel_name(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kAuto:
      return "auto";
    case AttentionKernel::kExplicit:
      return "explicit";
    case AttentionKernel::kFused:
      return "fused";
  }
  return "auto";
}

AttentionKernel parse_attention_kernel(const std::string& name) {
  for (const auto kernel : {AttentionKernel::kAuto, AttentionKernel::kExplicit, AttentionKernel::kFused})
    if (name == attention_kernel_name(kernel)) return kernel;
  throw std::invalid_argument("unknown attention kernel \"" + name + "\" (auto, explicit or fused)");
}

namespace {

// LibTorch's fused attention on a GPU chooses among its kernels without cuDNN's (unless TS_SDPA_CUDNN=1),
// once per process. With them, bf16 on an H200 (PyTorch 2.11) trained at half fp32's speed, its first
// steps slowest, and a 1-minute run made 12.6 times fewer tokens than its recipe planned; fp32, which
// cuDNN's attention does not take, did not. Without them (2026-12-01) bf16 trained 3.6 times faster at the
// Annotated preset, and the 1-minute run reached 77% of its plan (docs/benchmarks.md, "The GPU machine,
// second run"). The likely cause: a plan built for each new shape of batch, and a translation corpus's
// batches come in hundreds of shapes.
void apply_sdpa_environment() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* asked = std::getenv("TS_SDPA_CUDNN");
    const bool cudnn = asked && std::string(asked) == "1";
#if TS_TORCH_AT_LEAST(2, 5)
    at::globalContext().setSDPUseCuDNN(cudnn);
    if (asked)
      std::fprintf(stderr, "TS_SDPA_CUDNN=%s: fused attention %s cuDNN's kernels\n", asked, cudnn ? "with" : "without");
#else
    if (cudnn) std::fprintf(stderr, "TS_SDPA_CUDNN=1 ignored: this LibTorch chooses no cuDNN attention of its own\n");
#endif
  });
}

}  // namespace

AttentionKernel default_attention_kernel() {
  apply_sdpa_environment();
  const char* asked = std::getenv("TS_ATTENTION");
  if (!asked || !*asked) return AttentionKernel::kAuto;
  try {
    return parse_attention_kernel(asked);
  } catch (const std::invalid_argument& e) {
    static std::once_flag said;
    std::call_once(said, [&e] { std::fprintf(stderr, "TS_ATTENTION ignored: %s\n", e.what()); });
    return AttentionKernel::kAuto;
  }
}

bool MultiHeadAttentionImpl::fused_for(const at::Tensor& q) const {
  if (record_ || kernel_ == AttentionKernel::kExplicit || !fused_attention_available()) return false;
  if (!q.device().is_cpu()) return true;
  return kernel_ == AttentionKernel::kFused && !(is_training() && dropout_->options.p() > 0);
}

at::Tensor MultiHeadAttentionImpl::context(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                           const at::Tensor& mask) {
#if TS_TORCH_AT_LEAST(2, 0)
  if (fused_for(q)) {
    // The same scale (1/√K), an additive mask of the queries' dtype (autocast makes them bf16 or
    // fp16 on a GPU), dropout on the weights while training; softmax in fp32 inside the kernel.
    const std::optional<at::Tensor> additive =
        mask.defined() ? std::optional<at::Tensor>(mask.to(q.scalar_type())) : std::nullopt;
    auto context = at::scaled_dot_product_attention(q, k, v, additive, is_training() ? dropout_->options.p() : 0.0,
                                                    /*is_causal=*/false);  // [B, H, T, K]
    return context.transpose(1, 2).reshape({q.size(0), q.size(2), d_model_});
  }
#endif
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim_));
  at::Tensor weights;
  const bool fp32_cpu = q.device().is_cpu() && q.scalar_type() == at::kFloat && k.scalar_type() == at::kFloat;
  if (fp32_cpu && !record_ && !(mask.defined() && (mask.requires_grad() || mask.scalar_type() != at::kFloat))) {
    // The scale, the mask and the softmax in one pass a row (AttentionSoftmax).
    weights = AttentionSoftmax::apply(attention_matmul(q, k, /*b_transposed=*/true),
                                      mask.defined() ? mask : at::empty({0}, q.options()), scale);  // [B, H, T, S]
  } else {
    auto scores = attention_matmul(q, k, /*b_transposed=*/true) * scale;  // [B, H, T, S]
    if (mask.defined()) scores = scores + mask;
    weights = at::softmax(scores, /*dim=*/-1, at::kFloat).to(q.scalar_type());
  }
  if (record_) last_weights_ = weights.detach().to(at::kFloat);
  // [B, H, T, K], laid out as [B, T, H, K] where it can be: the reshape below then copies nothing.
  auto context = attention_matmul(fast_dropout(dropout_, weights), v, /*b_transposed=*/false, /*heads_inner=*/true);
  return context.transpose(1, 2).reshape({q.size(0), q.size(2), d_model_});  // [B, T, D]
}

at::Tensor MultiHeadAttentionImpl::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                          const at::Tensor& mask) {
  return linear(out_, context(q, k, v, mask));
}

at::Tensor MultiHeadAttentionImpl::forward(const at::Tensor& query, const at::Tensor& keys_values,
                                           const at::Tensor& mask) {
  if (self_attention_) {
    auto [q, k, v] = project_self(query);
    return attend(q, k, v, mask);
  }
  auto [k, v] = project_keys_values(keys_values);
  return attend(project_query(query), k, v, mask);
}

at::Tensor MultiHeadAttentionImpl::forward_rows(const at::Tensor& query_rows, const RealRows& rows,
                                                const at::Tensor& keys_values, const at::Tensor& mask) {
  at::Tensor ctx;
  if (self_attention_) {
    const auto parts = rows.scatter(linear(qkv_, query_rows)).chunk(3, /*dim=*/-1);  // 3 x [B, T, D]
    ctx = context(split_heads(parts[0]), split_heads(parts[1]), split_heads(parts[2]), mask);
  } else {
    auto [k, v] = project_keys_values(keys_values);
    ctx = context(split_heads(rows.scatter(linear(q_, query_rows))), k, v, mask);
  }
  return linear(out_, rows.gather(ctx));
}

RealRows RealRows::of(const at::Tensor& tokens, std::int64_t pad) {
  RealRows rows;
  rows.batch = tokens.size(0);
  rows.length = tokens.size(1);
  rows.index = tokens.reshape({-1}).ne(pad).nonzero().squeeze(1);
  return rows;
}

namespace {

// y [N, C] (contiguous) into the rows `index` (ascending, in [0, total)) of a new [total, C], the other
// rows 0: one pass writing each row once. at::index_copy into zeros wrote the whole tensor three times
// (the zeros, their copy, the rows), and the gather's backward (index_select's) twice (zeros, then
// index_add): about 2% of a bf16 training step at 2+2 d 192 together (perf, 2026-11-30).
at::Tensor scatter_rows(const at::Tensor& y, const at::Tensor& index, std::int64_t total) {
  const std::int64_t n = y.size(0), c = y.size(1);
  auto out = at::empty({total, c}, y.options());
  const std::int64_t* rows = index.data_ptr<std::int64_t>();
  const auto bytes = static_cast<std::size_t>(c) * y.element_size();
  const auto* src = static_cast<const char*>(y.data_ptr());
  auto* dst = static_cast<char*>(out.data_ptr());
  std::int64_t next = 0;  // the first output row not yet written
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t row = rows[r];
    if (row < next || row >= total) throw std::logic_error("RealRows: rows not ascending within the batch");
    if (row > next) std::memset(dst + next * bytes, 0, static_cast<std::size_t>(row - next) * bytes);
    std::memcpy(dst + row * bytes, src + r * bytes, bytes);
    next = row + 1;
  }
  if (total > next) std::memset(dst + next * bytes, 0, static_cast<std::size_t>(total - next) * bytes);
  return out;
}

// Where scatter_rows and its inverse apply: a CPU matrix of any dtype and a contiguous long index on the
// CPU (RealRows' are ascending).
bool rows_apply(const at::Tensor& x, const at::Tensor& index) {
  return x.device().is_cpu() && x.dim() == 2 && index.device().is_cpu() && index.scalar_type() == at::kLong &&
         index.dim() == 1 && index.is_contiguous();
}

struct ScatterRows : public torch::autograd::Function<ScatterRows> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& y, const at::Tensor& index,
                            std::int64_t total) {
    ctx->save_for_backward({index});
    return scatter_rows(y.contiguous(), index, total);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto index = ctx->get_saved_variables()[0];
    return {grads[0].index_select(0, index), at::Tensor(), at::Tensor()};
  }
};

struct GatherRows : public torch::autograd::Function<GatherRows> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& index) {
    ctx->save_for_backward({index});
    ctx->saved_data["total"] = x.size(0);
    return x.index_select(0, index);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto index = ctx->get_saved_variables()[0];
    return {scatter_rows(grads[0].contiguous(), index, ctx->saved_data["total"].toInt()), at::Tensor()};
  }
};

}  // namespace

at::Tensor RealRows::gather(const at::Tensor& x) const {
  const auto flat = x.reshape({-1, x.size(-1)});
  if (rows_apply(flat, index)) return GatherRows::apply(flat, index);
  return flat.index_select(0, index);
}

at::Tensor RealRows::scatter(const at::Tensor& y) const {
  const std::int64_t total = batch * length;
  if (rows_apply(y, index) && index.size(0) == y.size(0))
    return ScatterRows::apply(y, index, total).view({batch, length, y.size(-1)});
  const auto zeros = at::zeros({total, y.size(-1)}, y.options());
  return at::index_copy(zeros, 0, index, y).view({batch, length, y.size(-1)});
}

}  // namespace ts
