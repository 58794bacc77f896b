// SPDX-License-Identifier: GPL-3.0-or-later
// One training session (see ts/train/session.h).
#include "ts/train/session.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/cuda.h>

#include "ts/text/numbers.h"
#include "ts/text/probe_sentence.h"
#include "ts/train/checkpoint.h"
#include "ts/train/trainer.h"

namespace ts {

namespace fs = std::filesystem;

const char* phase_words(SessionPhase phase) {
  switch (phase) {
    case SessionPhase::kFittingRecipe:
      return "fitting the recipe to this machine";
    case SessionPhase::kPreparingData:
      return "preparing the data";
    case SessionPhase::kConnecting:
      return "connecting the data-parallel ranks";
    case SessionPhase::kStartingHistory:
      return "opening the run history";
    case SessionPhase::kTraining:
      return "training";
  }
  return "";
}

const char* checkpoint_kind_name(CheckpointKind kind) {
  switch (kind) {
    case CheckpointKind::kBest:
      return "best";
    case CheckpointKind::kStep:
      return "step";
    case CheckpointKind::kLast:
      break;
  }
  return "last";
}

CheckpointKind parse_checkpoint_kind(const std::string& name) {
  for (auto kind : {CheckpointKind::kLast, CheckpointKind::kBest, CheckpointKind::kStep})
    if (name == checkpoint_kind_name(kind)) return kind;
  throw std::invalid_argument("unknown checkpoint kind \"" + name + "\" (expected last, best or step)");
}

namespace {

// The events a rank other than 0 passes on: the trainer reports only its finish there, and the
// session's own words are rank 0's to say.
class RankFilter : public SessionObserver {
 public:
  RankFilter(SessionObserver* next, bool root) : next_(next), root_(root) {}
  void on_start(const TrainingStart& e) override {
    if (root_) next_->on_start(e);
  }
  void on_step(const TrainingProgress& e) override {
    if (root_) next_->on_step(e);
  }
  void on_validation(const ValidationResult& e) override {
    if (root_) next_->on_validation(e);
  }
  void on_checkpoint(const CheckpointEvent& e) override {
    if (root_) next_->on_checkpoint(e);
  }
  void on_log(const std::string& e) override {
    if (root_) next_->on_log(e);
  }
  void on_finished(const TrainingSummary& e) override { next_->on_finished(e); }
  void on_phase(SessionPhase p) override {
    if (root_) next_->on_phase(p);
  }
  void on_recipe_fitted(const AutoFit& fit) override {
    if (root_) next_->on_recipe_fitted(fit);
  }
  void on_run_recorded(std::int64_t id) override {
    if (root_) next_->on_run_recorded(id);
  }
  void on_history_wait(const HistoryWait& w) override {
    if (root_) next_->on_history_wait(w);
  }

 private:
  SessionObserver* next_;
  bool root_;
};

std::string threads_words(int threads) {
  return threads > 0 ? fmt::format("{} thread{}", threads, threads > 1 ? "s" : "") : std::string("all cores");
}

}  // namespace

void write_run_config(const std::string& out_dir, const nlohmann::json& config) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot create the run directory: {}", out_dir, ec.message()));
  const auto path = (fs::path(out_dir) / "config.json").string();
  std::ofstream file(path);
  file << config.dump(2) << "\n";
  file.close();
  if (!file) throw std::runtime_error(path + ": cannot write the run's configuration");
}

namespace {

// The recipe's passes over the training pairs, counted again once the pairs are encoded: it
// estimated the target tokens from characters before any tokenizer was trained.
std::string encoded_passes_line(const AutoFit& fit, const std::vector<Example>& train) {
  double tokens = 0;
  for (const auto& e : train) tokens += static_cast<double>(e.tgt.size() + 1);  // with the end of sentence
  const double passes = fit.budget_target_tokens / tokens;
  return fmt::format(
      "passes: the {} training pairs encode to {} target tokens ({:.1f} a sentence), so the {:.1f} million the "
      "recipe's estimated speed buys in the budget are about {:.1f} passes (it estimated {:.1f} from characters, "
      "and chose its regularisation by that)",
      thousands(train.size()), thousands(tokens), tokens / static_cast<double>(train.size()),
      fit.budget_target_tokens / 1e6, passes, fit.estimated_passes);
}

}  // namespace

