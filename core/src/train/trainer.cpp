// The training loop (see ts/train/trainer.h).
#include "ts/train/trainer.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "ts/decode/translator.h"
#include "ts/metrics/bleu.h"
#include "ts/train/batcher.h"
#include "ts/train/schedule.h"

namespace ts {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

at::Device resolve_device(const std::string& name) {
  if (name == "cpu") return at::Device(at::kCPU);
  const bool cuda = torch::cuda::is_available();
  if (name == "cuda" && !cuda) throw std::invalid_argument("device cuda requested but no CUDA GPU is available (this LibTorch " +
                                                           std::string(cuda ? "has" : "may lack") + " CUDA support)");
  if (name == "cuda" || (name == "auto" && cuda)) return at::Device(at::kCUDA, 0);
  if (name == "auto") return at::Device(at::kCPU);
  throw std::invalid_argument("unknown device \"" + name + "\" (use auto, cpu or cuda)");
}

int configure_threads(int threads) {
  const int n = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
  // Adam's second moments drift into subnormal floats, which run ~100x slower on x86:
  // flush them to zero (training slowed from 5,000 to under 100 tokens/s without this).
  at::globalContext().setFlushDenormal(true);
  return at::get_num_threads();
}

std::string bleu_tokenize_for(const std::string& code) {
  return (code == "zh" || code == "ja" || code == "cmn" || code == "jpn") ? "zh" : "13a";
}

namespace {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainConfig& c, Transformer& model) {
  if (c.optimizer == "adamw") {
    auto o = torch::optim::AdamWOptions(c.lr).betas({c.adam_beta1, c.adam_beta2}).eps(c.adam_eps).weight_decay(c.weight_decay);
    return std::make_unique<torch::optim::AdamW>(model->parameters(), o);
  }
  auto o = torch::optim::AdamOptions(c.lr).betas({c.adam_beta1, c.adam_beta2}).eps(c.adam_eps).weight_decay(c.weight_decay);
  return std::make_unique<torch::optim::Adam>(model->parameters(), o);
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

// Teacher-forced loss summed over non-pad target tokens.
at::Tensor loss_sum(Transformer& model, const Batch& batch, double smoothing) {
  auto logits = model->forward(batch.src, batch.tgt_in);  // [B, T, V]
  return at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}).to(at::kFloat), batch.tgt_out.reshape({-1}), {},
                                at::Reduction::Sum, Vocab::kPad, smoothing);
}

bool is_better(const TrainConfig& c, double value, const TrainingPosition& p) {
  if (!p.has_best) return true;
  return c.best_metric == "loss" ? value < p.best_metric : value > p.best_metric;
}

}  // namespace

double evaluate_loss(Transformer& model, const std::vector<Example>& examples, const at::Device& device) {
  if (examples.empty()) return 0;
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  double total = 0;
  std::int64_t tokens = 0;
  TokenBucketBatcher batches(examples, 0, 64, 0);
  for (const auto& indices : batches.epoch_plan(0)) {
    const auto batch = make_batch(examples, indices, device);
    total += loss_sum(model, batch, 0.0).item<double>();
    tokens += batch.tgt_tokens;
  }
  model->train(was_training);
  return total / static_cast<double>(std::max<std::int64_t>(tokens, 1));
}

nlohmann::json ValidationResult::to_json() const {
  nlohmann::json samples_json = nlohmann::json::array();
  for (const auto& s : samples) samples_json.push_back({{"source", s.source}, {"reference", s.reference}, {"hypothesis", s.hypothesis}});
  return {{"step", step}, {"epoch", epoch}, {"loss", loss}, {"perplexity", perplexity}, {"bleu", bleu},
          {"chrf", chrf}, {"sentences", sentences}, {"samples", samples_json}};
}

