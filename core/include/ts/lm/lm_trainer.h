// SPDX-License-Identifier: GPL-3.0-or-later
// Training loop for the language models: AdamW, random batches from a seeded generator, train and
// val loss estimated every eval_interval steps (mean over eval_iters batches, eval mode, no grad),
// progress through TrainingObserver, last.ckpt / best.ckpt (by val loss) in the checkpoint
// envelope of ts/train/checkpoint.h, resume to the exact step.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "ts/lm/gpt.h"
#include "ts/lm/text_data.h"
#include "ts/store/run_store.h"
#include "ts/train/events.h"

namespace ts {

class LmTrainer;

struct LmTrainerOptions {
  std::string out_dir = "runs/lm";
  std::string text_path;               // recorded in checkpoints, read again on resume
  std::string resume_checkpoint;       // continue from this checkpoint's exact position
  std::atomic<bool>* stop = nullptr;   // set from another thread (Ctrl-C)
  std::atomic<bool>* pause = nullptr;  // while set, the loop waits between steps (time not counted)
  bool write_checkpoints = true;
  /// Called on the training thread between steps and while paused (the desktop app copies the
  /// weights here to generate from them while training goes on).
  std::function<void(LmTrainer&)> between_steps;
};

/// What an LM checkpoint holds besides tensors (the meta JSON has "kind": "lm").
struct LmCheckpointMeta {
  LmConfig config;
  LmCodec codec;
  std::string text_path;
  std::int64_t step = 0;
  double elapsed_seconds = 0;
  double best_val = 0;
  bool has_best = false;
  nlohmann::json metrics;  // the last estimate: {"step", "train_loss", "val_loss"}
};

struct LoadedLanguageModel {
  LmCheckpointMeta meta;
  LanguageModel model;
};

/// Reads an LM checkpoint's metadata (throws CheckpointError naming the file).
LmCheckpointMeta read_lm_checkpoint_meta(const std::string& path);
/// Rebuilds the model of an LM checkpoint, or of a folder export_model wrote, onto `device`, in eval mode.
LoadedLanguageModel load_lm_checkpoint(const std::string& path, const at::Device& device);

/// The run history's description of a language-model run (kind "language-model"): the text's
/// canonical path, hash and size, the preset and configuration. `name` empty = "<file> <preset>".
NewRun describe_lm_run(const LmConfig& config, const LmData& data, const std::string& text_path,
                       const std::string& out_dir, const std::string& name);

class LmTrainer {
 public:
  /// With options.resume_checkpoint, the weights, optimizer, generators and position come from
  /// it (`data` must have been prepared with its codec).
  LmTrainer(LmConfig config, LmData data, LmTrainerOptions options, TrainingObserver* observer = nullptr);
  ~LmTrainer();

  /// Trains to max_steps, max_minutes or the stop flag. Never throws for a training failure:
  /// the summary says "failed" with the message.
  TrainingSummary run();
  /// {train, val} mean loss over eval_iters random batches each, in eval mode without gradients.
  /// The batches come from a generator seeded by (seed, step), so an estimate does not disturb
  /// the training batches and is the same after a resume.
  std::pair<double, double> estimate_loss();

  LanguageModel& model();
  const LmData& data() const;
  const LmConfig& config() const;
  std::int64_t step() const;
  /// The loss of every step trained in this session, in order (for tests and benchmarks).
  const std::vector<double>& step_losses() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace ts
