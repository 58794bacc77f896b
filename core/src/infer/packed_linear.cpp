// SPDX-License-Identifier: GPL-3.0-or-later
// Packed linear layers for few-row products on the CPU (see ts/infer/packed_linear.h).
#include "ts/infer/packed_linear.h"

#include "ts/host/amx_tiles.h"
#include "ts/host/vector_rates.h"
#include "ts/infer/bf16.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
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
    case Isa::kAmx:
      return "amx-bf16";
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
    if (amx::available()) out.push_back(Isa::kAmx);
  }
#endif
  return out;
}

namespace {

// TS_DECODING_ISA names one of supported_isas() (isa_name's names) to use instead of the choice below:
// for comparing kernels on one machine, or to leave one out. Anything else is reported once and ignored.
std::optional<Isa> isa_asked_for() {
  static const std::optional<Isa> asked_isa = []() -> std::optional<Isa> {
    const char* asked = std::getenv("TS_DECODING_ISA");
    if (!asked || !*asked) return std::nullopt;
    const auto isas = supported_isas();
    for (const auto isa : isas)
      if (isa_name(isa) == asked) return isa;
    std::string names;
    for (const auto isa : isas) names += (names.empty() ? "" : ", ") + isa_name(isa);
    std::fprintf(stderr, "TS_DECODING_ISA=%s ignored: this CPU runs %s\n", asked, names.c_str());
    return std::nullopt;
  }();
  return asked_isa;
}

}  // namespace

Isa best_isa() {
  static const Isa best = [] {
    const auto isas = supported_isas();
    if (const auto asked = isa_asked_for()) return *asked;
    // bf16 dot products only where they outrun fp32 multiply-adds (not so on every CPU that has them).
    if (isas.back() == Isa::kAvx512Bf16 && !bf16_dot_products_pay(vector_rates())) return Isa::kAvx512;
    return isas.back();
  }();
  return best;
}

bool int8_dot_products_available() {
#if TS_PACKED_X86
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  }();
  return yes;
#else
  return false;
#endif
}

std::string describe_best_isa() {
  if (isa_asked_for()) return isa_name(best_isa()) + " (set by TS_DECODING_ISA)";
  if (best_isa() == Isa::kAmx) return isa_name(best_isa()) + " (bf16 weights on AMX tiles)";
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

// Where weight (o, i) sits among the VNNI kernel's groups of four inputs: [blocks][quads][kBlock][4].
inline std::size_t quad_index(std::int64_t o, std::int64_t i, std::int64_t quads) {
  return static_cast<std::size_t>((((o / kBlock) * quads + i / 4) * kBlock + o % kBlock) * 4 + i % 4);
}

// Where the word holding weight (o, i) sits among kAmx's tiles: [blocks][pairs][kBlock], input i in its
// low half when even.
inline std::size_t amx_index(std::int64_t o, std::int64_t i, std::int64_t pairs) {
  return static_cast<std::size_t>(((o / kBlock) * pairs + i / 2) * kBlock + o % kBlock);
}

// Calls body.group<R>(r0) for the rows in groups of eight, the last R = rows % 8 (each group reads the weights
// once, and R is a constant for its kernel). Outside the target regions and the kernels' namespaces: it only
// dispatches.
template <class Body>
void in_groups_of_eight(std::int64_t rows, const Body& body) {
  for (std::int64_t r0 = 0; r0 < rows; r0 += 8) {
    switch (rows - r0 < 8 ? rows - r0 : 8) {
      case 1:
        body.template group<1>(r0);
        break;
      case 2:
        body.template group<2>(r0);
        break;
      case 3:
        body.template group<3>(r0);
        break;
      case 4:
        body.template group<4>(r0);
        break;
      case 5:
        body.template group<5>(r0);
        break;
      case 6:
        body.template group<6>(r0);
        break;
      case 7:
        body.template group<7>(r0);
        break;
      default:
        body.template group<8>(r0);
        break;
    }
  }
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

// The blocks of each group of up to eight rows (in_groups_of_eight).
struct Groups {
  const DotJob& j;
  std::int64_t block_begin, block_end;
  template <int R>
  void group(std::int64_t r0) const {
    blocks<R>(j, r0, block_begin, block_end);
  }
};

void run(const DotJob& j, std::int64_t block_begin, std::int64_t block_end) {
  in_groups_of_eight(j.rows, Groups{j, block_begin, block_end});
}

}  // namespace avx512bf16
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

// int8 weights times activations rounded to int8 with the CPU's byte dot products (AVX-512 VNNI): one
// vpdpbusd multiplies 16 outputs' groups of four weights by four inputs and adds the four products to
// 32-bit integer sums, exactly. The instruction takes unsigned bytes on one side: the inputs go in as
// q + 128, and 128 × each output's weight sum (kept at packing) comes off at the end.
struct QuadJob {
  const std::uint8_t* x;  // [rows][4 * quads]: q + 128, q = the input rounded to int8 in its row's scale
  const float* x_scale;   // [rows]: max |x| of the row / 127 (NaN where the row is not finite)
  std::int64_t rows;
  float* y;
  std::int64_t quads, out;
  const std::int8_t* w;        // [blocks][quads][kBlock][4]
  const std::int32_t* w_sums;  // [blocks * kBlock]: 128 × the output's int8 weights summed (0 past the end)
  const float* w_scale;        // [out]
  const float* bias;           // [out]
};

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")
#endif
namespace avx512vnni {

inline __mmask16 first(std::int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1u);
}

// x [rows][in] into bytes q + 128 [rows][4 * quads] (the padding q = 0) and each row's scale: q = x · 127 /
// max |x|, rounded to nearest even. A row of zeros has scale 0; a row with an infinity or NaN has scale NaN,
// so that its outputs are NaN, as fp32 products would make them.
void to_u8_quads(const float* x, std::int64_t rows, std::int64_t in, std::int64_t quads, std::uint8_t* out,
                 float* scale) {
  const std::int64_t width = 4 * quads;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * in;
    std::uint8_t* o = out + r * width;
    // The row's largest magnitude, and whether any input is an infinity or NaN (fpclass 0x99: NaN or ±inf).
    __m512 vmax = _mm512_setzero_ps();
    __mmask16 not_finite = 0;
    for (std::int64_t i = 0; i < in; i += 16) {
      const __m512 v = _mm512_maskz_loadu_ps(first(in - i), xr + i);
      not_finite |= _mm512_fpclass_ps_mask(v, 0x99);
      vmax = _mm512_max_ps(vmax, _mm512_abs_ps(v));
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, vmax);
    float max = 0;
    for (int l = 0; l < 16; ++l) max = std::max(max, lanes[l]);
    const bool finite = not_finite == 0;
    scale[r] = !finite ? std::numeric_limits<float>::quiet_NaN() : max / 127.0F;
    const __m512 inv = _mm512_set1_ps(finite && max > 0 ? 127.0F / max : 0.0F);
    for (std::int64_t i = 0; i < width; i += 16) {
      const __mmask16 valid = first(in - i);
      __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(valid, xr + i), inv));
      q = _mm512_min_epi32(_mm512_max_epi32(q, _mm512_set1_epi32(-127)), _mm512_set1_epi32(127));
      _mm_mask_storeu_epi8(o + i, first(width - i), _mm512_cvtepi32_epi8(_mm512_add_epi32(q, _mm512_set1_epi32(128))));
    }
  }
}