struct TrainingSession::State {
  SessionRequest request;
  SessionObserver none;
  RankFilter events;
  std::int64_t start_step = 0;
  bool ran = false;
  AutoFit fit;  // the recipe's fit, when this session fitted one
  std::unique_ptr<RunRecorder> recorder;
  std::optional<ObserverList> observers;  // what the trainer reports to: the caller's observer and the recorder
  std::unique_ptr<Trainer> trainer;

  State(SessionRequest r, SessionObserver* observer)
      : request(std::move(r)),
        events(observer ? observer : &none, !request.distributed || request.distributed->rank == 0) {}
  bool root() const { return !request.distributed || request.distributed->rank == 0; }
  void log(const std::string& line) { events.on_log(line); }

  void fit_recipe(DataParallel* parallel);
  std::shared_ptr<DataParallel> connect();
};

// The `auto` preset fitted to this corpus, direction, budget and machine, with the person's own
// settings kept. Data-parallel ranks (`parallel`, connected) time their data-parallel steps together and
// all fit to rank 0's figure for the whole group (or to a given --machine-speed): every rank must train
// the same model, and timings differ from process to process.
void TrainingSession::State::fit_recipe(DataParallel* parallel) {
  auto& r = request;
  events.on_phase(SessionPhase::kFittingRecipe);
  const bool given = r.machine_speed > 0;
  const bool measure = !given;
  AutoFit fit;
  if (!given && !parallel && r.fitted && r.fitted->ok() && r.fitted->measured == measure &&
      r.fitted->key == auto_fit_key(*r.corpus, r.direction, r.config))
    fit = *r.fitted;
  else
    fit = fit_auto(*r.corpus, r.direction, r.config, measure, r.machine_speed, given ? nullptr : parallel);
  if (!fit.ok()) throw std::runtime_error("the auto preset could not be fitted to this corpus: " + fit.error);
  r.config = r.keep_own_settings ? r.keep_own_settings(fit) : fit.config;
  this->fit = fit;
  r.config.preset = "auto";
  const double budget = r.config.train.budget_minutes;
  log(fmt::format(
      "recipe auto, fitted for {}{}{}:", budget > 0 ? minutes_text(budget) : std::string("a run until stopped"),
      fit.machine.empty() ? std::string() : " on " + fit.machine,
      r.recipe_note.empty() ? std::string() : " (" + r.recipe_note + ")"));
  for (const auto& reason : fit.reasons) log("  " + reason);
  r.config.validate();
  events.on_recipe_fitted(fit);  // a fit that trains: its configuration is valid
}

std::shared_ptr<DataParallel> TrainingSession::State::connect() {
  const auto& d = *request.distributed;
  events.on_phase(SessionPhase::kConnecting);
  auto device = resolve_device(request.config.train.device);
  if (device.is_cuda() && torch::cuda::device_count() > 1)  // one GPU per rank on a machine
    device = at::Device(at::kCUDA, static_cast<at::DeviceIndex>(d.rank % torch::cuda::device_count()));
  auto parallel = std::make_shared<DataParallel>();
  parallel->connect(d, device);
  const auto threads = threads_words(request.config.train.threads);
  if (request.ranks_on_this_machine)
    log(fmt::format("data-parallel: {} processes ({}), {} each", d.world_size, parallel->backend(), threads));
  else
    log(fmt::format("data-parallel: rank 0 of {} ({}), rendezvous {}:{}, {}", d.world_size, parallel->backend(),
                    d.master_addr, d.master_port, threads));
  return parallel;
}

