// SPDX-License-Identifier: GPL-3.0-or-later
// The BLAS that LibTorch's fp32 matrix products run on, and the OpenBLAS kernel for this CPU.
//
// OpenBLAS picks its kernels for the CPU it finds when it is loaded. A release older than the CPU does
// not know it and falls back to its Prescott (SSE3) kernels: Debian 12's OpenBLAS 0.3.21 does so on
// Intel Xeon model 207 (Emerald Rapids), where one 2048^3 fp32 product on two threads ran at 35-46
// GFLOP/s instead of 200-219 with the Cooperlake kernels, and training in fp32 at a quarter of the
// speed (docs/benchmarks.md, "OpenBLAS on a CPU it does not know"). OpenBLAS reads OPENBLAS_CORETYPE
// once, as it loads, before main runs; so a program sets it and starts itself again. No LibTorch here.
#pragma once

#include <string>

#include "ts/host/cpu.h"

namespace ts {

/// The core type OpenBLAS chose ("Cooperlake", "Prescott"), asked of the loaded library; empty when
/// the process's BLAS is not OpenBLAS.
std::string openblas_core();
/// OpenBLAS's description of itself ("OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Cooperlake
/// MAX_THREADS=64"); empty when the BLAS is not OpenBLAS.
std::string openblas_config();

/// The OPENBLAS_CORETYPE this CPU should have when OpenBLAS chose `chosen_core`: where OpenBLAS fell
/// back to "Prescott" (any case) on a CPU with wider vectors, the newest kernel family its flags
/// support ("Cooperlake" with AVX-512 BF16, "SkylakeX" with AVX-512 F, CD, BW, DQ and VL, "Haswell"
/// with AVX2 and FMA); otherwise empty (OpenBLAS knew the CPU, or nothing better fits).
std::string openblas_core_for(const std::string& chosen_core, const CpuInfo& cpu);

/// When OpenBLAS fell back on this CPU and the person set no OPENBLAS_CORETYPE: sets it (and
/// TS_OPENBLAS_FALLBACK to the core OpenBLAS had chosen, for blas_report) and returns true; the
/// caller must then start the program again (restart_this_program) for OpenBLAS to read it.
bool set_openblas_core_for_this_cpu();
/// For a program that starts another that loads LibTorch (transformer-studio-cli, which loads none
/// itself): asks OpenBLAS, loaded alone for the question, which core it chooses, and sets
/// OPENBLAS_CORETYPE as set_openblas_core_for_this_cpu does, so that the program started reads it
/// as it loads and need not start again. False when nothing was set (the person's own setting, no
/// OpenBLAS, or one that knows this CPU).
bool set_openblas_core_for_a_program_to_start();
/// Executes this program again with the same arguments and the environment as it is now: the same
/// process id, and the same process start time, which a --budget counts from. Returns only when that
/// failed (no /proc, exec refused), after saying so on standard error; the program then goes on as
/// it was.
void restart_this_program(char** argv);
/// First thing in a main() that loads LibTorch: set_openblas_core_for_this_cpu(), and restart when
/// it set something.
void use_the_right_blas_kernels(char** argv);

/// One line for logs and the About dialog: "OpenBLAS 0.3.21 ... Cooperlake MAX_THREADS=64 (core
/// Cooperlake set by Transformer Studio: OpenBLAS chose Prescott, ...)" (the benchmarks read that
/// phrase), or "not OpenBLAS ..." with nothing else known.
std::string blas_report();

}  // namespace ts