struct Trainer::State {
  ExperimentConfig config;
  PreparedData data;
  TrainerOptions options;
  TrainingObserver* observer;
  TrainingObserver null_observer;
  at::Device device{at::kCPU};
  int threads = 1;
  Transformer model{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<TokenBucketBatcher> batcher;
  TrainingPosition position;
  std::vector<std::string> step_checkpoints;

  TrainingObserver& obs() { return observer ? *observer : null_observer; }
  void log(const std::string& line) { obs().on_log(line); }
  std::string path(const std::string& name) const { return (fs::path(options.out_dir) / name).string(); }
};


Trainer::Trainer(ExperimentConfig config, PreparedData data, TrainerOptions options, TrainingObserver* observer)
    : s_(std::make_unique<State>()) {
  config.validate();
  s_->config = std::move(config);
  s_->data = std::move(data);
  s_->options = std::move(options);
  s_->observer = observer;
  const auto& c = s_->config;
  s_->device = resolve_device(c.train.device);
  s_->threads = configure_threads(c.train.threads);
  at::manual_seed(c.train.seed);
  const auto& p = s_->data.pipeline;
  s_->model = build_model(c.model, static_cast<std::int64_t>(p.src_vocab->size()),
                          static_cast<std::int64_t>(p.tgt_vocab->size()), Vocab::kPad, p.shared_vocab);
  s_->model->to(s_->device);
  s_->optimizer = make_optimizer(c.train, s_->model);
  s_->batcher = std::make_unique<TokenBucketBatcher>(s_->data.train, c.train.batch_tokens, c.train.batch_sentences, c.train.seed);
  if (!s_->options.resume_checkpoint.empty()) {
    auto loaded = load_checkpoint(s_->options.resume_checkpoint, s_->device);
    torch::NoGradGuard no_grad;
    auto src = loaded.model->named_parameters(), dst = s_->model->named_parameters();
    for (auto& item : dst) item.value().copy_(src[item.key()]);
    load_training_state(s_->options.resume_checkpoint, *s_->optimizer, /*restore_rng=*/true);
    s_->position = loaded.meta.position;
  }
}

Trainer::~Trainer() = default;

Transformer& Trainer::model() { return s_->model; }
const PreparedData& Trainer::data() const { return s_->data; }
const ExperimentConfig& Trainer::config() const { return s_->config; }
at::Device Trainer::device() const { return s_->device; }

ValidationResult Trainer::validate() {
  const auto t0 = Clock::now();
  auto& st = *s_;
  ValidationResult r;
  r.step = st.position.step;
  r.epoch = st.position.epoch;
  const auto& dev = st.data.dev;
  if (dev.empty()) return r;
  r.loss = evaluate_loss(st.model, dev, st.device);
  r.perplexity = std::exp(std::min(r.loss, 50.0));
  // BLEU/chrF on the first dev sentences, decoded greedily in length-sorted batches.
  const std::size_t n = std::min(dev.size(), static_cast<std::size_t>(std::max(1, st.config.train.dev_max_sentences)));
  std::vector<std::vector<std::int64_t>> sources;
  for (std::size_t i = 0; i < n; ++i) sources.push_back(dev[i].src);
  const auto hyps = greedy_translate_batched(st.model, st.data.pipeline, sources, st.config.decode);
  std::vector<std::string> refs(n);
  for (std::size_t i = 0; i < n; ++i) refs[i] = st.data.text.dev[i].tgt;
  const auto tokenize = bleu_tokenize_for(st.data.pipeline.tgt_language.code);
  r.bleu = corpus_bleu(hyps, {refs}, tokenize).score;
  r.chrf = corpus_chrf(hyps, {refs}).score;
  r.sentences = n;
  for (std::size_t i = 0; i < std::min<std::size_t>(n, std::max(0, st.config.train.samples)); ++i)
    r.samples.push_back({st.data.text.dev[i].src, refs[i], hyps[i]});
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

TrainingSummary Trainer::run() {
  auto& st = *s_;
  const auto& tc = st.config.train;
  TrainingSummary summary;
  auto& pos = st.position;
  const auto session_start = Clock::now();
  const double elapsed_before = pos.elapsed_seconds;
  double train_seconds = 0;  // this session, validation excluded
  std::int64_t session_tokens = 0, steps_at_start = pos.step;
  auto plan = st.batcher->epoch_plan(pos.epoch);

  TrainingStart start{st.model->parameter_count(), st.device.str(), st.threads, st.data.train.size(),
                      st.data.dev.size(), st.data.test.size(), pos.step, static_cast<std::int64_t>(plan.size())};
  st.obs().on_start(start);

  auto meta = [&](const ValidationResult* v) {
    CheckpointMeta m;
    m.config = st.config;
    m.position = pos;
    m.corpus_path = st.options.corpus_path;
    m.pipeline = st.data.pipeline.to_json();
    if (v) m.metrics = v->to_json();
    return m;
  };
  auto save = [&](const std::string& kind, const ValidationResult* v) {
    const std::string file = kind == "step" ? fmt::format("step-{}.ckpt", pos.step) : kind + ".ckpt";
    save_checkpoint(st.path(file), meta(v), st.model, st.optimizer.get());
    st.obs().on_checkpoint({st.path(file), kind, pos.step});
    if (kind == "last") summary.last_checkpoint = st.path(file);
    if (kind == "best") summary.best_checkpoint = st.path(file);
    if (kind == "step") {
      st.step_checkpoints.push_back(st.path(file));
      while (static_cast<int>(st.step_checkpoints.size()) > tc.keep_last) {
        std::error_code ec;
        fs::remove(st.step_checkpoints.front(), ec);
        st.step_checkpoints.erase(st.step_checkpoints.begin());
      }
    }
  };
  auto run_validation = [&]() {
    auto v = validate();
    const double metric = tc.best_metric == "loss" ? v.loss : v.bleu;
    v.improved = is_better(tc, metric, pos);
    if (v.improved) {
      pos.best_metric = metric;
      pos.has_best = true;
      pos.bad_validations = 0;
    } else {
      ++pos.bad_validations;
    }
    summary.validated = true;
    summary.last_validation = v;
    st.obs().on_validation(v);
    if (v.improved) save("best", &v);
    save("last", &v);
    if (tc.keep_last > 0) save("step", &v);
    return v;
  };

  std::int64_t window_tokens = 0;
  auto window_start = Clock::now();
  double window_seconds = 0, tokens_per_s = 0, smoothed = 0;
  bool validated_now = false;
  st.model->train();
  try {
    while (true) {
      if (st.options.stop && st.options.stop->load()) {
        summary.status = "stopped";
        summary.message = "stopped by request";
        break;
      }
      if (tc.max_steps > 0 && pos.step >= tc.max_steps) {
        summary.status = "finished";
        summary.message = fmt::format("reached max_steps {}", tc.max_steps);
        break;
      }
      if (tc.max_minutes > 0 && std::chrono::duration<double>(Clock::now() - session_start).count() >= tc.max_minutes * 60) {
        summary.status = "finished";
        summary.message = fmt::format("reached max_minutes {}", tc.max_minutes);
        break;
      }
      if (pos.batch_in_epoch >= static_cast<std::int64_t>(plan.size())) {
        if (tc.validate_every == 0 && !validated_now) {
          run_validation();
          validated_now = true;
        }
        ++pos.epoch;
        pos.batch_in_epoch = 0;
        plan = st.batcher->epoch_plan(pos.epoch);
        if (tc.max_epochs > 0 && pos.epoch >= tc.max_epochs) {
          summary.status = "finished";
          summary.message = fmt::format("reached max_epochs {}", tc.max_epochs);
          break;
        }
        continue;
      }
      validated_now = false;
      const auto step_start = Clock::now();
      // One optimizer step over `accumulate` batches.
      double step_loss = 0;
      std::int64_t step_tokens = 0;
      st.optimizer->zero_grad();
      for (int micro = 0; micro < tc.accumulate && pos.batch_in_epoch < static_cast<std::int64_t>(plan.size()); ++micro) {
        auto batch = make_batch(st.data.train, plan[pos.batch_in_epoch++], st.device);
        auto loss = loss_sum(st.model, batch, tc.label_smoothing) / static_cast<double>(batch.tgt_tokens);
        (loss / tc.accumulate).backward();
        step_loss += loss.item<double>() / tc.accumulate;
        step_tokens += batch.tgt_tokens;
      }
      if (!std::isfinite(step_loss)) {
        summary.status = "failed";
        summary.message = fmt::format("non-finite loss ({}) at step {}: stopped; the last good checkpoint is kept "
                                      "(try a lower learning rate or more warmup)", step_loss, pos.step + 1);
        break;
      }
      if (tc.clip_norm > 0) torch::nn::utils::clip_grad_norm_(st.model->parameters(), tc.clip_norm);
      const double lr = learning_rate(tc, pos.step + 1, tc.max_steps, st.config.model.d_model);
      set_lr(*st.optimizer, lr);
      st.optimizer->step();
      ++pos.step;
      pos.tokens_seen += step_tokens;
      session_tokens += step_tokens;
      window_tokens += step_tokens;
      const double step_seconds = std::chrono::duration<double>(Clock::now() - step_start).count();
      train_seconds += step_seconds;
      window_seconds += step_seconds;
      if (window_seconds >= 1.0 || tokens_per_s == 0) {
        tokens_per_s = window_tokens / std::max(window_seconds, 1e-9);
        window_tokens = 0;
        window_seconds = 0;
      }
      smoothed = (pos.step == steps_at_start + 1) ? step_loss : 0.98 * smoothed + 0.02 * step_loss;
      pos.elapsed_seconds = elapsed_before + train_seconds;

      TrainingProgress p;
      p.step = pos.step;
      p.epoch = pos.epoch;
      p.batch_in_epoch = pos.batch_in_epoch;
      p.batches_per_epoch = static_cast<std::int64_t>(plan.size());
      p.loss = step_loss;
      p.smoothed_loss = smoothed;
      p.lr = lr;
      p.tokens_per_s = tokens_per_s;
      p.average_tokens_per_s = session_tokens / std::max(train_seconds, 1e-9);
      p.elapsed_s = pos.elapsed_seconds;
      const double wall = std::chrono::duration<double>(Clock::now() - session_start).count();
      const double steps_per_s = (pos.step - steps_at_start) / std::max(wall, 1e-9);
      std::vector<std::pair<double, double>> limits;  // (fraction, eta)
      if (tc.max_steps > 0)
        limits.emplace_back(static_cast<double>(pos.step) / tc.max_steps, (tc.max_steps - pos.step) / std::max(steps_per_s, 1e-9));
      if (tc.max_minutes > 0) limits.emplace_back(wall / (tc.max_minutes * 60), tc.max_minutes * 60 - wall);
      if (tc.max_epochs > 0) {
        const double done = pos.epoch + static_cast<double>(pos.batch_in_epoch) / std::max<std::size_t>(plan.size(), 1);
        limits.emplace_back(done / tc.max_epochs, (tc.max_epochs - done) * plan.size() / std::max(steps_per_s, 1e-9));
      }
      for (const auto& [fraction, eta] : limits) {
        if (fraction > p.fraction) {
          p.fraction = std::min(1.0, fraction);
          p.eta_s = std::max(0.0, eta);
        }
      }
      st.obs().on_step(p);

      if (tc.validate_every > 0 && pos.step % tc.validate_every == 0) {
        run_validation();
        validated_now = true;
        window_start = Clock::now();
        if (tc.patience > 0 && pos.bad_validations >= tc.patience) {
          summary.status = "early-stopped";
          summary.message = fmt::format("no improvement in {} validations", tc.patience);
          break;
        }
      }
    }
    if (summary.status != "failed") {
      const bool stepped = pos.step > steps_at_start;
      if (summary.status == "finished" && stepped && !validated_now) {
        run_validation();
      } else if (stepped && !validated_now) {
        save("last", summary.validated ? &summary.last_validation : nullptr);
      }
    }
  } catch (const std::exception& e) {
    summary.status = "failed";
    summary.message = e.what();
  }
  summary.steps = pos.step;
  summary.seconds = train_seconds;
  summary.average_tokens_per_s = session_tokens / std::max(train_seconds, 1e-9);
  if (summary.last_checkpoint.empty() && fs::exists(st.path("last.ckpt"))) summary.last_checkpoint = st.path("last.ckpt");
  if (summary.best_checkpoint.empty() && fs::exists(st.path("best.ckpt"))) summary.best_checkpoint = st.path("best.ckpt");
  st.obs().on_finished(summary);
  return summary;
}

}  // namespace ts
