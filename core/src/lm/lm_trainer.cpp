// SPDX-License-Identifier: GPL-3.0-or-later
// Language-model training (see ts/lm/lm_trainer.h).
#include "ts/lm/lm_trainer.h"

#include <chrono>
#include <cmath>
#include <filesystem>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/optim/adamw.h>

#include "ts/model/errors.h"
#include "ts/model/mode_guard.h"
#include "ts/model/precision.h"
#include "ts/model/size.h"
#include "ts/store/sha256.h"
#include "ts/train/checkpoint.h"
#include "ts/train/loop.h"
#include "ts/train/optimizer.h"
#include "ts/lm/lm_export.h"
#include "ts/train/run_recorder.h"
#include "ts/train/trainer.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw CheckpointError(path + ": " + what); }

nlohmann::json meta_to_json(const LmCheckpointMeta& m) {
  return {
      {"kind", "lm"},
      {"format", 1},
      {"config", m.config.to_json()},
      {"codec", m.codec.to_json()},
      {"text", m.text_path},
      {"position",
       {{"step", m.step}, {"elapsed_seconds", m.elapsed_seconds}, {"best_val", m.best_val}, {"has_best", m.has_best}}},
      {"metrics", m.metrics}};
}

LmCheckpointMeta meta_from_json(const nlohmann::json& j, const std::string& path) {
  if (j.value("kind", "") != "lm") fail(path, "is a translation checkpoint, not a language model (use translate)");
  try {
    // Typed reads: get<std::int64_t>() on 1e300 is undefined behaviour, and a matching checksum
    // proves the file intact, not its metadata sane.
    const auto integer = [](const nlohmann::json& v, const char* key) {
      if (!v.at(key).is_number_integer()) throw std::invalid_argument(std::string(key) + ": expected an integer");
      return v.at(key).get<std::int64_t>();
    };
    const auto number = [](const nlohmann::json& v, const char* key) {
      if (!v.at(key).is_number()) throw std::invalid_argument(std::string(key) + ": expected a number");
      return v.at(key).get<double>();
    };
    if (integer(j, "format") != 1)
      fail(path, "language-model checkpoint format " + j.at("format").dump() + " is newer than this program");
    LmCheckpointMeta m;
    m.config = LmConfig::from_json(j.at("config"));
    m.codec = LmCodec::from_json(j.at("codec"));
    m.text_path = j.value("text", "");
    const auto& p = j.at("position");
    m.step = integer(p, "step");
    if (m.step < 0) throw std::invalid_argument("step: negative");
    m.elapsed_seconds = number(p, "elapsed_seconds");
    m.best_val = number(p, "best_val");
    if (!p.at("has_best").is_boolean()) throw std::invalid_argument("has_best: expected true or false");
    m.has_best = p.at("has_best").get<bool>();
    m.metrics = j.value("metrics", nlohmann::json::object());
    return m;
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    fail(path, std::string("damaged checkpoint metadata: ") + e.what());
  }
}

}  // namespace

LmCheckpointMeta read_lm_checkpoint_meta(const std::string& path) {
  if (is_model_folder(path))
    fail(path,
         "is an exported model folder: it holds the weights only, no optimizer state to resume from "
         "(resume from the run's last.ckpt)");
  return meta_from_json(CheckpointFile::open(path).meta(), path);
}

LoadedLanguageModel load_lm_checkpoint(const std::string& path, const at::Device& device) {
  if (is_model_folder(path)) return import_language_model(path, device);
  const auto file = CheckpointFile::open(path);
  LoadedLanguageModel loaded;
  loaded.meta = meta_from_json(file.meta(), path);
  try {
    loaded.model =
        build_language_model(loaded.meta.config, static_cast<std::int64_t>(loaded.meta.codec.vocab().size()));
    loaded.model->to(device);
    file.load_module(*loaded.model, "model.");
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    fail(path, "cannot rebuild the language model: " + error_message(e));
  }
  loaded.model->eval();
  return loaded;
}

