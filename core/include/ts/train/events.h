// SPDX-License-Identifier: GPL-3.0-or-later
// What the trainer reports while it runs, and the observer interface that receives it. No LibTorch
// here: the desktop app's panels and the run recorder include this header only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ts/store/run_status.h"

namespace ts {

struct TrainingStart {
  std::int64_t parameters = 0;
  std::string device;
  int threads = 1;
  std::size_t train_pairs = 0, dev_pairs = 0, test_pairs = 0;
  std::int64_t start_step = 0;  // > 0 when resuming
  std::int64_t batches_per_epoch = 0;
};

struct TrainingProgress {
  std::int64_t step = 0, epoch = 0;
  std::int64_t batch_in_epoch = 0, batches_per_epoch = 0;
  double loss = 0;           // this step, per target token (label-smoothed)
  double smoothed_loss = 0;  // exponential moving average
  double lr = 0;
  double tokens_per_s = 0;  // target tokens per second, recent window
  double average_tokens_per_s = 0;
  double elapsed_s = 0;       // training time, validation excluded, resumes included
  double eta_s = -1;          // -1 when no limit is set
  double fraction = -1;       // 0..1 of the nearest limit, -1 when none
  double budget_left_s = -1;  // wall-clock seconds left in train.budget_minutes (-1: no budget)
};

struct SampleTranslation {
  std::string source, reference, hypothesis;
};

struct ValidationResult {
  std::int64_t step = 0, epoch = 0;
  double loss = 0, perplexity = 0, bleu = 0, chrf = 0;
  double train_loss = -1;     // language models: the training-split loss estimated alongside (-1: none)
  std::size_t sentences = 0;  // dev sentences decoded for BLEU/chrF
  std::vector<SampleTranslation> samples;
  bool improved = false;
  /// False where there are no dev pairs (data.dev = 0): a checkpoint was written, and the loss, BLEU
  /// and chrF above are not measurements (nor recorded as such).
  bool scored = true;
  double seconds = 0;
  /// With weight averaging on, the scores above are the averaged weights', except at the final
  /// validation, which scores both and keeps the better: there they are the kept weights', and
  /// these the weights as trained (-1 at every other validation).
  double bleu_as_trained = -1, chrf_as_trained = -1;
  /// When train.probe is set: that sentence greedily translated by the model at this step, with
  /// its cross-attention: {"source", "text", "source_tokens", "target_tokens",
  /// "cross": [layer][head][target][source]} (weights rounded to 4 decimals). Null otherwise.
  nlohmann::json probe;
  nlohmann::json to_json() const;
};

/// Which checkpoint a run wrote: last.ckpt (after every validation and at the end), best.ckpt (the best
/// validation so far) or step-N.ckpt (train.keep_last of them kept).
enum class CheckpointKind { kLast, kBest, kStep };
/// "last", "best", "step" (the run history's and the log's word).
const char* checkpoint_kind_name(CheckpointKind kind);
/// The inverse of checkpoint_kind_name; throws std::invalid_argument naming the accepted values.
CheckpointKind parse_checkpoint_kind(const std::string& name);

struct CheckpointEvent {
  std::string path;
  CheckpointKind kind = CheckpointKind::kLast;
  std::int64_t step = 0;
  std::string sha256;       // of the payload, as in the file's header
  std::uint64_t bytes = 0;  // file size
  nlohmann::json metrics;   // the validation it was written after, if any
};

struct TrainingSummary {
  RunStatus status = RunStatus::kFinished;  // finished, stopped, early-stopped or failed
  std::string message;                      // why it ended
  std::int64_t steps = 0;
  double seconds = 0;  // this session's training time
  double average_tokens_per_s = 0;
  double model_flops_per_s = 0;  // the model's matrix products (ts/model/size.h forward_flops), forward and backward
  bool validated = false;
  ValidationResult last_validation;
  std::string best_checkpoint, last_checkpoint;
};

/// What a training session (ts/train/session.h) is doing, in the order it does it (a resumed run
/// skips the recipe).
enum class SessionPhase {
  kFittingRecipe,    // timing the machine and fitting the `auto` preset to corpus, budget and machine
  kPreparingData,    // splitting, training the tokenizers (or reusing a checkpoint's), encoding
  kConnecting,       // the data-parallel rendezvous
  kStartingHistory,  // opening the run history and taking the run's lock
  kTraining,         // the trainer: its own events (start, steps, validations, checkpoints, finish) follow
};
/// "fitting the recipe to this machine", "preparing the data", ... (for a log or status line).
const char* phase_words(SessionPhase phase);

/// Receives training events on the training thread. Keep handlers quick; the GUI forwards them.
class TrainingObserver {
 public:
  virtual ~TrainingObserver() = default;
  virtual void on_start(const TrainingStart&) {}
  virtual void on_step(const TrainingProgress&) {}
  virtual void on_validation(const ValidationResult&) {}
  virtual void on_checkpoint(const CheckpointEvent&) {}
  virtual void on_log(const std::string&) {}
  virtual void on_finished(const TrainingSummary&) {}
};

/// Forwards every event to several observers in order (e.g. the terminal and the run recorder).
class ObserverList : public TrainingObserver {
 public:
  explicit ObserverList(std::vector<TrainingObserver*> observers) : observers_(std::move(observers)) {}
  void on_start(const TrainingStart& e) override {
    for (auto* o : observers_) o->on_start(e);
  }
  void on_step(const TrainingProgress& e) override {
    for (auto* o : observers_) o->on_step(e);
  }
  void on_validation(const ValidationResult& e) override {
    for (auto* o : observers_) o->on_validation(e);
  }
  void on_checkpoint(const CheckpointEvent& e) override {
    for (auto* o : observers_) o->on_checkpoint(e);
  }
  void on_log(const std::string& e) override {
    for (auto* o : observers_) o->on_log(e);
  }
  void on_finished(const TrainingSummary& e) override {
    for (auto* o : observers_) o->on_finished(e);
  }

 private:
  std::vector<TrainingObserver*> observers_;
};

}  // namespace ts
