// SPDX-License-Identifier: GPL-3.0-or-later
// How fast this CPU's vector multiply-adds run, timed in registers: fp32 fused multiply-adds on
// 512-bit registers against AVX-512 BF16's dot products (two bf16 products added to each fp32 sum).
// A CPU with the bf16 instruction does not always run it faster: on the AMD EPYC VMs of
// docs/benchmarks.md bf16 products ran about twice as fast as fp32, while an Intel Xeon of family 6
// model 207 (Emerald Rapids, no AMX) does half the flops with it (2026-11-29: 87 against 175 GFLOP/s
// on one thread). Decoding on packed bf16 weights uses the dot products only
// where they pay (ts/infer/packed_linear.h). No LibTorch here.
#pragma once

#include <string>

namespace ts {

struct VectorRates {
  double fp32_fma_gflops = 0;  // vfmadd231ps on 512-bit registers, one thread; 0 without AVX-512
  double bf16_dot_gflops = 0;  // vdpbf16ps (each product counts two flops), one thread; 0 without it
  bool measured() const { return fp32_fma_gflops > 0 && bf16_dot_gflops > 0; }
};

/// Times both on the calling thread (about 3 ms: a warm-up, then the best of three rounds of each):
/// independent sums held in registers, so neither memory nor latency limits them. Zeros where the
/// CPU lacks AVX-512 F or AVX-512 BF16, or off x86-64.
VectorRates time_vector_rates();
/// time_vector_rates(), once per process.
const VectorRates& vector_rates();

/// bf16 dot products must do at least this many times the multiply-adds per second of fp32 ones to be
/// worth rounding activations to bf16 for.
constexpr double kBf16DotMinimumSpeedup = 1.2;
/// Whether `rates` says the bf16 dot products pay (false when they were not measured).
bool bf16_dot_products_pay(const VectorRates& rates);
/// "bf16 dot products 87 GFLOP/s against fp32 multiply-adds' 175 (one thread)", or "" when not measured.
std::string describe_vector_rates(const VectorRates& rates);

}  // namespace ts