// What a language-model trainer holds; it is the language model's LoopBody: run_training_loop
// (ts/train/loop.h) drives it step by step.
struct LmTrainer::State final : LoopBody {
  LmTrainer* trainer = nullptr;
  LmConfig config;
  LmData data;
  LmTrainerOptions options;
  TrainingObserver* observer = nullptr;
  at::Device device{at::kCPU};
  int threads = 1;
  LanguageModel model;
  std::unique_ptr<torch::optim::AdamW> optimizer;
  at::Generator batch_generator;  // training batches only; estimates draw from their own
  std::int64_t at_step = 0;
  double elapsed = 0;  // training seconds, earlier sessions included
  double best_val = 0;
  bool has_best = false;
  nlohmann::json metrics = nlohmann::json::object();
  std::vector<double> step_losses;
  std::int64_t last_saved_step = -1;

  // The current session (one call of run()): training seconds (pauses and validation left out)
  // and steps, the smoothed loss, the summary being filled in.
  TrainingSummary summary;
  double elapsed_before = 0, session_train_seconds = 0, smoothed = -1;
  std::int64_t session_steps = 0;
  at::Tensor loss;  // the current step's, between forward_backward and update

  double tokens_per_step() const { return static_cast<double>(config.batch_size) * config.block_size; }

  void log(const std::string& line) override {
    if (observer) observer->on_log(line);
  }

  // LoopBody.
  std::int64_t step() const override { return at_step; }
  std::optional<LoopEnd> limit_reached() override {
    if (options.stop && options.stop->load()) return stopped_by_request();
    if (config.max_minutes > 0 && session_train_seconds >= config.max_minutes * 60)
      return reached_max_minutes(config.max_minutes);
    if (at_step >= config.max_steps) return reached_max_steps(config.max_steps);
    return std::nullopt;
  }
  StepLoss forward_backward() override {
    auto [x, y] = sample_batch(data.train, config.batch_size, config.block_size, batch_generator);
    {
      AutocastScope autocast(config.precision, device);
      loss = model->loss(x.to(device), y.to(device));
    }
    // The update waits for the loop's verdict on a non-finite loss: weights and checkpoints stay good.
    optimizer->zero_grad();
    loss.backward();
    return {loss.item<double>(), static_cast<std::int64_t>(tokens_per_step())};
  }
  bool update() override {
    if (!fused_adam_step(*optimizer)) optimizer->step();  // the translation trainer's fused AdamW
    ++at_step;
    ++session_steps;
    return true;
  }
  void stepped(const StepLoss& l, double seconds) override;
  std::optional<LoopEnd> validate_if_due() override;
  void between_steps() override {
    if (options.between_steps) options.between_steps(*trainer);
  }
  void finish(const LoopEnd&) override {
    if (options.write_checkpoints && last_saved_step != at_step) summary.last_checkpoint = save(CheckpointKind::kLast);
  }

  LmCheckpointMeta meta() const {
    LmCheckpointMeta m;
    m.config = config;
    m.codec = data.codec;
    m.text_path = options.text_path;
    m.step = at_step;
    m.elapsed_seconds = elapsed;
    m.best_val = best_val;
    m.has_best = has_best;
    m.metrics = metrics;
    return m;
  }

  std::string save(CheckpointKind kind) {
    const auto path = (fs::path(options.out_dir) / (std::string(checkpoint_kind_name(kind)) + ".ckpt")).string();
    NamedTensors tensors;
    append_module_state(tensors, "model.", *model);
    append_optimizer_state(tensors, "optimizer.", *optimizer);
    append_dropout_generators(tensors, device);
    append_generator_state(tensors, "rng.batch", batch_generator);
    const auto header = write_checkpoint_file(path, meta_to_json(meta()), tensors);
    if (observer) {
      CheckpointEvent e;
      e.path = path;
      e.kind = kind;
      e.step = at_step;
      e.sha256 = header.sha256;
      e.bytes = header.header_bytes + header.payload_bytes;
      e.metrics = metrics;
      observer->on_checkpoint(e);
    }
    if (kind == CheckpointKind::kLast) last_saved_step = at_step;
    return path;
  }

  void resume(const std::string& path) {
    const auto file = CheckpointFile::open(path);
    const auto m = meta_from_json(file.meta(), path);
    if (!(m.codec.vocab() == data.codec.vocab()))
      fail(path, "its vocabulary differs from the prepared text's (prepare the text with the checkpoint's codec)");
    file.load_module(*model, "model.");
    if (!file.contains("rng.cpu")) fail(path, "holds no optimizer state");
    file.load_optimizer(*optimizer, "optimizer.");
    file.load_dropout_generators(device);
    file.load_generator(batch_generator, "rng.batch");
    at_step = m.step;
    elapsed = m.elapsed_seconds;
    best_val = m.best_val;
    has_best = m.has_best;
    metrics = m.metrics;
    last_saved_step = at_step;
  }
};

