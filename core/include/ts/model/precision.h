// SPDX-License-Identifier: GPL-3.0-or-later
// Mixed precision: matrix products in bf16 or fp16 under LibTorch's autocast (or, on a CPU, our own
// bf16 and fp16 products), while the weights, the optimizer state, layer norms, softmax and the loss
// stay in fp32.
#pragma once

#include <string>

#include <ATen/core/ATen_fwd.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "ts/model/compute.h"

namespace ts {

/// True when this CPU multiplies bf16 matrices natively (AMX or AVX-512 BF16); without it bf16 is
/// emulated and slower than fp32.
bool cpu_has_native_bf16();
/// Seconds one n×n matrix product took on a device in each precision; 0 where the product failed
/// (no kernel for that type on the device) or was not run.
struct PrecisionTimings {
  double fp32 = 0, bf16 = 0, fp16 = 0;
  int n = 0;  // the matrices' size
};
/// Times `repeats` n×n products on `device` in fp32, bf16 and fp16 after one warm-up each (well
/// under a second on any GPU at the default size). Never throws: a failed precision reads 0.
PrecisionTimings time_precisions(const c10::Device& device, int n = 2048, int repeats = 8);
/// What `precision auto` picks on a GPU from those timings. bf16 when its products are at least
/// 1.3× faster than fp32 (Ampere and later: native bf16, no loss scaling needed) and not more than
/// 10% slower than fp16; otherwise fp16 when it is 1.3× faster (Volta and Turing have fp16 tensor
/// cores but emulate bf16); otherwise fp32. A precision that failed (0) is never picked.
Precision choose_gpu_precision(const PrecisionTimings& timings);
/// One line for the training log: the timings and what they chose.
std::string describe_gpu_precision(const PrecisionTimings& timings);

/// Seconds one thread took for the three products of a training-sized linear layer (a 512-token share
/// of a batch through 256 -> 1024: forward and both backward products), in fp32 (LibTorch's BLAS), in
/// bf16 as training on this CPU runs them (bf16_matmul on AMX tiles or AVX-512 BF16 dot products,
/// ts/model/bf16_products.h, or autocast's kernels) and in fp16 where the CPU has AVX-512 FP16 (ts/model/fp16_products.h);
/// the median of five after a warm-up. 0 where not run.
struct CpuPrecisionTimings {
  double fp32 = 0, bf16 = 0, fp16 = 0;
  bool dot_products = false;  // bf16 ran on bf16_matmul (else autocast's kernels)
  bool tiles = false;         // ... on AMX tiles (else on AVX-512 BF16 dot products)
};
/// Times them (about 0.1-0.2 s on two cores; never throws: a failed bf16 reads 0).
CpuPrecisionTimings time_cpu_precisions();
/// The timing above, measured once per process on first use; later calls return it at once.
const CpuPrecisionTimings& cpu_precision_timings();
/// The timing when this process has measured it already, else nothing (never measures: for callers
/// on a thread that must not wait, like the desktop app's recipe preview).
const CpuPrecisionTimings* measured_cpu_precisions();
/// How much faster than fp32's a half precision's products (bf16 or fp16) must be for `precision auto`
/// to train in it on a CPU.
inline constexpr double kCpuBf16MinimumSpeedup = 1.2;
/// True when bf16's products are fast enough to train in: at least kCpuBf16MinimumSpeedup times fp32's
/// speed (the step's other work, fp32 in both, dilutes the gain). On an AMD EPYC with AVX-512 BF16 they ran at about
/// twice fp32's; on an Intel Xeon model 207 (Emerald Rapids) at 0.7 times without AMX, at about 3 times
/// on its AMX tiles.
bool bf16_products_pay(const CpuPrecisionTimings& timings);
/// The same for fp16's products (AVX-512 FP16; on that Intel Xeon about 1.5 times fp32's).
bool fp16_products_pay(const CpuPrecisionTimings& timings);
/// What `precision auto` picks on a CPU with native bf16 or AVX-512 FP16 from those timings: the faster
/// of bf16 and fp16 among those that pay, else fp32.
Precision choose_cpu_precision(const CpuPrecisionTimings& timings);
/// One line for the training log: the timings and what they chose.
std::string describe_cpu_precision(const CpuPrecisionTimings& timings);
/// The line for the training log where a precision was asked for on a CPU with native bf16 (or
/// AVX-512 FP16) and those timings would choose another one: the run trains as asked, and the person
/// sees which precision is the faster one here (bf16 on an Intel Xeon model 207, whose AVX-512 BF16 dot
/// products do half the flops of its fp32 multiply-adds, is the slower one). Empty where the two agree
/// or fp32 was not timed.
std::string describe_cpu_precision_request(Precision asked, const CpuPrecisionTimings& timings);
/// Throws std::invalid_argument with a clear message when `precision` cannot run on `device` (fp16 on a
/// CPU without AVX-512 FP16) or is still the request kAuto.
void check_precision(Precision precision, const c10::Device& device);

/// Turns autocast on for its lifetime (no-op for fp32) and restores the previous state after. Throws
/// std::invalid_argument for kAuto, which must be resolved first, and for fp16 on a CPU, which trains
/// with fp16_linear (ts/model/fp16_products.h) instead.
class AutocastScope {
 public:
  AutocastScope(Precision precision, const c10::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false, previous_enabled_ = false;
  c10::DeviceType device_type_ = c10::DeviceType::CPU;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Float;
};

}  // namespace ts
