// SPDX-License-Identifier: GPL-3.0-or-later
// A language model's configuration and presets, without LibTorch: the desktop app's panels and
// the CLI's option parsing include this header only (ts/lm/gpt.h builds the models).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ts/train/config.h"

namespace ts {

struct LmConfig {
  std::string preset = "custom";
  std::string kind = "gpt";  // "gpt" | "bigram"
  int n_layer = 4, n_head = 4, n_embd = 64;
  int block_size = 32;  // context length in tokens
  double dropout = 0.0;
  int batch_size = 16;
  double lr = 1e-3;            // AdamW
  double weight_decay = 0.01;  // AdamW's default, as torch.optim.AdamW in the tutorial
  std::int64_t max_steps = 5000;
  double max_minutes = 0;   // 0 = no time limit
  int eval_interval = 500;  // estimate train/val loss every N steps (and at the end)
  int eval_iters = 200;     // batches averaged per split and estimate
  std::uint64_t seed = 1337;
  std::string tokenizer = "char";  // "char" (one token per code point) | "bpe" | "unigram" (SentencePiece)
  int vocab_size = 1000;           // bpe/unigram only
  int threads = 0;                 // 0 = all cores
  std::string device = "auto";     // "auto" | "cpu" | "cuda"
  std::string precision = "fp32";  // "fp32" | "bf16" (autocast around the forward pass; no fp16: no loss scaling)

  nlohmann::json to_json() const;
  /// Strict: unknown keys and wrong types throw ConfigError naming the key ("lr: expected a number").
  static LmConfig from_json(const nlohmann::json& j);
  /// Every problem, one per entry, each naming its key; empty when valid.
  std::vector<std::string> problems() const;
  /// Throws ConfigError listing problems().
  void validate() const;
  /// "key=value" (value parsed as JSON, else as a string); throws ConfigError naming the key.
  void set(const std::string& assignment);
  /// The trainable parameters of this model over a vocabulary of `vocab_size` tokens, computed
  /// without building it (the UI shows it before training).
  std::int64_t parameter_estimate(std::int64_t vocab_size) const;
};

/// "shakespeare-char" (the tutorial's small model), "shakespeare-char-large", "bigram".
LmConfig lm_preset(const std::string& name);
std::vector<std::string> lm_preset_names();

}  // namespace ts
