// SPDX-License-Identifier: GPL-3.0-or-later
// One training session, from a corpus in memory to a trained model with its run directory and its
// place in the run history: the `auto` recipe fitted to the machine, the split, the tokenizers, the
// data-parallel group, config.json, the recorder, the trainer and its final evaluation. The CLI's
// `train` (every data-parallel rank) and the app's Train button are thin over it: they build a
// SessionRequest, render the typed events of a SessionObserver, and parse no log line.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ts/text/corpus.h"
#include "ts/train/auto_fit.h"
#include "ts/train/config.h"
#include "ts/train/distributed.h"
#include "ts/train/events.h"
#include "ts/train/run_recorder.h"

namespace ts {

class Trainer;

/// Receives a session's events on the session's thread: the trainer's (TrainingObserver) and the
/// session's own. Keep handlers quick.
class SessionObserver : public TrainingObserver {
 public:
  virtual void on_phase(SessionPhase) {}
  /// The `auto` recipe as fitted for this run (with the machine timed, unless data-parallel): what
  /// it chose and why, as the log says it.
  virtual void on_recipe_fitted(const AutoFit&) {}
  /// The run history holds this run as `run_id` (not called when the run is not recorded).
  virtual void on_run_recorded(std::int64_t /*run_id*/) {}
  /// The end of the run waits for the run history (see RunRecorder::set_wait_observer).
  virtual void on_history_wait(const HistoryWait&) {}
};

struct SessionRequest {
  const Corpus* corpus = nullptr;  // kept alive by the caller until run() returns
  Direction direction;
  std::string corpus_path;  // recorded in checkpoints for resume ("" = corpus->path)
  /// The configuration to train, or with `fit_recipe` the inputs of the fit (device, threads,
  /// precision, budget) and whatever the caller's keep_own_settings keeps from it.
  ExperimentConfig config;
  std::string out_dir;            // the run directory (created; config.json written there)
  std::string resume_checkpoint;  // continue from this checkpoint (its tokenizers, its position)

  /// Fit the `auto` preset to this corpus, direction, budget and machine first (fit_auto, timing the
  /// machine unless `fitted` already has; a fresh run only) and train keep_own_settings(fit).
  bool fit_recipe = false;
  /// A fit of `auto` made earlier for the same inputs (auto_fit_key) with the machine timed: used
  /// instead of fitting again. Ignored when its key differs or it did not time the machine.
  std::shared_ptr<const AutoFit> fitted;
  /// How the fitted recipe meets what the person set: receives the fit, returns what to train.
  /// Empty: the fit as it is, with `config`'s device, threads, precision and budget.
  std::function<ExperimentConfig(const AutoFit&)> keep_own_settings;
  /// > 0: the `auto` recipe is sized by this speed of its reference model (target tokens/s, as a run's
  /// log gives it) instead of timing the machine (train --machine-speed): the same recipe run after
  /// run, and on every data-parallel rank. 0: timed (one process) or from constants (ranks).
  double machine_speed = 0;
  /// Said after "recipe auto, fitted for 5 min on <machine>" in the log: how to choose otherwise.
  std::string recipe_note;
  /// A fresh run without train.probe translates a sentence picked from the dev split at every
  /// validation (pick_probe_sentence, ts/text/probe_sentence.h), so that the app's "Attention over
  /// training" always has frames to replay. The pick is logged and written into config.json.
  bool pick_probe = false;

  /// The run history: recorded unless `record` is false. `history_db` "" = RunStore::default_path().
  bool record = true;
  std::string history_db, run_name;
  double history_wait_seconds = RecorderOptions{}.give_up_seconds;

  std::atomic<bool>* stop = nullptr;   // set from another thread: stop after the current step
  std::atomic<bool>* pause = nullptr;  // set from another thread: wait between steps
  /// Data-parallel: this process is one rank of the group (nullopt: one process). Rank 0 alone logs,
  /// writes the run directory and records the history; the others report only the trainer's finish.
  std::optional<DistributedConfig> distributed;
  bool ranks_on_this_machine = false;  // the log says "N processes" rather than the rendezvous address
  /// When the time budget began (steady_seconds()): the command's start or the Train button's press.
  double budget_start = -1;
  /// Called on the training thread between steps (a snapshot of the model for another thread).
  std::function<void(Trainer&)> between_steps;
};

/// Creates the run directory `out_dir` and writes `config` into its config.json (the file `train
/// --config` reads back); throws naming the path when either fails.
void write_run_config(const std::string& out_dir, const nlohmann::json& config);

class TrainingSession {
 public:
  TrainingSession(SessionRequest request, SessionObserver* observer);
  ~TrainingSession();
  TrainingSession(const TrainingSession&) = delete;
  TrainingSession& operator=(const TrainingSession&) = delete;

  /// Runs every phase once. What stops the run before training (an unreadable checkpoint, a corpus
  /// too small to split, a run directory that cannot be written, a configuration that does not
  /// validate) throws with the file or field named; a failure while training is in the summary
  /// ("failed", with the message), the last good checkpoint kept.
  TrainingSummary run();

  /// The configuration trained (the fitted recipe with the person's settings), once run() has fitted it.
  const ExperimentConfig& config() const;
  /// The trainer, once run() has built it (null before, or when preparation failed).
  Trainer* trainer();
  /// The step the run started from (> 0 when resuming).
  std::int64_t start_step() const;
  bool is_root() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace ts
