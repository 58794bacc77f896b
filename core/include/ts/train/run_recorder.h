// Records a training run into the run store without stalling training: events are buffered in
// memory and committed in one transaction about once a second by a writer thread that owns its
// own database connection. If the store cannot be written (locked, read-only, disk full) the
// recorder keeps the rows, retries, reports the problem, and after `give_up_seconds` of failures
// asks the trainer to stop cleanly.
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
  double flush_seconds = 1.0;       // commit interval
  double give_up_seconds = 120.0;   // stop training after the store has failed this long
  bool record_every_step = true;    // false: train metrics once per flush interval only
  int busy_timeout_ms = 1000;       // how long one commit waits for another writer before retrying later
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
  /// Problems not yet reported (drained on read; thread-safe).
  std::vector<std::string> take_warnings();
  std::int64_t run_id() const { return run_id_; }
  /// Commits everything buffered now (blocking); returns false if the store refused it.
  bool flush();

 private:
  void writer_loop();
  void report_warnings();
  bool commit_pending();

  std::int64_t run_id_;
  std::atomic<bool>* stop_;
  RecorderOptions options_;
  std::unique_ptr<RunStore> store_;
  std::unique_ptr<RunLock> lock_;

  std::mutex mutex_;
  std::condition_variable wake_;
  StoreBatch pending_;
  std::int64_t steps_ = 0;
  std::optional<double> best_bleu_;
  std::string device_;
  std::vector<std::string> warnings_;
  bool closing_ = false;
  bool finished_ = false;
  double failing_since_ = -1;  // seconds on the writer's clock, -1 when healthy
  double last_step_record_ = -1e9;
  std::thread writer_;
  std::mutex commit_mutex_;  // one commit at a time (writer thread or flush())
  std::function<void(const std::string&)> log_;
};

/// Everything the CLI and the app need to start recording a new run.
NewRun describe_new_run(const ExperimentConfig& config, const Corpus& corpus, const Direction& direction,
                        const std::string& out_dir, const std::string& name = "");

/// Where a new run's checkpoints go when the user names no directory:
/// `<base>/<corpus stem>-<direction>-<YYYYmmdd-HHMMSS>`.
std::string default_run_directory(const std::string& base, const std::string& corpus_path, const std::string& direction);

/// What start_recording() needs besides the run itself.
struct RecordingRequest {
  std::string db_path;           // empty = RunStore::default_path()
  std::string name;              // run name; empty = generated
  std::string resume_checkpoint; // non-empty: continue the run that wrote this checkpoint if it is known
  std::int64_t resume_step = 0;
  std::atomic<bool>* stop = nullptr;
  std::function<void(const std::string&)> log;  // where "run history: run N in DB" and problems go
};

/// Opens the run history and a recorder for this run (a new run, or the resumed one). When the
/// store cannot be used it says why through `request.log` and returns null: training goes on
/// unrecorded rather than not at all.
std::unique_ptr<RunRecorder> start_recording(const RecordingRequest& request, const ExperimentConfig& config,
                                             const Corpus& corpus, const Direction& direction, const std::string& out_dir);
/// The same for a run described by the caller (a language-model run, whose kind and config differ).
std::unique_ptr<RunRecorder> start_recording(const RecordingRequest& request, const NewRun& run);

/// "hostname (N cores)".
std::string machine_description();

}  // namespace ts
