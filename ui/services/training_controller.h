// SPDX-License-Identifier: GPL-3.0-or-later
// Runs core's training session (ts/train/session.h) on a background thread and turns its typed events into Qt signals on the
// GUI thread. Events are queued by the training thread and delivered by a timer about ten times a
// second, so a fast model cannot flood the event loop: each `progress` signal carries every step
// since the previous one. Every core exception becomes a `failed` signal with the message.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QTimer>
#include <QVector>

#include "services/lm_types.h"
#include "ts/text/corpus.h"
#include "ts/train/config.h"
#include "ts/train/events.h"
#include "ts/train/run_recorder.h"

namespace ts {
class Translator;
}

namespace ts {
struct AutoFit;  // ts/train/auto_fit.h
}  // namespace ts

namespace ts::ui {

struct TrainingRequest {
  std::shared_ptr<const Corpus> corpus;
  QString corpus_path;  // as recorded in checkpoints and the history ("<demo>" for the demo)
  Direction direction;
  ExperimentConfig config;                  // preset "auto": fitted again on the training thread (ts/train/auto_fit.h),
                                            // keeping the person's own edits; its reasons go to the log
  std::shared_ptr<const AutoFit> auto_fit;  // preset "auto": the fit `config` was made from (null: the plain preset)
  QString out_dir;                          // where checkpoints go (created)
  QString database;                         // run history; empty = do not record
  QString name;                             // run name in the history (empty = generated)
  QString resume_checkpoint;                // continue from this checkpoint (its pipeline is reused)
};

/// A copy of the model being trained, for translating on another thread while training goes on.
struct ModelSnapshot {
  std::shared_ptr<Translator> translator;
  std::int64_t step = 0;
  QString label;  // e.g. "training model at step 1200"
};

class TrainingController : public QObject {
  Q_OBJECT
 public:
  enum class State { Idle, Preparing, Training, Paused, Stopping };
  Q_ENUM(State)

  explicit TrainingController(QObject* parent = nullptr);
  /// The status-bar sentence for the end of a run waiting for the run history (the recorder's own
  /// lines, long and with paths, go to the log).
  static QString historyWaitSummary(const HistoryWait& wait);
  /// Stops a running training and waits for it (the checkpoint is written first).
  ~TrainingController() override;

  /// Starts training on a new thread. Returns false (and emits `failed`) if one is running or the
  /// configuration is invalid.
  bool start(const TrainingRequest& request);
  /// The same for a language model: the text is read and checked on the training thread (a bad
  /// file ends in `failed`), the step and estimate events are those of translation training
  /// (`validated` carries the train and val loss estimates), and snapshots come as `lmSnapshotReady`.
  bool startLanguageModel(const LmTrainingRequest& request);
  void pause();
  void resume();
  /// Asks the trainer to stop after the current step and write a checkpoint.
  void stop();
  /// Blocks until the training thread ended or `ms` passed; delivers pending events. True if ended.
  bool waitForFinished(int ms);
  /// Asks for a copy of the current weights; `snapshotReady` follows after the current step.
  void requestSnapshot();

  State state() const { return state_; }
  bool isRunning() const { return state_ != State::Idle; }
  /// The run's directory and history id (0 when not recorded) of the current or last run.
  QString outDir() const { return out_dir_; }
  qint64 runId() const { return run_id_; }
  /// Delivery interval of queued events (ms); tests may shorten it.
  void setDeliveryInterval(int ms) { timer_.setInterval(ms); }

 Q_SIGNALS:
  void stateChanged(ts::ui::TrainingController::State state);
  /// What the run is doing before and as training starts (fitting the recipe, preparing the data, ...).
  void phaseChanged(ts::SessionPhase phase);
  /// The `auto` recipe as this run fitted it, the machine timed: what it trains and why.
  void recipeFitted(std::shared_ptr<const ts::AutoFit> fit);
  void logLine(const QString& line);
  /// The end of a run waits for the run history (`waiting`), or has stopped waiting: stored after
  /// all, or given up (the rows are in the recovery file); `summary` says it for the status bar,
  /// `words` is the recorder's own log line, with the paths.
  void historyWaiting(const QString& summary, const QString& words, bool waiting);
  void started(const ts::TrainingStart& start);
  /// `steps` holds every step since the previous signal, oldest first; the last one is the latest.
  void progress(const QVector<ts::TrainingProgress>& steps);
  void validated(const ts::ValidationResult& result);
  void checkpointSaved(const ts::CheckpointEvent& checkpoint);
  void snapshotReady(const ts::ui::ModelSnapshot& snapshot);
  void lmSnapshotReady(const ts::ui::LmModelSnapshot& snapshot);
  void runRecorded(qint64 run_id);
  /// The run ended; `summary.status` says how (finished, stopped, early-stopped, failed).
  void finished(const ts::TrainingSummary& summary);
  /// Something went wrong before or outside the training loop (bad corpus, config, disk).
  void failed(const QString& message);

 private:
  struct Queue;
  class Observer;
  void deliver();
  void setState(State state);
  bool launch(const std::vector<std::string>& problems, const QString& out_dir, std::function<void()> work);
  void work(TrainingRequest request);
  void workLanguageModel(LmTrainingRequest request);

  State state_ = State::Idle;
  QTimer timer_;
  std::thread thread_;
  std::shared_ptr<Queue> queue_;
  std::atomic<bool> stop_{false}, pause_{false}, snapshot_requested_{false};
  QString out_dir_;
  qint64 run_id_ = 0;
};

}  // namespace ts::ui

Q_DECLARE_METATYPE(ts::SessionPhase)
Q_DECLARE_METATYPE(ts::TrainingStart)
Q_DECLARE_METATYPE(ts::TrainingProgress)
Q_DECLARE_METATYPE(ts::ValidationResult)
Q_DECLARE_METATYPE(ts::CheckpointEvent)
Q_DECLARE_METATYPE(ts::TrainingSummary)
Q_DECLARE_METATYPE(ts::ui::ModelSnapshot)
