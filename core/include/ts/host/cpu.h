// SPDX-License-Identifier: GPL-3.0-or-later
// What this machine's CPU is, in one place: the core count every default thread count starts from,
// and /proc/cpuinfo's model name and flags (bf16 support, AVX-512) that the recipe, the precision
// choice, the environment report and the benchmarks name. No LibTorch here.
#pragma once

#include <string>

namespace ts {

/// The logical cores this process may use (at least 1): "all cores" in train.threads, LibTorch's
/// default, SentencePiece's training threads.
int cpu_cores();

struct CpuInfo {
  std::string model;  // "AMD EPYC 9654 96-Core Processor"; empty when /proc/cpuinfo names none
  std::string flags;  // the first "flags" line's value, space-separated, with a space at each end
  /// True when `flag` ("avx512f", "amx_bf16", "avx512_bf16") is among the flags.
  bool has(const std::string& flag) const;
};
/// /proc/cpuinfo of this machine, read once per process (empty fields where it cannot be read).
const CpuInfo& cpu_info();
/// The same from the text of a /proc/cpuinfo (for tests).
CpuInfo parse_cpu_info(const std::string& proc_cpuinfo);

}  // namespace ts
