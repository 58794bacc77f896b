// SPDX-License-Identifier: GPL-3.0-or-later
// One language-model training session (see ts/lm/lm_session.h).
#include "ts/lm/lm_session.h"

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ts/lm/lm_trainer.h"

namespace ts {

struct LmTrainingSession::State {
  LmSessionRequest request;
  SessionObserver none;
  SessionObserver* events;
  bool ran = false;
  std::unique_ptr<RunRecorder> recorder;
  std::optional<ObserverList> observers;
  std::unique_ptr<LmTrainer> trainer;
};

LmTrainingSession::LmTrainingSession(LmSessionRequest request, SessionObserver* observer)
    : s_(std::make_unique<State>()) {
  s_->request = std::move(request);
  s_->events = observer ? observer : &s_->none;
}

LmTrainingSession::~LmTrainingSession() = default;

TrainingSummary LmTrainingSession::run() {
  if (s_->ran) throw std::logic_error("a training session runs once");
  s_->ran = true;
  auto& r = s_->request;
  auto* events = s_->events;
  const auto log = [events](const std::string& line) { events->on_log(line); };

  events->on_phase(SessionPhase::kPreparingData);
  LmCheckpointMeta previous;
  if (!r.resume_checkpoint.empty()) {
    previous = read_lm_checkpoint_meta(r.resume_checkpoint);
    if (r.text_path.empty()) {
      r.text_path = previous.text_path;
      if (!std::filesystem::exists(r.text_path))
        throw std::invalid_argument(
            r.text_path +
            ": the run's text file is gone (moved or deleted?): give its new place (lm-train --text FILE)");
    }
  }
  if (r.text_path.empty()) throw std::invalid_argument("a language-model session needs a text file");
  r.config.validate();
  log("reading " + r.text_path);
  auto data = load_lm_text(r.text_path, r.config, r.resume_checkpoint.empty() ? nullptr : &previous.codec);
  log(data.summary());
  write_run_config(r.out_dir, r.config.to_json());
  log("run directory: " + r.out_dir + " (preset " + r.config.preset + ")");

  std::vector<TrainingObserver*> observers{events};
  if (r.record) {
    events->on_phase(SessionPhase::kStartingHistory);
    RecordingRequest recording{r.history_db, r.run_name, r.resume_checkpoint,   previous.step,
                               r.stop,       log,        r.history_wait_seconds};
    recording.on_wait = [events](const HistoryWait& w) { events->on_history_wait(w); };
    s_->recorder = start_recording(recording, describe_lm_run(r.config, data, r.text_path, r.out_dir, r.run_name));
    if (s_->recorder) {
      events->on_run_recorded(s_->recorder->run_id());
      observers.push_back(s_->recorder.get());
    }
  }
  s_->observers.emplace(observers);

  LmTrainerOptions options;
  options.out_dir = r.out_dir;
  options.text_path = r.text_path;
  options.resume_checkpoint = r.resume_checkpoint;
  options.stop = r.stop;
  options.pause = r.pause;
  options.between_steps = r.between_steps;
  events->on_phase(SessionPhase::kTraining);
  s_->trainer = std::make_unique<LmTrainer>(r.config, std::move(data), options, &*s_->observers);
  return s_->trainer->run();
}

LmTrainer* LmTrainingSession::trainer() { return s_->trainer.get(); }
const std::string& LmTrainingSession::text_path() const { return s_->request.text_path; }

}  // namespace ts
