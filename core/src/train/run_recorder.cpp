// Buffered, non-blocking recording of a training run (see ts/train/run_recorder.h).
#include "ts/train/run_recorder.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "ts/store/sha256.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void append(StoreBatch& into, StoreBatch& from) {
  into.metrics.insert(into.metrics.begin(), from.metrics.begin(), from.metrics.end());
  into.samples.insert(into.samples.begin(), from.samples.begin(), from.samples.end());
  into.checkpoints.insert(into.checkpoints.begin(), from.checkpoints.begin(), from.checkpoints.end());
  into.probes.insert(into.probes.begin(), from.probes.begin(), from.probes.end());
}

}  // namespace

std::string machine_description() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return fmt::format("{} ({} cores)", host, std::thread::hardware_concurrency());
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
  run.device = config.train.device;
  run.out_dir = fs::weakly_canonical(fs::absolute(out_dir)).string();
  run.config = config.to_json();
  run.name = name.empty() ? fmt::format("{} {} {}", fs::path(corpus.path).filename().string(), direction.str(), config.preset)
                          : name;
  return run;
}

RunRecorder::RunRecorder(const std::string& db_path, std::int64_t run_id, std::atomic<bool>* stop, RecorderOptions options)
    : run_id_(run_id), stop_(stop), options_(options) {
  // Lock first: opening the store marks unlocked "running" runs as interrupted.
  lock_ = std::make_unique<RunLock>(RunStore::lock_path_for(db_path, run_id));
  store_ = std::make_unique<RunStore>(db_path, options_.busy_timeout_ms);
  store_->claim_run(run_id);
  writer_ = std::thread([this] { writer_loop(); });
}

RunRecorder::~RunRecorder() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  wake_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (!finished_) {  // training never reported an end (it failed to start): say so rather than "interrupted"
    try {
      commit_pending();
      store_->finish_run(run_id_, "failed", "training ended before it could report (see the program's error)", steps_);
    } catch (const std::exception&) {
      // The store is unusable; the next open marks the run interrupted.
    }
  }
}

void RunRecorder::on_start(const TrainingStart& start) {
  std::lock_guard<std::mutex> lock(mutex_);
  device_ = start.device;
  steps_ = start.start_step;
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
  for (const auto& [name, value] : {std::pair<const char*, double>{"train_loss", p.loss}, {"lr", p.lr},
                                    {"tokens_per_s", p.tokens_per_s}})
    pending_.metrics.push_back({run_id_, p.step, name, value, p.elapsed_s});
}

void RunRecorder::on_validation(const ValidationResult& v) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (v.train_loss >= 0) {
    // A language model: its loss estimates on both splits (val as dev_loss), no BLEU.
    for (const auto& [name, value] : {std::pair<const char*, double>{"dev_loss", v.loss}, {"dev_ppl", v.perplexity},
                                      {"train_loss_estimate", v.train_loss}})
      pending_.metrics.push_back({run_id_, v.step, name, value, 0});
    return;
  }
  for (const auto& [name, value] : {std::pair<const char*, double>{"dev_loss", v.loss}, {"dev_ppl", v.perplexity},
                                    {"bleu", v.bleu}, {"chrf", v.chrf}})
    pending_.metrics.push_back({run_id_, v.step, name, value, 0});
  for (std::size_t i = 0; i < v.samples.size(); ++i)
    pending_.samples.push_back({run_id_, v.step, static_cast<int>(i), v.samples[i].source, v.samples[i].reference,
                                v.samples[i].hypothesis});
  if (v.probe.is_object()) pending_.probes.push_back({run_id_, v.step, v.probe});
  if (!best_bleu_ || v.bleu > *best_bleu_) best_bleu_ = v.bleu;
}

void RunRecorder::on_checkpoint(const CheckpointEvent& c) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.checkpoints.push_back({0, run_id_, c.step, c.kind, fs::weakly_canonical(fs::absolute(c.path)).string(), c.sha256,
                                  "", static_cast<std::int64_t>(c.bytes), c.metrics});
}

void RunRecorder::on_finished(const TrainingSummary& s) {
  finished_ = true;
  if (!flush()) {
    std::lock_guard<std::mutex> lock(mutex_);
    warnings_.push_back("the last metrics could not be stored; the run history ends at the previous commit");
  }
  try {
    store_->finish_run(run_id_, s.status, s.message, s.steps);
  } catch (const StoreError& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    warnings_.push_back(std::string("could not record how the run ended: ") + e.what());
  }
  report_warnings();
}

std::vector<std::string> RunRecorder::take_warnings() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(warnings_, {});
}

bool RunRecorder::flush() { return commit_pending(); }

bool RunRecorder::commit_pending() {
  std::lock_guard<std::mutex> commit(commit_mutex_);
  StoreBatch batch;
  std::int64_t steps;
  std::optional<double> best;
  std::string device;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::swap(batch, pending_);
    steps = steps_;
    best = best_bleu_;
    device = std::exchange(device_, "");
  }
  try {
    store_->write(batch);
    store_->update_progress(run_id_, steps, best);
    if (!device.empty()) store_->set_device(run_id_, device);
    std::lock_guard<std::mutex> lock(mutex_);
    if (failing_since_ >= 0) warnings_.push_back("the run database accepts writes again");
    failing_since_ = -1;
    return true;
  } catch (const StoreError& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    append(pending_, batch);  // keep the rows, oldest first, and retry next time
    if (!device.empty() && device_.empty()) device_ = device;
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
}

void RunRecorder::writer_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!closing_) {
    wake_.wait_for(lock, std::chrono::duration<double>(options_.flush_seconds));
    if (closing_) break;
    lock.unlock();
    commit_pending();
    lock.lock();
  }
}

std::string default_run_directory(const std::string& base, const std::string& corpus_path, const std::string& direction) {
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
                                             const Corpus& corpus, const Direction& direction, const std::string& out_dir) {
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
    auto recorder = std::make_unique<RunRecorder>(db, *id, request.stop);
    if (request.log) recorder->set_log(request.log);
    log(fmt::format("run history: run {} in {}", *id, db));
    return recorder;
  } catch (const std::exception& e) {
    log(fmt::format("run history unavailable ({}); training goes on without recording it", e.what()));
    return nullptr;
  }
}

}  // namespace ts
