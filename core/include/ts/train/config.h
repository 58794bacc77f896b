// SPDX-License-Identifier: GPL-3.0-or-later
// Typed experiment configuration: one struct per section, parsed and validated at one boundary. The
// model and decode sections are defined by their own layers (ts/model/model_config.h,
// ts/decode/decode_config.h); the data and train sections here.
// Unknown keys and wrong types are errors that name the key. Presets from the seed tutorials.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ts/decode/decode_config.h"
#include "ts/model/compute.h"
#include "ts/model/model_config.h"
#include "ts/text/split.h"
#include "ts/text/tokenizer.h"
#include "ts/train/loop.h"

namespace ts {

struct DataConfig {
  TokenizerConfig src_tokenizer;
  TokenizerConfig tgt_tokenizer;
  bool shared_vocab = false;  // one vocabulary (and one SentencePiece model) for both sides
  bool cjk_chars = true;      // a Chinese/Japanese side with a "word" tokenizer is split per character instead
  int min_freq = 1;
  int max_vocab = 0;  // per side, including specials; 0 = no limit
  double dev = 0.1;   // fraction (< 1) or number of pairs (>= 1)
  double test = 0.1;
  int max_len = 100;  // training pairs longer than this (tokens, either side) are dropped
  std::uint64_t split_seed = 1234;
  SplitMethod split = SplitMethod::kGroupedBySource;  // "grouped" (pairs sharing a source stay together) or "pairs"
};

/// How the learning rate moves over training (ts/train/schedule.h).
enum class LrSchedule { kNoam, kConstant, kLinear, kCosine };
/// "noam", "constant", "linear", "cosine".
const char* lr_schedule_name(LrSchedule schedule);
/// The inverse of lr_schedule_name; throws std::invalid_argument naming the accepted values.
LrSchedule parse_lr_schedule(const std::string& name);

/// Adam adds the weight decay to the gradient (L2); AdamW decouples it.
enum class Optimizer { kAdam, kAdamW };
/// "adam", "adamw".
const char* optimizer_name(Optimizer optimizer);
/// The inverse of optimizer_name; throws std::invalid_argument naming the accepted values.
Optimizer parse_optimizer(const std::string& name);

/// What picks the best checkpoint: dev BLEU (higher is better) or dev loss (lower is better).
enum class BestMetric { kBleu, kLoss };
/// "bleu", "loss".
const char* best_metric_name(BestMetric metric);
/// The inverse of best_metric_name; throws std::invalid_argument naming the accepted values.
BestMetric parse_best_metric(const std::string& name);

struct TrainConfig {
  Optimizer optimizer = Optimizer::kAdam;
  double lr = 1.0;  // noam: factor; otherwise the peak learning rate
  LrSchedule schedule = LrSchedule::kNoam;
  int warmup = 2000;  // steps
  double adam_beta1 = 0.9, adam_beta2 = 0.98, adam_eps = 1e-9;
  double weight_decay = 0.0;
  double label_smoothing = 0.1;
  double clip_norm = 1.0;  // 0 = no clipping
  // A NaN/Inf loss: "stop" the run (Fail), or "skip" the step (stops after 20 in a row).
  NonFinitePolicy on_nonfinite = NonFinitePolicy::Fail;
  int accumulate = 1;        // gradient accumulation steps per optimizer step
  int batch_tokens = 0;      // token budget per batch (max(src,tgt) padded tokens); 0 = use batch_sentences
  int batch_sentences = 64;  // sentences per batch when batch_tokens == 0 (length-sorted buckets)
  int max_steps = 0;         // 0 = no step limit
  int max_epochs = 0;        // 0 = no epoch limit
  double max_minutes = 0;    // 0 = no time limit
  /// A time budget in minutes of wall clock (validations included, paused time not): the linear
  /// and cosine schedules decay to zero exactly at the deadline, validations are spread over the
  /// budget, and the run ends on time with a final validation of the weights it keeps (0 = none).
  double budget_minutes = 0;
  int budget_validations = 0;  // validations in a budgeted run, the final one included (0 = by length)
  /// Weight averaging (Marian's exponential smoothing): after each update the average moves this
  /// far towards the weights, or 9/(10+t) at update t early on, whichever is larger. The average
  /// (fp32) is what validation, best.ckpt, eval and translation use. 0 = off.
  double ema = 0;
  int validate_every = 1000;    // steps; 0 = once per epoch
  int dev_max_sentences = 500;  // cap for BLEU/chrF decoding at each validation
  int samples = 3;              // sample translations printed per validation
  std::string probe;            // a sentence translated at every validation, its
                                // cross-attention recorded (empty = none)
  BestMetric best_metric = BestMetric::kBleu;
  int patience = 0;   // validations without improvement before stopping; 0 = never
  int keep_last = 0;  // step-N checkpoints kept besides last and best (0 = none)
  std::uint64_t seed = 42;
  DeviceChoice device = DeviceChoice::kAuto;
  int threads = 0;  // 0 = all cores
  /// On a CPU with several threads, in fp32, or in bf16 on AVX-512 BF16 dot products: each thread
  /// runs forward and backward on its own share of every batch, the gradients adding up
  /// (ts/train/thread_shards.h), rather than the whole batch going through LibTorch's operations one
  /// at a time, each shared among the threads. Not under bf16 autocast (batch_shares in
  /// ts/train/trainer.h says why). The machine's measured speed (ts/train/calibration.h) follows it.
  bool shard_batch = true;
  // bf16: autocast (a CPU with AMX or AVX-512 BF16, or a GPU); fp16: a GPU, or a CPU with AVX-512
  // FP16 (ts/model/fp16_products.h); auto: ts/train/trainer.h resolve_precision.
  Precision precision = Precision::kFp32;
};

struct ExperimentConfig {
  std::string preset = "custom";
  DataConfig data;
  ModelConfig model;
  TrainConfig train;
  DecodeConfig decode;

