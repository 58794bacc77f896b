// SPDX-License-Identifier: GPL-3.0-or-later
// What a build runs with: the driver's version from /proc, the GPUs by name, the report's rows.
#include "ts/train/environment.h"

#include <gtest/gtest.h>

#include <torch/cuda.h>

#include "ts/host/blas.h"
#include "ts/host/vector_rates.h"
#include "ts/infer/packed_linear.h"

namespace ts {
namespace {

TEST(Environment, ReadsTheDriverVersionFromBothKernelModules) {
  // The proprietary module and the open one word the line differently.
  EXPECT_EQ(nvidia_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 "
                                  "UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"),
            "535.183.01");
  EXPECT_EQ(nvidia_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
                                  "(dvs-builder@U16-I3-B03-4-3)  Tue Sep 23 09:46:32 UTC 2025\n"),
            "580.95.05");
  EXPECT_EQ(nvidia_driver_version(""), "");
  EXPECT_EQ(nvidia_driver_version("NVRM version: something else entirely\n"), "");
}

TEST(Environment, DescribesAGpuByNameMemoryAndComputeCapability) {
  GpuDevice d;
  d.name = "NVIDIA H200";
  d.memory_bytes = 150'000'000'000;
  d.compute_major = 9;
  d.compute_minor = 0;
  EXPECT_EQ(describe_gpu(d), "NVIDIA H200 (139.7 GiB, compute 9.0)");
  d.name.clear();
  EXPECT_EQ(describe_gpu(d).rfind("unnamed GPU", 0), 0u);
}

// On a GPU machine the report names every GPU LibTorch can use; elsewhere it says there is none.
TEST(Environment, TheCudaRowNamesTheGpusOrSaysThereAreNone) {
  std::string cuda_row;
  for (const auto& [what, value] : environment_report())
    if (what == "CUDA") cuda_row = value;
  ASSERT_FALSE(cuda_row.empty());
  const auto& report = gpu_report();
  if (!torch::cuda::is_available()) {
    EXPECT_EQ(cuda_row.rfind("not available", 0), 0u) << cuda_row;
    return;
  }
  ASSERT_EQ(report.devices.size(), static_cast<std::size_t>(torch::cuda::device_count()));
  for (const auto& d : report.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.memory_bytes, 0);
    EXPECT_GE(d.compute_major, 3);
    EXPECT_NE(cuda_row.find(d.name), std::string::npos) << cuda_row;
  }
  EXPECT_NE(cuda_row.find("driver"), std::string::npos) << cuda_row;
}

// The BLAS row names the library and the kernels it chose on this CPU: with Debian's LibTorch that is
// OpenBLAS, asked through the symbols it exports.
TEST(Environment, TheBlasRowNamesTheLibraryAndItsKernels) {
  std::string blas_row;
  for (const auto& [what, value] : environment_report())
    if (what == "BLAS") blas_row = value;
  ASSERT_FALSE(blas_row.empty());
  const auto core = openblas_core();
  if (core.empty()) {
    EXPECT_EQ(blas_row.rfind("not OpenBLAS", 0), 0u) << blas_row;
    return;
  }
  EXPECT_EQ(blas_row.rfind("OpenBLAS ", 0), 0u) << blas_row;
  EXPECT_NE(blas_row.find(core), std::string::npos) << blas_row;
}

// The decoding row names the packed weights' kernels best_isa() chose and, where the CPU has bf16 dot
// products, the rates that chose between them; AMX tiles, chosen without timing, say so.
TEST(Environment, TheDecodingRowNamesTheKernelsTranslationUses) {
  std::string row;
  for (const auto& [what, value] : environment_report())
    if (what == "decoding") row = value;
  if (best_isa() == Isa::kAmx) {
    EXPECT_EQ(row, "amx-bf16 (bf16 weights on AMX tiles)");
    return;
  }
  EXPECT_EQ(row.rfind(isa_name(best_isa()) + (vector_rates().measured() ? " (" : ""), 0), 0u) << row;
  EXPECT_EQ(row.find("GFLOP/s") != std::string::npos, vector_rates().measured()) << row;
}

}  // namespace
}  // namespace ts
