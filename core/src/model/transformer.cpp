// SPDX-License-Identifier: GPL-3.0-or-later
// Encoder-decoder Transformer (see ts/model/transformer.h for the shape legend).
#include "ts/model/transformer.h"

#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

#include <torch/nn/init.h>

#include "ts/model/embedding_rows.h"
#include "ts/model/packed_transformer.h"
#include "ts/model/size.h"
#include "ts/text/vocab.h"

namespace ts {

at::Tensor sinusoidal_table(std::int64_t positions, std::int64_t d_model) {
  auto pos = at::arange(positions, at::kFloat).unsqueeze(1);                                   // [P, 1]
  auto div = at::exp(at::arange(0, d_model, 2, at::kFloat) * (-std::log(10000.0) / d_model));  // [D/2]
  auto table = at::zeros({positions, d_model});
  table.slice(1, 0, d_model, 2).copy_(at::sin(pos * div));
  table.slice(1, 1, d_model, 2).copy_(at::cos(pos * div));
  return table;
}

FeedForwardImpl::FeedForwardImpl(std::int64_t d_model, std::int64_t d_ff, double dropout) {
  in_ = register_module("fc1", torch::nn::Linear(d_model, d_ff));
  out_ = register_module("fc2", torch::nn::Linear(d_ff, d_model));
  dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
}

at::Tensor FeedForwardImpl::forward(const at::Tensor& x) {
  return linear(out_, relu_dropout(dropout_, linear(in_, x)));
}

namespace {
torch::nn::LayerNorm layer_norm(std::int64_t d) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}).eps(1e-6));
}

// Residual sublayer: pre-LN x + drop(f(norm(x))), post-LN norm(x + drop(f(x))).
template <class F>
at::Tensor residual(bool pre_norm, const at::Tensor& x, torch::nn::LayerNorm& norm, torch::nn::Dropout& drop, F&& f) {
  if (pre_norm) return x + fast_dropout(drop, f(ts::layer_norm(norm, x)));
  return ts::layer_norm(norm, x + fast_dropout(drop, f(x)));
}
}  // namespace

EncoderLayerImpl::EncoderLayerImpl(const ModelConfig& c) : pre_norm_(c.pre_norm) {
  self_attention = register_module("self_attention", MultiHeadAttention(c.d_model, c.heads, c.dropout, true));
  ff_ = register_module("ff", FeedForward(c.d_model, c.d_ff, c.dropout));
  norm1_ = register_module("norm1", layer_norm(c.d_model));
  norm2_ = register_module("norm2", layer_norm(c.d_model));
  dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
}

at::Tensor EncoderLayerImpl::forward(const at::Tensor& x, const at::Tensor& src_mask) {
  auto h = residual(pre_norm_, x, norm1_, dropout_,
                    [&](const at::Tensor& y) { return self_attention->forward(y, y, src_mask); });
  return residual(pre_norm_, h, norm2_, dropout_, [&](const at::Tensor& y) { return ff_->forward(y); });
}

DecoderLayerImpl::DecoderLayerImpl(const ModelConfig& c) : pre_norm_(c.pre_norm) {
  self_attention = register_module("self_attention", MultiHeadAttention(c.d_model, c.heads, c.dropout, true));
  cross_attention = register_module("cross_attention", MultiHeadAttention(c.d_model, c.heads, c.dropout, false));
  ff_ = register_module("ff", FeedForward(c.d_model, c.d_ff, c.dropout));
  norm1_ = register_module("norm1", layer_norm(c.d_model));
  norm2_ = register_module("norm2", layer_norm(c.d_model));
  norm3_ = register_module("norm3", layer_norm(c.d_model));
  dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
}

