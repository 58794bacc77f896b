// SPDX-License-Identifier: GPL-3.0-or-later
// Buffered, non-blocking recording of a training run (see ts/train/run_recorder.h).
#include "ts/train/run_recorder.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "ts/host/cpu.h"
#include "ts/store/fault.h"
#include "ts/store/recovery.h"
#include "ts/store/sha256.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string machine_description() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return fmt::format("{} ({} cores)", host, cpu_cores());
}

NewRun describe_new_run(const ExperimentConfig& config, const Corpus& corpus, const Direction& direction,
                        const std::string& out_dir, const std::string& name) {
  NewRun run;
  const bool on_disk = fs::is_regular_file(corpus.path);
  run.corpus_path = on_disk ? fs::weakly_canonical(fs::absolute(corpus.path)).string() : corpus.path;
  run.corpus_sha256 = on_disk ? sha256_file(corpus.path) : "";
  run.corpus_bytes = static_cast<std::int64_t>(corpus.stats.bytes);
  run.corpus_pairs = static_cast<std::int64_t>(corpus.pairs.size());
  run.direction = direction.str();
  run.preset = config.preset;
  run.machine = machine_description();
  run.device = device_choice_name(config.train.device);
  run.out_dir = fs::weakly_canonical(fs::absolute(out_dir)).string();
  run.config = config.to_json();
  run.name = name.empty()
                 ? fmt::format("{} {} {}", fs::path(corpus.path).filename().string(), direction.str(), config.preset)
                 : name;
  return run;
}

RunRecorder::RunRecorder(const std::string& db_path, std::int64_t run_id, std::atomic<bool>* stop,
                         RecorderOptions options)
    : run_id_(run_id), stop_(stop), options_(options), db_path_(db_path) {
  // Lock first: the writer closes unlocked "running" runs as interrupted (their process died), and
  // its own run must not be one of them.
  lock_ = std::make_unique<RunLock>(RunStore::lock_path_for(db_path, run_id));
  store_ = std::make_unique<RunStore>(db_path, options_.busy_timeout_ms);
  store_->claim_run(run_id);
  try {
    store_->mark_interrupted_runs();
  } catch (const StoreError&) {
    // Best effort: a busy store leaves them for the next writer; this run records all the same.
  }
  if (const auto run = store_->find_run(run_id)) {
    out_dir_ = run->out_dir;
    started_at_ = run->started_at;
  }
  pending_.run_id = run_id;
  writer_ = std::thread([this] { writer_loop(); });
}

RunRecorder::~RunRecorder() {
  stop_writer();
  if (!finished_) {  // training never reported an end (it failed to start): say so rather than "interrupted"
    TrainingSummary s;
    s.status = RunStatus::kFailed;
    s.message = "training ended before it could report (see the program's error)";
    {
      std::lock_guard<std::mutex> lock(mutex_);
      s.steps = steps_;
    }
    finish(s);
  }
}

void RunRecorder::stop_writer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  wake_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void RunRecorder::on_start(const TrainingStart& start) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.device = start.device;
  steps_ = start.start_step;
}

void RunRecorder::log(const std::string& line) {
  if (log_) log_(line);
}

void RunRecorder::report_warnings() {
  if (!log_) return;
  for (const auto& w : take_warnings()) log_("run history: " + w);
}

void RunRecorder::on_step(const TrainingProgress& p) {
  report_warnings();
  const double now = seconds_now();
  std::lock_guard<std::mutex> lock(mutex_);
  steps_ = p.step;
  if (!options_.record_every_step && now - last_step_record_ < options_.flush_seconds) return;
  last_step_record_ = now;
  for (const auto& [name, value] :
       {std::pair<const char*, double>{"train_loss", p.loss}, {"lr", p.lr}, {"tokens_per_s", p.tokens_per_s}})
    pending_.metrics.push_back({run_id_, p.step, name, value, p.elapsed_s});
}

void RunRecorder::on_validation(const ValidationResult& v) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (v.train_loss >= 0) {
    // A language model: its loss estimates on both splits (val as dev_loss), no BLEU.
    for (const auto& [name, value] : {std::pair<const char*, double>{"dev_loss", v.loss},
                                      {"dev_ppl", v.perplexity},
                                      {"train_loss_estimate", v.train_loss}})
      pending_.metrics.push_back({run_id_, v.step, name, value, 0});
    return;
  }
  if (v.probe.is_object()) pending_.probes.push_back({run_id_, v.step, v.probe});
  if (!v.scored) return;  // no dev pairs: nothing measured, so no BLEU of 0 in the history
  for (const auto& [name, value] : {std::pair<const char*, double>{"dev_loss", v.loss},
                                    {"dev_ppl", v.perplexity},
                                    {"bleu", v.bleu},
                                    {"chrf", v.chrf}})
    pending_.metrics.push_back({run_id_, v.step, name, value, 0});
  for (std::size_t i = 0; i < v.samples.size(); ++i)
    pending_.samples.push_back(
        {run_id_, v.step, static_cast<int>(i), v.samples[i].source, v.samples[i].reference, v.samples[i].hypothesis});
  if (!best_bleu_ || v.bleu > *best_bleu_) best_bleu_ = v.bleu;
}

