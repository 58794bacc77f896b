// SPDX-License-Identifier: GPL-3.0-or-later
// Measuring the machine: real training steps of the reference model, measured once per settings.
#include "ts/train/calibration.h"

#include <gtest/gtest.h>

#include <ATen/Parallel.h>

namespace ts {
namespace {

TEST(Calibration, TimesRealTrainingStepsOfTheReferenceModel) {
  const auto m = measure_reference_throughput("cpu", 1, "fp32", 300, /*seconds=*/0.1);
  EXPECT_EQ(m.device, "cpu");
  EXPECT_EQ(m.precision, "fp32");
  EXPECT_EQ(m.threads, 1);
  EXPECT_EQ(at::get_num_threads(), 1);  // as the trainer would leave it
  EXPECT_EQ(m.batch_tokens, 300);
  EXPECT_GE(m.steps, 3);
  EXPECT_GT(m.tokens_per_second, 0);
  EXPECT_GT(m.seconds, 0);
  // 30 sentences of 10 target tokens (9 and EOS) a step.
  EXPECT_NEAR(m.tokens_per_second * m.timed_seconds, 300.0 * m.steps, 1e-6 * 300 * m.steps);
  EXPECT_GT(m.seconds, m.timed_seconds);  // model building and the warm-up step come first
  const auto resolved = measure_reference_throughput("cpu", 1, "auto", 100, 0.0);
  EXPECT_TRUE(resolved.precision == "bf16" || resolved.precision == "fp32") << resolved.precision;
  EXPECT_THROW(measure_reference_throughput("cpu", 1, "int4", 100, 0.0), std::invalid_argument);
}

TEST(Calibration, EachSettingIsMeasuredOnceAndTheMachineCarriesIt) {
  int calls = 0;
  const ThroughputProbe probe = [&](const std::string& device, int threads, const std::string& precision, int batch) {
    ++calls;
    ThroughputMeasurement m;
    m.tokens_per_second = 12345 + threads;
    m.seconds = 1.5;
    m.device = device;
    m.precision = precision;
    m.threads = threads;
    m.batch_tokens = batch;
    return m;
  };
  EXPECT_EQ(cached_reference_throughput("cpu", 7, "fp32", 1000).tokens_per_second, 0);
  const auto machine = measure_machine("cpu", 7, "fp32", probe);
  EXPECT_EQ(calls, 1);
  EXPECT_DOUBLE_EQ(machine.measured_tokens_per_second, 12352);
  EXPECT_DOUBLE_EQ(machine.measured_seconds, 1.5);
  EXPECT_DOUBLE_EQ(machine.reference_tokens_per_second(), 12352);
  EXPECT_EQ(machine.cores, 7);
  measure_machine("cpu", 7, "fp32", probe);  // cached
  EXPECT_EQ(calls, 1);
  EXPECT_DOUBLE_EQ(cached_reference_throughput("cpu", 7, "fp32", 1000).tokens_per_second, 12352);
  measure_machine("cpu", 6, "fp32", probe);  // other settings: measured again
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace ts