at::Tensor DecoderLayerImpl::forward(const at::Tensor& x, const at::Tensor& memory, const at::Tensor& src_mask,
                                     const at::Tensor& tgt_mask) {
  auto h = residual(pre_norm_, x, norm1_, dropout_,
                    [&](const at::Tensor& y) { return self_attention->forward(y, y, tgt_mask); });
  h = residual(pre_norm_, h, norm2_, dropout_,
               [&](const at::Tensor& y) { return cross_attention->forward(y, memory, src_mask); });
  return residual(pre_norm_, h, norm3_, dropout_, [&](const at::Tensor& y) { return ff_->forward(y); });
}

at::Tensor DecoderLayerImpl::forward_rows(const at::Tensor& x, const RealRows& rows, const at::Tensor& memory,
                                          const at::Tensor& src_mask, const at::Tensor& tgt_mask) {
  auto h = residual(pre_norm_, x, norm1_, dropout_,
                    [&](const at::Tensor& y) { return self_attention->forward_rows(y, rows, at::Tensor(), tgt_mask); });
  h = residual(pre_norm_, h, norm2_, dropout_,
               [&](const at::Tensor& y) { return cross_attention->forward_rows(y, rows, memory, src_mask); });
  return residual(pre_norm_, h, norm3_, dropout_, [&](const at::Tensor& y) { return ff_->forward(y); });
}

at::Tensor DecoderLayerImpl::step(const at::Tensor& x, at::Tensor& self_k, at::Tensor& self_v,
                                  const at::Tensor& cross_k, const at::Tensor& cross_v, const at::Tensor& src_mask) {
  auto h = residual(pre_norm_, x, norm1_, dropout_, [&](const at::Tensor& y) {
    auto [q, k, v] = self_attention->project_self(y);  // [B, H, 1, K]
    self_k = self_k.defined() ? at::cat({self_k, k}, 2) : k;
    self_v = self_v.defined() ? at::cat({self_v, v}, 2) : v;
    return self_attention->attend(q, self_k, self_v, at::Tensor());  // all cached positions are in the past
  });
  h = residual(pre_norm_, h, norm2_, dropout_, [&](const at::Tensor& y) {
    return cross_attention->attend(cross_attention->project_query(y), cross_k, cross_v, src_mask);
  });
  return residual(pre_norm_, h, norm3_, dropout_, [&](const at::Tensor& y) { return ff_->forward(y); });
}

void DecoderState::reorder(const at::Tensor& index) {
  const auto cpu_index = index.to(at::kCPU, at::kLong).contiguous();
  const auto* data = cpu_index.data_ptr<std::int64_t>();
  const std::vector<std::int64_t> rows(data, data + cpu_index.numel());
  if (packed_state) {
    packed_state->reorder(rows);  // moves no cache (see PackedDecoding::reorder)
  } else {
    src_mask = src_mask.index_select(0, index);
    if (shortlist_mask.defined()) shortlist_mask = shortlist_mask.index_select(0, index);
    for (auto* list : {&cross_k, &cross_v, &self_k, &self_v})
      for (auto& t : *list)
        if (t.defined()) t = t.index_select(0, index);
  }
  if (record) parents.push_back(rows);
}

AttentionMaps DecoderState::attention(std::int64_t row) const {
  AttentionMaps maps;
  // The row of `row`'s ancestor at each recorded step: reorder k happened after step k.
  std::size_t steps_recorded = 0;
  for (const auto& steps : self_weights) steps_recorded = std::max(steps_recorded, steps.size());
  std::vector<std::int64_t> row_at(steps_recorded);
  std::int64_t r = row;
  for (auto t = static_cast<std::int64_t>(steps_recorded) - 1; t >= 0; --t) {
    if (static_cast<std::size_t>(t) < parents.size())
      r = parents[static_cast<std::size_t>(t)][static_cast<std::size_t>(r)];
    row_at[static_cast<std::size_t>(t)] = r;
  }
  for (const auto& steps : self_weights) {
    if (steps.empty()) continue;
    const auto T = static_cast<std::int64_t>(steps.size());
    const auto H = steps[0].size(1);
    auto full = at::zeros({1, H, T, T});
    for (std::int64_t t = 0; t < T; ++t)
      full.select(2, t).slice(2, 0, t + 1).copy_(steps[t].select(0, row_at[t]).select(1, 0).unsqueeze(0));
    maps.decoder_self.push_back(full);
  }
  for (const auto& steps : cross_weights) {
    if (steps.empty()) continue;
    std::vector<at::Tensor> rows;
    for (std::size_t t = 0; t < steps.size(); ++t)
      rows.push_back(steps[t].select(0, row_at[t]).unsqueeze(0));  // [1, H, 1, S]
    maps.cross.push_back(at::cat(rows, 2));
  }
  return maps;
}