void RunRecorder::on_checkpoint(const CheckpointEvent& c) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.checkpoints.push_back({0, run_id_, c.step, checkpoint_kind_name(c.kind),
                                  fs::weakly_canonical(fs::absolute(c.path)).string(), c.sha256, "",
                                  static_cast<std::int64_t>(c.bytes), c.metrics});
}

void RunRecorder::on_finished(const TrainingSummary& s) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
  }
  stop_writer();
  finish(s);
}

// The end of a run: everything held and the final status in one transaction; if the store refuses,
// a recovery file first (so that nothing depends on what happens next), then retries for up to
// give_up_seconds, saying so.
void RunRecorder::finish(const TrainingSummary& s) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
    pending_.end = RunEnd{s.status, s.message, s.steps, utc_now()};
    steps_ = s.steps;
  }
  // Fault injection (tests/cli/fault_test.sh): another connection takes the write lock right now.
  std::unique_ptr<WriteLockHolder> fault_lock;
  const auto fault = fault_action("store.finish");
  if (!fault.empty()) {
    try {
      fault_lock = std::make_unique<WriteLockHolder>(db_path_);
    } catch (const StoreError& e) {
      log(std::string("run history: fault injection could not take the write lock: ") + e.what());
    }
  }
  std::string error;
  if (commit_pending(&error)) {
    report_warnings();
    return;
  }
  report_warnings();
  const double start = seconds_now();
  std::size_t rows = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    rows = pending_.rows();
  }
  const bool saved = save_recovery(error);
  // Says it in the log, and to the wait observer as a typed event.
  const auto tell = [&](HistoryWaitState state, bool in_recovery_file, const std::string& words) {
    log(words);
    if (!on_wait_) return;
    HistoryWait w;
    w.words = words;
    w.state = state;
    w.seconds = seconds_now() - start;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      w.problem = last_problem_;
    }
    w.in_recovery_file = in_recovery_file;
    on_wait_(w);
  };
  tell(
      HistoryWaitState::kWaiting, saved,
      fmt::format("run history: waiting up to {:.0f} s for the run database to store the last {} row{} and how the run "
                  "ended: {}{}",
                  options_.give_up_seconds, rows, rows == 1 ? "" : "s", error,
                  saved ? fmt::format(". Meanwhile they are safe in {}", recovery_path_) : std::string()));
  if (fault == "busy") fault_lock.reset();  // the other writer lets go once the recorder has said it waits
  double delay = 0.05, next_note = 10;
  while (true) {
    const double waited = seconds_now() - start;
    if (waited >= options_.give_up_seconds) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(delay, options_.give_up_seconds - waited)));
    delay = std::min(delay * 2, 1.0);
    if (commit_pending(&error)) {
      report_warnings();
      tell(HistoryWaitState::kStoredAfterWaiting, false,
           fmt::format("run history: stored after waiting {:.1f} s", seconds_now() - start));
      return;
    }
    if (seconds_now() - start >= next_note) {
      tell(HistoryWaitState::kWaiting, saved,
           fmt::format("run history: waiting for the run database: {:.0f} s of {:.0f} s ({})", seconds_now() - start,
                       options_.give_up_seconds, error));
      next_note += 10;
    }
  }
  fault_lock.reset();
  const bool kept = saved || save_recovery(error);
  tell(HistoryWaitState::kGaveUp, kept,
       kept ? fmt::format(
                  "run history: gave up waiting after {:.0f} s; the last {} row{} and how the run ended are kept "
                  "in {}, which the next program to write to {} imports",
                  seconds_now() - start, rows, rows == 1 ? "" : "s", recovery_path_, db_path_)
            : fmt::format("run history: gave up waiting after {:.0f} s, and no recovery file could be written: the run "
                          "history ends at the last commit (the checkpoints in {} are complete)",
                          seconds_now() - start, out_dir_.empty() ? std::string("the run directory") : out_dir_));
}

std::vector<std::string> RunRecorder::take_warnings() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(warnings_, {});
}

std::string RunRecorder::recovery_file() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recovery_path_;
}

bool RunRecorder::flush() { return commit_pending(); }

