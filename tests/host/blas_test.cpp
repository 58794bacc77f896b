// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/host/blas.h"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace ts {
namespace {

CpuInfo flags(const std::string& list) { return parse_cpu_info("model name\t: test\nflags\t\t: " + list + "\n"); }

const char* kEmeraldRapids =
    "fpu sse2 avx avx2 fma avx512f avx512dq avx512ifma avx512cd avx512bw avx512vl avx_vnni avx512_bf16 "
    "avx512_vnni avx512_fp16";

// Debian 12's OpenBLAS 0.3.21 chose Prescott on an Intel Xeon model 207 (Emerald Rapids) with AVX-512
// BF16: the fallback is replaced by the newest family the flags support.
TEST(Blas, AFallbackToPrescottGetsTheKernelsTheFlagsSupport) {
  EXPECT_EQ(openblas_core_for("Prescott", flags(kEmeraldRapids)), "Cooperlake");
  EXPECT_EQ(openblas_core_for("PRESCOTT", flags(kEmeraldRapids)), "Cooperlake");
  EXPECT_EQ(openblas_core_for("Prescott", flags("fpu avx2 fma avx512f avx512cd avx512bw avx512dq avx512vl")),
            "SkylakeX");
  EXPECT_EQ(openblas_core_for("Prescott", flags("fpu avx avx2 fma")), "Haswell");
  // AVX-512 F alone (Xeon Phi has no BW, DQ or VL) is not enough for the SkylakeX kernels.
  EXPECT_EQ(openblas_core_for("Prescott", flags("fpu avx2 fma avx512f avx512cd")), "Haswell");
}

TEST(Blas, AKnownCpuOrNothingBetterKeepsOpenBlasChoice) {
  EXPECT_EQ(openblas_core_for("Cooperlake", flags(kEmeraldRapids)), "");
  EXPECT_EQ(openblas_core_for("Zen", flags(kEmeraldRapids)), "");
  EXPECT_EQ(openblas_core_for("Haswell", flags("avx2 fma")), "");
  EXPECT_EQ(openblas_core_for("", flags(kEmeraldRapids)), "");  // not OpenBLAS
  EXPECT_EQ(openblas_core_for("Prescott", flags("fpu sse2 sse3")), "");
  EXPECT_EQ(openblas_core_for("Prescott", flags("fpu avx avx2")), "");  // AVX2 without FMA
}

TEST(Blas, APersonsOwnCoreTypeIsNeverOverridden) {
  ::setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  EXPECT_FALSE(set_openblas_core_for_this_cpu());
  EXPECT_STREQ(std::getenv("OPENBLAS_CORETYPE"), "Haswell");
  ::unsetenv("OPENBLAS_CORETYPE");
}

// This test program does not load OpenBLAS (no LibTorch): nothing to set, and the report says so.
TEST(Blas, WithoutOpenBlasNothingIsSetAndTheReportSaysSo) {
  ::unsetenv("OPENBLAS_CORETYPE");
  EXPECT_EQ(openblas_core(), "");
  EXPECT_FALSE(set_openblas_core_for_this_cpu());
  EXPECT_EQ(std::getenv("OPENBLAS_CORETYPE"), nullptr);
  EXPECT_NE(blas_report().find("not OpenBLAS"), std::string::npos);
}

}  // namespace
}  // namespace ts
