// SPDX-License-Identifier: GPL-3.0-or-later
// Mixed precision (see ts/model/precision.h).
#include "ts/model/precision.h"

#include <fstream>
#include <stdexcept>

#include <ATen/autocast_mode.h>

namespace ts {

bool is_valid_precision(const std::string& p) { return p == "fp32" || p == "bf16" || p == "fp16"; }

bool cpu_has_native_bf16() {
  static const bool native = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("flags", 0) == 0)
        return line.find(" amx_bf16") != std::string::npos || line.find(" avx512_bf16") != std::string::npos;
    return false;
  }();
  return native;
}

void check_precision(const std::string& precision, const c10::Device& device) {
  if (!is_valid_precision(precision))
    throw std::invalid_argument("unknown precision \"" + precision + "\" (use fp32, bf16 or fp16)");
  if (precision == "fp16" && !device.is_cuda())
    throw std::invalid_argument("precision fp16 needs a CUDA GPU; on the CPU use bf16 (or fp32)");
}

AutocastScope::AutocastScope(const std::string& precision, const c10::Device& device) {
  if (precision == "fp32") return;
  const auto dtype = precision == "fp16" ? at::kHalf : at::kBFloat16;
  active_ = true;
  cuda_ = device.is_cuda();
  if (cuda_) {
    previous_enabled_ = at::autocast::is_enabled();
    previous_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(true);
  } else {
    previous_enabled_ = at::autocast::is_cpu_enabled();
    previous_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(true);
  }
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // The cache holds the low-precision copies of the weights for one forward pass: drop it when
  // the outermost scope closes, as torch.autocast does, so the next step sees updated weights.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  if (cuda_) {
    at::autocast::set_enabled(previous_enabled_);
    at::autocast::set_autocast_gpu_dtype(previous_dtype_);
  } else {
    at::autocast::set_cpu_enabled(previous_enabled_);
    at::autocast::set_autocast_cpu_dtype(previous_dtype_);
  }
}

}  // namespace ts