TransformerImpl::TransformerImpl(const ModelConfig& c, std::int64_t src_vocab, std::int64_t tgt_vocab,
                                 std::int64_t pad_id)
    : config_(c),
      src_vocab_(src_vocab),
      tgt_vocab_(tgt_vocab),
      pad_id_(pad_id),
      embed_scale_(c.scale_embeddings ? std::sqrt(static_cast<double>(c.d_model)) : 1.0) {
  src_embed_ = register_module("src_embed", torch::nn::Embedding(src_vocab, c.d_model));
  tgt_embed_ =
      c.share_embeddings ? src_embed_ : register_module("tgt_embed", torch::nn::Embedding(tgt_vocab, c.d_model));
  if (c.positions == Positions::kLearned) {
    learned_positions_ = register_module("positions", torch::nn::Embedding(c.max_positions, c.d_model));
  } else {
    sinusoid_ = register_buffer("sinusoid", sinusoidal_table(std::max<std::int64_t>(c.max_positions, 1024), c.d_model));
  }
  dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
  encoder_ = register_module("encoder", torch::nn::ModuleList());
  decoder_ = register_module("decoder", torch::nn::ModuleList());
  for (int i = 0; i < c.encoder_layers; ++i) {
    encoder_layers_.emplace_back(c);
    encoder_->push_back(encoder_layers_.back());
  }
  for (int i = 0; i < c.decoder_layers; ++i) {
    decoder_layers_.emplace_back(c);
    decoder_->push_back(decoder_layers_.back());
  }
  if (c.pre_norm) {
    encoder_norm_ = register_module("encoder_norm", layer_norm(c.d_model));
    decoder_norm_ = register_module("decoder_norm", layer_norm(c.d_model));
  }
  output_weight_ =
      c.tie_output ? tgt_embed_->weight : register_parameter("output_weight", at::empty({tgt_vocab, c.d_model}));
  output_bias_ = register_parameter("output_bias", at::zeros({tgt_vocab}));
  // Xavier-uniform for every matrix, as in the Annotated Transformer.
  torch::NoGradGuard no_grad;
  for (auto& p : parameters())
    if (p.dim() > 1) torch::nn::init::xavier_uniform_(p);
}

at::Tensor TransformerImpl::position_table() const {
  const auto table = learned_positions_ ? learned_positions_->weight : sinusoid_;
  return table.detach().to(at::kCPU, at::kFloat).clone();
}

at::Tensor TransformerImpl::embedding_table(bool target) const {
  return (target ? tgt_embed_ : src_embed_)->weight.detach().to(at::kCPU, at::kFloat).clone();
}

std::int64_t TransformerImpl::max_length() const {
  return learned_positions_ ? config_.max_positions : sinusoid_.size(0);
}

std::int64_t TransformerImpl::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

at::Tensor TransformerImpl::positions(std::int64_t offset, std::int64_t length, const at::Device& device) {
  if (offset + length > max_length())
    throw std::invalid_argument("sequence of " + std::to_string(offset + length) +
                                " tokens exceeds the model's maximum of " + std::to_string(max_length()) +
                                " positions");
  if (learned_positions_) return learned_positions_->weight.slice(0, offset, offset + length);
  return sinusoid_.slice(0, offset, offset + length).to(device);
}