  nlohmann::json to_json() const;
  /// Strict: unknown keys and wrong types throw ConfigError naming the key ("train.lr: expected a number").
  static ExperimentConfig from_json(const nlohmann::json& j);
  /// A configuration a run saved (checkpoint, model folder): as from_json, except that a data
  /// section without "split" was written before grouped splits existed and so means "pairs", the
  /// split that run was trained and tested with.
  static ExperimentConfig from_saved_json(const nlohmann::json& j);
  /// Applies "section.key=value" (value parsed as JSON, falling back to a string).
  void set(const std::string& assignment);
  /// Checks combinations (heads divide d_model, shared embeddings need a shared vocab, ...).
  /// Returns every problem found; empty when the config is usable.
  std::vector<std::string> problems() const;
  /// Throws ConfigError listing problems() when there are any.
  void validate() const;
};

/// Named presets: "auto", "annotated", "annotated-debug", "nanogpt-deu", "scratch-bpe", "demo", "tiny".
/// "auto" is a starting point that ts/train/auto_recipe.h fits to a corpus and a machine.
std::vector<std::string> preset_names();
/// One line per preset saying where it comes from.
std::string preset_description(const std::string& name);
/// Throws ConfigError listing the valid names for an unknown preset.
ExperimentConfig preset(const std::string& name);

/// A time budget as people write it: "20" (minutes), "20m", "90s", "1h30m", "1h 30m", "2h" ->
/// minutes. Throws ConfigError naming the text for anything else, zero, or a negative value.
double parse_budget_minutes(const std::string& text);
/// Minutes as the logs say them: "45 s", "20 min", "1 h 30 min".
std::string minutes_text(double minutes);

/// Reads a JSON config file (throws ConfigError naming the file on I/O or parse errors).
ExperimentConfig load_config_file(const std::string& path);

}  // namespace ts
