// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/host/vector_rates.h"

#include <gtest/gtest.h>

#include "ts/host/cpu.h"

namespace ts {
namespace {

TEST(VectorRates, Bf16DotProductsPayOnlyFromTheMinimumSpeedupOn) {
  // Dot products at twice fp32's flops, and at half (an Intel Xeon of model 207).
  EXPECT_TRUE(bf16_dot_products_pay({100.0, 200.0}));
  EXPECT_FALSE(bf16_dot_products_pay({175.0, 87.0}));
  EXPECT_TRUE(bf16_dot_products_pay({100.0, 100.0 * kBf16DotMinimumSpeedup}));
  EXPECT_FALSE(bf16_dot_products_pay({100.0, 100.0 * kBf16DotMinimumSpeedup - 0.1}));
  // Not measured (no AVX-512 BF16): never.
  EXPECT_FALSE(bf16_dot_products_pay({}));
  EXPECT_FALSE(bf16_dot_products_pay({100.0, 0.0}));
  EXPECT_EQ(describe_vector_rates({}), "");
  EXPECT_EQ(describe_vector_rates({175.2, 86.9}),
            "bf16 dot products 87 GFLOP/s against fp32 multiply-adds' 175 (one thread)");
}

TEST(VectorRates, AreTimedExactlyWhereTheCpuHasBothInstructions) {
  const auto rates = time_vector_rates();
  const bool has_both = cpu_info().has("avx512f") && cpu_info().has("avx512_bf16");
  EXPECT_EQ(rates.measured(), has_both);
  if (has_both) {
    // Any CPU with these instructions does more than 1 GFLOP/s on one thread, and less than 10,000.
    EXPECT_GT(rates.fp32_fma_gflops, 1.0);
    EXPECT_GT(rates.bf16_dot_gflops, 1.0);
    EXPECT_LT(rates.fp32_fma_gflops, 1e4);
    EXPECT_LT(rates.bf16_dot_gflops, 1e4);
  } else {
    EXPECT_EQ(rates.fp32_fma_gflops, 0.0);
    EXPECT_EQ(rates.bf16_dot_gflops, 0.0);
  }
  EXPECT_EQ(&vector_rates(), &vector_rates());  // once per process
}

}  // namespace
}  // namespace ts
