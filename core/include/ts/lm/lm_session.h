// SPDX-License-Identifier: GPL-3.0-or-later
// One language-model training session: the text read and encoded (with a resumed run's codec), the
// run directory and its config.json, the run history, the LM trainer. `lm-train` and the app's
// Language model panel are thin over it (see ts/train/session.h for the translation session).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ts/lm/lm_config.h"
#include "ts/train/run_recorder.h"
#include "ts/train/session.h"

namespace ts {

class LmTrainer;

struct LmSessionRequest {
  std::string text_path;          // "" on resume: the text the checkpoint names (which must still exist)
  LmConfig config;                // what to train (on resume: the checkpoint's, with the caller's changes)
  std::string out_dir;            // the run directory (created; config.json written there)
  std::string resume_checkpoint;  // continue from this checkpoint (its codec, its position)
  bool record = true;             // the run history; `history_db` "" = RunStore::default_path()
  std::string history_db, run_name;
  double history_wait_seconds = RecorderOptions{}.give_up_seconds;
  std::atomic<bool>* stop = nullptr;
  std::atomic<bool>* pause = nullptr;
  std::function<void(LmTrainer&)> between_steps;
};

class LmTrainingSession {
 public:
  LmTrainingSession(LmSessionRequest request, SessionObserver* observer);
  ~LmTrainingSession();
  LmTrainingSession(const LmTrainingSession&) = delete;
  LmTrainingSession& operator=(const LmTrainingSession&) = delete;

  /// Runs once. An unreadable text or checkpoint, or a run directory that cannot be written, throws
  /// naming the file; a failure while training is in the summary.
  TrainingSummary run();
  /// The trainer, once run() has built it (its data and model stay after run() returns).
  LmTrainer* trainer();
  /// The text trained on (the checkpoint's on a resume without a text).
  const std::string& text_path() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace ts
