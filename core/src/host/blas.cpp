// SPDX-License-Identifier: GPL-3.0-or-later
// The BLAS and OpenBLAS's kernels for this CPU (see ts/host/blas.h).
#include "ts/host/blas.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <dlfcn.h>
#include <unistd.h>

namespace ts {

namespace {

constexpr const char* kCoreVariable = "OPENBLAS_CORETYPE";
constexpr const char* kFallbackVariable = "TS_OPENBLAS_FALLBACK";  // the core OpenBLAS chose before the restart

// A `char* name(void)` of the loaded libraries, called when present: OpenBLAS exports both of ours.
std::string ask(const char* symbol) {
  using Text = char* (*)();
  auto* function = reinterpret_cast<Text>(::dlsym(RTLD_DEFAULT, symbol));
  if (!function) return {};
  const char* text = function();
  std::string s = text ? text : "";
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::string openblas_core() { return ask("openblas_get_corename"); }
std::string openblas_config() { return ask("openblas_get_config"); }

std::string openblas_core_for(const std::string& chosen_core, const CpuInfo& cpu) {
  // Prescott is where OpenBLAS's run-time dispatch lands for an x86-64 CPU it does not recognise.
  if (lower(chosen_core) != "prescott") return {};
  if (cpu.has("avx512f") && cpu.has("avx512cd") && cpu.has("avx512bw") && cpu.has("avx512dq") && cpu.has("avx512vl"))
    return cpu.has("avx512_bf16") ? "Cooperlake" : "SkylakeX";
  if (cpu.has("avx2") && cpu.has("fma")) return "Haswell";
  return {};
}

namespace {

// Sets OPENBLAS_CORETYPE where OpenBLAS, having chosen `chosen`, fell back on this CPU.
bool set_core_variables(const std::string& chosen) {
  const std::string better = openblas_core_for(chosen, cpu_info());
  if (better.empty()) return false;
  ::setenv(kCoreVariable, better.c_str(), 1);
  ::setenv(kFallbackVariable, chosen.c_str(), 1);
  return true;
}

}  // namespace

bool set_openblas_core_for_this_cpu() {
  if (std::getenv(kCoreVariable)) return false;  // the person's choice, or this program's before a restart
  return set_core_variables(openblas_core());
}

bool set_openblas_core_for_a_program_to_start() {
  if (std::getenv(kCoreVariable)) return false;
  // The OpenBLAS that LibTorch links (libtorch_cpu needs libopenblas.so.0 where the BLAS is OpenBLAS),
  // loaded on its own: a few milliseconds, against LibTorch's half second.
  void* library = ::dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!library) return false;  // another BLAS, or none: nothing to choose
  using Text = char* (*)();
  auto* corename = reinterpret_cast<Text>(::dlsym(library, "openblas_get_corename"));
  const char* chosen = corename ? corename() : nullptr;
  const bool set = chosen && set_core_variables(chosen);
  ::dlclose(library);
  return set;
}

void restart_this_program(char** argv) {
  ::execv("/proc/self/exe", argv);
  std::fprintf(stderr, "%s: could not start again with the environment it set (%s); going on without it\n",
               argv && argv[0] ? argv[0] : "transformer-studio", std::strerror(errno));
}

void use_the_right_blas_kernels(char** argv) {
  if (!set_openblas_core_for_this_cpu()) return;
  restart_this_program(argv);
  // Still here: the restart failed, and OpenBLAS keeps the kernels it chose; blas_report() says which.
  ::unsetenv(kCoreVariable);
  ::unsetenv(kFallbackVariable);
}

std::string blas_report() {
  const std::string config = openblas_config();
  if (config.empty()) return "not OpenBLAS (LibTorch's BLAS is another library)";
  std::string report = config;
  const std::string core = openblas_core();
  if (config.find(core) == std::string::npos) report += ", core " + core;
  const char* fallback = std::getenv(kFallbackVariable);
  const char* forced = std::getenv(kCoreVariable);
  if (fallback && forced && lower(core) == lower(forced))
    report += " (core " + core + " set by Transformer Studio: OpenBLAS chose " + fallback +
              ", its generic fallback for a CPU it does not know)";
  else if (forced)
    report += std::string(" (OPENBLAS_CORETYPE=") + forced + ")";
  const std::string better = openblas_core_for(core, cpu_info());
  if (!better.empty())
    report += " (slow generic kernels on this CPU: OPENBLAS_CORETYPE=" + better + " would give faster fp32 products)";
  return report;
}

}  // namespace ts