// R rows by O blocks of 16 outputs, the sums in registers (R * O + O + 1 of the 32).
template <int R, int O>
void pass(const QuadJob& j, std::int64_t r0, std::int64_t block) {
  const std::int64_t quads = j.quads;
  const auto* x = reinterpret_cast<const std::int32_t*>(j.x + r0 * 4 * quads);
  __m512i acc[R][O];
  for (int r = 0; r < R; ++r)
    for (int b = 0; b < O; ++b) acc[r][b] = _mm512_setzero_si512();
  const std::int8_t* base[O];
  for (int b = 0; b < O; ++b) base[b] = j.w + (block + b) * quads * kBlock * 4;
  for (std::int64_t q = 0; q < quads; ++q) {
    __m512i wv[O];
    for (int b = 0; b < O; ++b) wv[b] = _mm512_loadu_si512(base[b] + q * kBlock * 4);
    for (int r = 0; r < R; ++r) {
      std::int32_t word;
      std::memcpy(&word, x + r * quads + q, sizeof word);
      const __m512i xv = _mm512_set1_epi32(word);
      for (int b = 0; b < O; ++b) acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], xv, wv[b]);
    }
  }
  for (int b = 0; b < O; ++b) {
    const std::int64_t o0 = (block + b) * kBlock;
    const __mmask16 valid = first(j.out - o0);  // the last block may be padding
    const __m512i sums = _mm512_loadu_si512(j.w_sums + o0);
    const __m512 w_scale = _mm512_maskz_loadu_ps(valid, j.w_scale + o0),
                 bias = _mm512_maskz_loadu_ps(valid, j.bias + o0);
    for (int r = 0; r < R; ++r) {
      const __m512 exact = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc[r][b], sums));
      const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(j.x_scale[r0 + r]), w_scale);
      _mm512_mask_storeu_ps(j.y + (r0 + r) * j.out + o0, valid, _mm512_fmadd_ps(exact, scale, bias));
    }
  }
}

// At most 16 sums in registers: with 24 (eight rows by three blocks) GCC 12 kept some on the stack, and a
// beam-4 translation ran at two thirds of this speed (measured 2026-11-29).
template <int R>
void blocks(const QuadJob& j, std::int64_t r0, std::int64_t block_begin, std::int64_t block_end) {
  constexpr int O = R <= 3 ? 4 : R <= 5 ? 3 : 2;
  std::int64_t b = block_begin;
  for (; b + O <= block_end; b += O) pass<R, O>(j, r0, b);
  for (; b < block_end; ++b) pass<R, 1>(j, r0, b);
}

// The blocks of each group of up to eight rows (in_groups_of_eight).
struct Groups {
  const QuadJob& j;
  std::int64_t block_begin, block_end;
  template <int R>
  void group(std::int64_t r0) const {
    blocks<R>(j, r0, block_begin, block_end);
  }
};

