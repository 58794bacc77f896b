// SPDX-License-Identifier: GPL-3.0-or-later
// The training loop behind an observer interface and a stop flag, so the CLI renders progress
// as a terminal bar and the desktop app as charts, with no Qt here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ts/model/transformer.h"
#include "ts/train/checkpoint.h"
#include "ts/train/config.h"
#include "ts/train/data.h"
#include "ts/train/events.h"

namespace ts {

class Trainer;
class DataParallel;
class PackedWeights;

struct TrainerOptions {
  std::string out_dir = "runs/latest";
  std::string corpus_path;            // recorded in checkpoints, used by resume
  std::string resume_checkpoint;      // continue from this checkpoint's exact position
  std::atomic<bool>* stop = nullptr;  // set from another thread (Ctrl-C, Stop button)
  /// While set (from another thread), training waits between steps; paused time counts neither
  /// towards max_minutes nor towards the throughput. Stop still works while paused.
  std::atomic<bool>* pause = nullptr;
  /// Called on the training thread after every step (and every ~20 ms while paused), when the
  /// weights are consistent: the place to take a snapshot of the model for another thread.
  std::function<void(Trainer&)> between_steps;
  /// Data-parallel training (ts/train/distributed.h), connected; null = one process. Every rank
  /// follows the same batch plan and trains on its share of each batch's sentences; gradients are
  /// summed over the ranks, so a step equals one process's step on the whole batch. Rank 0 alone
  /// validates, writes checkpoints and reports to the observer (other ranks report only
  /// on_finished); its stop, time-limit and early-stopping decisions are shared at each step.
  std::shared_ptr<DataParallel> parallel;
  /// Seconds on a monotonic clock for the time limits, the time budget and the throughput; empty
  /// = the steady clock. Tests pass a simulated clock (advanced in between_steps).
  std::function<double()> clock;
  /// When the time budget (train.budget_minutes) began, in seconds on that clock (steady_seconds()
  /// for the steady clock): the moment the command started or Train was pressed, so that reading
  /// the corpus, training the tokenizers, encoding and building the model count against the budget
  /// as well. Negative: the budget starts with the trainer. A resumed budget ignores it.
  double budget_start = -1;
};

/// Seconds on the steady clock the trainer uses when TrainerOptions::clock is empty.
double steady_seconds();

class Trainer {
 public:
  Trainer(ExperimentConfig config, PreparedData data, TrainerOptions options, TrainingObserver* observer = nullptr);
  ~Trainer();

  /// Trains until a limit, the stop flag, early stopping or a failure. Never throws for a
  /// training failure: the summary says "failed" with the message, the last good checkpoint stays.
  TrainingSummary run();
  /// Dev loss, BLEU, chrF and samples on the current weights.
  ValidationResult validate();

  Transformer& model();
  const PreparedData& data() const;
  const ExperimentConfig& config() const;
  at::Device device() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// A device choice -> LibTorch's device; throws std::invalid_argument when CUDA is asked but absent.
at::Device resolve_device(DeviceChoice choice);
/// Sets LibTorch's intra-op threads (0 = all cores) and flushes subnormal floats to zero;
/// returns the number of threads in use.
int configure_threads(int threads);
/// Data-parallel: rank `rank`'s share of a batch, every `world_size`-th sentence from `rank`. The
/// batcher sorts a batch's sentences by length, so the shares get similar lengths.
std::vector<std::size_t> shard_of(const std::vector<std::size_t>& indices, int rank, int world_size);

/// How many shares forward_backward_batch splits a batch into: the threads, on a CPU with
/// train.shard_batch on, in fp32, in fp16 (fp16_linear), or in bf16 where bf16_products_preferred()
/// (ts/model/bf16_products.h); otherwise 1 (bf16 autocast: oneDNN failed when two threads created its kernels at once, see
/// trainer.cpp).
int batch_shares(bool shard_batch, const at::Device& device, Precision precision, int threads);
/// Whether forward_backward_batch computes bf16 with bf16_linear rather than autocast: on a CPU with
/// AVX-512 BF16 (on its AMX tiles where it has them), when each thread has a share (`shares` > 1) or there is one thread
/// (bf16_linear runs on the calling thread).
bool uses_bf16_products(const at::Device& device, Precision precision, int shares);
/// Whether forward_backward_batch computes fp16 with fp16_linear (ts/model/fp16_products.h): always on
/// a CPU (check_precision has refused fp16 on one without AVX-512 FP16); never on a GPU (autocast).
bool uses_fp16_products(const at::Device& device, Precision precision);
/// One batch's forward and backward, as a training step runs it: the teacher-forced loss of the
/// batch made of `rows` of `examples` (label-smoothed, summed over target tokens) divided by
/// `denominator`, times `scale`, back-propagated and added to the gradients of `parameters` (the
/// model's, in order). `shares` > 1 (batch_shares): each thread
/// runs forward and backward on every shares-th row (ts/train/thread_shards.h), its gradients in
/// tensors of its own added in share order afterwards, and its dropout seeds drawn beforehand in
/// share order, so a run repeats exactly. Returns the loss divided by `denominator` (before `scale`).
/// With bf16 or fp16 products and shares, the shares pack each weight once through `packed_weights` (kept from
/// call to call by the caller so its memory is reused; one of the call's own where nullptr); the
/// weights must not change while the call runs. `squared_norm`, where given: where the shares' gradients were
/// added up, the sum of the squares of every parameter's gradient afterwards (add_share_gradients), else
/// left as it was.
double forward_backward_batch(Transformer& model, const std::vector<Example>& examples,
                              const std::vector<std::size_t>& rows, const at::Device& device, Precision precision,
                              double label_smoothing, double denominator, double scale, int shares,
                              const std::vector<at::Tensor>& parameters, PackedWeights* packed_weights = nullptr,
                              std::optional<double>* squared_norm = nullptr);
/// Teacher-forced mean negative log-likelihood per target token (no label smoothing) over `examples`.
double evaluate_loss(Transformer& model, const std::vector<Example>& examples, const at::Device& device);
/// train.precision for this device: on a CPU kAuto becomes fp32 without native bf16 (AMX or AVX-512
/// BF16) or AVX-512 FP16, and with either what a short timing of the precisions' products picks
/// (choose_cpu_precision: bf16 or fp16 only where it is faster); on a GPU, what a short timing of fp32/bf16/fp16 products picks
/// (choose_gpu_precision). Other values are returned as they are. `why`, when given, receives one
/// line for the log saying what "auto" chose and why (empty for other values).
Precision resolve_precision(Precision precision, const at::Device& device, std::string* why = nullptr);
/// BLEU tokenisation for a target language: "zh" for Chinese/Japanese, "13a" otherwise.
std::string bleu_tokenize_for(const std::string& language_code);

}  // namespace ts