LmTrainer::LmTrainer(LmConfig config, LmData data, LmTrainerOptions options, TrainingObserver* observer)
    : s_(std::make_unique<State>()) {
  config.validate();
  s_->trainer = this;
  s_->config = std::move(config);
  s_->data = std::move(data);
  s_->options = std::move(options);
  s_->observer = observer;
  const auto& c = s_->config;
  s_->device = resolve_device(c.device);
  s_->threads = configure_threads(c.threads);
  check_precision(c.precision, s_->device);
  at::manual_seed(c.seed);
  const auto vocab = static_cast<std::int64_t>(s_->data.codec.vocab().size());
  if (s_->device.is_cpu()) {
    // Weights, gradients and two AdamW moments, and one batch's activations: per token and layer
    // about 16 vectors of width D, the 4D-wide feed-forward twice, and the attention probabilities.
    const double tokens = static_cast<double>(c.batch_size) * c.block_size;
    const double per_token =
        c.n_layer * (16.0 * c.n_embd + 8.0 * c.n_embd + 2.0 * c.n_head * c.block_size) + 3.0 * vocab;
    check_memory(16.0 * static_cast<double>(c.parameter_estimate(vocab)) + 4.0 * tokens * per_token,
                 "training this language model (weights, gradients, AdamW moments and one batch)",
                 "make n_embd, n_layer, block_size or batch_size smaller");
  }
  s_->model = build_language_model(c, vocab);
  s_->model->to(s_->device);
  s_->optimizer = std::make_unique<torch::optim::AdamW>(s_->model->parameters(),
                                                        torch::optim::AdamWOptions(c.lr).weight_decay(c.weight_decay));
  s_->batch_generator = at::make_generator<at::CPUGeneratorImpl>(c.seed);
  if (!s_->options.resume_checkpoint.empty()) s_->resume(s_->options.resume_checkpoint);
}

LmTrainer::~LmTrainer() = default;

LanguageModel& LmTrainer::model() { return s_->model; }
const LmData& LmTrainer::data() const { return s_->data; }
const LmConfig& LmTrainer::config() const { return s_->config; }
std::int64_t LmTrainer::step() const { return s_->at_step; }
const std::vector<double>& LmTrainer::step_losses() const { return s_->step_losses; }

std::pair<double, double> LmTrainer::estimate_loss() {
  const auto& c = s_->config;
  const EvalModeGuard eval(*s_->model);
  torch::NoGradGuard no_grad;
  AutocastScope autocast(c.precision, s_->device);
  // Seeded by (seed, step): the estimate neither consumes training batches nor changes on resume.
  auto generator = at::make_generator<at::CPUGeneratorImpl>(c.seed * 0x9E3779B97F4A7C15ULL +
                                                            static_cast<std::uint64_t>(s_->at_step) + 1);
  double result[2] = {0, 0};
  const at::Tensor* splits[2] = {&s_->data.train, &s_->data.val};
  for (int split = 0; split < 2; ++split) {
    double sum = 0;
    for (int i = 0; i < c.eval_iters; ++i) {
      auto [x, y] = sample_batch(*splits[split], c.batch_size, c.block_size, generator);
      sum += s_->model->loss(x.to(s_->device), y.to(s_->device)).item<double>();
    }
    result[split] = sum / c.eval_iters;
  }
  return {result[0], result[1]};
}

void LmTrainer::State::stepped(const StepLoss& l, double seconds) {
  step_losses.push_back(l.loss);
  session_train_seconds += seconds;
  elapsed = elapsed_before + session_train_seconds;
  smoothed = smooth_loss(smoothed, l.loss, session_steps == 1);
  if (!observer) return;
  TrainingProgress p;
  p.step = at_step;
  p.loss = l.loss;
  p.smoothed_loss = smoothed;
  p.lr = config.lr;
  p.tokens_per_s = seconds > 0 ? tokens_per_step() / seconds : 0;
  p.average_tokens_per_s = session_train_seconds > 0 ? tokens_per_step() * session_steps / session_train_seconds : 0;
  p.elapsed_s = elapsed;
  p.fraction = config.max_steps > 0 ? static_cast<double>(at_step) / config.max_steps : -1;
  if (p.fraction > 0 && session_steps > 0)
    p.eta_s = session_train_seconds / session_steps * static_cast<double>(config.max_steps - at_step);
  observer->on_step(p);
}

