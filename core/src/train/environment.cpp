// SPDX-License-Identifier: GPL-3.0-or-later
// See ts/train/environment.h.
#include "ts/train/environment.h"

#include <dlfcn.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <thread>

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include "ts/host/blas.h"
#include "ts/host/cpu.h"
#include "ts/infer/packed_linear.h"
#include "ts/git_commit.h"  // TS_GIT_COMMIT, written at every build (cmake/git_commit.cmake)
#include "ts/model/bf16_products.h"
#include "ts/model/precision.h"

#ifndef TS_VERSION
#define TS_VERSION "0.0.0"
#endif

namespace ts {

namespace {

// The few CUDA driver API entry points asked for, declared by hand (CUresult and CUdevice are ints).
struct CudaDriver {
  int (*init)(unsigned) = nullptr;
  int (*driver_get_version)(int*) = nullptr;
  int (*device_get_count)(int*) = nullptr;
  int (*device_get)(int*, int) = nullptr;
  int (*device_get_name)(char*, int, int) = nullptr;
  int (*device_total_mem)(std::size_t*, int) = nullptr;
  int (*device_get_attribute)(int*, int, int) = nullptr;

  bool load() {
    // Never closed: the driver stays loaded for LibTorch, which opens the same library.
    void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib) return false;
    const auto get = [lib](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      return fn != nullptr;
    };
    return get(init, "cuInit") && get(driver_get_version, "cuDriverGetVersion") &&
           get(device_get_count, "cuDeviceGetCount") && get(device_get, "cuDeviceGet") &&
           get(device_get_name, "cuDeviceGetName") && get(device_total_mem, "cuDeviceTotalMem_v2") &&
           get(device_get_attribute, "cuDeviceGetAttribute");
  }
};

constexpr int kCudaSuccess = 0;
constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kComputeCapabilityMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

GpuReport ask_the_driver() {
  GpuReport report;
  std::ifstream version_file("/proc/driver/nvidia/version");
  report.driver = nvidia_driver_version(
      std::string(std::istreambuf_iterator<char>(version_file), std::istreambuf_iterator<char>()));
  CudaDriver cuda;
  if (!cuda.load() || cuda.init(0) != kCudaSuccess) return report;
  cuda.driver_get_version(&report.cuda_driver_api);
  int count = 0;
  if (cuda.device_get_count(&count) != kCudaSuccess) return report;
  for (int i = 0; i < count; ++i) {
    int handle = 0;
    if (cuda.device_get(&handle, i) != kCudaSuccess) continue;
    GpuDevice d;
    d.index = i;
    char name[256] = {};
    if (cuda.device_get_name(name, sizeof(name) - 1, handle) == kCudaSuccess) d.name = name;
    std::size_t bytes = 0;
    if (cuda.device_total_mem(&bytes, handle) == kCudaSuccess) d.memory_bytes = static_cast<std::int64_t>(bytes);
    cuda.device_get_attribute(&d.compute_major, kComputeCapabilityMajor, handle);
    cuda.device_get_attribute(&d.compute_minor, kComputeCapabilityMinor, handle);
    report.devices.push_back(d);
  }
  return report;
}

}  // namespace

std::string nvidia_driver_version(const std::string& proc_text) {
  static const std::regex version(R"(Kernel Module(?:\s+for\s+\S+)?\s+([0-9]+(?:\.[0-9]+)+))");
  std::smatch m;
  return std::regex_search(proc_text, m, version) ? m[1].str() : std::string();
}

const GpuReport& gpu_report() {
  static const GpuReport report = ask_the_driver();
  return report;
}

std::string describe_gpu(const GpuDevice& d) {
  return fmt::format("{} ({:.1f} GiB, compute {}.{})", d.name.empty() ? "unnamed GPU" : d.name,
                     static_cast<double>(d.memory_bytes) / (1024.0 * 1024.0 * 1024.0), d.compute_major,
                     d.compute_minor);
}

std::string version_string() { return fmt::format("{} (commit {})", TS_VERSION, TS_GIT_COMMIT); }

std::vector<std::pair<std::string, std::string>> environment_report() {
  const int cores = cpu_cores();
  std::vector<std::pair<std::string, std::string>> rows;
  rows.emplace_back("LibTorch", TORCH_VERSION);
  rows.emplace_back("CPU", fmt::format("{} cores; bf16 {}", cores,
                                       !cpu_has_native_bf16() ? "emulated (slower than fp32)"
                                       : bf16_products_preferred()
                                           ? fmt::format("native, trained on {}", bf16_kernel_name(bf16_kernel()))
                                           : "native (AMX or AVX-512 BF16)"));
  const auto gpus = torch::cuda::is_available() ? torch::cuda::device_count() : 0;
  std::string cuda = "not available";
  if (gpus > 0) {
    // LibTorch counts the devices it can use; the driver names them.
    const auto& driver = gpu_report();
    cuda = fmt::format("{} device{}", gpus, gpus == 1 ? "" : "s");
    for (const auto& d : driver.devices)
      if (d.index < static_cast<int>(gpus)) cuda += fmt::format("; {}: {}", d.index, describe_gpu(d));
    if (!driver.driver.empty()) cuda += "; driver " + driver.driver;
    if (driver.cuda_driver_api > 0)
      cuda += fmt::format(" (CUDA {}.{})", driver.cuda_driver_api / 1000, driver.cuda_driver_api % 1000 / 10);
  } else if (!gpu_report().devices.empty()) {
    cuda = fmt::format("not available to this LibTorch (built without CUDA), though the driver sees {}",
                       describe_gpu(gpu_report().devices.front()));
  }
  rows.emplace_back("CUDA", cuda);
  rows.emplace_back("BLAS", blas_report());            // fp32 products on the CPU
  rows.emplace_back("decoding", describe_best_isa());  // the packed weights' kernels (translation on the CPU)
  rows.emplace_back("threads",
                    fmt::format("{} by default (all cores; --threads to change); LibTorch itself starts with {}", cores,
                                at::get_num_threads()));
  return rows;
}

std::string version_text(const std::string& program) {
  std::string text = fmt::format("{} {}\n", program, version_string());
  for (const auto& [what, value] : environment_report()) text += fmt::format("{}: {}\n", what, value);
  return text;
}

}  // namespace ts
