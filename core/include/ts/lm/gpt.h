// SPDX-License-Identifier: GPL-3.0-or-later
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

#include "ts/lm/lm_config.h"

namespace ts {

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
/// An independent copy of `model`'s weights on `device`, in eval mode (to generate from while the
/// original goes on training on another thread).
LanguageModel copy_language_model(LanguageModelImpl& model, const at::Device& device);

}  // namespace ts