// Every eval_interval steps and at max_steps: train and val loss estimated, last.ckpt and, when
// the val loss improved, best.ckpt.
std::optional<LoopEnd> LmTrainer::State::validate_if_due() {
  if (at_step % config.eval_interval != 0 && at_step != config.max_steps) return std::nullopt;
  const auto e0 = Clock::now();
  const auto [train_loss, val_loss] = trainer->estimate_loss();
  ValidationResult v;
  v.step = at_step;
  v.loss = val_loss;
  v.train_loss = train_loss;
  v.perplexity = std::exp(val_loss);
  v.improved = !has_best || val_loss < best_val;
  if (v.improved) {
    best_val = val_loss;
    has_best = true;
  }
  metrics = {{"step", at_step}, {"train_loss", train_loss}, {"val_loss", val_loss}};
  v.seconds = std::chrono::duration<double>(Clock::now() - e0).count();
  summary.validated = true;
  summary.last_validation = v;
  if (observer) observer->on_validation(v);
  if (options.write_checkpoints) {
    summary.last_checkpoint = save(CheckpointKind::kLast);
    if (v.improved) summary.best_checkpoint = save(CheckpointKind::kBest);
  }
  return std::nullopt;
}

TrainingSummary LmTrainer::run() {
  auto& s = *s_;
  s.summary = TrainingSummary{};
  if (s.observer) {
    TrainingStart start;
    start.parameters = s.model->parameter_count();
    start.device = s.device.str();
    start.threads = s.threads;
    start.train_pairs = static_cast<std::size_t>(s.data.train.numel());  // tokens, for a language model
    start.dev_pairs = static_cast<std::size_t>(s.data.val.numel());
    start.start_step = s.at_step;
    s.observer->on_start(start);
  }
  const auto session_start = Clock::now();
  s.elapsed_before = s.elapsed;
  s.session_train_seconds = 0;
  s.session_steps = 0;
  s.smoothed = -1;
  s.model->train();
  LoopControls controls;
  controls.pause = s.options.pause;
  controls.stop = s.options.stop;
  controls.on_nonfinite = NonFinitePolicy::Fail;  // a language model has no skip option
  const auto end = run_training_loop(s, controls);
  auto& summary = s.summary;
  if (end.status == RunStatus::kFailed) s.log("training failed: " + end.message);
  summary.status = end.status;
  summary.message = end.message;
  summary.steps = s.at_step;
  summary.seconds = std::chrono::duration<double>(Clock::now() - session_start).count();
  summary.average_tokens_per_s =
      s.session_train_seconds > 0 ? s.tokens_per_step() * s.session_steps / s.session_train_seconds : 0;
  if (summary.best_checkpoint.empty() && s.has_best && s.options.write_checkpoints) {
    const auto best = fs::path(s.options.out_dir) / "best.ckpt";
    if (fs::exists(best)) summary.best_checkpoint = best.string();
  }
  if (s.observer) s.observer->on_finished(summary);
  return summary;
}

NewRun describe_lm_run(const LmConfig& config, const LmData& data, const std::string& text_path,
                       const std::string& out_dir, const std::string& name) {
  NewRun run;
  run.kind = RunKind::kLanguageModel;
  const bool on_disk = fs::is_regular_file(text_path);
  run.corpus_path = on_disk ? fs::weakly_canonical(fs::absolute(text_path)).string() : text_path;
  run.corpus_sha256 = on_disk ? sha256_file(text_path) : "";
  run.corpus_bytes = static_cast<std::int64_t>(data.bytes);
  run.corpus_pairs = static_cast<std::int64_t>(data.lines);
  run.direction = "text";
  run.preset = config.preset;
  run.machine = machine_description();
  run.device = device_choice_name(config.device);
  run.out_dir = fs::weakly_canonical(fs::absolute(out_dir)).string();
  run.config = config.to_json();
  run.name = name.empty() ? fmt::format("{} {}", fs::path(text_path).filename().string(), config.preset) : name;
  return run;
}

}  // namespace ts
