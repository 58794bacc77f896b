// SPDX-License-Identifier: GPL-3.0-or-later
// Mixed precision (see ts/model/precision.h).
#include "ts/model/precision.h"
#include "ts/model/torch_compat.h"
#include "ts/host/cpu.h"

#include <chrono>
#include <fstream>
#include <stdexcept>

#include <ATen/ATen.h>
#include <fmt/format.h>

namespace ts {

bool cpu_has_native_bf16() { return cpu_info().has("amx_bf16") || cpu_info().has("avx512_bf16"); }

PrecisionTimings time_precisions(const c10::Device& device, int n, int repeats) {
  PrecisionTimings t;
  t.n = n;
  const auto time_one = [&](at::ScalarType type) -> double {
    try {
      const auto options = at::TensorOptions().dtype(type).device(device);
      const auto a = at::randn({n, n}, options), b = at::randn({n, n}, options);
      auto c = at::matmul(a, b);
      c.sum().item<double>();  // warm-up; reading a value waits for the device
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < repeats; ++i) c = at::matmul(a, b);
      c.sum().item<double>();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / std::max(repeats, 1);
    } catch (const std::exception&) {
      return 0.0;  // no kernel for this type here
    }
  };
  t.fp32 = time_one(at::kFloat);
  t.bf16 = time_one(at::kBFloat16);
  t.fp16 = time_one(at::kHalf);
  return t;
}

Precision choose_gpu_precision(const PrecisionTimings& t) {
  if (!(t.fp32 > 0)) return Precision::kFp32;
  const bool bf16_fast = t.bf16 > 0 && t.fp32 >= 1.3 * t.bf16;
  const bool fp16_fast = t.fp16 > 0 && t.fp32 >= 1.3 * t.fp16;
  if (bf16_fast && (!fp16_fast || t.bf16 <= 1.1 * t.fp16)) return Precision::kBf16;
  if (fp16_fast) return Precision::kFp16;
  return Precision::kFp32;
}

std::string describe_gpu_precision(const PrecisionTimings& t) {
  const auto ms = [](double s) { return s > 0 ? fmt::format("{:.2f} ms", 1000 * s) : std::string("failed"); };
  const auto chosen = choose_gpu_precision(t);
  return fmt::format("precision auto: {} (one {}×{} product on this GPU: fp32 {}, bf16 {}, fp16 {}){}",
                     chosen == Precision::kFp32 ? "fp32" : std::string(precision_name(chosen)) + " autocast", t.n, t.n,
                     ms(t.fp32), ms(t.bf16), ms(t.fp16),
                     chosen == Precision::kFp16 ? "; fp16 trains with loss scaling" : "");
}

void check_precision(Precision precision, const c10::Device& device) {
  if (precision == Precision::kAuto)
    throw std::invalid_argument("precision auto is a request: resolve it for the device first (resolve_precision)");
  if (precision == Precision::kFp16 && !device.is_cuda())
    throw std::invalid_argument("precision fp16 needs a CUDA GPU; on the CPU use bf16 (or fp32)");
}

AutocastScope::AutocastScope(Precision precision, const c10::Device& device) {
  if (precision == Precision::kFp32) return;
  check_precision(precision, device);
  const auto dtype = precision == Precision::kFp16 ? at::kHalf : at::kBFloat16;
  active_ = true;
  device_type_ = device.type();
  previous_enabled_ = torch_compat::autocast_enabled(device_type_);
  previous_dtype_ = torch_compat::autocast_dtype(device_type_);
  torch_compat::set_autocast_dtype(device_type_, dtype);
  torch_compat::set_autocast_enabled(device_type_, true);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // The cache holds the low-precision copies of the weights for one forward pass: drop it when
  // the outermost scope closes, as torch.autocast does, so the next step sees updated weights.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  torch_compat::set_autocast_enabled(device_type_, previous_enabled_);
  torch_compat::set_autocast_dtype(device_type_, previous_dtype_);
}

}  // namespace ts
