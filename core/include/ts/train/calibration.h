// SPDX-License-Identifier: GPL-3.0-or-later
// Measuring the machine: how fast this device, with these threads and this precision, trains the
// `auto` recipe's reference model. The recipe sizes the model from the measurement instead of
// throughput constants fitted on one machine (VMs of one CPU type differ by a third; a GPU by 50x).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ts/train/auto_recipe.h"

namespace ts {

class DataParallel;

/// What a throughput measurement depends on besides the batch: train.device, train.threads,
/// train.precision ("auto" included) and train.shard_batch, as a run's config has them.
struct SpeedSettings {
  DeviceChoice device = DeviceChoice::kAuto;
  int threads = 0;
  Precision precision = Precision::kFp32;
  bool shard_batch = true;
  static SpeedSettings of(const TrainConfig& train) {
    return {train.device, train.threads, train.precision, train.shard_batch};
  }
};

/// One measurement of training throughput.
struct ThroughputMeasurement {
  double tokens_per_second = 0;            // target tokens per second of the median timed step
  int steps = 0;                           // timed steps (after one warm-up step)
  double timed_seconds = 0;                // the timed steps
  std::vector<double> step_seconds;        // each timed step, in order
  double seconds = 0;                      // what the measurement took in all, model building included
  std::string device;                      // as resolved: "cpu", "cuda:0"
  Precision precision = Precision::kFp32;  // as resolved: never kAuto
  int threads = 0;
  int shares = 1;         // shares of each batch, one per thread (ts::batch_shares)
  int batch_tokens = 0;   // as asked for
  int target_tokens = 0;  // the timed batch's target tokens (end-of-sentence marks included)
};

/// Times full training steps (forward under the precision's autocast, backward, clipping, Adam) of
/// the reference model (3+3 layers, d 256, ff 1024, 4 heads, a shared 8,000-token vocabulary; "base"
/// in ts/train/auto_recipe.h) on random 10-token sentences in batches of `batch_tokens` target
/// tokens: one warm-up step, then steps until `seconds` have passed and at least 3 ran, the batch
/// shared among the threads as the trainer would share it with these settings (ts::batch_shares).
/// The throughput is the batch's target tokens over the median step's time. Leaves LibTorch's thread
/// count as configure_threads(threads) sets it, like the trainer.
ThroughputMeasurement measure_reference_throughput(const SpeedSettings& settings, int batch_tokens,
                                                   double seconds = 2.0);

/// The same measurement made by every rank of a data-parallel group at once, as data-parallel
/// training steps: each rank its share of the `batch_tokens` batch (every world_size-th sentence), the
/// gradients summed over the ranks, then the optimizer's step. Rank 0's clock decides when the timed
/// steps end, and its throughput, the whole batch's target tokens over its median step, is every
/// rank's result, so that all size the same recipe. Every rank of `parallel` must call it.
ThroughputMeasurement measure_data_parallel_throughput(const SpeedSettings& settings, int batch_tokens,
                                                       DataParallel& parallel, double seconds = 2.0);

/// measure_reference_throughput once per process for each setting and batch: later calls return
/// the first measurement (the app refits its recipe often). `measure` replaces the measurement in
/// tests.
using ThroughputProbe = std::function<ThroughputMeasurement(const SpeedSettings& settings, int batch_tokens)>;
ThroughputMeasurement reference_throughput(const SpeedSettings& settings, int batch_tokens,
                                           const ThroughputProbe& measure = {});
/// The measurement reference_throughput() has made for these settings, or an empty one (0 tokens/s).
ThroughputMeasurement cached_reference_throughput(const SpeedSettings& settings, int batch_tokens);

/// MachineProfile::detect with the reference model's throughput measured (once per process and
/// settings, reference_throughput) at the batch size the recipe will use: what `auto` is fitted to
/// when a run starts.
MachineProfile measure_machine(const SpeedSettings& settings, const ThroughputProbe& measure = {});
/// MachineProfile::detect with the reference model's throughput given instead of measured (train
/// --machine-speed, MachineProfile::speed_given), after what a measurement resolves first: precision
/// auto's timing of its products on this CPU.
MachineProfile given_machine(const SpeedSettings& settings, double tokens_per_second);
/// MachineProfile::detect with the whole data-parallel group's throughput measured
/// (measure_data_parallel_throughput, MachineProfile::data_parallel_ranks): what `auto` is fitted to
/// when the ranks of a run start. Every rank of `parallel` must call it.
MachineProfile measure_data_parallel_machine(const SpeedSettings& settings, DataParallel& parallel);

}  // namespace ts
