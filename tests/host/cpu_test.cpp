// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/host/cpu.h"

#include <gtest/gtest.h>

namespace ts {
namespace {

TEST(Cpu, ReadsTheFirstModelNameAndFlagsOfProcCpuinfo) {
  const std::string text =
      "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\n"
      "flags\t\t: fpu vme avx2 avx512f avx512_bf16 amx_tile\n\n"
      "processor\t: 1\nmodel name\t: another\nflags\t\t: fpu\n";
  const auto info = parse_cpu_info(text);
  EXPECT_EQ(info.model, "AMD EPYC 9654 96-Core Processor");
  EXPECT_TRUE(info.has("avx512f"));
  EXPECT_TRUE(info.has("avx512_bf16"));
  EXPECT_TRUE(info.has("fpu"));
  EXPECT_FALSE(info.has("amx_bf16"));  // amx_tile is another flag
  EXPECT_FALSE(info.has("avx512"));    // whole flags only
}

TEST(Cpu, AMachineWithoutCpuinfoHasNoFlagsAndStillCores) {
  const auto info = parse_cpu_info("");
  EXPECT_TRUE(info.model.empty());
  EXPECT_FALSE(info.has("avx2"));
  EXPECT_GE(cpu_cores(), 1);
}

}  // namespace
}  // namespace ts
