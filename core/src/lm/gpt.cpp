// SPDX-License-Identifier: GPL-3.0-or-later
// Language models (see ts/lm/gpt.h).
#include "ts/lm/gpt.h"

#include <cmath>

#include <fmt/format.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include "ts/model/attention.h"
#include "ts/model/size.h"
#include "ts/model/transformer.h"

namespace ts {

// ---------------------------------------------------------------- models

at::Tensor LanguageModelImpl::loss(const at::Tensor& idx, const at::Tensor& targets) {
  const auto logits = forward(idx);
  return at::nll_loss(at::log_softmax(logits.reshape({-1, logits.size(-1)}), -1, at::kFloat), targets.reshape({-1}));
}

std::int64_t LanguageModelImpl::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

namespace {

void check_length(std::int64_t end, std::int64_t block_size) {
  if (end > block_size)
    throw std::invalid_argument(fmt::format("context of {} tokens exceeds the block size {}", end, block_size));
}

// Each token's logits for the next one are a row of the table: no context beyond the last token.
class BigramImpl : public LanguageModelImpl {
 public:
  BigramImpl(const LmConfig& c, std::int64_t vocab) : LanguageModelImpl(c, vocab) {
    table_ = register_module("table", torch::nn::Embedding(vocab, vocab));
  }
  at::Tensor forward(const at::Tensor& idx) override { return table_->forward(idx); }
  at::Tensor feed(LmCache& cache, const at::Tensor& idx) override {
    check_length(cache.length + idx.size(1), config_.block_size);
    cache.length += idx.size(1);
    return table_->forward(idx);
  }

 private:
  torch::nn::Embedding table_{nullptr};
};

torch::nn::LayerNorm layer_norm(std::int64_t d) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}).eps(1e-5));
}

// Pre-LN block: x + drop(attn(ln1(x))), then x + drop(ff(ln2(x))). Attention goes through
// project_self/attend rather than forward() so that the keys and values can be cached.
class GptBlockImpl : public torch::nn::Module {
 public:
  explicit GptBlockImpl(const LmConfig& c) {
    attention =
        register_module("attention", MultiHeadAttention(c.n_embd, c.n_head, c.dropout, /*self_attention=*/true));
    ff_ = register_module("ff", FeedForward(c.n_embd, 4 * c.n_embd, c.dropout));
    norm1_ = register_module("norm1", layer_norm(c.n_embd));
    norm2_ = register_module("norm2", layer_norm(c.n_embd));
    dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
  }
  // x [B, T, D] at positions offset..; k/v: this layer's cache (appended to when `cache`).
  at::Tensor forward(const at::Tensor& x, at::Tensor* k_cache, at::Tensor* v_cache, const at::Tensor& mask) {
    auto [q, k, v] = attention->project_self(norm1_->forward(x));
    if (k_cache) {
      k = k_cache->defined() ? at::cat({*k_cache, k}, 2) : k;
      v = v_cache->defined() ? at::cat({*v_cache, v}, 2) : v;
      *k_cache = k;
      *v_cache = v;
    }
    auto h = x + fast_dropout(dropout_, attention->attend(q, k, v, mask));
    return h + fast_dropout(dropout_, ff_->forward(norm2_->forward(h)));
  }
  MultiHeadAttention attention{nullptr};

 private:
  FeedForward ff_{nullptr};
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(GptBlock);

class GptImpl : public LanguageModelImpl {
 public:
  GptImpl(const LmConfig& c, std::int64_t vocab) : LanguageModelImpl(c, vocab) {
    token_embed_ = register_module("token_embed", torch::nn::Embedding(vocab, c.n_embd));
    position_embed_ = register_module("position_embed", torch::nn::Embedding(c.block_size, c.n_embd));
    dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
    auto list = register_module("blocks", torch::nn::ModuleList());
    for (int i = 0; i < c.n_layer; ++i) {
      blocks_.emplace_back(c);
      list->push_back(blocks_.back());
    }
    norm_ = register_module("norm", layer_norm(c.n_embd));
    head_ = register_module("head", torch::nn::Linear(c.n_embd, vocab));
    // GPT-2's initialisation, as in the tutorial: N(0, 0.02) weights, zero biases.
    torch::NoGradGuard no_grad;
    for (auto& item : named_parameters()) {
      if (item.key().find("norm") != std::string::npos) continue;
      auto& p = item.value();
      if (p.dim() > 1)
        torch::nn::init::normal_(p, 0.0, 0.02);
      else
        p.zero_();
    }
  }

  at::Tensor forward(const at::Tensor& idx) override { return run(idx, nullptr); }
  at::Tensor feed(LmCache& cache, const at::Tensor& idx) override { return run(idx, &cache); }

  void set_record_attention(bool on) override {
    for (auto& b : blocks_) b->attention->set_record(on);
  }
  std::vector<at::Tensor> recorded_attention() const override {
    std::vector<at::Tensor> maps;
    for (const auto& b : blocks_) maps.push_back(b->attention->last_weights());
    return maps;
  }

 private:
  at::Tensor run(const at::Tensor& idx, LmCache* cache) {
    const auto offset = cache ? cache->length : 0;
    const auto T = idx.size(1), end = offset + T;
    check_length(end, config_.block_size);
    auto positions = at::arange(offset, end, idx.options().dtype(at::kLong));
    auto x = fast_dropout(dropout_, token_embed_->forward(idx) + position_embed_->forward(positions));
    // Query i (position offset + i) sees keys 0..offset + i: rows offset.. of the full causal mask.
    // One new token sees every cached key, so it needs no mask.
    const auto mask = T > 1 ? causal_mask(end, x.options()).slice(2, offset, end) : at::Tensor();
    if (cache) {
      cache->k.resize(blocks_.size());
      cache->v.resize(blocks_.size());
    }
    for (std::size_t i = 0; i < blocks_.size(); ++i)
      x = blocks_[i]->forward(x, cache ? &cache->k[i] : nullptr, cache ? &cache->v[i] : nullptr, mask);
    if (cache) cache->length = end;
    return linear(head_, norm_->forward(x));
  }

  torch::nn::Embedding token_embed_{nullptr}, position_embed_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  std::vector<GptBlock> blocks_;
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear head_{nullptr};
};

}  // namespace

LanguageModel build_language_model(const LmConfig& config, std::int64_t vocab_size) {
  config.validate();
  if (vocab_size < 1) throw ConfigError("language model: the vocabulary is empty");
  // Refused before anything is allocated (a configuration, or a checkpoint's, may ask for terabytes).
  check_memory(4.0 * static_cast<double>(config.parameter_estimate(vocab_size)), "the language model's weights",
               "make n_embd, n_layer or block_size smaller");
  if (config.kind == LmKind::kBigram) return std::make_shared<BigramImpl>(config, vocab_size);
  return std::make_shared<GptImpl>(config, vocab_size);
}

LanguageModel copy_language_model(LanguageModelImpl& model, const at::Device& device) {
  auto copy = build_language_model(model.config(), model.vocab_size());
  torch::NoGradGuard no_grad;
  auto params = model.named_parameters(), buffers = model.named_buffers();
  for (auto& item : copy->named_parameters()) item.value().copy_(params[item.key()]);
  for (auto& item : copy->named_buffers()) item.value().copy_(buffers[item.key()]);
  copy->to(device);
  copy->eval();
  return copy;
}

}  // namespace ts
