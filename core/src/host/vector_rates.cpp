// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU's vector multiply-add rates (see ts/host/vector_rates.h).
#include "ts/host/vector_rates.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define TS_VECTOR_RATES_X86 1
#else
#define TS_VECTOR_RATES_X86 0
#endif

namespace ts {
namespace {

#if TS_VECTOR_RATES_X86
// Twelve independent sums (zmm0–zmm11) of one instruction INSN, `rounds` times: twelve in flight
// cover the latency of two pipes. zmm12 and zmm13 are the zeroed operands (zero inputs take no
// slow path). Written in assembly so that no compiler keeps the sums in memory.
#define TS_TWELVE(INSN)                                                                                               \
  INSN " %%zmm12, %%zmm13, %%zmm0\n\t" INSN " %%zmm12, %%zmm13, %%zmm1\n\t" INSN " %%zmm12, %%zmm13, %%zmm2\n\t" INSN \
       " %%zmm12, %%zmm13, %%zmm3\n\t" INSN " %%zmm12, %%zmm13, %%zmm4\n\t" INSN " %%zmm12, %%zmm13, %%zmm5\n\t" INSN \
       " %%zmm12, %%zmm13, %%zmm6\n\t" INSN " %%zmm12, %%zmm13, %%zmm7\n\t" INSN " %%zmm12, %%zmm13, %%zmm8\n\t" INSN \
       " %%zmm12, %%zmm13, %%zmm9\n\t" INSN " %%zmm12, %%zmm13, %%zmm10\n\t" INSN " %%zmm12, %%zmm13, %%zmm11\n\t"
#define TS_TIMED_LOOP(INSN) \
  __asm__ volatile(                                                                                     \
      "vpxord %%zmm12, %%zmm12, %%zmm12\n\t"                                                            \
      "vpxord %%zmm13, %%zmm13, %%zmm13\n\t"                                                            \
      "1:\n\t" TS_TWELVE(INSN) "dec %0\n\t"                                                             \
                               "jnz 1b\n\t"                                                             \
      : "+r"(rounds)                                                                                    \
      :                                                                                                 \
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", \
        "xmm12", "xmm13", "cc")

constexpr long kRounds = 40000;  // 480,000 instructions: about 0.1 ms of fp32, 0.4 ms of bf16 on slow CPUs
constexpr int kTries = 3;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

__attribute__((target("avx512f"))) double fma_seconds(long rounds) {
  const auto start = Clock::now();
  TS_TIMED_LOOP("vfmadd231ps");
  return seconds_since(start);
}

__attribute__((target("avx512f,avx512bf16"))) double dot_seconds(long rounds) {
  const auto start = Clock::now();
  TS_TIMED_LOOP("vdpbf16ps");
  return seconds_since(start);
}

#undef TS_TIMED_LOOP
#undef TS_TWELVE

// GFLOP/s of `flops_per_instruction` from the fastest of kTries timings.
template <typename Timed>
double best_rate(Timed timed, double flops_per_instruction) {
  double best = 1e300;
  for (int i = 0; i < kTries; ++i) best = std::min(best, timed(kRounds));
  return best > 0 ? static_cast<double>(kRounds) * 12 * flops_per_instruction / best / 1e9 : 0;
}
#endif

}  // namespace

VectorRates time_vector_rates() {
  VectorRates rates;
#if TS_VECTOR_RATES_X86
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bf16")) return rates;
  // A few milliseconds of 512-bit work first: a core runs them slower until its clock has settled.
  for (int i = 0; i < 4; ++i) fma_seconds(kRounds);
  rates.fp32_fma_gflops = best_rate(fma_seconds, 16 * 2);  // 16 lanes, a multiply and an add
  rates.bf16_dot_gflops = best_rate(dot_seconds, 16 * 4);  // 16 lanes, two multiplies and two adds
#endif
  return rates;
}

const VectorRates& vector_rates() {
  static const VectorRates rates = time_vector_rates();
  return rates;
}

bool bf16_dot_products_pay(const VectorRates& rates) {
  return rates.measured() && rates.bf16_dot_gflops >= kBf16DotMinimumSpeedup * rates.fp32_fma_gflops;
}

std::string describe_vector_rates(const VectorRates& rates) {
  if (!rates.measured()) return {};
  return fmt::format("bf16 dot products {:.0f} GFLOP/s against fp32 multiply-adds' {:.0f} (one thread)",
                     rates.bf16_dot_gflops, rates.fp32_fma_gflops);
}

}  // namespace ts