// Writes the rows held now (and the end, if set) to the first recovery path that takes them.
bool RunRecorder::save_recovery(const std::string& reason) {
  RecoveryFile file;
  file.database = db_path_;
  file.run_id = run_id_;
  file.run_started_at = started_at_;
  file.written_at = utc_now();
  file.reason = reason;
  std::string previous;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    file.batch = pending_;
    file.batch.steps = steps_;
    file.batch.best_bleu = best_bleu_;
    previous = recovery_path_;
  }
  std::vector<std::string> problems;
  for (const auto& path : RunStore::recovery_paths_for(db_path_, run_id_, out_dir_)) {
    try {
      write_recovery_file(path, file);
    } catch (const std::exception& e) {
      problems.push_back(e.what());
      continue;
    }
    std::error_code ec;
    if (!previous.empty() && previous != path) fs::remove(previous, ec);
    std::lock_guard<std::mutex> lock(mutex_);
    recovery_path_ = path;
    last_recovery_save_ = seconds_now();
    return true;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  last_recovery_save_ = seconds_now();
  for (const auto& p : problems) warnings_.push_back("could not write a recovery file: " + p);
  return false;
}

bool RunRecorder::commit_pending(std::string* error) {
  std::lock_guard<std::mutex> commit(commit_mutex_);
  StoreBatch batch;
  std::string recovery;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::swap(batch, pending_);
    pending_.run_id = run_id_;
    batch.run_id = run_id_;
    batch.steps = steps_;
    batch.best_bleu = best_bleu_;
    recovery = recovery_path_;
  }
  try {
    store_->write(batch);
  } catch (const StoreError& e) {
    if (error) *error = e.what();
    std::lock_guard<std::mutex> lock(mutex_);
    last_problem_ = e.problem();
    batch.append(std::move(pending_));  // keep the rows, oldest first, and retry next time
    pending_ = std::move(batch);
    if (finished_) return false;  // the end of the run says itself that it waits
    const double now = seconds_now();
    if (failing_since_ < 0) {
      failing_since_ = now;
      warnings_.push_back(std::string(e.what()) + "; training goes on and storing will be retried");
    } else if (now - failing_since_ > options_.give_up_seconds && stop_ && !stop_->load()) {
      warnings_.push_back(fmt::format("the run database has refused writes for {:.0f} s: stopping training cleanly",
                                      now - failing_since_));
      stop_->store(true);
    }
    return false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (failing_since_ >= 0) warnings_.push_back("the run database accepts writes again");
  failing_since_ = -1;
  if (!recovery.empty()) {  // everything it held is in the store now
    std::error_code ec;
    fs::remove(recovery, ec);
    if (recovery_path_ == recovery) recovery_path_.clear();
  }
  return true;
}

void RunRecorder::writer_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!closing_) {
    wake_.wait_for(lock, std::chrono::duration<double>(options_.flush_seconds));
    if (closing_) break;
    lock.unlock();
    std::string error;
    const bool ok = commit_pending(&error);
    lock.lock();
    // A store that has refused for a while: what is held is saved to disk too, in case the process dies.
    const double now = seconds_now();
    if (!ok && failing_since_ >= 0 && now - failing_since_ >= options_.recovery_every_seconds &&
        now - last_recovery_save_ >= options_.recovery_every_seconds) {
      lock.unlock();
      save_recovery(error);
      lock.lock();
    }
  }
}

std::string default_run_directory(const std::string& base, const std::string& corpus_path,
                                  const std::string& direction) {
  const auto stamp = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::tm local{};
  localtime_r(&stamp, &local);
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &local);
  std::string stem = std::filesystem::path(corpus_path).stem().string();
  if (stem.empty() || corpus_path == "<demo>") stem = "demo";
  return (std::filesystem::path(base) / fmt::format("{}-{}-{}", stem, direction, buf)).string();
}

std::unique_ptr<RunRecorder> start_recording(const RecordingRequest& request, const ExperimentConfig& config,
                                             const Corpus& corpus, const Direction& direction,
                                             const std::string& out_dir) {
  return start_recording(request, describe_new_run(config, corpus, direction, out_dir, request.name));
}

std::unique_ptr<RunRecorder> start_recording(const RecordingRequest& request, const NewRun& run) {
  const auto log = [&](const std::string& line) {
    if (request.log) request.log(line);
  };
  const std::string db = request.db_path.empty() ? RunStore::default_path() : request.db_path;
  try {
    RunStore store(db);
    std::optional<std::int64_t> id;
    if (!request.resume_checkpoint.empty()) id = store.find_run_by_path(request.resume_checkpoint);
    if (id) {
      store.reopen_run(*id, request.resume_step);
    } else {
      id = store.create_run(run);
    }
    RecorderOptions options;
    options.give_up_seconds = request.give_up_seconds;
    auto recorder = std::make_unique<RunRecorder>(db, *id, request.stop, options);
    if (request.log) recorder->set_log(request.log);
    if (request.on_wait) recorder->set_wait_observer(request.on_wait);
    log(fmt::format("run history: run {} in {}", *id, db));
    return recorder;
  } catch (const std::exception& e) {
    log(fmt::format("run history unavailable ({}); training goes on without recording it", e.what()));
    return nullptr;
  }
}

}  // namespace ts
