// Decoder-only language models, as in the nanoGPT/"Let's build GPT" tutorial: a bigram baseline (a
// V x V table of next-token logits) and a GPT (token + learned position embeddings, pre-LN blocks of
// causal multi-head self-attention and a feed-forward layer, final LayerNorm, LM head). The GPT
// reuses ts::MultiHeadAttention and ts::FeedForward from the translation model.
//
// Shape legend: B batch, T positions (<= block_size), D n_embd, H heads, V vocabulary.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/nn/module.h>

#include "ts/train/config.h"

namespace ts {

struct LmConfig {
  std::string preset = "custom";
  std::string kind = "gpt";         // "gpt" | "bigram"
  int n_layer = 4, n_head = 4, n_embd = 64;
  int block_size = 32;              // context length in tokens
  double dropout = 0.0;
  int batch_size = 16;
  double lr = 1e-3;                 // AdamW
  double weight_decay = 0.01;       // AdamW's default, as torch.optim.AdamW in the tutorial
  std::int64_t max_steps = 5000;
  double max_minutes = 0;           // 0 = no time limit
  int eval_interval = 500;          // estimate train/val loss every N steps (and at the end)
  int eval_iters = 200;             // batches averaged per split and estimate
  std::uint64_t seed = 1337;
  std::string tokenizer = "char";   // "char" (one token per code point) | "bpe" | "unigram" (SentencePiece)
  int vocab_size = 1000;            // bpe/unigram only
  int threads = 0;                  // 0 = all cores
  std::string device = "auto";      // "auto" | "cpu" | "cuda"
  std::string precision = "fp32";   // "fp32" | "bf16" (autocast around the forward pass; no fp16: no loss scaling)

  nlohmann::json to_json() const;
  /// Strict: unknown keys and wrong types throw ConfigError naming the key ("lr: expected a number").
  static LmConfig from_json(const nlohmann::json& j);
  /// Every problem, one per entry, each naming its key; empty when valid.
  std::vector<std::string> problems() const;
  /// Throws ConfigError listing problems().
  void validate() const;
  /// "key=value" (value parsed as JSON, else as a string); throws ConfigError naming the key.
  void set(const std::string& assignment);
};

/// "shakespeare-char" (the tutorial's small model), "shakespeare-char-large", "bigram".
LmConfig lm_preset(const std::string& name);
std::vector<std::string> lm_preset_names();

/// Keys and values of a language model's self-attention, per layer [B, H, t, K]; `length` tokens so far.
struct LmCache {
  std::vector<at::Tensor> k, v;
  std::int64_t length = 0;
};

/// What the trainer and the generator see of a language model.
class LanguageModelImpl : public torch::nn::Module {
 public:
  LanguageModelImpl(LmConfig config, std::int64_t vocab_size) : config_(std::move(config)), vocab_(vocab_size) {}
  /// idx [B, T] (T <= block_size) -> logits [B, T, V].
  virtual at::Tensor forward(const at::Tensor& idx) = 0;
  /// Appends tokens idx [B, T'] at positions cache.length.. (cache.length + T' <= block_size) and
  /// returns their logits [B, T', V]: the same as forward() on the whole context, with the keys and
  /// values of earlier tokens taken from the cache.
  virtual at::Tensor feed(LmCache& cache, const at::Tensor& idx) = 0;
  /// Attention recording (GPT only): the next forward()/feed() keeps [B, H, T, S] per layer.
  virtual void set_record_attention(bool) {}
  virtual std::vector<at::Tensor> recorded_attention() const { return {}; }

  /// Mean cross-entropy of logits(idx) against targets [B, T].
  at::Tensor loss(const at::Tensor& idx, const at::Tensor& targets);
  const LmConfig& config() const { return config_; }
  std::int64_t vocab_size() const { return vocab_; }
  std::int64_t block_size() const { return config_.block_size; }
  std::int64_t parameter_count() const;

 protected:
  LmConfig config_;
  std::int64_t vocab_;
};
using LanguageModel = std::shared_ptr<LanguageModelImpl>;

/// Builds config.kind's model for a vocabulary of `vocab_size` (validates the config first).
LanguageModel build_language_model(const LmConfig& config, std::int64_t vocab_size);

}  // namespace ts
