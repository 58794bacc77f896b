// SPDX-License-Identifier: GPL-3.0-or-later
// Measuring training throughput (see ts/train/calibration.h).
#include "ts/train/calibration.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <tuple>

#include <torch/optim/adamw.h>

#include "ts/model/batch.h"
#include "ts/model/packed_weights.h"
#include "ts/model/precision.h"
#include "ts/model/transformer.h"
#include "ts/text/pipeline.h"
#include "ts/text/vocab.h"
#include "ts/train/distributed.h"
#include "ts/train/optimizer.h"
#include "ts/train/config.h"
#include "ts/train/trainer.h"

namespace ts {

namespace {

constexpr int kReferenceVocab = 8000;
constexpr int kSentenceTokens = 10;  // deu.txt's sentences average 8 to 9 subwords a side

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The median step, not the mean: one step slowed down by something else on the machine (one of 7
// steps took 603 ms against 290-390 ms, docs/benchmarks.md "Measuring the machine: ten measurements
// back to back") moves the mean of a 2-second window by 10% and leaves the median where it was. It
// does not steady the rest: whole processes ran about 10% faster or slower than each other there, and
// on an Intel Xeon VM up to 2x, every step of a process alike, while the runs' own throughput over
// minutes held within 7% and the fp32 multiply-add rate within 7% too: the VM's memory side changes speed
// over tens of seconds (docs/benchmarks.md, "The recipe's model size on a machine at half the speed").
double median(std::vector<double> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  return (*middle + *std::max_element(values.begin(), middle)) / 2;
}

}  // namespace

namespace {

// measure_reference_throughput, or with `parallel` its data-parallel form.
ThroughputMeasurement measure_throughput(const SpeedSettings& settings, int batch_tokens, double seconds,
                                         DataParallel* parallel) {
  const auto t0 = std::chrono::steady_clock::now();
  ThroughputMeasurement m;
  const auto device = parallel ? parallel->device() : resolve_device(settings.device);  // a rank's own GPU
  m.threads = configure_threads(settings.threads);
  m.precision = resolve_precision(settings.precision, device);
  check_precision(m.precision, device);
  m.device = device.str();
  m.batch_tokens = batch_tokens;
  // The auto recipe's model for a subword vocabulary, at the reference size.
  auto config = preset("auto");
  config.model.encoder_layers = config.model.decoder_layers = 3;
  config.model.d_model = 256;
  config.model.heads = 4;
  config.model.d_ff = 1024;
  config.model.dropout = 0.1;
  config.model.share_embeddings = config.model.tie_output = true;
  at::manual_seed(0);
  auto model = build_model(config.model, kReferenceVocab, kReferenceVocab, Vocab::kPad, /*shared_vocab=*/true);
  model->to(device);
  model->train();
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-4).betas({0.9, 0.98}).eps(1e-9));
  // Random sentences of the usual length: the ids do not matter to the speed.
  const int sentences = std::max(1, batch_tokens / kSentenceTokens);
  std::vector<Example> examples(static_cast<std::size_t>(sentences));
  std::vector<std::size_t> indices(examples.size());
  const auto ids = at::randint(Vocab::kEos + 1, kReferenceVocab, {sentences, 2, kSentenceTokens - 1}, at::kLong);
  const auto* id = ids.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < examples.size(); ++i) {
    indices[i] = i;
    examples[i].src.assign(id, id + kSentenceTokens - 1);
    examples[i].tgt.assign(id + kSentenceTokens - 1, id + 2 * (kSentenceTokens - 1));
    id += 2 * (kSentenceTokens - 1);
  }
  std::int64_t tokens = 0;
  for (const auto& e : examples) tokens += static_cast<std::int64_t>(e.tgt.size() + 1);
  m.target_tokens = static_cast<int>(tokens);
  // Data-parallel: this rank's share, as the trainer shards a batch (every world_size-th sentence).
  const auto rows = parallel ? shard_of(indices, parallel->rank(), parallel->world_size()) : indices;
  // The training step's own forward and backward, threads sharing the batch as training does.
  const auto parameters = model->parameters();
  const int shares = batch_shares(settings.shard_batch, device, m.precision, m.threads);
  m.shares = shares;
  PackedWeights packed_weights;  // as the trainer keeps it from step to step
  const auto step = [&] {
    clear_gradients(parameters);
    double loss = 0;
    if (!rows.empty())
      loss = forward_backward_batch(model, examples, rows, device, m.precision, config.train.label_smoothing,
                                    static_cast<double>(tokens), 1.0, shares, parameters, &packed_weights);
    if (parallel) parallel->all_reduce_gradients(model, 1.0);
    if (!clipped_fused_adam_step(optimizer, 1.0)) optimizer.step();
    return loss;  // item() inside waited for a GPU to finish the step
  };
  // Rank 0's clock ends the timed steps for every rank: all take the same steps, collectives included.
  const auto more = [&](bool mine) {
    if (!parallel) return mine;
    std::vector<double> flag{mine ? 1.0 : 0.0};
    parallel->broadcast(flag);
    return flag[0] > 0;
  };
  step();  // warm-up: allocations, kernel selection
  const auto timed = std::chrono::steady_clock::now();
  while (more(m.steps < 3 || seconds_since(timed) < seconds)) {
    const auto started = std::chrono::steady_clock::now();
    step();
    m.step_seconds.push_back(seconds_since(started));
    ++m.steps;
  }
  m.timed_seconds = seconds_since(timed);
  m.tokens_per_second = static_cast<double>(tokens) / median(m.step_seconds);
  if (parallel) {  // rank 0's figure for every rank
    std::vector<double> rate{m.tokens_per_second};
    parallel->broadcast(rate);
    m.tokens_per_second = rate[0];
  }
  m.seconds = seconds_since(t0);
  return m;
}

}  // namespace

