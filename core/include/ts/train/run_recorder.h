// SPDX-License-Identifier: GPL-3.0-or-later
// Records a training run into the run store without stalling training: events are buffered in
// memory and committed in one transaction about once a second by a writer thread that owns its
// own database connection. If the store cannot be written (locked, read-only, disk full) the
// recorder keeps the rows, retries, reports the problem, and after `give_up_seconds` of failures
// asks the trainer to stop cleanly.
//
// Nothing is lost at the finish line: when the run ends (finished, stopped by the person, a NaN,
// a failed checkpoint write, or an error), the rows still held and the final status are committed
// in one transaction. If the store refuses, they are first written to a recovery file beside the
// run's checkpoints (ts/store/recovery.h), then the recorder keeps retrying, saying that it waits,
// for up to `give_up_seconds`; the file is removed once the store takes them, and otherwise stays
// for the next RunStore that opens the database to import.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ts/store/run_store.h"
#include "ts/text/corpus.h"
#include "ts/train/config.h"
#include "ts/train/events.h"

namespace ts {

struct RecorderOptions {
  double flush_seconds = 1.0;            // commit interval
  double give_up_seconds = 120.0;        // stop training after the store has failed this long; the longest
                                         // the end of a run waits for the store before leaving it to the recovery file
  bool record_every_step = true;         // false: train metrics once per flush interval only
  int busy_timeout_ms = 1000;            // how long one commit waits for another writer before retrying later
  double recovery_every_seconds = 10.0;  // while the store refuses during training, the rows held are saved this often
};

/// Storing the end of a run when the run database does not take it at once: the recorder waits
/// (saying so every 10 s), then stores it after all or gives up (the rows stay in the recovery file).
enum class HistoryWaitState { kWaiting, kStoredAfterWaiting, kGaveUp };
struct HistoryWait {
  HistoryWaitState state = HistoryWaitState::kWaiting;
  double seconds = 0;                           // waited so far
  StoreProblem problem = StoreProblem::kOther;  // why the store refused (kLocked: another program holds it)
  bool in_recovery_file = false;                // the rows and how the run ended are safe in the recovery file
  std::string words;  // the recorder's log line for it, with the paths (to show, not to parse)
};

class RunRecorder : public TrainingObserver {
 public:
  /// Opens its own connection to `db_path` and takes the run's lock. `stop` (may be null) is set
  /// when storing has failed for too long.
  RunRecorder(const std::string& db_path, std::int64_t run_id, std::atomic<bool>* stop, RecorderOptions options = {});
  ~RunRecorder() override;

  void on_start(const TrainingStart& start) override;
  void on_step(const TrainingProgress& p) override;
  void on_validation(const ValidationResult& v) override;
  void on_checkpoint(const CheckpointEvent& c) override;
  void on_finished(const TrainingSummary& s) override;

  /// Problems met while storing are reported through `log` on the training thread (at the next
  /// event), never from the writer thread.
  void set_log(std::function<void(const std::string&)> log) { log_ = std::move(log); }
  /// Called (on the training thread) as the end of a run waits for the store; the log says the same
  /// in words.
  void set_wait_observer(std::function<void(const HistoryWait&)> observer) { on_wait_ = std::move(observer); }
  /// Problems not yet reported (drained on read; thread-safe).
  std::vector<std::string> take_warnings();
  std::int64_t run_id() const { return run_id_; }
  /// Commits everything buffered now (blocking); returns false if the store refused it.
  bool flush();
  /// Where the rows the store refused were saved, if they had to be ("" when none is pending).
  std::string recovery_file() const;

 private:
  void writer_loop();
  void stop_writer();
  void report_warnings();
  void log(const std::string& line);
  bool commit_pending(std::string* error = nullptr);
  bool save_recovery(const std::string& reason);
  void finish(const TrainingSummary& s);

  std::int64_t run_id_;
  std::atomic<bool>* stop_;
  RecorderOptions options_;
  std::string db_path_;
  std::string out_dir_, started_at_;  // where the recovery file goes, and what identifies the run in it
  std::unique_ptr<RunLock> lock_;
  std::unique_ptr<RunStore> store_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  StoreBatch pending_;  // rows, device and (at the end) the final status not yet committed
  std::int64_t steps_ = 0;
  std::optional<double> best_bleu_;
  std::vector<std::string> warnings_;
  bool closing_ = false;
  bool finished_ = false;
  double failing_since_ = -1;  // seconds on the writer's clock, -1 when healthy
  double last_recovery_save_ = -1;
  std::string recovery_path_;  // the recovery file written, "" when none
  double last_step_record_ = -1e9;
  std::thread writer_;
  std::mutex commit_mutex_;  // one commit at a time (writer thread or flush())
  std::function<void(const std::string&)> log_;
  std::function<void(const HistoryWait&)> on_wait_;
  StoreProblem last_problem_ = StoreProblem::kOther;  // of the last refused commit
};

/// Everything the CLI and the app need to start recording a new run.
NewRun describe_new_run(const ExperimentConfig& config, const Corpus& corpus, const Direction& direction,
                        const std::string& out_dir, const std::string& name = "");

/// Where a new run's checkpoints go when the user names no directory:
/// `<base>/<corpus stem>-<direction>-<YYYYmmdd-HHMMSS>`.
std::string default_run_directory(const std::string& base, const std::string& corpus_path,
                                  const std::string& direction);

/// What start_recording() needs besides the run itself.
struct RecordingRequest {
  std::string db_path;            // empty = RunStore::default_path()
  std::string name;               // run name; empty = generated
  std::string resume_checkpoint;  // non-empty: continue the run that wrote this checkpoint if it is known
  std::int64_t resume_step = 0;
  std::atomic<bool>* stop = nullptr;
  std::function<void(const std::string&)> log;                 // where "run history: run N in DB" and problems go
  double give_up_seconds = RecorderOptions{}.give_up_seconds;  // see RecorderOptions
  std::function<void(const HistoryWait&)> on_wait;             // see RunRecorder::set_wait_observer
};

/// Opens the run history and a recorder for this run (a new run, or the resumed one). When the
/// store cannot be used it says why through `request.log` and returns null: training goes on
/// unrecorded rather than not at all.
std::unique_ptr<RunRecorder> start_recording(const RecordingRequest& request, const ExperimentConfig& config,
                                             const Corpus& corpus, const Direction& direction,
                                             const std::string& out_dir);
/// The same for a run described by the caller (a language-model run, whose kind and config differ).
std::unique_ptr<RunRecorder> start_recording(const RecordingRequest& request, const NewRun& run);

/// "hostname (N cores)".
std::string machine_description();

}  // namespace ts
