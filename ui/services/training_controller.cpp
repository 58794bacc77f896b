// SPDX-License-Identifier: GPL-3.0-or-later
#include "services/training_controller.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QThread>

#include "services/auto_fit.h"
#include "ts/decode/translator.h"
#include "ts/lm/lm_trainer.h"
#include "ts/model/errors.h"
#include "ts/train/run_recorder.h"
#include "ts/train/trainer.h"

namespace ts::ui {

namespace fs = std::filesystem;

// Events from the training thread, kept in order. Steps between two other events are merged into
// one `progress` delivery.
struct TrainingController::Queue {
  std::mutex mutex;
  QVector<TrainingProgress> steps;
  std::vector<std::function<void(TrainingController*)>> events;
  bool done = false;

  void flush_steps_locked() {
    if (steps.isEmpty()) return;
    events.push_back([batch = std::move(steps)](TrainingController* c) { Q_EMIT c->progress(batch); });
    steps.clear();
  }
  void push(std::function<void(TrainingController*)> event) {
    std::lock_guard<std::mutex> lock(mutex);
    flush_steps_locked();
    events.push_back(std::move(event));
  }
};

class TrainingController::Observer : public TrainingObserver {
 public:
  explicit Observer(std::shared_ptr<Queue> queue) : queue_(std::move(queue)) {}
  void on_start(const TrainingStart& e) override {
    queue_->push([e](TrainingController* c) {
      c->setState(c->pause_.load() ? State::Paused : State::Training);
      Q_EMIT c->started(e);
    });
  }
  void on_step(const TrainingProgress& e) override {
    std::lock_guard<std::mutex> lock(queue_->mutex);
    queue_->steps.push_back(e);
  }
  void on_validation(const ValidationResult& e) override {
    queue_->push([e](TrainingController* c) { Q_EMIT c->validated(e); });
  }
  void on_checkpoint(const CheckpointEvent& e) override {
    queue_->push([e](TrainingController* c) { Q_EMIT c->checkpointSaved(e); });
  }
  void on_log(const std::string& line) override { log(line); }
  void on_finished(const TrainingSummary& e) override {
    queue_->push([e](TrainingController* c) { Q_EMIT c->finished(e); });
  }
  void log(const std::string& line) {
    queue_->push([l = QString::fromStdString(line)](TrainingController* c) { Q_EMIT c->logLine(l); });
  }
  void history_wait(const HistoryWait& w) {
    queue_->push([w](TrainingController* c) {
      Q_EMIT c->historyWaiting(TrainingController::historyWaitSummary(w), QString::fromStdString(w.words),
                               w.state == HistoryWaitState::kWaiting);
    });
  }

