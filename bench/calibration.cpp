// SPDX-License-Identifier: GPL-3.0-or-later
// How steady is the machine's measurement (ts/train/calibration.h)? The `auto` recipe times a few
// training steps of its reference model when a run starts and sizes the model from that; two runs
// on one machine should get the same size. This program makes one measurement, as a run would at its
// start, and prints its throughput two ways: the batch's tokens over the median step (what the recipe
// uses) and over the mean step (all timed steps over their time, the earlier estimate), then each
// step's time. Run it as separate processes, back to back (bench/calibration.sh), to see how much
// each estimate moves from run to run.
//   ts_bench_calibration [--threads N] [--precision fp32|bf16|auto] [--batch-tokens T] [--seconds S]
// Defaults: all cores, auto precision (bf16 where the CPU has it natively), 1,000-token batches (the
// recipe's on a CPU), 2 seconds (the recipe's).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "ts/model/compute.h"
#include "ts/host/blas.h"
#include "ts/train/calibration.h"

int main(int argc, char** argv) {
  ts::use_the_right_blas_kernels(argv);  // OpenBLAS kernels for this CPU, as the app gets them
  ts::SpeedSettings settings;
  settings.precision = ts::Precision::kAuto;
  int batch_tokens = 1000;
  double seconds = 2.0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--threads" && has_value) {
      settings.threads = std::atoi(argv[++i]);
    } else if (a == "--precision" && has_value) {
      try {
        settings.precision = ts::parse_precision(argv[++i]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
      }
    } else if (a == "--batch-tokens" && has_value) {
      batch_tokens = std::atoi(argv[++i]);
    } else if (a == "--seconds" && has_value) {
      seconds = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--threads N] [--precision fp32|bf16|auto] [--batch-tokens T] [--seconds S]\n",
                   argv[0]);
      return 2;
    }
  }
  const auto m = ts::measure_reference_throughput(settings, batch_tokens, seconds);
  double sum = 0;
  for (double s : m.step_seconds) sum += s;
  const double mean_tokens_per_second = m.target_tokens * static_cast<double>(m.step_seconds.size()) / sum;
  std::printf("median_tokens_per_s %.0f mean_tokens_per_s %.0f steps %d threads %d precision %s seconds %.2f steps_ms",
              m.tokens_per_second, mean_tokens_per_second, m.steps, m.threads, ts::precision_name(m.precision),
              m.seconds);
  for (double s : m.step_seconds) std::printf(" %.1f", 1e3 * s);
  std::printf("\n");
  return 0;
}
