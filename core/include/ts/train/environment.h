// SPDX-License-Identifier: GPL-3.0-or-later
// What this build runs with, for `--version` and the desktop app's About dialog: the program's
// version and git commit, LibTorch's version, the devices (the CPU with its bf16 support, each CUDA
// GPU) and the default thread count.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ts {

/// One CUDA device as the NVIDIA driver describes it.
struct GpuDevice {
  int index = 0;                             // CUDA's device number (after CUDA_VISIBLE_DEVICES)
  std::string name;                          // "NVIDIA H200"
  std::int64_t memory_bytes = 0;             // total device memory
  int compute_major = 0, compute_minor = 0;  // compute capability (9.0 for Hopper)
};
/// The machine's CUDA devices and driver.
struct GpuReport {
  std::vector<GpuDevice> devices;
  std::string driver;       // the kernel module's version ("580.95.05"), from /proc/driver/nvidia/version
  int cuda_driver_api = 0;  // the CUDA version the driver supports, as 13000 for 13.0
};
/// Asks the NVIDIA driver (libcuda.so.1, loaded at run time: no CUDA headers or CUDA LibTorch needed)
/// once per process. Without a driver or a device: no devices, never an error.
const GpuReport& gpu_report();
/// "NVIDIA H200 (139.8 GiB, compute 9.0)".
std::string describe_gpu(const GpuDevice& device);
/// The version in the text of /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel
/// Module  580.95.05  ..."); empty when it names none.
std::string nvidia_driver_version(const std::string& proc_text);

/// The project version and the git commit it was configured from ("unknown" outside a checkout).
std::string version_string();
/// Rows of (what, value): "LibTorch", "CPU", "CUDA" (each GPU by name, and the driver), "BLAS" (the library
/// and the kernels it runs on this CPU, ts/host/blas.h), "threads".
std::vector<std::pair<std::string, std::string>> environment_report();
/// "transformer-studio-cli 0.1.0 (commit 2ac6dc3a1b2c)" and the report, one "what: value" per line.
std::string version_text(const std::string& program);

}  // namespace ts
