// The training loop behind an observer interface and a stop flag, so the CLI renders progress
// as a terminal bar and the desktop app as charts, with no Qt here.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ts/model/transformer.h"
#include "ts/train/checkpoint.h"
#include "ts/train/config.h"
#include "ts/train/data.h"

namespace ts {

struct TrainingStart {
  std::int64_t parameters = 0;
  std::string device;
  int threads = 1;
  std::size_t train_pairs = 0, dev_pairs = 0, test_pairs = 0;
  std::int64_t start_step = 0;   // > 0 when resuming
  std::int64_t batches_per_epoch = 0;
};

struct TrainingProgress {
  std::int64_t step = 0, epoch = 0;
  std::int64_t batch_in_epoch = 0, batches_per_epoch = 0;
  double loss = 0;               // this step, per target token (label-smoothed)
  double smoothed_loss = 0;      // exponential moving average
  double lr = 0;
  double tokens_per_s = 0;       // target tokens per second, recent window
  double average_tokens_per_s = 0;
  double elapsed_s = 0;          // training time, validation excluded, resumes included
  double eta_s = -1;             // -1 when no limit is set
  double fraction = -1;          // 0..1 of the nearest limit, -1 when none
};

struct SampleTranslation {
  std::string source, reference, hypothesis;
};

struct ValidationResult {
  std::int64_t step = 0, epoch = 0;
  double loss = 0, perplexity = 0, bleu = 0, chrf = 0;
  std::size_t sentences = 0;     // dev sentences decoded for BLEU/chrF
  std::vector<SampleTranslation> samples;
  bool improved = false;
  double seconds = 0;
  nlohmann::json to_json() const;
};

struct CheckpointEvent {
  std::string path;
  std::string kind;  // "last" | "best" | "step"
  std::int64_t step = 0;
  std::string sha256;           // of the payload, as in the file's header
  std::uint64_t bytes = 0;      // file size
  nlohmann::json metrics;       // the validation it was written after, if any
};

struct TrainingSummary {
  std::string status;            // "finished" | "stopped" | "early-stopped" | "failed"
  std::string message;           // why it ended
  std::int64_t steps = 0;
  double seconds = 0;            // this session's training time
  double average_tokens_per_s = 0;
  bool validated = false;
  ValidationResult last_validation;
  std::string best_checkpoint, last_checkpoint;
};

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
  void on_start(const TrainingStart& e) override { for (auto* o : observers_) o->on_start(e); }
  void on_step(const TrainingProgress& e) override { for (auto* o : observers_) o->on_step(e); }
  void on_validation(const ValidationResult& e) override { for (auto* o : observers_) o->on_validation(e); }
  void on_checkpoint(const CheckpointEvent& e) override { for (auto* o : observers_) o->on_checkpoint(e); }
  void on_log(const std::string& e) override { for (auto* o : observers_) o->on_log(e); }
  void on_finished(const TrainingSummary& e) override { for (auto* o : observers_) o->on_finished(e); }

 private:
  std::vector<TrainingObserver*> observers_;
};

struct TrainerOptions {
  std::string out_dir = "runs/latest";
  std::string corpus_path;           // recorded in checkpoints, used by resume
  std::string resume_checkpoint;     // continue from this checkpoint's exact position
  std::atomic<bool>* stop = nullptr; // set from another thread (Ctrl-C, Stop button)
};

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

/// "cpu"/"cuda"/"auto" -> a device; throws std::invalid_argument when CUDA is asked but absent.
at::Device resolve_device(const std::string& name);
/// Sets LibTorch's intra-op threads (0 = all cores) and flushes subnormal floats to zero;
/// returns the number of threads in use.
int configure_threads(int threads);
/// Teacher-forced mean negative log-likelihood per target token (no label smoothing) over `examples`.
double evaluate_loss(Transformer& model, const std::vector<Example>& examples, const at::Device& device);
/// BLEU tokenisation for a target language: "zh" for Chinese/Japanese, "13a" otherwise.
std::string bleu_tokenize_for(const std::string& language_code);

}  // namespace ts
