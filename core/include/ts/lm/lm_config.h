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

/// The language model's architecture: nanoGPT's decoder-only Transformer, or the tutorial's bigram
/// table (each token's logits for the next one, nothing else).
enum class LmKind { kGpt, kBigram };
/// "gpt", "bigram".
const char* lm_kind_name(LmKind kind);
/// The inverse of lm_kind_name; throws std::invalid_argument naming the accepted values.
LmKind parse_lm_kind(const std::string& name);

/// How a language model's text becomes tokens: one per code point (newlines, spaces and case kept), or
/// SentencePiece pieces (BPE or unigram) per line with "\n" a token of its own.
enum class LmTokenizer { kChar, kBpe, kUnigram };
/// "char", "bpe", "unigram".
const char* lm_tokenizer_name(LmTokenizer tokenizer);
/// The inverse of lm_tokenizer_name; throws std::invalid_argument naming the accepted values.
LmTokenizer parse_lm_tokenizer(const std::string& name);

struct LmConfig {
  std::string preset = "custom";
  LmKind kind = LmKind::kGpt;
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
  LmTokenizer tokenizer = LmTokenizer::kChar;
  int vocab_size = 1000;  // bpe/unigram only
  int threads = 0;        // 0 = all cores
  DeviceChoice device = DeviceChoice::kAuto;
  Precision precision = Precision::kFp32;  // fp32 or bf16 (autocast around the forward pass; no fp16: no loss scaling)

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
