// SPDX-License-Identifier: GPL-3.0-or-later
// Packed linear layers for few-row products on the CPU (see ts/infer/packed_linear.h).
#include "ts/infer/packed_linear.h"

#include "ts/host/vector_rates.h"
#include "ts/infer/bf16.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define TS_PACKED_X86 1
#include <immintrin.h>
#else
#define TS_PACKED_X86 0
#endif

namespace ts {

WeightFormat parse_weight_format(const std::string& name) {
  if (name == "fp32") return WeightFormat::kFloat32;
  if (name == "bf16") return WeightFormat::kBFloat16;
  if (name == "int8") return WeightFormat::kInt8;
  throw std::invalid_argument("unknown weight format \"" + name + "\" (expected fp32, bf16 or int8)");
}

std::string weight_format_name(WeightFormat format) {
  switch (format) {
    case WeightFormat::kFloat32:
      return "fp32";
    case WeightFormat::kBFloat16:
      return "bf16";
    case WeightFormat::kInt8:
      return "int8";
  }
  return "?";
}

std::string isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx512Bf16:
      return "avx512-bf16";
  }
  return "?";
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out{Isa::kScalar};
#if TS_PACKED_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) out.push_back(Isa::kAvx2);
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
    out.push_back(Isa::kAvx512);
    if (__builtin_cpu_supports("avx512bf16")) out.push_back(Isa::kAvx512Bf16);
  }
#endif
  return out;
}

Isa best_isa() {
  static const Isa best = [] {
    const auto isas = supported_isas();
    // bf16 dot products only where they outrun fp32 multiply-adds (not so on every CPU that has them).
    if (isas.back() == Isa::kAvx512Bf16 && !bf16_dot_products_pay(vector_rates())) return Isa::kAvx512;
    return isas.back();
  }();
  return best;
}

std::string describe_best_isa() {
  const auto rates = describe_vector_rates(vector_rates());
  if (rates.empty()) return isa_name(best_isa());
  return isa_name(best_isa()) +
         (best_isa() == Isa::kAvx512Bf16 ? " (" + rates + ")" : " (bf16 weights widened to fp32: " + rates + ")");
}

