// SPDX-License-Identifier: GPL-3.0-or-later
// Measuring the machine: real training steps of the reference model, measured once per settings.
#include "ts/train/calibration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <numeric>

#include <ATen/Parallel.h>

#include "ts/model/fp16_products.h"

namespace ts {
namespace {

TEST(Calibration, TimesRealTrainingStepsOfTheReferenceModel) {
  const auto m = measure_reference_throughput({DeviceChoice::kCpu, 1, Precision::kFp32}, 300, /*seconds=*/0.1);
  EXPECT_EQ(m.device, "cpu");
  EXPECT_EQ(m.precision, Precision::kFp32);
  EXPECT_EQ(m.threads, 1);
  EXPECT_EQ(at::get_num_threads(), 1);  // as the trainer would leave it
  EXPECT_EQ(m.batch_tokens, 300);
  EXPECT_EQ(m.shares, 1);  // one thread
  EXPECT_GE(m.steps, 3);
  EXPECT_GT(m.tokens_per_second, 0);
  EXPECT_GT(m.seconds, 0);
  // Each timed step's time, and the throughput of the median one: 30 sentences of 10 target tokens
  // (9 and EOS) a step.
  ASSERT_EQ(m.step_seconds.size(), static_cast<std::size_t>(m.steps));
  auto sorted = m.step_seconds;
  std::sort(sorted.begin(), sorted.end());
  const double median =
      sorted.size() % 2 ? sorted[sorted.size() / 2] : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  EXPECT_NEAR(m.tokens_per_second * median, 300.0, 1e-6 * 300);
  EXPECT_LE(std::accumulate(sorted.begin(), sorted.end(), 0.0), m.timed_seconds);
  EXPECT_GT(m.seconds, m.timed_seconds);  // model building and the warm-up step come first
  const auto resolved = measure_reference_throughput({DeviceChoice::kCpu, 1, Precision::kAuto}, 100, 0.0);
  EXPECT_TRUE(resolved.precision == Precision::kBf16 || resolved.precision == Precision::kFp32 ||
              (resolved.precision == Precision::kFp16 && fp16_products_available()))
      << precision_name(resolved.precision);
  if (fp16_products_available()) {  // fp16 trains on this CPU's AVX-512 FP16 (ts/model/fp16_products.h)
    EXPECT_EQ(measure_reference_throughput({DeviceChoice::kCpu, 1, Precision::kFp16}, 100, 0.0).precision,
              Precision::kFp16);
  } else {
    EXPECT_THROW(measure_reference_throughput({DeviceChoice::kCpu, 1, Precision::kFp16}, 100, 0.0),
                 std::invalid_argument);  // fp16 needs a GPU or AVX-512 FP16
  }
}

TEST(Calibration, EachSettingIsMeasuredOnceAndTheMachineCarriesIt) {
  int calls = 0;
  const ThroughputProbe probe = [&](const SpeedSettings& s, int batch) {
    ++calls;
    ThroughputMeasurement m;
    m.tokens_per_second = 12345 + s.threads + (s.shard_batch ? 0 : 1000);
    m.seconds = 1.5;
    m.device = device_choice_name(s.device);
    m.precision = s.precision;
    m.threads = s.threads;
    m.batch_tokens = batch;
    return m;
  };
  const SpeedSettings seven{DeviceChoice::kCpu, 7, Precision::kFp32};
  EXPECT_EQ(cached_reference_throughput(seven, 1000).tokens_per_second, 0);
  const auto machine = measure_machine(seven, probe);
  EXPECT_EQ(calls, 1);
  EXPECT_DOUBLE_EQ(machine.measured_tokens_per_second, 12352);
  EXPECT_DOUBLE_EQ(machine.measured_seconds, 1.5);
  EXPECT_DOUBLE_EQ(machine.reference_tokens_per_second(), 12352);
  EXPECT_EQ(machine.cores, 7);
  measure_machine(seven, probe);  // cached
  EXPECT_EQ(calls, 1);
  EXPECT_DOUBLE_EQ(cached_reference_throughput(seven, 1000).tokens_per_second, 12352);
  measure_machine({DeviceChoice::kCpu, 6, Precision::kFp32}, probe);  // other settings: measured again
  EXPECT_EQ(calls, 2);
  // The whole batch through LibTorch's shared operations is another speed from one share per thread.
  SpeedSettings whole = seven;
  whole.shard_batch = false;
  EXPECT_EQ(cached_reference_throughput(whole, 1000).tokens_per_second, 0);
  EXPECT_DOUBLE_EQ(measure_machine(whole, probe).measured_tokens_per_second, 13352);
  EXPECT_EQ(calls, 3);
  EXPECT_DOUBLE_EQ(cached_reference_throughput(seven, 1000).tokens_per_second, 12352);
}

TEST(Calibration, MeasuresWithTheBatchSharedAsTrainingWouldShareIt) {
  const auto shared = measure_reference_throughput({DeviceChoice::kCpu, 2, Precision::kFp32, true}, 100, 0.0);
  EXPECT_EQ(shared.shares, 2);
  const auto whole = measure_reference_throughput({DeviceChoice::kCpu, 2, Precision::kFp32, false}, 100, 0.0);
  EXPECT_EQ(whole.shares, 1);
}

}  // namespace
}  // namespace ts
