// SPDX-License-Identifier: GPL-3.0-or-later
// Where and in what arithmetic a run computes, as a configuration asks for it: two closed sets with
// their names for the edges (configuration files, the run history, the CLI). No LibTorch here: the
// configuration code reads these without it; ts/model/precision.h and ts/train/trainer.h turn them
// into a LibTorch device and an autocast type.
#pragma once

#include <string>

namespace ts {

/// Where a run computes: `kAuto` is the first CUDA GPU when LibTorch sees one, else the CPU.
enum class DeviceChoice { kAuto, kCpu, kCuda };
/// "auto", "cpu", "cuda".
const char* device_choice_name(DeviceChoice device);
/// The inverse of device_choice_name; throws std::invalid_argument naming the accepted values.
DeviceChoice parse_device_choice(const std::string& name);

/// The arithmetic of the matrix products: fp32; bf16 or fp16 under autocast on a GPU (fp16 with loss
/// scaling); on a CPU, bf16 under autocast or on our AVX-512 BF16 products (ts/model/bf16_products.h),
/// fp16 on our AVX-512 FP16 products (ts/model/fp16_products.h). `kAuto` is a request that resolve_precision (ts/train/trainer.h) turns into one of
/// the other three for the machine; nothing computes in "auto".
enum class Precision { kFp32, kBf16, kFp16, kAuto };
/// "fp32", "bf16", "fp16", "auto".
const char* precision_name(Precision precision);
/// The inverse of precision_name; throws std::invalid_argument naming the accepted values.
Precision parse_precision(const std::string& name);

}  // namespace ts
