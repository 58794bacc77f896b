// SPDX-License-Identifier: GPL-3.0-or-later
// Linear layers packed for inference on the CPU: products of a weight matrix with a few rows (one
// token per hypothesis in incremental decoding), where the time goes into reading the weights, not
// into arithmetic. The weights are kept in fp32, bf16 (half the bytes) or int8 with one fp32 scale per
// output row (a quarter), and widened to fp32 in registers; activations and sums stay fp32, except
// where the CPU's dot products take the activations rounded too (bf16 on kAvx512Bf16; int8 where the
// CPU has AVX-512 VNNI, int8_dot_products_available()).
//
// The kernels are chosen at run time from what the CPU has (AVX-512, AVX2+FMA, or plain C++), so one
// binary runs everywhere. The outputs are stored in blocks of 16 (each input's 16 weights side by
// side) and up to 8 rows are processed together, so each weight is read once per group of rows and
// every sum stays in a register until it is written (see packed_linear_body.inc).
//
// No LibTorch here (ts_infer): the LibTorch-free translator (ts/infer/packed_model.h) runs on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ts {

/// How packed weights are stored.
enum class WeightFormat { kFloat32, kBFloat16, kInt8 };

/// "fp32", "bf16" or "int8" (throws std::invalid_argument naming the accepted values otherwise).
WeightFormat parse_weight_format(const std::string& name);
std::string weight_format_name(WeightFormat format);

/// Instruction sets the kernels are written for. kAvx512Bf16 differs from kAvx512 for bf16 weights
/// only: it multiplies them with the activations rounded to bf16 too, by the CPU's bf16 dot products
/// (twice the multiply-adds per instruction; the sums stay fp32), so its results are those of inputs
/// rounded to 8 significant bits. kAmx does the same on AMX tiles (ts/host/amx_tiles.h: a tile
/// instruction does 16 × 16 × 32 multiply-adds), each row's result independent of the others'. Other
/// formats run as on kAvx512 (int8 on the byte dot products of AVX-512 VNNI on all three, where the CPU
/// has them).
enum class Isa { kScalar, kAvx2, kAvx512, kAvx512Bf16, kAmx };
/// The fastest one this CPU runs (kScalar off x86-64): the last of supported_isas(), except that
/// kAvx512Bf16 gives way to kAvx512 where the bf16 dot products do not outrun fp32 multiply-adds by
/// kBf16DotMinimumSpeedup (timed once per process, ts/host/vector_rates.h). kAmx, where the CPU has
/// it, is chosen without timing: the slowest rate its tiles were measured at on a VM whose AMX unit
/// moved (611 GFLOP/s a core, docs/benchmarks.md) is over three times fp32 multiply-adds' there.
/// The environment variable TS_DECODING_ISA, set to one of supported_isas()' names ("avx512"…), is used
/// instead (to compare kernels on one machine); another value is reported on stderr and ignored.
Isa best_isa();
/// Every one this CPU runs, best last (tests compare them against each other).
std::vector<Isa> supported_isas();
std::string isa_name(Isa isa);
/// best_isa() for a person: "avx512 (bf16 weights widened to fp32: bf16 dot products 89 GFLOP/s
/// against fp32 multiply-adds' 179 (one thread))", "avx512-bf16 (…)", "amx-bf16 (bf16 weights on AMX
/// tiles)", "avx2"…
std::string describe_best_isa();
/// True when the CPU has AVX-512 VNNI. There, int8 weights packed for kAvx512 or kAvx512Bf16 are
/// multiplied by the activations rounded to int8 too (each row in its own scale, max |x| / 127, to
/// nearest even) with the CPU's byte dot products: four multiply-adds per lane and instruction into exact
/// 32-bit sums, the scales applied once at the end. Elsewhere int8 weights are widened to fp32.
bool int8_dot_products_available();

class PackedLinear {
 public:
  PackedLinear() = default;
  /// weight [out, in] row-major fp32 and bias [out] (null: none), packed for apply() with `isa`: a second
  /// copy in the dot products' order for bf16 weights on kAvx512Bf16, in the tiles' order on kAmx, and
  /// for int8 weights on kAvx512, kAvx512Bf16 or kAmx where the CPU has AVX-512 VNNI; otherwise one layout.
  /// Throws std::invalid_argument for a negative size and, for int8, a weight that is not finite.
  PackedLinear(const float* weight, std::int64_t out, std::int64_t in, const float* bias, WeightFormat format,
               Isa isa = best_isa());

  /// y[r * out + o] = sum_i W[o][i] * x[r * in + i] + b[o] for r < rows. x and y must not overlap.
  /// Runs on the calling thread (callers share whole batches out among threads).
  void apply(const float* x, std::int64_t rows, float* y) const { apply(x, rows, y, best_isa()); }
  /// The same with a given instruction set (one of supported_isas(); kAvx512Bf16 or kAmx with bf16
  /// weights only if the layer was packed for it).
  void apply(const float* x, std::int64_t rows, float* y, Isa isa) const;

  /// A layer of outputs `rows` of this one (each in [0, out_features())), in that order: the same
  /// packed weights, scales and biases, so each output is computed exactly as here.
  PackedLinear select_outputs(const std::vector<std::int64_t>& rows) const;

  std::int64_t in_features() const { return in_; }
  std::int64_t out_features() const { return out_; }
  WeightFormat format() const { return format_; }
  /// Bytes of weight storage (what one call reads).
  std::size_t weight_bytes() const;
  /// The packed weights widened back to fp32 [out, in], row-major: what the products actually use.
  std::vector<float> unpacked_weight() const;

 private:
  std::int64_t in_ = 0, out_ = 0;
  WeightFormat format_ = WeightFormat::kFloat32;
  // One of these holds the weights, in blocks of 16 outputs ([blocks][in][16], the last block padded
  // with zeros):
  std::vector<float> f32_;
  std::vector<std::uint16_t> bf16_;  // the upper halves of fp32 after rounding to nearest even
  // bf16 weights again, for kAvx512Bf16's dot products (only where the CPU has them): blocks of 16
  // outputs by pairs of inputs, [blocks][(in + 1) / 2][16][2], an odd input count padded with zeros.
  std::vector<std::uint16_t> bf16_pairs_;
  // bf16 weights again, for kAmx's tiles: words of two bf16 (input 2p low, 2p + 1 high), blocks of 16
  // outputs, [blocks][pairs padded to whole tiles][16] (ts/host/amx_tiles.h's packed B), padded with
  // zeros; and the bias padded to (blocks + 1) × 16 floats (the tiles load 16 at a time).
  std::vector<std::uint32_t> amx_;
  std::vector<float> amx_bias_;
  std::vector<std::int8_t> i8_;  // w / scale rounded
  // int8 weights again, for the VNNI kernel (packed for kAvx512 or kAvx512Bf16 where the CPU has it):
  // blocks of 16 outputs by groups of four inputs, [blocks][(in + 3) / 4][16][4], padded with zeros, and
  // 128 × each output's weights summed ([blocks × 16]), which the kernel's unsigned inputs add.
  std::vector<std::int8_t> i8_quads_;
  std::vector<std::int32_t> i8_sums_;
  std::vector<float> scale_;  // [out] for int8: max |w| of the row / 127
  std::vector<float> bias_;   // [out], zeros when the layer has none
};

}  // namespace ts