at::Tensor TransformerImpl::embed(torch::nn::Embedding& table, const at::Tensor& tokens, std::int64_t offset) {
  auto x = embedding_lookup(table->weight, tokens, embed_scale_);  // [B, L, D]
  return fast_dropout(dropout_, x + positions(offset, tokens.size(1), tokens.device()));
}

at::Tensor TransformerImpl::encode(const at::Tensor& src, const at::Tensor& src_mask) {
  auto x = embed(src_embed_, src, 0);
  for (auto& layer : encoder_layers_) x = layer->forward(x, src_mask);
  return encoder_norm_ ? ts::layer_norm(encoder_norm_, x) : x;
}

at::Tensor TransformerImpl::decode(const at::Tensor& tgt_in, const at::Tensor& memory, const at::Tensor& src_mask) {
  auto y = embed(tgt_embed_, tgt_in, 0);
  const auto tgt_mask = causal_mask(tgt_in.size(1), memory.options());
  for (auto& layer : decoder_layers_) y = layer->forward(y, memory, src_mask, tgt_mask);
  return decoder_norm_ ? ts::layer_norm(decoder_norm_, y) : y;
}

at::Tensor TransformerImpl::decode_rows(const at::Tensor& tgt_in, const at::Tensor& memory, const at::Tensor& src_mask,
                                        const RealRows& rows) {
  auto y = rows.gather(embed(tgt_embed_, tgt_in, 0));  // [N, D]
  const auto tgt_mask = causal_mask(tgt_in.size(1), memory.options());
  for (auto& layer : decoder_layers_) y = layer->forward_rows(y, rows, memory, src_mask, tgt_mask);
  return decoder_norm_ ? ts::layer_norm(decoder_norm_, y) : y;
}

at::Tensor TransformerImpl::project(const at::Tensor& hidden) { return linear(hidden, output_weight_, output_bias_); }

at::Tensor TransformerImpl::forward(const at::Tensor& src, const at::Tensor& tgt_in) {
  const auto src_mask = padding_mask(src, pad_id_);
  return project(decode(tgt_in, encode(src, src_mask), src_mask));
}

DecoderState TransformerImpl::start(const at::Tensor& memory, const at::Tensor& src_mask, bool record_attention) {
  DecoderState state;
  state.src_mask = src_mask;
  state.record = record_attention;
  for (auto& layer : decoder_layers_) {
    auto [k, v] = layer->cross_attention->project_keys_values(memory);
    state.cross_k.push_back(k);
    state.cross_v.push_back(v);
  }
  state.self_k.resize(decoder_layers_.size());
  state.self_v.resize(decoder_layers_.size());
  if (record_attention) {
    state.self_weights.resize(decoder_layers_.size());
    state.cross_weights.resize(decoder_layers_.size());
  }
  return state;
}