void run(const QuadJob& j, std::int64_t block_begin, std::int64_t block_end) {
  in_groups_of_eight(j.rows, Groups{j, block_begin, block_end});
}

}  // namespace avx512vnni
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif  // TS_PACKED_X86

void run(const Job& j, std::int64_t block_begin, std::int64_t block_end, Isa isa) {
  switch (isa) {
#if TS_PACKED_X86
    case Isa::kAmx:         // other formats than bf16 have no tile kernel
    case Isa::kAvx512Bf16:  // nor a dot-product kernel
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
      if (isa == Isa::kAmx) {
        const std::int64_t pairs = amx::padded_pairs(in_);
        amx_.assign(static_cast<std::size_t>(blocks * pairs * kBlock), 0u);
        for (std::int64_t o = 0; o < out_; ++o)
          for (std::int64_t i = 0; i < in_; ++i)
            amx_[amx_index(o, i, pairs)] |= static_cast<std::uint32_t>(bf16_[packed_index(o, i, in_)])
                                            << (16 * (i % 2));
        amx_bias_.assign(static_cast<std::size_t>((blocks + 1) * kBlock), 0.0F);
        std::copy(bias_.begin(), bias_.end(), amx_bias_.begin());
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
      if ((isa == Isa::kAvx512 || isa == Isa::kAvx512Bf16 || isa == Isa::kAmx) && int8_dot_products_available()) {
        const std::int64_t quads = (in_ + 3) / 4;
        i8_quads_.assign(static_cast<std::size_t>(blocks * quads * kBlock * 4), 0);
        i8_sums_.assign(static_cast<std::size_t>(blocks * kBlock), 0);
        for (std::int64_t o = 0; o < out_; ++o)
          for (std::int64_t i = 0; i < in_; ++i) {
            const std::int8_t w = i8_[packed_index(o, i, in_)];
            i8_quads_[quad_index(o, i, quads)] = w;
            i8_sums_[static_cast<std::size_t>(o)] += 128 * w;
          }
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
  const std::int64_t tile_pairs = amx::padded_pairs(in_);
  if (!amx_.empty()) {
    out.amx_.assign(static_cast<std::size_t>(blocks * tile_pairs * kBlock), 0u);
    out.amx_bias_.assign(static_cast<std::size_t>((blocks + 1) * kBlock), 0.0F);
  }
  const std::int64_t quads = (in_ + 3) / 4;
  if (!i8_quads_.empty()) {
    out.i8_quads_.assign(static_cast<std::size_t>(blocks * quads * kBlock * 4), 0);
    out.i8_sums_.assign(static_cast<std::size_t>(blocks * kBlock), 0);
  }
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
      if (!i8_quads_.empty()) out.i8_quads_[quad_index(r, i, quads)] = i8_quads_[quad_index(o, i, quads)];
    }
    for (std::int64_t p = 0; p < tile_pairs && !amx_.empty(); ++p)
      out.amx_[amx_index(r, 2 * p, tile_pairs)] = amx_[amx_index(o, 2 * p, tile_pairs)];
    if (!amx_.empty()) out.amx_bias_[static_cast<std::size_t>(r)] = bias_[static_cast<std::size_t>(o)];
    if (!i8_sums_.empty()) out.i8_sums_[static_cast<std::size_t>(r)] = i8_sums_[static_cast<std::size_t>(o)];
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
  if (isa == Isa::kAmx && format_ == WeightFormat::kBFloat16) {
    if (amx_.empty()) throw std::invalid_argument("PackedLinear: packed without AMX tiles (the CPU has none)");
    // The activations rounded to bf16 into bands of tiles, once per call (per thread).
    const std::int64_t pairs = amx::padded_pairs(in_);
    thread_local std::vector<std::uint32_t> xa;
    xa.resize(static_cast<std::size_t>(amx::packed_a_words(rows, pairs)));
    amx::pack_rows(x, rows, in_, in_, pairs, xa.data());
    amx::multiply(xa.data(), rows, amx_.data(), out_, pairs, amx_bias_.data(), y);
    return;
  }
  if ((isa == Isa::kAvx512 || isa == Isa::kAvx512Bf16 || isa == Isa::kAmx) && format_ == WeightFormat::kInt8 &&
      !i8_quads_.empty()) {
    // The activations rounded to int8, each row in its own scale, once per call (per thread).
    const std::int64_t quads = (in_ + 3) / 4;
    thread_local std::vector<std::uint8_t> xq;
    thread_local std::vector<float> xs;
    xq.resize(static_cast<std::size_t>(rows * quads * 4));
    xs.resize(static_cast<std::size_t>(rows));
    avx512vnni::to_u8_quads(x, rows, in_, quads, xq.data(), xs.data());
    const QuadJob quad{xq.data(),        xs.data(),       rows,          y,           quads, out_,
                       i8_quads_.data(), i8_sums_.data(), scale_.data(), bias_.data()};
    avx512vnni::run(quad, 0, blocks);
    return;
  }
#endif
  run(job, 0, blocks, isa);
}

}  // namespace ts