namespace {

struct Job {
  const float* x;
  std::int64_t rows;
  float* y;
  std::int64_t in, out;
  const void* w;
  WeightFormat format;
  const float* scale;  // int8 only
  const float* bias;
};

inline float widen(float w) { return w; }
inline float widen(std::uint16_t w) { return bf16_to_float(w); }
inline float widen(std::int8_t w) { return static_cast<float>(w); }

// Outputs come in blocks of this many (see packed_linear_body.inc); a block's weights for one input are
// side by side.
constexpr std::int64_t kBlock = 16;

inline std::size_t packed_index(std::int64_t o, std::int64_t i, std::int64_t in) {
  return static_cast<std::size_t>(((o / kBlock) * in + i) * kBlock + o % kBlock);
}

namespace scalar {
using V = float;
constexpr std::int64_t N = 1;
inline V vzero() { return 0.0F; }
template <class W>
inline V vload(const W* p) {
  return widen(*p);
}
inline V vbroadcast(float f) { return f; }
inline V vfma(V a, V b, V c) { return a * b + c; }
inline void vstore(float* p, V v) { *p = v; }
constexpr int outputs_per_pass(int) { return 1; }
#include "packed_linear_body.inc"
}  // namespace scalar

#if TS_PACKED_X86

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace avx2 {
using V = __m256;
constexpr std::int64_t N = 8;
inline V vzero() { return _mm256_setzero_ps(); }
inline V vload(const float* p) { return _mm256_loadu_ps(p); }
inline V vload(const std::uint16_t* p) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}
inline V vload(const std::int8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
inline V vbroadcast(float f) { return _mm256_set1_ps(f); }
inline V vfma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
inline void vstore(float* p, V v) { _mm256_storeu_ps(p, v); }
// 16 registers: a block is two vectors, and R * O * 2 accumulators must leave room for the weights.
constexpr int outputs_per_pass(int rows) { return rows == 1 ? 4 : rows <= 3 ? 2 : 1; }
#include "packed_linear_body.inc"
}  // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,fma")
#endif
namespace avx512 {
using V = __m512;
constexpr std::int64_t N = 16;
inline V vzero() { return _mm512_setzero_ps(); }
inline V vload(const float* p) { return _mm512_loadu_ps(p); }
inline V vload(const std::uint16_t* p) {
  const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}
inline V vload(const std::int8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
inline V vbroadcast(float f) { return _mm512_set1_ps(f); }
inline V vfma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
inline void vstore(float* p, V v) { _mm512_storeu_ps(p, v); }
// 32 registers: up to 24 accumulators of R rows by O blocks.
constexpr int outputs_per_pass(int rows) { return rows <= 3 ? 6 : rows <= 5 ? 4 : 3; }
#include "packed_linear_body.inc"
}  // namespace avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

// bf16 weights times activations rounded to bf16 with the CPU's dot products: one instruction
// multiplies 16 outputs' pairs of weights by a pair of inputs and adds both products to fp32 sums.
struct DotJob {
  const std::uint32_t* x;  // [rows][pairs]: two bf16 inputs per word, the first in the low half
  std::int64_t rows;
  float* y;
  std::int64_t pairs, out;
  const std::uint16_t* w;  // [blocks][pairs][kBlock][2]
  const float* bias;
};

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16")
#endif
namespace avx512bf16 {

// R rows by O blocks of 16 outputs, the sums in registers (R * O + O + 1 of the 32).
template <int R, int O>
void pass(const DotJob& j, std::int64_t r0, std::int64_t block) {
  const std::int64_t pairs = j.pairs;
  const std::uint32_t* x = j.x + r0 * pairs;
  __m512 acc[R][O];
  for (int r = 0; r < R; ++r)
    for (int b = 0; b < O; ++b) acc[r][b] = _mm512_setzero_ps();
  const std::uint16_t* base[O];
  for (int b = 0; b < O; ++b) base[b] = j.w + (block + b) * pairs * kBlock * 2;
  for (std::int64_t p = 0; p < pairs; ++p) {
    __m512bh wv[O];
    for (int b = 0; b < O; ++b) wv[b] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(base[b] + p * kBlock * 2));
    for (int r = 0; r < R; ++r) {
      const auto xv = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(x[r * pairs + p])));
      for (int b = 0; b < O; ++b) acc[r][b] = _mm512_dpbf16_ps(acc[r][b], wv[b], xv);
    }
  }
  for (int r = 0; r < R; ++r) {
    float* y = j.y + (r0 + r) * j.out;
    for (int b = 0; b < O; ++b) {
      const std::int64_t o0 = (block + b) * kBlock;
      float lanes[kBlock];
      _mm512_storeu_ps(lanes, acc[r][b]);
      const std::int64_t valid = j.out - o0 < kBlock ? j.out - o0 : kBlock;  // the last block may be padding
      for (std::int64_t o = 0; o < valid; ++o) y[o0 + o] = lanes[o] + j.bias[o0 + o];
    }
  }
}

template <int R>
void blocks(const DotJob& j, std::int64_t r0, std::int64_t block_begin, std::int64_t block_end) {
  constexpr int O = R <= 3 ? 6 : R <= 5 ? 4 : 3;
  std::int64_t b = block_begin;
  for (; b + O <= block_end; b += O) pass<R, O>(j, r0, b);
  for (; b < block_end; ++b) pass<R, 1>(j, r0, b);
}

// x [rows][in] rounded to bf16 (to nearest even) into out [rows][2 * pairs], an odd row padded with a zero.
void to_bf16_pairs(const float* x, std::int64_t rows, std::int64_t in, std::int64_t pairs, std::uint16_t* out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * in;
    std::uint16_t* o = out + r * 2 * pairs;
    std::int64_t i = 0;
    for (; i + 16 <= in; i += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + i),
                          reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(_mm512_loadu_ps(xr + i))));
    for (; i < in; ++i) o[i] = float_to_bf16(xr[i]);
    if (in % 2) o[in] = 0;
  }
}

