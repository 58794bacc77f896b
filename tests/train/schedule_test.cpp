// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/train/schedule.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ts {
namespace {

TEST(Schedule, NoamPeaksAtWarmupThenDecaysAsInverseSquareRoot) {
  TrainConfig c;
  c.schedule = LrSchedule::kNoam;
  c.lr = 1.0;
  c.warmup = 4000;
  const double peak = learning_rate(c, 4000, 0, 512);
  EXPECT_NEAR(peak, std::pow(512, -0.5) * std::pow(4000, -0.5), 1e-12);
  EXPECT_LT(learning_rate(c, 2000, 0, 512), peak);
  EXPECT_LT(learning_rate(c, 8000, 0, 512), peak);
  EXPECT_NEAR(learning_rate(c, 16000, 0, 512), peak / 2, 1e-9);
  EXPECT_NEAR(learning_rate(c, 1000, 0, 512) * 2, learning_rate(c, 2000, 0, 512), 1e-12);  // linear warmup
}

TEST(Schedule, ConstantLinearAndCosine) {
  TrainConfig c;
  c.lr = 0.01;
  c.warmup = 10;
  c.schedule = LrSchedule::kConstant;
  EXPECT_NEAR(learning_rate(c, 5, 100, 64), 0.005, 1e-12);
  EXPECT_NEAR(learning_rate(c, 50, 100, 64), 0.01, 1e-12);
  c.schedule = LrSchedule::kLinear;
  EXPECT_NEAR(learning_rate(c, 55, 100, 64), 0.005, 1e-12);
  EXPECT_NEAR(learning_rate(c, 100, 100, 64), 0.0, 1e-12);
  c.schedule = LrSchedule::kCosine;
  EXPECT_NEAR(learning_rate(c, 10, 100, 64), 0.01, 1e-12);
  EXPECT_NEAR(learning_rate(c, 100, 100, 64), 0.001, 1e-12);
  EXPECT_NEAR(learning_rate(c, 55, 100, 64), 0.0055, 1e-12);
}

}  // namespace
}  // namespace ts
