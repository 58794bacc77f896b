// SPDX-License-Identifier: GPL-3.0-or-later
#include "services/training_controller.h"

#include <functional>
#include <stdexcept>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QThread>

#include "ts/train/auto_fit.h"
#include "ts/decode/translator.h"
#include "ts/lm/lm_session.h"
#include "ts/lm/lm_trainer.h"
#include "ts/model/errors.h"
#include "ts/train/run_recorder.h"
#include "ts/train/session.h"
#include "ts/train/trainer.h"

namespace ts::ui {

// Events from the training thread, kept in order. Steps between two other events are merged into
// one `progress` delivery. The run's end (finished or failed) is held back until the thread is done,
// then delivered last, in the delivery that returns the state to Idle: what its handlers queue (a
// window that closes once its run has stopped) runs with the run over. Delivered as soon as it came,
// it could arrive while the thread was still taking the final model's snapshot; the state stayed
// Training past the handlers' queued calls, and the LM window, asked to close, waited for good.
struct TrainingController::Queue {
  std::mutex mutex;
  QVector<TrainingProgress> steps;
  std::vector<std::function<void(TrainingController*)>> events;
  std::vector<std::function<void(TrainingController*)>> end;  // finished or failed
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
  void push_end(std::function<void(TrainingController*)> event) {
    std::lock_guard<std::mutex> lock(mutex);
    flush_steps_locked();
    end.push_back(std::move(event));
  }
};

class TrainingController::Observer : public SessionObserver {
 public:
  explicit Observer(std::shared_ptr<Queue> queue) : queue_(std::move(queue)) {}
  /// The latest step, on the training thread (for snapshot labels).
  std::int64_t step = 0;

  void on_start(const TrainingStart& e) override {
    step = e.start_step;
    queue_->push([e](TrainingController* c) {
      c->setState(c->pause_.load() ? State::Paused : State::Training);
      Q_EMIT c->started(e);
    });
  }
  void on_step(const TrainingProgress& e) override {
    step = e.step;
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
    queue_->push_end([e](TrainingController* c) { Q_EMIT c->finished(e); });
  }
  void log(const std::string& line) {
    queue_->push([l = QString::fromStdString(line)](TrainingController* c) { Q_EMIT c->logLine(l); });
  }
  void on_phase(SessionPhase phase) override {
    queue_->push([phase](TrainingController* c) { Q_EMIT c->phaseChanged(phase); });
  }
  void on_recipe_fitted(const AutoFit& fit) override {
    queue_->push([f = std::make_shared<const AutoFit>(fit)](TrainingController* c) { Q_EMIT c->recipeFitted(f); });
  }
  void on_run_recorded(std::int64_t run_id) override {
    queue_->push([run_id](TrainingController* c) {
      c->run_id_ = run_id;
      Q_EMIT c->runRecorded(run_id);
    });
  }
  void on_history_wait(const HistoryWait& w) override {
    queue_->push([w](TrainingController* c) {
      Q_EMIT c->historyWaiting(TrainingController::historyWaitSummary(w), QString::fromStdString(w.words),
                               w.state == HistoryWaitState::kWaiting);
    });
  }