namespace {
// Guards every model's packed copies: worker threads translating batches of one model ask for them
// concurrently (ts/decode/translator.cpp). One lock for all models keeps transformer.h free of it.
std::mutex& packed_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

std::shared_ptr<const PackedTransformer> TransformerImpl::packed(WeightFormat format) {
  if (is_training()) return nullptr;
  const std::lock_guard<std::mutex> lock(packed_mutex());
  auto& slot = packed_[format];
  if (slot && slot->current()) return slot;
  slot.reset();
  try {
    slot = std::make_shared<const PackedTransformer>(*this, format);
  } catch (const std::invalid_argument&) {
    return nullptr;  // e.g. bf16 weights or a GPU: decoding stays on LibTorch's ops
  }
  return slot;
}

void TransformerImpl::train(bool on) {
  if (on) {
    const std::lock_guard<std::mutex> lock(packed_mutex());
    packed_.clear();
  }
  torch::nn::Module::train(on);
}

at::Tensor TransformerImpl::step(DecoderState& state, const at::Tensor& tokens) {
  if (state.packed) return state.packed->step(state, tokens);
  auto y = embed(tgt_embed_, tokens.unsqueeze(1), state.step);  // [B, 1, D]
  for (std::size_t i = 0; i < decoder_layers_.size(); ++i) {
    auto& layer = decoder_layers_[i];
    const bool was_self = layer->self_attention->recording(), was_cross = layer->cross_attention->recording();
    layer->self_attention->set_record(state.record);
    layer->cross_attention->set_record(state.record);
    y = layer->step(y, state.self_k[i], state.self_v[i], state.cross_k[i], state.cross_v[i], state.src_mask);
    if (state.record) {
      state.self_weights[i].push_back(layer->self_attention->last_weights().to(at::kCPU));
      state.cross_weights[i].push_back(layer->cross_attention->last_weights().to(at::kCPU));
    }
    layer->self_attention->set_record(was_self);
    layer->cross_attention->set_record(was_cross);
  }
  if (decoder_norm_) y = decoder_norm_->forward(y);
  ++state.step;
  auto logits = project(y.squeeze(1)).to(at::kFloat);  // [B, V]
  // Padding and begin-of-sentence are never valid outputs.
  logits.index_fill_(1,
                     at::tensor({pad_id_, Vocab::kBos}, at::TensorOptions().dtype(at::kLong).device(logits.device())),
                     -std::numeric_limits<float>::infinity());
  if (state.shortlist_mask.defined()) logits = logits + state.shortlist_mask.to(logits.device());
  return at::log_softmax(logits, /*dim=*/-1);
}

void TransformerImpl::set_record_attention(bool on) {
  for (auto& layer : encoder_layers_) layer->self_attention->set_record(on);
  for (auto& layer : decoder_layers_) {
    layer->self_attention->set_record(on);
    layer->cross_attention->set_record(on);
  }
}

void TransformerImpl::set_attention_kernel(AttentionKernel kernel) {
  for (auto& layer : encoder_layers_) layer->self_attention->set_kernel(kernel);
  for (auto& layer : decoder_layers_) {
    layer->self_attention->set_kernel(kernel);
    layer->cross_attention->set_kernel(kernel);
  }
}

AttentionMaps TransformerImpl::recorded_attention() const {
  AttentionMaps maps;
  for (const auto& layer : encoder_layers_) maps.encoder_self.push_back(layer->self_attention->last_weights());
  for (const auto& layer : decoder_layers_) {
    maps.decoder_self.push_back(layer->self_attention->last_weights());
    maps.cross.push_back(layer->cross_attention->last_weights());
  }
  return maps;
}

Transformer copy_model(Transformer& model, const at::Device& device) {
  Transformer copy(model->config(), model->src_vocab_size(), model->tgt_vocab_size(), model->pad_id());
  torch::NoGradGuard no_grad;
  auto params = model->named_parameters(), buffers = model->named_buffers();
  for (auto& item : copy->named_parameters()) item.value().copy_(params[item.key()]);
  for (auto& item : copy->named_buffers()) item.value().copy_(buffers[item.key()]);
  copy->to(device);
  copy->eval();
  return copy;
}

Transformer build_model(const ModelConfig& config, std::int64_t src_vocab, std::int64_t tgt_vocab, std::int64_t pad_id,
                        bool shared_vocab) {
  throw_if_problems(config.problems(shared_vocab));
  if (config.share_embeddings && src_vocab != tgt_vocab)
    throw ConfigError("model.share_embeddings needs one vocabulary for both sides (sizes " + std::to_string(src_vocab) +
                      " and " + std::to_string(tgt_vocab) + ")");
  // Refused before anything is allocated (a configuration, or a checkpoint's, may ask for terabytes).
  check_memory(4 * parameter_count(config, static_cast<double>(src_vocab), static_cast<double>(tgt_vocab)),
               "the model's weights", "make model.d_model, model.d_ff or the layer counts smaller");
  return Transformer(config, src_vocab, tgt_vocab, pad_id);
}

}  // namespace ts