TrainingSession::TrainingSession(SessionRequest request, SessionObserver* observer)
    : s_(std::make_unique<State>(std::move(request), observer)) {
  if (!s_->request.corpus) throw std::invalid_argument("a training session needs a corpus");
}

TrainingSession::~TrainingSession() = default;

TrainingSummary TrainingSession::run() {
  if (s_->ran) throw std::logic_error("a training session runs once");
  s_->ran = true;
  auto& r = s_->request;
  const auto log = [this](const std::string& line) { s_->log(line); };
  log(describe(*r.corpus));
  // Data-parallel ranks connect first where the recipe is measured: they time their steps together.
  std::shared_ptr<DataParallel> parallel;
  if (r.distributed && r.fit_recipe && r.resume_checkpoint.empty() && !(r.machine_speed > 0)) parallel = s_->connect();
  if (r.fit_recipe) {
    if (!r.resume_checkpoint.empty())
      throw std::invalid_argument("a resumed run keeps its recipe: it is not fitted again");
    s_->fit_recipe(parallel.get());
  }
  r.config.validate();

  LoadedModel previous;
  const TextPipeline* existing = nullptr;
  if (!r.resume_checkpoint.empty()) {
    previous = load_checkpoint(r.resume_checkpoint, at::Device(at::kCPU));
    existing = &previous.pipeline;
    s_->start_step = previous.meta.position.step;
  }
  s_->events.on_phase(SessionPhase::kPreparingData);
  auto data = prepare_data(*r.corpus, r.direction, r.config.data, existing, log);
  previous.model = Transformer{nullptr};  // the trainer reloads the checkpoint; free this copy now
  if (s_->fit.budget_target_tokens > 0 && !data.train.empty()) log(encoded_passes_line(s_->fit, data.train));
  if (r.pick_probe && r.config.train.probe.empty() && r.resume_checkpoint.empty()) {
    r.config.train.probe = pick_probe_sentence(data.text.dev.empty() ? data.text.train : data.text.dev);
    if (!r.config.train.probe.empty())
      log(
          fmt::format("probe sentence: \"{}\", picked from the {} split (6 to 12 words); its attention is recorded at "
                      "every validation (set train.probe to choose another)",
                      r.config.train.probe, data.text.dev.empty() ? "training" : "dev"));
  }

  if (r.distributed && !parallel) parallel = s_->connect();
  if (s_->root()) write_run_config(r.out_dir, r.config.to_json());
  log(fmt::format("run directory: {} (preset {})", r.out_dir, r.config.preset));

  std::vector<TrainingObserver*> observers{&s_->events};
  if (r.record && s_->root()) {
    s_->events.on_phase(SessionPhase::kStartingHistory);
    RecordingRequest recording{r.history_db, r.run_name, r.resume_checkpoint,   s_->start_step,
                               r.stop,       log,        r.history_wait_seconds};
    recording.on_wait = [this](const HistoryWait& w) { s_->events.on_history_wait(w); };
    s_->recorder = start_recording(recording, r.config, *r.corpus, r.direction, r.out_dir);
    if (s_->recorder) {
      s_->events.on_run_recorded(s_->recorder->run_id());
      observers.push_back(s_->recorder.get());
    }
  }
  s_->observers.emplace(observers);

  TrainerOptions options{r.out_dir, r.corpus_path.empty() ? r.corpus->path : r.corpus_path, r.resume_checkpoint, r.stop,
                         r.pause};
  options.parallel = parallel;
  options.budget_start = r.budget_start;
  options.between_steps = r.between_steps;
  s_->events.on_phase(SessionPhase::kTraining);
  s_->trainer = std::make_unique<Trainer>(r.config, std::move(data), options, &*s_->observers);
  return s_->trainer->run();
}

const ExperimentConfig& TrainingSession::config() const { return s_->request.config; }
Trainer* TrainingSession::trainer() { return s_->trainer.get(); }
std::int64_t TrainingSession::start_step() const { return s_->start_step; }
bool TrainingSession::is_root() const { return s_->root(); }

}  // namespace ts