void run(const DotJob& j, std::int64_t block_begin, std::int64_t block_end) {
  for (std::int64_t r0 = 0; r0 < j.rows; r0 += 8) {
    switch (j.rows - r0 < 8 ? j.rows - r0 : 8) {
      case 1:
        blocks<1>(j, r0, block_begin, block_end);
        break;
      case 2:
        blocks<2>(j, r0, block_begin, block_end);
        break;
      case 3:
        blocks<3>(j, r0, block_begin, block_end);
        break;
      case 4:
        blocks<4>(j, r0, block_begin, block_end);
        break;
      case 5:
        blocks<5>(j, r0, block_begin, block_end);
        break;
      case 6:
        blocks<6>(j, r0, block_begin, block_end);
        break;
      case 7:
        blocks<7>(j, r0, block_begin, block_end);
        break;
      default:
        blocks<8>(j, r0, block_begin, block_end);
        break;
    }
  }
}

}  // namespace avx512bf16
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif  // TS_PACKED_X86

void run(const Job& j, std::int64_t block_begin, std::int64_t block_end, Isa isa) {
  switch (isa) {
#if TS_PACKED_X86
    case Isa::kAvx512Bf16:  // other formats than bf16 have no dot-product kernel
    case Isa::kAvx512:
      avx512::run(j, block_begin, block_end);
      return;
    case Isa::kAvx2:
      avx2::run(j, block_begin, block_end);
      return;
#endif
    default:
      scalar::run(j, block_begin, block_end);
      return;
  }
}

}  // namespace

PackedLinear::PackedLinear(const float* weight, std::int64_t out, std::int64_t in, const float* bias,
                           WeightFormat format, Isa isa)
    : in_(in), out_(out), format_(format) {
  if (out < 0 || in < 0) throw std::invalid_argument("PackedLinear: a negative size");
  const float* src = weight;
  const auto blocks = (out_ + kBlock - 1) / kBlock;
  const auto n = static_cast<std::size_t>(blocks * kBlock * in_);  // the last block padded with zeros
  bias_.assign(static_cast<std::size_t>(out_), 0.0F);
  if (bias) std::copy(bias, bias + out_, bias_.begin());
  switch (format) {
    case WeightFormat::kFloat32:
      f32_.assign(n, 0.0F);
      for (std::int64_t o = 0; o < out_; ++o)
        for (std::int64_t i = 0; i < in_; ++i) f32_[packed_index(o, i, in_)] = src[o * in_ + i];
      break;
    case WeightFormat::kBFloat16:
      bf16_.assign(n, 0);
      for (std::int64_t o = 0; o < out_; ++o)
        for (std::int64_t i = 0; i < in_; ++i) bf16_[packed_index(o, i, in_)] = float_to_bf16(src[o * in_ + i]);
      if (isa == Isa::kAvx512Bf16) {
        const std::int64_t pairs = (in_ + 1) / 2;
        bf16_pairs_.assign(static_cast<std::size_t>(blocks * pairs * kBlock * 2), 0);
        for (std::int64_t o = 0; o < out_; ++o)
          for (std::int64_t i = 0; i < in_; ++i)
            bf16_pairs_[static_cast<std::size_t>((((o / kBlock) * pairs + i / 2) * kBlock + o % kBlock) * 2 + i % 2)] =
                bf16_[packed_index(o, i, in_)];
      }
      break;
    case WeightFormat::kInt8:
      i8_.assign(n, 0);
      scale_.resize(static_cast<std::size_t>(out_));
      for (std::int64_t o = 0; o < out_; ++o) {
        const float* row = src + o * in_;
        float max_abs = 0;
        for (std::int64_t i = 0; i < in_; ++i) {
          if (!std::isfinite(row[i]))
            throw std::invalid_argument("PackedLinear: row " + std::to_string(o) + " holds a value that is not finite");
          max_abs = std::max(max_abs, std::fabs(row[i]));
        }
        const float scale = max_abs > 0 ? max_abs / 127.0F : 1.0F;
        scale_[static_cast<std::size_t>(o)] = scale;
        for (std::int64_t i = 0; i < in_; ++i)
          i8_[packed_index(o, i, in_)] = static_cast<std::int8_t>(std::clamp(std::lround(row[i] / scale), -127L, 127L));
      }
      break;
  }
}

