// SPDX-License-Identifier: GPL-3.0-or-later
// The training loop (see ts/train/trainer.h).
#include "ts/train/trainer.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/cuda.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <filesystem>

#include <fmt/format.h>

#include "ts/decode/translator.h"
#include "ts/host/cpu.h"
#include "ts/metrics/bleu.h"
#include "ts/model/attention.h"
#include "ts/model/errors.h"
#include "ts/model/mode_guard.h"
#include "ts/model/bf16_products.h"
#include "ts/model/embedding_rows.h"
#include "ts/model/fp16_products.h"
#include "ts/model/packed_weights.h"
#include "ts/model/precision.h"
#include "ts/model/size.h"
#include "ts/text/language.h"
#include "ts/train/model_size.h"
#include "ts/train/batcher.h"
#include "ts/train/loss.h"
#include "ts/train/distributed.h"
#include "ts/train/loop.h"
#include "ts/store/fault.h"
#include "ts/train/optimizer.h"
#include "ts/train/schedule.h"
#include "ts/train/thread_shards.h"
#include "ts/train/weight_average.h"

namespace ts {

namespace fs = std::filesystem;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
using Clock = std::chrono::steady_clock;

Precision resolve_precision(Precision precision, const at::Device& device, std::string* why) {
  if (why) why->clear();
  if (precision != Precision::kAuto) {
    // As asked; on a CPU with native bf16 or AVX-512 FP16 the log says where another precision is the
    // faster one here (timed once per process, as for auto; the recipe's log reads the same timing).
    if (why && device.is_cpu() && (cpu_has_native_bf16() || fp16_products_available()))
      *why = describe_cpu_precision_request(precision, cpu_precision_timings());
    return precision;
  }
  if (device.is_cuda()) {
    const auto timings = time_precisions(device);
    if (why) *why = describe_gpu_precision(timings);
    return choose_gpu_precision(timings);
  }
  if (!cpu_has_native_bf16() && !fp16_products_available()) {
    if (why) *why = "precision auto: fp32 (this CPU has neither AMX nor AVX-512 BF16)";
    return Precision::kFp32;
  }
  // Native bf16 is not always faster, nor fp16: timed once per process (ts/model/precision.h).
  const auto& timings = cpu_precision_timings();
  if (why) *why = describe_cpu_precision(timings);
  return choose_cpu_precision(timings);
}

static int planned_budget_validations(const TrainConfig& c) {
  if (c.budget_validations > 0) return c.budget_validations;
  return std::clamp(static_cast<int>(std::ceil(c.budget_minutes / 5.0)), 2, 8);
}

at::Device resolve_device(DeviceChoice choice) {
  if (choice == DeviceChoice::kCpu) return at::Device(at::kCPU);
  const bool cuda = torch::cuda::is_available();
  if (choice == DeviceChoice::kCuda && !cuda)
    throw std::invalid_argument(
        "device cuda requested but no CUDA GPU is available (this LibTorch may lack "
        "CUDA support)");
  return cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
}

int configure_threads(int threads) {
  const int n = threads > 0 ? threads : cpu_cores();
  at::set_num_threads(n);
  // Adam's second moments drift into subnormal floats, which run ~100x slower on x86:
  // flush them to zero (training slowed from 5,000 to under 100 tokens/s without this).
  at::globalContext().setFlushDenormal(true);
  return at::get_num_threads();
}

std::string bleu_tokenize_for(const std::string& code) { return is_cjk_language(code) ? "zh" : "13a"; }

namespace {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainConfig& c, Transformer& model) {
  if (c.optimizer == Optimizer::kAdamW) {
    auto o = torch::optim::AdamWOptions(c.lr)
                 .betas({c.adam_beta1, c.adam_beta2})
                 .eps(c.adam_eps)
                 .weight_decay(c.weight_decay);
    return std::make_unique<torch::optim::AdamW>(model->parameters(), o);
  }
  auto o =
      torch::optim::AdamOptions(c.lr).betas({c.adam_beta1, c.adam_beta2}).eps(c.adam_eps).weight_decay(c.weight_decay);
  return std::make_unique<torch::optim::Adam>(model->parameters(), o);
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

// Teacher-forced loss summed over non-pad target tokens. On a CPU the decoder's row-wise layers, the
// output projection and the loss see only the rows of real target tokens (decode_rows): a padded
// row costs the decoder's linear maps, a [D, V] product forward and two backward, and a pass over V,
// and adds nothing. In default-recipe runs on the four corpora of ../shared/data, 13-17% of the target
// positions the loss is computed on are padding. (On a GPU, finding the rows would make it wait for the
// device in the middle of the forward.)
at::Tensor loss_sum(Transformer& model, const Batch& batch, double smoothing) {
  const auto src_mask = padding_mask(batch.src, model->pad_id());
  const auto memory = model->encode(batch.src, src_mask);
  if (batch.tgt_out.device().is_cpu()) {
    const auto rows = RealRows::of(batch.tgt_out, Vocab::kPad);
    if (rows.count() < batch.tgt_out.numel()) {
      const auto targets = batch.tgt_out.reshape({-1}).index_select(0, rows.index);
      return projected_cross_entropy_sum(model->decode_rows(batch.tgt_in, memory, src_mask, rows),
                                         model->output_weight(), model->output_bias(), targets, Vocab::kPad, smoothing);
    }
  }
  const auto hidden = model->decode(batch.tgt_in, memory, src_mask);  // [B, T, D]
  return projected_cross_entropy_sum(hidden.reshape({-1, hidden.size(-1)}), model->output_weight(),
                                     model->output_bias(), batch.tgt_out.reshape({-1}), Vocab::kPad, smoothing);
}

// Target tokens of a whole batch (what make_batch counts), known to every rank without talking.
std::int64_t target_tokens(const std::vector<Example>& examples, const std::vector<std::size_t>& indices) {
  std::int64_t n = 0;
  for (auto i : indices) n += static_cast<std::int64_t>(target_positions(examples[i]));
  return n;
}

// The model FLOPs of training on a whole batch: forward and backward of its matrix products, three
// times the forward's (ts/model/size.h), padding left out.
double training_flops(const ModelConfig& model, double tgt_vocab, const std::vector<Example>& examples,
                      const std::vector<std::size_t>& indices) {
  double flops = 0;
  for (auto i : indices)
    flops += 3 * forward_flops(model, tgt_vocab, static_cast<double>(source_positions(examples[i])),
                               static_cast<double>(target_positions(examples[i])));
  return flops;
}

}  // namespace

std::vector<std::size_t> shard_of(const std::vector<std::size_t>& indices, int rank, int world_size) {
  std::vector<std::size_t> mine;
  for (std::size_t i = static_cast<std::size_t>(rank); i < indices.size(); i += static_cast<std::size_t>(world_size))
    mine.push_back(indices[i]);
  return mine;
}

int batch_shares(bool shard_batch, const at::Device& device, Precision precision, int threads) {
  // Not under bf16 autocast: oneDNN, which LibTorch 1.13 runs its bf16 products on, failed with
  // std::bad_alloc inside brgemm_kernel_create when two threads created primitives at once (a
  // 5-minute deu.txt run with 1,000-token batches, whose shapes vary, failed after 110-335 steps in
  // four tries out of four). fp32 goes to OpenBLAS and ran 600 such steps cleanly, twice; bf16 on a
  // CPU with AVX-512 BF16 goes to bf16_linear (on AMX tiles where the CPU has them: 1.8 times fp32 and
  // 1.5 times autocast's whole batch on an Intel Xeon model 207), whose kernels keep nothing between calls
  // but each thread's own buffers.
  // fp16 on a CPU is always fp16_linear, whose kernels keep nothing between calls either.
  const bool shareable = precision == Precision::kFp32 || precision == Precision::kFp16 ||
                         (precision == Precision::kBf16 && bf16_products_preferred());
  return shard_batch && device.is_cpu() && shareable ? std::max(1, threads) : 1;
}

bool uses_bf16_products(const at::Device& device, Precision precision, int shares) {
  return device.is_cpu() && precision == Precision::kBf16 && bf16_products_preferred() &&
         (shares > 1 || at::get_num_threads() == 1);
}

bool uses_fp16_products(const at::Device& device, Precision precision) {
  return device.is_cpu() && precision == Precision::kFp16;
}

double forward_backward_batch(Transformer& model, const std::vector<Example>& examples,
                              const std::vector<std::size_t>& rows, const at::Device& device, Precision precision,
                              double label_smoothing, double denominator, double scale, int shares,
                              const std::vector<at::Tensor>& parameters, PackedWeights* packed_weights,
                              std::optional<double>* squared_norm) {
  const bool bf16 = uses_bf16_products(device, precision, shares), fp16 = uses_fp16_products(device, precision);
  auto share_loss = [&](const std::vector<std::size_t>& share_rows) {
    auto batch = make_batch(examples, share_rows, device);
    // forward only: backward follows the forward's dtypes (autocast) or autograd functions
    // (bf16_linear, fp16_linear)
    Bf16ProductsScope bf16_products(bf16);
    Fp16ProductsScope fp16_products(fp16);
    AutocastScope autocast(bf16 || fp16 ? Precision::kFp32 : precision, device);
    return loss_sum(model, batch, label_smoothing) / denominator;
  };
  const int n = std::max(1, std::min(shares, static_cast<int>(rows.size())));
  if (n == 1) {
    EmbeddingRowGradients embedding_rows;
    const auto loss = share_loss(rows);
    (loss * scale).backward();
    embedding_rows.add_to_grads(parameters);
    return loss.item<double>();
  }
  std::vector<std::uint64_t> seeds(static_cast<std::size_t>(n));
  for (auto& seed : seeds) seed = DropoutSeeds::draw_base();
  std::vector<double> losses(static_cast<std::size_t>(n), 0.0);
  std::vector<std::vector<at::Tensor>> grads(static_cast<std::size_t>(n));
  // The weights, packed for bf16's or fp16's products once for all the shares (their values are the
  // same for the whole call).
  PackedWeights own_weights;
  PackedWeights* weights = packed_weights ? packed_weights : &own_weights;
  weights->next_step();
  run_shares_on_threads(n, [&](int k) {
    const auto i = static_cast<std::size_t>(k);
    DropoutSeeds share_seeds(seeds[i]);
    PackedWeightsScope packed(bf16 || fp16 ? weights : nullptr);
    EmbeddingRowGradients embedding_rows;
    const auto loss = share_loss(shard_of(rows, k, n));
    grads[i] = torch::autograd::grad({loss * scale}, parameters, {}, /*retain_graph=*/false, /*create_graph=*/false,
                                     /*allow_unused=*/true);
    embedding_rows.add_to(parameters, grads[i]);
    losses[i] = loss.item<double>();
  });
  // The shares' gradients add up in the first share's tensor, which then becomes the parameter's
  // gradient: no new tensor of a parameter's size.
  double squares = 0;
  add_share_gradients(grads, parameters, squared_norm ? &squares : nullptr);
  if (squared_norm) *squared_norm = squares;
  double total = 0;
  for (double l : losses) total += l;
  return total;
}

namespace {

bool is_better(const TrainConfig& c, double value, const TrainingPosition& p) {
  if (!p.has_best) return true;
  return c.best_metric == BestMetric::kLoss ? value < p.best_metric : value > p.best_metric;
}

}  // namespace

double evaluate_loss(Transformer& model, const std::vector<Example>& examples, const at::Device& device) {
  if (examples.empty()) return 0;
  torch::NoGradGuard no_grad;
  const EvalModeGuard eval(*model);
  double total = 0;
  std::int64_t tokens = 0;
  TokenBucketBatcher batches(examples, 0, 64, 0);
  for (const auto& indices : batches.epoch_plan(0)) {
    const auto batch = make_batch(examples, indices, device);
    total += loss_sum(model, batch, 0.0).item<double>();
    tokens += batch.tgt_tokens;
  }
  return total / static_cast<double>(std::max<std::int64_t>(tokens, 1));
}

nlohmann::json ValidationResult::to_json() const {
  nlohmann::json samples_json = nlohmann::json::array();
  for (const auto& s : samples)
    samples_json.push_back({{"source", s.source}, {"reference", s.reference}, {"hypothesis", s.hypothesis}});
  nlohmann::json j = {{"step", step}, {"epoch", epoch}, {"loss", loss},           {"perplexity", perplexity},
                      {"bleu", bleu}, {"chrf", chrf},   {"sentences", sentences}, {"samples", samples_json}};
  if (train_loss >= 0) j["train_loss"] = train_loss;
  return j;
}

// What a trainer holds, in parts: what it trains (config, data, model, optimizer, position), and
// for the current session (one call of run()) the time budget, the speed, fp16 loss scaling, weight
// averaging and the data-parallel ranks, each a small struct of its own. It is the translation
// model's LoopBody: run_training_loop (ts/train/loop.h) drives it step by step.
struct Trainer::State final : LoopBody {
  Trainer* trainer = nullptr;
  ExperimentConfig config;
  PreparedData data;
  TrainerOptions options;
  TrainingObserver* observer;
  TrainingObserver null_observer;
  at::Device device{at::kCPU};
  int threads = 1;
  int shares = 1;  // CPU: threads that each run forward and backward on a share of the batch
  Transformer model{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<TokenBucketBatcher> batcher;
  TrainingPosition position;
  std::vector<std::string> step_checkpoints;
  Precision precision = Precision::kFp32;   // train.precision with "auto" resolved for this machine
  std::string precision_reason;             // what "auto" chose and why, for the log
  std::vector<at::Tensor> parameters;       // model->parameters(), in order
  PackedWeights packed_weights;             // bf16/fp16 products: the weights packed once a step for the shares
  std::optional<double> step_squared_norm;  // the step's gradients' squared norm, where the shares' sum gave it

  // The current session (one call of run()).
  TrainingSummary summary;
  double session_start = 0;                      // now() at the start, moved on by the time paused
  double elapsed_before = 0, train_seconds = 0;  // training time, validation excluded
  std::vector<std::vector<std::size_t>> plan;    // batches of the current epoch
  bool validated_now = false;
  std::int64_t step_tokens = 0;  // the current step's target tokens (whole batch)
  double step_lr = 0;            // the current step's learning rate

  // The time budget (train.budget_minutes).
  struct Budget {
    double length_s = 0;                       // 0: no budget
    double used_before = 0;                    // used before this session (a resumed run continuing the same budget)
    double reserve_s = 0;                      // kept back for the final validation
    double shared_spent = 0;                   // data-parallel: rank 0's fraction spent, shared at every step
    int validations = 0, next_validation = 1;  // spread over the budget, and the next one due
    // Where it went (logged at the end): before the trainer started (reading, tokenizers,
    // encoding, the model), in validations with their checkpoints.
    double before_training_s = 0, validating_s = 0;
    int validations_done = 0;
  } budget;

  // Throughput (a window of about a second, and the session) and the smoothed loss shown.
  struct Speed {
    std::int64_t session_tokens = 0, steps_at_start = 0, window_tokens = 0;
    double window_seconds = 0, tokens_per_s = 0, smoothed_loss = 0;
    double step_flops = 0, session_flops = 0;  // model FLOPs of the matrix products (training_flops)
  } speed;

  // fp16 only: the loss is multiplied by loss_scale before backward so small gradients do not
  // underflow; halved when gradients overflow (the step is skipped), doubled after 2000 clean steps.
  struct Scaling {
    double loss_scale = 1.0;
    int clean_steps = 0;
  } scaling;

  // Weight averaging (train.ema > 0).
  struct Averaging {
    std::unique_ptr<WeightAverage> weights;  // null without averaging
    bool in_model = false;                   // the model holds the averaged weights just now
    bool keep_as_trained = false;            // the final validation found the weights as trained better
  } averaging;

  // Data-parallel (more than one rank): rank 0 alone ("root") validates, saves and reports. The
  // stop request and time limit are decided together at every step (any rank's stop flag, rank
  // 0's clock), so every rank leaves the loop after the same step.
  struct Ranks {
    DataParallel* group = nullptr;  // null: one process
    bool root = true;
    bool shared_stop = false, shared_time_up = false;
  } ranks;

  TrainingObserver& obs() { return observer && ranks.root ? *observer : null_observer; }
  double now() const { return options.clock ? options.clock() : steady_seconds(); }
  double budget_used() const { return budget.used_before + (now() - session_start); }
  // Fraction of the budget's training time spent (the final validation's reserve left out), 0..1.
  // Data-parallel: rank 0's, shared at every step (synchronise_step).
  double budget_spent() const { return ranks.group ? budget.shared_spent : local_budget_spent(); }
  double local_budget_spent() const {
    return std::clamp(budget_used() / std::max(budget.length_s - budget.reserve_s, 1e-9), 0.0, 1.0);
  }
  void start_budget();
  std::string budget_breakdown() const;
  double learning_rate_now();
  // Puts the averaged weights into the model for its lifetime (nothing without averaging, or
  // when they are in already); the weights as trained come back even when validation throws.
  struct AverageInModel {
    State& st;
    bool swapped = false;
    explicit AverageInModel(State& s) : st(s) {
      if (!st.averaging.weights || st.averaging.in_model || st.averaging.keep_as_trained) return;
      st.averaging.weights->swap_with(st.parameters);
      st.averaging.in_model = swapped = true;
    }
    ~AverageInModel() {
      if (!swapped) return;
      st.averaging.weights->swap_with(st.parameters);
      st.averaging.in_model = false;
    }
  };
  void validate_on_budget();
  std::string path(const std::string& name) const { return (fs::path(options.out_dir) / name).string(); }

  ValidationResult validate();
  void start_session();
  std::optional<LoopEnd> stop_or_time_limit();
  bool time_up() const;
  void synchronise_start();
  double synchronise_step(double loss);
  std::optional<LoopEnd> advance_epoch_if_done();
  double train_step(std::int64_t& tokens);
  bool unscale_gradients();
  TrainingProgress progress(double loss, double lr, double step_seconds, std::int64_t tokens);
  void save(CheckpointKind kind, const ValidationResult* v);
  void validate_and_save(bool final = false);
  void fill_summary();

  // LoopBody: one optimizer step at a time, for run_training_loop.
  void begin() override {
    if (ranks.group) synchronise_start();
  }
  std::int64_t step() const override { return position.step; }
  std::optional<LoopEnd> limit_reached() override {
    if (auto end = stop_or_time_limit()) return end;
    return advance_epoch_if_done();
  }
  StepLoss forward_backward() override;
  bool update() override;
  void stepped(const StepLoss& loss, double seconds) override {
    obs().on_step(progress(loss.loss, step_lr, seconds, loss.tokens));
  }
  std::optional<LoopEnd> validate_if_due() override;
  void between_steps() override {
    if (options.between_steps) options.between_steps(*trainer);
  }
  // Only training time counts towards time limits, the ETA and throughput.
  void paused_for(double seconds) override { session_start += seconds; }
  void finish(const LoopEnd& end) override;
  void log(const std::string& line) override { obs().on_log(line); }
};

Trainer::Trainer(ExperimentConfig config, PreparedData data, TrainerOptions options, TrainingObserver* observer)
    : s_(std::make_unique<State>()) {
  config.validate();
  s_->trainer = this;
  s_->config = std::move(config);
  s_->data = std::move(data);
  s_->options = std::move(options);
  s_->observer = observer;
  const auto& c = s_->config;
  s_->device = resolve_device(c.train.device);
  if (s_->options.parallel && s_->options.parallel->world_size() > 1) {
    auto& dp = *s_->options.parallel;
    if (!dp.connected()) throw std::invalid_argument("data-parallel: the process group is not connected");
    if (dp.device().type() != s_->device.type())
      throw std::invalid_argument(
          fmt::format("data-parallel: the process group was connected for {} but train.device is {}", dp.device().str(),
                      s_->device.str()));
    s_->device = dp.device();  // on CUDA, this rank's own GPU
    s_->ranks.group = &dp;
    s_->ranks.root = dp.rank() == 0;
  }
  s_->threads = configure_threads(c.train.threads);
  s_->precision = resolve_precision(c.train.precision, s_->device, &s_->precision_reason);
  check_precision(s_->precision, s_->device);
  s_->shares = batch_shares(c.train.shard_batch, s_->device, s_->precision, s_->threads);
  // fp16 autocast on a GPU; fp16_linear on a CPU scales its operands itself (ts/model/fp16_products.h).
  if (s_->precision == Precision::kFp16 && s_->device.is_cuda()) s_->scaling.loss_scale = 65536.0;
  at::manual_seed(c.train.seed);
  const auto& p = s_->data.pipeline;
  if (s_->device.is_cpu()) {
    const auto size = estimate_model_size(c, static_cast<std::int64_t>(p.src_vocab->size()),
                                          static_cast<std::int64_t>(p.tgt_vocab->size()));
    // Each share of a batch keeps gradients of its own until they are added up.
    check_memory(static_cast<double>(size.training_bytes + (s_->shares - 1) * size.weight_bytes),
                 "training this model (weights, gradients, Adam moments and one batch)",
                 "make the model (model.d_model, model.d_ff, layers) or the batch (train.batch_tokens) smaller, "
                 "or use fewer threads (train.threads)");
  }
  s_->model = build_model(c.model, static_cast<std::int64_t>(p.src_vocab->size()),
                          static_cast<std::int64_t>(p.tgt_vocab->size()), Vocab::kPad, p.shared_vocab);
  s_->model->to(s_->device);
  if (s_->ranks.root && s_->options.resume_checkpoint.empty()) {
    // The split as dealt (before validation leaves out pairs too long for a learned table), for
    // anyone to check that no dev or test source occurs in training.
    const auto split_path = s_->path("split.json");
    try {
      fs::create_directories(s_->options.out_dir);
      write_split_file(split_path, s_->data, c.data, s_->options.corpus_path);
    } catch (const std::exception& e) {
      s_->obs().on_log(fmt::format("warning: the split was not written to {}: {}", split_path, e.what()));
    }
  }
  if (c.model.positions == Positions::kLearned) {
    // A learned table has no row past model.max_positions: held-out pairs longer than that cannot
    // be scored (the sinusoidal table is computed for any length, so nothing is dropped there).
    const auto dropped = drop_held_out_longer_than(s_->data, static_cast<std::size_t>(s_->model->max_length()));
    if (dropped.dev + dropped.test > 0)
      s_->obs().on_log(
          fmt::format("{} dev and {} test pairs longer than the model's {} learned positions are left out "
                      "of validation ({} dev pairs remain)",
                      dropped.dev, dropped.test, s_->model->max_length(), s_->data.dev.size()));
  }
  s_->optimizer = make_optimizer(c.train, s_->model);
  s_->batcher =
      std::make_unique<TokenBucketBatcher>(s_->data.train, c.train.batch_tokens, c.train.batch_sentences, c.train.seed);
  s_->parameters = s_->model->parameters();
  std::vector<at::Tensor> averaged;
  if (!s_->options.resume_checkpoint.empty()) {
    torch::NoGradGuard no_grad;
    s_->position =
        load_for_resume(s_->options.resume_checkpoint, *s_->model, *s_->optimizer, /*restore_rng=*/true, &averaged)
            .position;
  }
  if (c.train.ema > 0) {
    s_->averaging.weights = std::make_unique<WeightAverage>(c.train.ema, averaged.empty() ? s_->parameters : averaged);
  }
}

Trainer::~Trainer() = default;

Transformer& Trainer::model() { return s_->model; }
const PreparedData& Trainer::data() const { return s_->data; }
const ExperimentConfig& Trainer::config() const { return s_->config; }
at::Device Trainer::device() const { return s_->device; }

ValidationResult Trainer::validate() { return s_->validate(); }

ValidationResult Trainer::State::validate() {
  const auto t0 = Clock::now();
  auto& st = *this;
  ValidationResult r;
  r.step = st.position.step;
  r.epoch = st.position.epoch;
  if (!st.config.train.probe.empty()) {
    // The probe is decoded by the live model between steps (no gradients, eval mode restored after).
    try {
      Translator probe(st.model, st.data.pipeline);
      DecodeConfig greedy = st.config.decode;
      greedy.mode = DecodeMode::kGreedy;
      greedy.nbest = 1;
      // The model's own weights: a packed copy would be dropped at the next training step anyway.
      greedy.weights = DecodeWeights::kLibTorch;
      r.probe =
          probe.translate(st.config.train.probe, greedy, /*record_attention=*/true).probe_json(st.config.train.probe);
    } catch (const std::exception& e) {
      obs().on_log(fmt::format("probe sentence not translated: {}", e.what()));
    }
  }
  const auto& dev = st.data.dev;
  if (dev.empty()) {
    r.scored = false;
    return r;
  }
  fault_point("validation");
  r.loss = evaluate_loss(st.model, dev, st.device);
  fault_point("validation");
  r.perplexity = std::exp(std::min(r.loss, 50.0));
  // BLEU/chrF on the first dev sentences, decoded greedily in length-sorted batches.
  const std::size_t n = std::min(dev.size(), static_cast<std::size_t>(std::max(1, st.config.train.dev_max_sentences)));
  std::vector<std::vector<std::int64_t>> sources;
  for (std::size_t i = 0; i < n; ++i) sources.push_back(dev[i].src);
  // The scores are the fp32 model's, whatever weights interactive decoding is set to use.
  DecodeConfig fp32 = st.config.decode;
  fp32.weights = DecodeWeights::kFloat32;
  const auto hyps = greedy_translate_batched(st.model, st.data.pipeline, sources, fp32);
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

void Trainer::State::start_session() {
  summary = TrainingSummary{};
  if (precision == Precision::kBf16 && device.is_cpu() && !cpu_has_native_bf16())
    obs().on_log(
        "precision bf16: this CPU has neither AMX nor AVX-512 BF16, so bf16 products are emulated and "
        "slower than fp32 here (use --precision fp32)");
  if (!precision_reason.empty()) obs().on_log(precision_reason);
  session_start = now();
  elapsed_before = position.elapsed_seconds;
  train_seconds = 0;
  speed.session_tokens = 0;
  speed.session_flops = 0;
  speed.steps_at_start = position.step;
  speed.window_tokens = 0;
  speed.window_seconds = speed.tokens_per_s = speed.smoothed_loss = 0;
  validated_now = false;
  plan = batcher->epoch_plan(position.epoch);
  start_budget();
  obs().on_start({model->parameter_count(), device.str(), threads, data.train.size(), data.dev.size(), data.test.size(),
                  position.step, static_cast<std::int64_t>(plan.size())});
  if (shares > 1)
    obs().on_log(
        fmt::format("each of the {} threads runs forward and backward on its own share of every batch "
                    "(train.shard_batch)",
                    shares));
}

// Why the session ends now: the stop flag, or a step or time limit (data-parallel: as the ranks
// decided together at the last step).
std::optional<LoopEnd> Trainer::State::stop_or_time_limit() {
  const auto& tc = config.train;
  const bool stop_requested = ranks.group ? ranks.shared_stop : (options.stop && options.stop->load());
  if (stop_requested) return stopped_by_request();
  if (tc.max_steps > 0 && position.step >= tc.max_steps) return reached_max_steps(tc.max_steps);
  if (ranks.group ? ranks.shared_time_up : time_up()) {
    if (budget.length_s > 0 && budget_used() + budget.reserve_s >= budget.length_s)
      return LoopEnd{RunStatus::kFinished, fmt::format("time budget of {} used (the final validation takes the rest)",
                                                       minutes_text(budget.length_s / 60))};
    return reached_max_minutes(tc.max_minutes);
  }
  return std::nullopt;
}

bool Trainer::State::time_up() const {
  const auto& tc = config.train;
  if (budget.length_s > 0 && budget_used() + budget.reserve_s >= budget.length_s) return true;
  return tc.max_minutes > 0 && now() - session_start >= tc.max_minutes * 60;
}

// A budget of the same length as the checkpoint's, not used up, is continued where it stood;
// any other budget starts a new schedule (a new warmup, then decay to zero at the new deadline).
void Trainer::State::start_budget() {
  const auto& tc = config.train;
  budget.length_s = tc.budget_minutes * 60;
  // A hard time limit before the deadline is the deadline: the schedule and validations follow it.
  if (budget.length_s > 0 && tc.max_minutes > 0) budget.length_s = std::min(budget.length_s, tc.max_minutes * 60);
  budget.reserve_s = 0;
  if (budget.length_s <= 0) return;
  const bool continuing = position.step > 0 && std::abs(position.budget_seconds - budget.length_s) < 1e-6 &&
                          position.budget_used_seconds < budget.length_s * 0.99;
  if (continuing) {
    budget.used_before = position.budget_used_seconds;
  } else {
    // The budget began with the command (or the Train button): what came before this trainer
    // (reading the corpus, training the tokenizers, encoding, building the model) is spent already.
    budget.before_training_s = options.budget_start >= 0 ? std::max(0.0, session_start - options.budget_start) : 0.0;
    budget.used_before = budget.before_training_s;
    position.budget_seconds = budget.length_s;
    position.budget_used_seconds = 0;
    position.budget_warmup_end = -1;
    position.schedule_start_step = position.step;
  }
  // Until a validation has been timed, keep 2% of the budget (at most a minute) for the last one.
  budget.reserve_s = std::min(60.0, 0.02 * budget.length_s);
  auto planned = tc;
  planned.budget_minutes = budget.length_s / 60;
  budget.validations = planned_budget_validations(planned);
  budget.next_validation = 1 + static_cast<int>(std::floor(budget_spent() * budget.validations));
  obs().on_log(fmt::format(
      "time budget: {}{}; learning rate: {} schedule over it, {} validations{}", minutes_text(budget.length_s / 60),
      continuing ? fmt::format(", {} of it left", minutes_text((budget.length_s - budget.used_before) / 60))
      : budget.before_training_s > 0
          ? fmt::format(" from the start of the command, {:.1f} s of it spent before training (loading the "
                        "program, reading and preparing the data, fitting the recipe, building the model)",
                        budget.before_training_s)
          : "",
      lr_schedule_name(tc.schedule), budget.validations, averaging.weights ? ", weight averaging on" : ""));
}

double Trainer::State::learning_rate_now() {
  const auto& tc = config.train;
  if (budget.length_s <= 0) return learning_rate(tc, position.step + 1, tc.max_steps, config.model.d_model);
  const auto step = position.step + 1 - position.schedule_start_step;
  const double spent = budget_spent();
  if (position.budget_warmup_end < 0 && step >= tc.warmup) position.budget_warmup_end = spent;
  return budgeted_learning_rate(tc, step, std::max(0.0, position.budget_warmup_end), spent, config.model.d_model);
}

// Budgeted runs validate when the fraction spent passes k / validations (the last one at the end).
void Trainer::State::validate_on_budget() {
  if (budget.length_s <= 0 || budget.next_validation >= budget.validations) return;
  if (budget_spent() < static_cast<double>(budget.next_validation) / budget.validations) return;
  while (budget.next_validation < budget.validations &&
         budget_spent() >= static_cast<double>(budget.next_validation) / budget.validations)
    ++budget.next_validation;
  if (ranks.root) validate_and_save();
}

// Data-parallel, before the first step: the ranks must agree on the data and the model (a rank
// with another corpus, vocabulary or config would train on other batches without a word), then
// every rank takes rank 0's weights.
void Trainer::State::synchronise_start() {
  std::uint64_t ids = 0, tokens = 0;
  for (const auto& e : data.train) {
    tokens += e.src.size() + e.tgt.size();
    for (auto id : e.src) ids = ids * 31 + static_cast<std::uint64_t>(id);
    for (auto id : e.tgt) ids = ids * 37 + static_cast<std::uint64_t>(id);
  }
  auto same = config;
  same.train.threads = 0;  // may differ between machines
  same.train.shard_batch = true;
  same.train.device = DeviceChoice::kAuto;
  const auto config_hash = std::hash<std::string>{}(same.to_json().dump());
  constexpr std::uint64_t k52 = (std::uint64_t{1} << 52) - 1;  // exact in a double
  const std::vector<std::string> names{"training pairs",    "batches per epoch", "token count", "token ids",
                                       "source vocabulary", "target vocabulary", "parameters",  "step",
                                       "configuration"};
  const std::vector<double> mine{static_cast<double>(data.train.size()),
                                 static_cast<double>(plan.size()),
                                 static_cast<double>(tokens),
                                 static_cast<double>(ids & k52),
                                 static_cast<double>(data.pipeline.src_vocab->size()),
                                 static_cast<double>(data.pipeline.tgt_vocab->size()),
                                 static_cast<double>(model->parameter_count()),
                                 static_cast<double>(position.step),
                                 static_cast<double>(config_hash & k52)};
  auto rank0 = mine;
  ranks.group->broadcast(rank0);
  std::string differs;
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (mine[i] != rank0[i]) differs += (differs.empty() ? "" : ", ") + names[i];
  std::vector<double> bad{differs.empty() ? 0.0 : 1.0};
  ranks.group->all_reduce_sum(bad);
  if (bad[0] > 0)
    throw std::runtime_error(
        differs.empty()
            ? fmt::format("data-parallel: {} rank(s) differ from rank 0 in their data, model or configuration "
                          "(every rank needs the same corpus, config and seed)",
                          bad[0])
            : fmt::format(
                  "data-parallel: rank {} differs from rank 0 in: {} (every rank needs the same corpus, config and seed)",
                  ranks.group->rank(), differs));
  ranks.group->broadcast_parameters(model);
}

// Data-parallel, after each rank's forward and backward: sums the gradients and the loss over the
// ranks and shares the stop decision. Returns the step's loss over the whole batch.
double Trainer::State::synchronise_step(double loss) {
  ranks.group->all_reduce_gradients(model, 1.0);
  // Rank 0's clock decides the time limits and the budgeted learning rate for every rank.
  double spent = 0;
  if (ranks.root && budget.length_s > 0) spent = local_budget_spent();
  std::vector<double> v{loss, options.stop && options.stop->load() ? 1.0 : 0.0, ranks.root && time_up() ? 1.0 : 0.0,
                        spent};
  ranks.group->all_reduce_sum(v);
  ranks.shared_stop = v[1] > 0;
  ranks.shared_time_up = v[2] > 0;
  budget.shared_spent = v[3];
  return v[0];
}

// At the end of an epoch: validates if that is the cadence, starts the next epoch, and returns
// the end when the epoch limit ends the session.
std::optional<LoopEnd> Trainer::State::advance_epoch_if_done() {
  if (position.batch_in_epoch < static_cast<std::int64_t>(plan.size())) return std::nullopt;
  const auto& tc = config.train;
  if (tc.validate_every == 0 && budget.length_s <= 0 && !validated_now && ranks.root) validate_and_save();
  ++position.epoch;
  position.batch_in_epoch = 0;
  plan = batcher->epoch_plan(position.epoch);
  if (tc.max_epochs > 0 && position.epoch >= tc.max_epochs)
    return LoopEnd{RunStatus::kFinished, fmt::format("reached max_epochs {}", tc.max_epochs)};
  return std::nullopt;
}

// fp16 loss scaling: divides the gradients by the scale; false (and the scale halved) when they
// overflowed, in which case the step must be skipped.
bool Trainer::State::unscale_gradients() {
  if (scaling.loss_scale == 1.0) return true;
  bool finite = true;
  for (auto& p : model->parameters()) {
    if (!p.grad().defined()) continue;
    p.grad().mul_(1.0 / scaling.loss_scale);
    finite = finite && at::isfinite(p.grad()).all().item<bool>();
  }
  if (!finite) {
    scaling.loss_scale = std::max(1.0, scaling.loss_scale / 2);
    scaling.clean_steps = 0;
    obs().on_log(fmt::format("fp16 gradients overflowed at step {}: step skipped, loss scale now {}", position.step + 1,
                             scaling.loss_scale));
    return false;
  }
  if (++scaling.clean_steps % 2000 == 0) scaling.loss_scale *= 2;
  return true;
}

// Forward and backward over `accumulate` batches; returns the mean loss per target token.
// Data-parallel: this rank's share of each batch, its loss sum divided by the whole batch's token
// count, so that summing gradients and losses over the ranks gives one process's step exactly
// (up to float rounding); `tokens` counts the whole batch. Several threads on a CPU (`shares`):
// the same split again inside the process, each thread on its share (ts/train/thread_shards.h).
double Trainer::State::train_step(std::int64_t& tokens) {
  const auto& tc = config.train;
  double step_loss = 0;
  tokens = 0;
  speed.step_flops = 0;
  clear_gradients(parameters);
  step_squared_norm.reset();
  // The gradients' norm for clipping comes with the shares' sum where that sum is the whole gradient:
  // one batch, one process, no loss scale to undo.
  const bool norm_with_sum = tc.accumulate == 1 && !ranks.group && scaling.loss_scale == 1.0;
  const double scale = scaling.loss_scale / tc.accumulate;
  for (int micro = 0; micro < tc.accumulate && position.batch_in_epoch < static_cast<std::int64_t>(plan.size());
       ++micro) {
    const auto& indices = plan[position.batch_in_epoch++];
    const std::int64_t batch_tokens = target_tokens(data.train, indices);
    tokens += batch_tokens;
    speed.step_flops +=
        training_flops(config.model, static_cast<double>(data.pipeline.tgt_vocab->size()), data.train, indices);
    std::vector<std::size_t> shard;
    if (ranks.group) {
      shard = shard_of(indices, ranks.group->rank(), ranks.group->world_size());
      if (shard.empty()) continue;  // fewer sentences than ranks: this one adds nothing
    }
    const auto& rows = ranks.group ? shard : indices;
    step_loss += forward_backward_batch(model, data.train, rows, device, precision, tc.label_smoothing,
                                        static_cast<double>(batch_tokens), scale, shares, parameters, &packed_weights,
                                        norm_with_sum ? &step_squared_norm : nullptr) /
                 tc.accumulate;
  }
  return step_loss;
}

TrainingProgress Trainer::State::progress(double loss, double lr, double step_seconds, std::int64_t tokens) {
  const auto& tc = config.train;
  auto& pos = position;
  speed.session_tokens += tokens;
  speed.session_flops += speed.step_flops;
  train_seconds += step_seconds;
  speed.window_tokens += tokens;
  speed.window_seconds += step_seconds;
  if (speed.window_seconds >= 1.0 || speed.tokens_per_s == 0) {
    speed.tokens_per_s = speed.window_tokens / std::max(speed.window_seconds, 1e-9);
    speed.window_tokens = 0;
    speed.window_seconds = 0;
  }
  speed.smoothed_loss = smooth_loss(speed.smoothed_loss, loss, pos.step == speed.steps_at_start + 1);
  pos.elapsed_seconds = elapsed_before + train_seconds;
  if (budget.length_s > 0) pos.budget_used_seconds = budget_used();

  TrainingProgress p;
  p.step = pos.step;
  p.epoch = pos.epoch;
  p.batch_in_epoch = pos.batch_in_epoch;
  p.batches_per_epoch = static_cast<std::int64_t>(plan.size());
  p.loss = loss;
  p.smoothed_loss = speed.smoothed_loss;
  p.lr = lr;
  p.tokens_per_s = speed.tokens_per_s;
  p.average_tokens_per_s = speed.session_tokens / std::max(train_seconds, 1e-9);
  p.elapsed_s = pos.elapsed_seconds;
  // Fraction done and ETA against the nearest limit.
  const double wall = now() - session_start;
  const double steps_per_s = (pos.step - speed.steps_at_start) / std::max(wall, 1e-9);
  std::vector<std::pair<double, double>> limits;  // (fraction, eta)
  if (tc.max_steps > 0)
    limits.emplace_back(static_cast<double>(pos.step) / tc.max_steps,
                        (tc.max_steps - pos.step) / std::max(steps_per_s, 1e-9));
  if (tc.max_minutes > 0) limits.emplace_back(wall / (tc.max_minutes * 60), tc.max_minutes * 60 - wall);
  if (budget.length_s > 0) {
    p.budget_left_s = std::max(0.0, budget.length_s - pos.budget_used_seconds);
    limits.emplace_back(pos.budget_used_seconds / budget.length_s, p.budget_left_s);
  }
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
  return p;
}

void Trainer::State::save(CheckpointKind kind, const ValidationResult* v) {
  const std::string file = kind == CheckpointKind::kStep ? fmt::format("step-{}.ckpt", position.step)
                                                         : std::string(checkpoint_kind_name(kind)) + ".ckpt";
  if (budget.length_s > 0) position.budget_used_seconds = budget_used();
  CheckpointMeta m;
  m.config = config;
  m.position = position;
  m.corpus_path = options.corpus_path;
  m.pipeline = data.pipeline.to_json();
  if (v && v->scored) m.metrics = v->to_json();  // no dev pairs: no scores to keep
  // With weight averaging the file's model weights are the average, and the weights as trained
  // travel beside them for resuming.
  AverageInModel averaged(*this);
  NamedTensors raw;
  if (averaging.weights && !averaging.keep_as_trained) {
    std::size_t i = 0;
    for (const auto& item : model->named_parameters())
      raw.emplace_back("raw." + item.key(), averaging.weights->average()[i++]);
    for (const auto& item : model->named_buffers()) raw.emplace_back("raw." + item.key(), item.value());
  }
  const auto header = save_checkpoint(path(file), m, model, optimizer.get(), raw.empty() ? nullptr : &raw);
  obs().on_checkpoint(
      {path(file), kind, position.step, header.sha256, header.header_bytes + header.payload_bytes, m.metrics});
  if (kind == CheckpointKind::kLast) summary.last_checkpoint = path(file);
  if (kind == CheckpointKind::kBest) summary.best_checkpoint = path(file);
  if (kind == CheckpointKind::kStep) {
    step_checkpoints.push_back(path(file));
    while (static_cast<int>(step_checkpoints.size()) > config.train.keep_last) {
      std::error_code ec;
      fs::remove(step_checkpoints.front(), ec);
      step_checkpoints.erase(step_checkpoints.begin());
    }
  }
}

void Trainer::State::validate_and_save(bool final) {
  const auto& tc = config.train;
  const double t0 = now();
  // At the end of a run with weight averaging, both the average and the weights as trained are
  // scored on the dev pairs, and the better is kept (at the end of a schedule that decays to zero
  // the weights as trained are often as good: docs/benchmarks.md, "Time to quality").
  const bool compare = final && averaging.weights && !data.dev.empty();
  ValidationResult as_trained;
  if (compare) as_trained = validate();
  std::optional<AverageInModel> averaged;
  averaged.emplace(*this);
  auto v = validate();
  if (compare) {
    const bool trained_better =
        tc.best_metric == BestMetric::kLoss ? as_trained.loss < v.loss : as_trained.bleu > v.bleu;
    obs().on_log(fmt::format(
        "weight averaging: dev BLEU {:.2f} (chrF {:.2f}) averaged, {:.2f} ({:.2f}) as trained; "
        "keeping the {}",
        v.bleu, v.chrf, as_trained.bleu, as_trained.chrf, trained_better ? "weights as trained" : "average"));
    if (trained_better) {
      averaged.reset();  // the weights as trained go back into the model, and are what is saved
      averaging.keep_as_trained = true;
      v = as_trained;
    }
    v.bleu_as_trained = as_trained.bleu;
    v.chrf_as_trained = as_trained.chrf;
  }
  const double metric = tc.best_metric == BestMetric::kLoss ? v.loss : v.bleu;
  // Without dev pairs there is nothing to compare: the latest weights are the best we know (else
  // best.ckpt would stay at the first validation for the whole run).
  v.improved = data.dev.empty() || is_better(tc, metric, position);
  if (data.dev.empty()) {
    position.bad_validations = 0;
  } else if (v.improved) {
    position.best_metric = metric;
    position.has_best = true;
    position.bad_validations = 0;
  } else {
    ++position.bad_validations;
  }
  summary.validated = v.scored;
  summary.last_validation = v;
  obs().on_validation(v);
  if (v.improved) save(CheckpointKind::kBest, &v);
  save(CheckpointKind::kLast, &v);
  if (tc.keep_last > 0) save(CheckpointKind::kStep, &v);
  validated_now = true;
  // A budgeted run keeps back what the final validation will take: this one's time (twice the
  // decoding with averaging, which also scores the weights as trained), with a fifth to spare.
  const double took = now() - t0;
  budget.validating_s += took;
  ++budget.validations_done;
  if (budget.length_s > 0 && !final)
    budget.reserve_s = std::min(0.25 * budget.length_s, 1.2 * (took + (averaging.weights ? v.seconds : 0.0)));
}

// One line on where a budgeted run's time went, against the budget.
std::string Trainer::State::budget_breakdown() const {
  const double used = budget_used();
  const double training = std::max(0.0, used - budget.used_before - budget.validating_s);
  const auto share = [&](double s) { return fmt::format("{:.1f} s ({:.1f}%)", s, 100 * s / budget.length_s); };
  return fmt::format(
      "time budget of {} spent: {} before training (program start, data, tokenizers, recipe, model){}, {} training, {} in {} "
      "validation{} with {} checkpoints; {:.1f} s in all, {}; {:.1f} passes over the training pairs made",
      minutes_text(budget.length_s / 60), share(budget.before_training_s),
      budget.used_before > budget.before_training_s + 1e-9
          ? fmt::format(", {:.1f} s in earlier sessions", budget.used_before - budget.before_training_s)
          : "",
      share(training), share(budget.validating_s), budget.validations_done, budget.validations_done == 1 ? "" : "s",
      budget.validations_done == 1 ? "its" : "their", used,
      used <= budget.length_s ? fmt::format("{:.1f} s inside the budget", budget.length_s - used)
                              : fmt::format("{:.1f} s over it", used - budget.length_s),
      static_cast<double>(position.epoch) +
          static_cast<double>(position.batch_in_epoch) / static_cast<double>(std::max<std::size_t>(plan.size(), 1)));
}

// After the loop: a final validation when the run finished, else a last checkpoint.
void Trainer::State::finish(const LoopEnd& end) {
  summary.status = end.status;
  summary.message = end.message;
  if (!ranks.root) return;
  const bool stepped = position.step > speed.steps_at_start;
  if (summary.status != RunStatus::kFailed && stepped && !validated_now) {
    if (summary.status == RunStatus::kFinished) {
      validate_and_save(/*final=*/true);
    } else {
      save(CheckpointKind::kLast, summary.validated ? &summary.last_validation : nullptr);
    }
  }
}

// One step's forward and backward (data-parallel: summed over the ranks, with the stop decision).
StepLoss Trainer::State::forward_backward() {
  if (plan.empty()) throw std::runtime_error("no training batches");
  validated_now = false;
  StepLoss result;
  result.loss = train_step(result.tokens);
  if (fault_point("loss")) result.loss = std::numeric_limits<double>::quiet_NaN();  // tests/cli/fault_test.sh
  if (ranks.group) result.loss = synchronise_step(result.loss);
  step_tokens = result.tokens;
  return result;
}

bool Trainer::State::update() {
  if (!unscale_gradients()) return false;
  step_lr = learning_rate_now();
  set_lr(*optimizer, step_lr);
  if (!clipped_fused_adam_step(*optimizer, config.train.clip_norm, step_squared_norm)) optimizer->step();
  ++position.step;
  position.tokens_seen += step_tokens;
  if (averaging.weights) averaging.weights->update(parameters, position.step);
  return true;
}

// Validation on the budget's schedule, or every train.validate_every steps with early stopping.
std::optional<LoopEnd> Trainer::State::validate_if_due() {
  const auto& tc = config.train;
  validate_on_budget();
  if (tc.validate_every <= 0 || budget.length_s > 0 || position.step % tc.validate_every != 0) return std::nullopt;
  if (ranks.root) validate_and_save();
  bool early_stop = ranks.root && tc.patience > 0 && position.bad_validations >= tc.patience;
  if (ranks.group && tc.patience > 0) {  // rank 0's decision, for every rank
    std::vector<double> flag{early_stop ? 1.0 : 0.0};
    ranks.group->all_reduce_sum(flag);
    early_stop = flag[0] > 0;
  }
  if (early_stop)
    return LoopEnd{RunStatus::kEarlyStopped, fmt::format("no improvement in {} validations", tc.patience)};
  return std::nullopt;
}

void Trainer::State::fill_summary() {
  summary.steps = position.step;
  summary.seconds = train_seconds;
  summary.average_tokens_per_s = speed.session_tokens / std::max(train_seconds, 1e-9);
  summary.model_flops_per_s = speed.session_flops / std::max(train_seconds, 1e-9);
  if (!ranks.root) return;
  if (summary.last_checkpoint.empty() && fs::exists(path("last.ckpt"))) summary.last_checkpoint = path("last.ckpt");
  if (summary.best_checkpoint.empty() && fs::exists(path("best.ckpt"))) summary.best_checkpoint = path("best.ckpt");
}

TrainingSummary Trainer::run() {
  auto& st = *s_;
  st.start_session();
  st.model->train();
  LoopControls controls;
  controls.pause = st.options.pause;
  controls.stop = st.options.stop;
  controls.on_nonfinite = st.config.train.on_nonfinite;
  controls.clock = [&st] { return st.now(); };
  const auto end = run_training_loop(st, controls);
  st.summary.status = end.status;  // finish() set them too, unless an exception came first
  st.summary.message = end.message;
  st.fill_summary();
  if (st.ranks.root && st.budget.length_s > 0) st.obs().on_log(st.budget_breakdown());
  if (st.observer) st.observer->on_finished(st.summary);  // every rank, so each can report its end
  return st.summary;
}

}  // namespace ts
