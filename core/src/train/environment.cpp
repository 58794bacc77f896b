// SPDX-License-Identifier: GPL-3.0-or-later
// See ts/train/environment.h.
#include "ts/train/environment.h"

#include <thread>

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/cuda.h>
#include <torch/version.h>


#include "ts/model/precision.h"

#ifndef TS_VERSION
#define TS_VERSION "0.0.0"
#endif
#ifndef TS_GIT_COMMIT
#define TS_GIT_COMMIT "unknown"
#endif

namespace ts {

std::string version_string() { return fmt::format("{} (commit {})", TS_VERSION, TS_GIT_COMMIT); }

std::vector<std::pair<std::string, std::string>> environment_report() {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::pair<std::string, std::string>> rows;
  rows.emplace_back("LibTorch", TORCH_VERSION);
  rows.emplace_back("CPU", fmt::format("{} cores; bf16 {}", cores,
                                       cpu_has_native_bf16() ? "native (AMX or AVX-512 BF16)" : "emulated (slower than fp32)"));
  const auto gpus = torch::cuda::is_available() ? torch::cuda::device_count() : 0;
  rows.emplace_back("CUDA", gpus > 0 ? fmt::format("{} device{}", gpus, gpus == 1 ? "" : "s") : "not available");
  rows.emplace_back("threads", fmt::format("{} by default (all cores; --threads to change); LibTorch itself starts with {}",
                                           cores, at::get_num_threads()));
  return rows;
}

std::string version_text(const std::string& program) {
  std::string text = fmt::format("{} {}\n", program, version_string());
  for (const auto& [what, value] : environment_report()) text += fmt::format("{}: {}\n", what, value);
  return text;
}

}  // namespace ts
