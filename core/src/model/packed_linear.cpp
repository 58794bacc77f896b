// SPDX-License-Identifier: GPL-3.0-or-later
// Packed linear layers for few-row products on the CPU (see ts/model/packed_linear.h).
#include "ts/model/packed_linear.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>

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
  }
  return "?";
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out{Isa::kScalar};
#if TS_PACKED_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) out.push_back(Isa::kAvx2);
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) out.push_back(Isa::kAvx512);
#endif
  return out;
}

Isa best_isa() {
  static const Isa best = supported_isas().back();
  return best;
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

inline float bf16_to_float(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (std::isnan(f)) return static_cast<std::uint16_t>((bits >> 16) | 0x40);  // stays a (quiet) NaN
  bits += 0x7FFF + ((bits >> 16) & 1);                                        // round to nearest even
  return static_cast<std::uint16_t>(bits >> 16);
}

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

#endif  // TS_PACKED_X86

void run(const Job& j, std::int64_t block_begin, std::int64_t block_end, Isa isa) {
  switch (isa) {
#if TS_PACKED_X86
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

// Below this many multiply-adds a call stays on the calling thread, where waking the other threads
// would cost more than it saves. A first estimate: on the 2-core VM of docs/benchmarks.md splitting
// gained nothing measurable for the Annotated model's products either way.
constexpr std::int64_t kParallelWork = 1 << 17;

}  // namespace

PackedLinear::PackedLinear(const at::Tensor& weight, const at::Tensor& bias, WeightFormat format) : format_(format) {
  if (weight.dim() != 2) throw std::invalid_argument("PackedLinear: the weight must be a matrix");
  out_ = weight.size(0);
  in_ = weight.size(1);
  const auto w = weight.detach().to(at::kCPU, at::kFloat).contiguous();
  const float* src = w.data_ptr<float>();
  const auto blocks = (out_ + kBlock - 1) / kBlock;
  const auto n = static_cast<std::size_t>(blocks * kBlock * in_);  // the last block padded with zeros
  bias_.assign(static_cast<std::size_t>(out_), 0.0F);
  if (bias.defined()) {
    const auto b = bias.detach().to(at::kCPU, at::kFloat).contiguous();
    std::copy(b.data_ptr<float>(), b.data_ptr<float>() + out_, bias_.begin());
  }
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

std::size_t PackedLinear::weight_bytes() const {
  return f32_.size() * sizeof(float) + bf16_.size() * sizeof(std::uint16_t) + i8_.size();
}

at::Tensor PackedLinear::unpacked_weight() const {
  auto out = at::empty({out_, in_}, at::kFloat);
  float* dst = out.data_ptr<float>();
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
  if (rows * in_ * out_ < kParallelWork || at::get_num_threads() < 2) {
    run(job, 0, blocks, isa);
    return;
  }
  const std::int64_t grain = std::max<std::int64_t>(1, blocks / at::get_num_threads());
  at::parallel_for(0, blocks, grain, [&](std::int64_t begin, std::int64_t end) { run(job, begin, end, isa); });
}

}  // namespace ts