 private:
  std::shared_ptr<Queue> queue_;
};

TrainingController::TrainingController(QObject* parent) : QObject(parent) {
  static const bool registered = [] {
    qRegisterMetaType<ts::SessionPhase>();
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
  std::vector<std::function<void(TrainingController*)>> events, end;
  bool done;
  {
    std::lock_guard<std::mutex> lock(queue_->mutex);
    queue_->flush_steps_locked();
    events.swap(queue_->events);
    done = queue_->done;
    if (done) end.swap(queue_->end);
  }
  for (auto& event : events) event(this);
  if (done) {
    timer_.stop();
    if (thread_.joinable()) thread_.join();
    queue_.reset();
    for (auto& event : end) event(this);  // the run's end, with nothing of it left to come
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

// The training thread: the session in core (ts/train/session.h) does the work; its events reach
// the GUI thread through the queue. Nothing here touches Qt objects.
void TrainingController::work(TrainingRequest request) {
  const double started = steady_seconds();  // a time budget counts from here: preparation is part of it
  auto queue = queue_;
  Observer observer(queue);
  try {
    const auto snapshot = [queue](Trainer& trainer, std::int64_t step, const QString& label) {
      ModelSnapshot s;
      s.translator =
          std::make_shared<Translator>(copy_model(trainer.model(), at::Device(at::kCPU)), trainer.data().pipeline);
      s.step = step;
      s.label = label;
      queue->push([s](TrainingController* c) { Q_EMIT c->snapshotReady(s); });
    };
    SessionRequest session_request;
    session_request.corpus = request.corpus.get();
    session_request.direction = request.direction;
    session_request.corpus_path = request.corpus_path.toStdString();
    session_request.config = request.config;
    session_request.out_dir = request.out_dir.toStdString();
    session_request.resume_checkpoint = request.resume_checkpoint.toStdString();
    // Preset auto is fitted again on this thread, timing the machine, and the person's own edits are kept; the
    // Configuration panel's fit is used when it timed the machine for the same inputs.
    session_request.fit_recipe = session_request.resume_checkpoint.empty() && request.config.preset == "auto";
    session_request.fitted = request.auto_fit;
    session_request.keep_own_settings = [current = request.config, previous = request.auto_fit](const AutoFit& fit) {
      return refit_auto(current, fit.config, previous && previous->ok() ? &previous->config : nullptr);
    };
    session_request.recipe_note = "fields you changed are kept";
    session_request.pick_probe = true;  // Attention over training always has a sentence to replay
    session_request.record = !request.database.isEmpty();
    session_request.history_db = request.database.toStdString();
    session_request.run_name = request.name.toStdString();
    session_request.stop = &stop_;
    session_request.pause = &pause_;
    session_request.budget_start = started;
    session_request.between_steps = [&](Trainer& trainer) {
      if (snapshot_requested_.exchange(false))
        snapshot(trainer, observer.step, tr("training model at step %1").arg(observer.step));
    };
    TrainingSession session(std::move(session_request), &observer);
    const auto summary = session.run();
    if (summary.steps > 0)
      snapshot(*session.trainer(), summary.steps,
               tr("trained model, step %1 (%2)")
                   .arg(summary.steps)
                   .arg(QString::fromLatin1(run_status_name(summary.status))));
  } catch (const std::exception& e) {
    queue->push_end([m = QString::fromStdString(error_message(e))](TrainingController* c) { Q_EMIT c->failed(m); });
  }
  std::lock_guard<std::mutex> lock(queue->mutex);
  queue->flush_steps_locked();
  queue->done = true;
}

// The language-model training thread: the session in core (ts/lm/lm_session.h) does the work.
void TrainingController::workLanguageModel(LmTrainingRequest request) {
  auto queue = queue_;
  Observer observer(queue);
  try {
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
    LmSessionRequest session_request;
    session_request.text_path = request.text_path.toStdString();
    session_request.config = request.config;
    session_request.out_dir = request.out_dir.toStdString();
    session_request.resume_checkpoint = request.resume_checkpoint.toStdString();
    session_request.record = !request.database.isEmpty();
    session_request.history_db = request.database.toStdString();
    session_request.run_name = request.name.toStdString();
    session_request.stop = &stop_;
    session_request.pause = &pause_;
    session_request.between_steps = [&](LmTrainer& trainer) {
      if (snapshot_requested_.exchange(false)) snapshot(trainer, tr("training model at step %1").arg(trainer.step()));
    };
    LmTrainingSession session(std::move(session_request), &observer);
    const auto summary = session.run();
    if (summary.steps > 0)
      snapshot(*session.trainer(), tr("trained model, step %1 (%2)")
                                       .arg(summary.steps)
                                       .arg(QString::fromLatin1(run_status_name(summary.status))));
  } catch (const std::exception& e) {
    queue->push_end([m = QString::fromStdString(error_message(e))](TrainingController* c) { Q_EMIT c->failed(m); });
  }
  std::lock_guard<std::mutex> lock(queue->mutex);
  queue->flush_steps_locked();
  queue->done = true;
}

}  // namespace ts::ui