 private:
  std::shared_ptr<Queue> queue_;
};

namespace {

// The `auto` preset fitted to the request's corpus, direction, budget and machine (as the CLI does),
// keeping the person's own edits; the recipe's reasons go to the log. The Configuration panel's fit
// is used when it is for the same inputs (the recipe is deterministic), else it is fitted here.
void fit_auto_preset(TrainingRequest& request, const std::function<void(const std::string&)>& log) {
  const AutoFit* previous = request.auto_fit && request.auto_fit->ok() ? request.auto_fit.get() : nullptr;
  AutoFit fit;
  // The run is fitted to this machine's measured speed (a few seconds, inside the budget, once per
  // session and settings); the panel's fit used it only if an earlier run had measured it.
  if (previous && previous->measured && previous->key == auto_fit_key(*request.corpus, request.direction, request.config))
    fit = *previous;
  else
    fit = fit_auto(*request.corpus, request.direction, request.config, /*measure=*/true);
  if (!fit.ok()) throw std::runtime_error("the auto preset could not be fitted to this corpus: " + fit.error);
  request.config = refit_auto(request.config, fit.config, previous ? &previous->config : nullptr);
  const double budget = request.config.train.budget_minutes;
  log("preset auto, fitted for " + (budget > 0 ? minutes_text(budget) : std::string("a run until stopped")) +
      (fit.machine.empty() ? std::string() : " on " + fit.machine) + " (fields you changed are kept):");
  for (const auto& reason : fit.reasons) log("  " + reason);
  request.config.validate();
}

// The run's directory with its config.json (the file `train --config` reads back).
void write_run_directory(const std::string& out, const nlohmann::json& config, const std::string& preset,
                         const std::function<void(const std::string&)>& log) {
  fs::create_directories(out);
  {
    std::ofstream config_file(fs::path(out) / "config.json");
    config_file << config.dump(2) << "\n";
    if (!config_file) throw std::runtime_error("cannot write " + (fs::path(out) / "config.json").string());
  }
  log("run directory: " + out + " (preset " + preset + ")");
}

}  // namespace

void TrainingController::announceRun(Queue& queue, qint64 run_id) {
  queue.push([run_id](TrainingController* c) {
    c->run_id_ = run_id;
    Q_EMIT c->runRecorded(run_id);
  });
}

TrainingController::TrainingController(QObject* parent) : QObject(parent) {
  static const bool registered = [] {
    qRegisterMetaType<ts::TrainingStart>();
    qRegisterMetaType<ts::TrainingProgress>();
    qRegisterMetaType<QVector<ts::TrainingProgress>>();
    qRegisterMetaType<ts::ValidationResult>();
    qRegisterMetaType<ts::CheckpointEvent>();
    qRegisterMetaType<ts::TrainingSummary>();
    qRegisterMetaType<ts::ui::ModelSnapshot>();
    qRegisterMetaType<ts::ui::LmModelSnapshot>();
    return true;
  }();
  (void)registered;
  timer_.setInterval(100);  // about ten deliveries a second
  connect(&timer_, &QTimer::timeout, this, &TrainingController::deliver);
}

TrainingController::~TrainingController() {
  if (thread_.joinable()) {
    stop_ = true;
    pause_ = false;
    thread_.join();
  }
}

void TrainingController::setState(State state) {
  if (state == state_) return;
  state_ = state;
  Q_EMIT stateChanged(state);
}

bool TrainingController::launch(const std::vector<std::string>& problems, const QString& out_dir,
                                std::function<void()> work) {
  if (isRunning() || thread_.joinable()) {
    Q_EMIT failed(tr("A training run is already in progress."));
    return false;
  }
  if (!problems.empty()) {
    QStringList lines;
    for (const auto& p : problems) lines << QString::fromStdString(p);
    Q_EMIT failed(tr("The configuration cannot be trained:\n%1").arg(lines.join(QLatin1Char('\n'))));
    return false;
  }
  stop_ = false;
  pause_ = false;
  snapshot_requested_ = false;
  out_dir_ = out_dir;
  run_id_ = 0;
  queue_ = std::make_shared<Queue>();
  setState(State::Preparing);
  timer_.start();
  thread_ = std::thread(std::move(work));
  return true;
}

bool TrainingController::start(const TrainingRequest& request) {
  if (!request.corpus && !isRunning()) {
    Q_EMIT failed(tr("No corpus is loaded."));
    return false;
  }
  return launch(request.config.problems(), request.out_dir, [this, request] { work(request); });
}

bool TrainingController::startLanguageModel(const LmTrainingRequest& request) {
  if (request.text_path.isEmpty() && !isRunning()) {
    Q_EMIT failed(tr("No text file is open."));
    return false;
  }
  return launch(request.config.problems(), request.out_dir, [this, request] { workLanguageModel(request); });
}

void TrainingController::pause() {
  if (state_ != State::Training && state_ != State::Preparing) return;
  pause_ = true;
  if (state_ == State::Training) setState(State::Paused);
}

void TrainingController::resume() {
  if (!pause_.load()) return;
  pause_ = false;
  if (state_ == State::Paused) setState(State::Training);
}

void TrainingController::stop() {
  if (!isRunning()) return;
  stop_ = true;
  pause_ = false;
  setState(State::Stopping);
}

void TrainingController::requestSnapshot() {
  if (isRunning()) snapshot_requested_ = true;
}

bool TrainingController::waitForFinished(int ms) {
  QElapsedTimer clock;
  clock.start();
  while (isRunning() && clock.elapsed() < ms) {
    deliver();
    if (isRunning()) QThread::msleep(10);
  }
  return !isRunning();
}

void TrainingController::deliver() {
  if (!queue_) return;
  std::vector<std::function<void(TrainingController*)>> events;
  bool done;
  {
    std::lock_guard<std::mutex> lock(queue_->mutex);
    queue_->flush_steps_locked();
    events.swap(queue_->events);
    done = queue_->done;
  }
  for (auto& event : events) event(this);
  if (done) {
    timer_.stop();
    if (thread_.joinable()) thread_.join();
    queue_.reset();
    setState(State::Idle);
  }
}

QString TrainingController::historyWaitSummary(const HistoryWait& w) {
  switch (w.state) {
    case HistoryWaitState::kWaiting:
      return tr("Waiting for the run history to store the end of this run: %1. Nothing is lost meanwhile (Training \u25b8 "
                "Log has the details).")
          .arg(w.problem == StoreProblem::kLocked ? tr("another program holds it locked") : tr("it refuses writes"));
    case HistoryWaitState::kStoredAfterWaiting:
      return tr("Run history: stored after waiting %1 s.").arg(w.seconds, 0, 'f', 1);
    case HistoryWaitState::kGaveUp:
      return w.in_recovery_file
                 ? tr("The run history did not accept the end of this run in time: it is kept in a recovery file, stored "
                      "the next time the history is opened (Training \u25b8 Log has the details).")
                 : tr("The run history did not accept the end of this run in time, and no recovery file could be written: "
                      "the history ends at its last commit; the checkpoints are complete (Training \u25b8 Log has the "
                      "details).");
  }
  return {};
}

// The training thread: data preparation, history, trainer. Nothing here touches Qt objects;
// everything goes through the queue.
void TrainingController::work(TrainingRequest request) {
  const double started = steady_seconds();  // a time budget counts from here: preparation is part of it
  auto queue = queue_;
  Observer observer(queue);
  const auto log = [&observer](const std::string& line) { observer.log(line); };
  try {
    const std::string out = request.out_dir.toStdString();
    const std::string resume = request.resume_checkpoint.toStdString();
    log(describe(*request.corpus));
    if (resume.empty() && request.config.preset == "auto") fit_auto_preset(request, log);
    LoadedModel previous;
    const TextPipeline* existing = nullptr;
    if (!resume.empty()) {
      previous = load_checkpoint(resume, at::Device(at::kCPU));
      existing = &previous.pipeline;
    }
    auto data = prepare_data(*request.corpus, request.direction, request.config.data, existing, log);
    write_run_directory(out, request.config.to_json(), request.config.preset, log);
    std::unique_ptr<RunRecorder> recorder;
    if (!request.database.isEmpty()) {
      RecordingRequest recording{request.database.toStdString(), request.name.toStdString(), resume,
                                 previous.meta.position.step, &stop_, log};
      recording.on_wait = [&observer](const HistoryWait& w) { observer.history_wait(w); };
      recorder = start_recording(recording, request.config, *request.corpus, request.direction, out);
      if (recorder) announceRun(*queue, recorder->run_id());
    }
    // The step count, kept on the training thread for snapshot labels.
    struct StepCounter : TrainingObserver {
      std::int64_t step = 0;
      void on_step(const TrainingProgress& p) override { step = p.step; }
    } counter;
    counter.step = previous.meta.position.step;
    std::vector<TrainingObserver*> list{&observer, &counter};
    if (recorder) list.push_back(recorder.get());
    ObserverList all(list);

    const auto snapshot = [queue](Trainer& trainer, std::int64_t step, const QString& label) {
      ModelSnapshot s;
      s.translator = std::make_shared<Translator>(copy_model(trainer.model(), at::Device(at::kCPU)), trainer.data().pipeline);
      s.step = step;
      s.label = label;
      queue->push([s](TrainingController* c) { Q_EMIT c->snapshotReady(s); });
    };

    TrainerOptions options{out, request.corpus_path.toStdString(), resume, &stop_, &pause_};
    options.budget_start = started;
    options.between_steps = [&](Trainer& trainer) {
      if (snapshot_requested_.exchange(false))
        snapshot(trainer, counter.step, tr("training model at step %1").arg(counter.step));
    };
    Trainer trainer(request.config, std::move(data), options, &all);
    const auto summary = trainer.run();
    if (summary.steps > 0)
      snapshot(trainer, summary.steps, tr("trained model, step %1 (%2)").arg(summary.steps).arg(QString::fromStdString(summary.status)));
  } catch (const std::exception& e) {
    queue->push([m = QString::fromStdString(error_message(e))](TrainingController* c) { Q_EMIT c->failed(m); });
  }
  std::lock_guard<std::mutex> lock(queue->mutex);
  queue->flush_steps_locked();
  queue->done = true;
}

// The language-model training thread: the text, the history, the LM trainer.
void TrainingController::workLanguageModel(LmTrainingRequest request) {
  auto queue = queue_;
  Observer observer(queue);
  const auto log = [&observer](const std::string& line) { observer.log(line); };
  try {
    const std::string out = request.out_dir.toStdString(), text = request.text_path.toStdString();
    const std::string resume = request.resume_checkpoint.toStdString();
    LmCheckpointMeta previous;
    if (!resume.empty()) previous = read_lm_checkpoint_meta(resume);
    log("reading " + text);
    auto data = load_lm_text(text, request.config, resume.empty() ? nullptr : &previous.codec);
    log(data.summary());
    write_run_directory(out, request.config.to_json(), request.config.preset, log);
    std::unique_ptr<RunRecorder> recorder;
    if (!request.database.isEmpty()) {
      RecordingRequest recording{request.database.toStdString(), request.name.toStdString(), resume, previous.step,
                                 &stop_, log};
      recording.on_wait = [&observer](const HistoryWait& w) { observer.history_wait(w); };
      recorder = start_recording(recording, describe_lm_run(request.config, data, text, out, request.name.toStdString()));
      if (recorder) announceRun(*queue, recorder->run_id());
    }
    std::vector<TrainingObserver*> list{&observer};
    if (recorder) list.push_back(recorder.get());
    ObserverList all(list);

    const auto snapshot = [queue, &request](LmTrainer& trainer, const QString& label) {
      auto loaded = std::make_shared<LoadedLanguageModel>();
      loaded->meta.config = trainer.config();
      loaded->meta.codec = trainer.data().codec;
      loaded->meta.text_path = request.text_path.toStdString();
      loaded->meta.step = trainer.step();
      loaded->model = copy_language_model(*trainer.model(), at::Device(at::kCPU));
      LmModelSnapshot s{std::move(loaded), trainer.step(), label};
      queue->push([s](TrainingController* c) { Q_EMIT c->lmSnapshotReady(s); });
    };
    LmTrainerOptions options;
    options.out_dir = out;
    options.text_path = text;
    options.resume_checkpoint = resume;
    options.stop = &stop_;
    options.pause = &pause_;
    options.between_steps = [&](LmTrainer& trainer) {
      if (snapshot_requested_.exchange(false))
        snapshot(trainer, tr("training model at step %1").arg(trainer.step()));
    };
    LmTrainer trainer(request.config, std::move(data), options, &all);
    const auto summary = trainer.run();
    if (summary.steps > 0)
      snapshot(trainer, tr("trained model, step %1 (%2)").arg(summary.steps).arg(QString::fromStdString(summary.status)));
  } catch (const std::exception& e) {
    queue->push([m = QString::fromStdString(error_message(e))](TrainingController* c) { Q_EMIT c->failed(m); });
  }
  std::lock_guard<std::mutex> lock(queue->mutex);
  queue->flush_steps_locked();
  queue->done = true;
}

}  // namespace ts::ui