ThroughputMeasurement measure_reference_throughput(const SpeedSettings& settings, int batch_tokens, double seconds) {
  return measure_throughput(settings, batch_tokens, seconds, nullptr);
}

ThroughputMeasurement measure_data_parallel_throughput(const SpeedSettings& settings, int batch_tokens,
                                                       DataParallel& parallel, double seconds) {
  return measure_throughput(settings, batch_tokens, seconds, &parallel);
}

namespace {
using Key = std::tuple<DeviceChoice, int, Precision, bool, int>;
Key key_of(const SpeedSettings& s, int batch_tokens) {
  return {s.device, s.threads, s.precision, s.shard_batch, batch_tokens};
}
std::mutex cache_mutex;
std::map<Key, ThroughputMeasurement>& cache() {
  static std::map<Key, ThroughputMeasurement> measured;
  return measured;
}
}  // namespace

ThroughputMeasurement reference_throughput(const SpeedSettings& settings, int batch_tokens,
                                           const ThroughputProbe& measure) {
  const Key key = key_of(settings, batch_tokens);
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    if (const auto it = cache().find(key); it != cache().end()) return it->second;
  }
  auto m = measure ? measure(settings, batch_tokens) : measure_reference_throughput(settings, batch_tokens);
  std::lock_guard<std::mutex> lock(cache_mutex);
  cache()[key] = m;
  return m;
}

ThroughputMeasurement cached_reference_throughput(const SpeedSettings& settings, int batch_tokens) {
  std::lock_guard<std::mutex> lock(cache_mutex);
  const auto it = cache().find(key_of(settings, batch_tokens));
  return it == cache().end() ? ThroughputMeasurement{} : it->second;
}

MachineProfile measure_machine(const SpeedSettings& settings, const ThroughputProbe& measure) {
  const auto m = reference_throughput(
      settings, auto_batch_tokens(MachineProfile::detect(settings.device, settings.threads)), measure);
  // Detected after the measurement, which timed precision auto's products where it resolved it.
  auto machine = MachineProfile::detect(settings.device, settings.threads);
  machine.measured_tokens_per_second = m.tokens_per_second;
  machine.measured_seconds = m.seconds;
  return machine;
}

MachineProfile measure_data_parallel_machine(const SpeedSettings& settings, DataParallel& parallel) {
  const auto m = measure_data_parallel_throughput(
      settings, auto_batch_tokens(MachineProfile::detect(settings.device, settings.threads)), parallel);
  auto machine = MachineProfile::detect(settings.device, settings.threads);
  machine.measured_tokens_per_second = m.tokens_per_second;
  machine.measured_seconds = m.seconds;
  machine.data_parallel_ranks = parallel.world_size();
  return machine;
}

MachineProfile given_machine(const SpeedSettings& settings, double tokens_per_second) {
  resolve_precision(settings.precision, resolve_device(settings.device));
  auto machine = MachineProfile::detect(settings.device, settings.threads);
  machine.measured_tokens_per_second = tokens_per_second;
  machine.speed_given = true;
  return machine;
}

}  // namespace ts