PackedLinear PackedLinear::select_outputs(const std::vector<std::int64_t>& rows) const {
  PackedLinear out;
  out.in_ = in_;
  out.out_ = static_cast<std::int64_t>(rows.size());
  out.format_ = format_;
  const std::int64_t blocks = (out.out_ + kBlock - 1) / kBlock, pairs = (in_ + 1) / 2;
  const auto n = static_cast<std::size_t>(blocks * kBlock * in_);
  if (!f32_.empty()) out.f32_.assign(n, 0.0F);
  if (!bf16_.empty()) out.bf16_.assign(n, 0);
  if (!i8_.empty()) out.i8_.assign(n, 0);
  if (!bf16_pairs_.empty()) out.bf16_pairs_.assign(static_cast<std::size_t>(blocks * pairs * kBlock * 2), 0);
  auto pair_index = [](std::int64_t o, std::int64_t i, std::int64_t pairs_of) {
    return static_cast<std::size_t>((((o / kBlock) * pairs_of + i / 2) * kBlock + o % kBlock) * 2 + i % 2);
  };
  for (std::int64_t r = 0; r < out.out_; ++r) {
    const auto o = rows[static_cast<std::size_t>(r)];
    if (o < 0 || o >= out_)
      throw std::out_of_range("PackedLinear: output " + std::to_string(o) + " of " + std::to_string(out_));
    out.bias_.push_back(bias_[static_cast<std::size_t>(o)]);
    if (!scale_.empty()) out.scale_.push_back(scale_[static_cast<std::size_t>(o)]);
    for (std::int64_t i = 0; i < in_; ++i) {
      const auto from = packed_index(o, i, in_), to = packed_index(r, i, in_);
      if (!f32_.empty()) out.f32_[to] = f32_[from];
      if (!bf16_.empty()) out.bf16_[to] = bf16_[from];
      if (!i8_.empty()) out.i8_[to] = i8_[from];
      if (!bf16_pairs_.empty()) out.bf16_pairs_[pair_index(r, i, pairs)] = bf16_pairs_[pair_index(o, i, pairs)];
    }
  }
  return out;
}

std::size_t PackedLinear::weight_bytes() const {
  // What one product reads: the pairs are the same weights in another order.
  return f32_.size() * sizeof(float) + bf16_.size() * sizeof(std::uint16_t) + i8_.size();
}

std::vector<float> PackedLinear::unpacked_weight() const {
  std::vector<float> out(static_cast<std::size_t>(out_ * in_));
  float* dst = out.data();
  for (std::int64_t o = 0; o < out_; ++o)
    for (std::int64_t i = 0; i < in_; ++i) {
      const auto k = packed_index(o, i, in_);
      float& w = dst[o * in_ + i];
      switch (format_) {
        case WeightFormat::kFloat32:
          w = f32_[k];
          break;
        case WeightFormat::kBFloat16:
          w = bf16_to_float(bf16_[k]);
          break;
        case WeightFormat::kInt8:
          w = static_cast<float>(i8_[k]) * scale_[static_cast<std::size_t>(o)];
          break;
      }
    }
  return out;
}

void PackedLinear::apply(const float* x, std::int64_t rows, float* y, Isa isa) const {
  if (rows <= 0 || out_ == 0) return;
  const void* w = format_ == WeightFormat::kFloat32    ? static_cast<const void*>(f32_.data())
                  : format_ == WeightFormat::kBFloat16 ? static_cast<const void*>(bf16_.data())
                                                       : static_cast<const void*>(i8_.data());
  const Job job{x,           rows, y, in_, out_, w, format_, format_ == WeightFormat::kInt8 ? scale_.data() : nullptr,
                bias_.data()};
  const std::int64_t blocks = (out_ + kBlock - 1) / kBlock;
#if TS_PACKED_X86
  if (isa == Isa::kAvx512Bf16 && format_ == WeightFormat::kBFloat16) {
    if (bf16_pairs_.empty())
      throw std::invalid_argument("PackedLinear: packed without bf16 dot products (the CPU has none)");
    // The activations rounded to bf16, two to a word, once per call (per thread: decoders may run
    // on several at once).
    const std::int64_t pairs = (in_ + 1) / 2;
    thread_local std::vector<std::uint32_t> xb;
    xb.resize(static_cast<std::size_t>(rows * pairs));
    avx512bf16::to_bf16_pairs(x, rows, in_, pairs, reinterpret_cast<std::uint16_t*>(xb.data()));
    const DotJob dot{xb.data(), rows, y, pairs, out_, bf16_pairs_.data(), bias_.data()};
    avx512bf16::run(dot, 0, blocks);
    return;
  }
#endif
  run(job, 0, blocks, isa);
}

}  // namespace ts
