// SPDX-License-Identifier: GPL-3.0-or-later
// Mixed precision: matrix products in bf16 or fp16 under LibTorch's autocast, while the weights,
// the optimizer state, layer norms, softmax and the loss stay in fp32.
#pragma once

#include <string>

#include <ATen/core/ATen_fwd.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace ts {

/// The precisions a run can use: "fp32", "bf16" (CPU with AMX/AVX-512 BF16, or a GPU) and
/// "fp16" (GPU only, with loss scaling).
bool is_valid_precision(const std::string& precision);
/// True when this CPU multiplies bf16 matrices natively (AMX or AVX-512 BF16); without it bf16 is
/// emulated and slower than fp32.
bool cpu_has_native_bf16();
/// Throws std::invalid_argument with a clear message when `precision` cannot run on `device`.
void check_precision(const std::string& precision, const c10::Device& device);

/// Turns autocast on for its lifetime (no-op for "fp32") and restores the previous state after.
class AutocastScope {
 public:
  AutocastScope(const std::string& precision, const c10::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false, cuda_ = false, previous_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Float;
};

}  // namespace ts
