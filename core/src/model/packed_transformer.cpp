// SPDX-License-Identifier: GPL-3.0-or-later
// LibTorch's face of the packed model (see ts/model/packed_transformer.h).
#include "ts/model/packed_transformer.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>

#include "ts/model/transformer.h"
#include "ts/text/vocab.h"

namespace ts {
namespace {

// A tensor owning `values` (no copy), shaped `sizes`.
at::Tensor tensor_of(std::vector<float>&& values, at::IntArrayRef sizes) {
  auto* owned = new std::vector<float>(std::move(values));
  return at::from_blob(
      owned->data(), sizes, [owned](void*) { delete owned; }, at::TensorOptions().dtype(at::kFloat));
}

}  // namespace

PackedModelShape packed_shape(const TransformerImpl& model) {
  const auto& c = model.config();
  PackedModelShape s;
  s.encoder_layers = c.encoder_layers;
  s.decoder_layers = c.decoder_layers;
  s.d_model = c.d_model;
  s.heads = c.heads;
  s.d_ff = c.d_ff;
  s.src_vocab = model.src_vocab_size();
  s.tgt_vocab = model.tgt_vocab_size();
  s.pad_id = model.pad_id();
  s.pre_norm = c.pre_norm;
  s.embed_scale = c.scale_embeddings ? std::sqrt(static_cast<float>(c.d_model)) : 1.0F;
  return s;
}

PackedTransformer::PackedTransformer(const TransformerImpl& model, WeightFormat format) {
  const auto params = model.named_parameters(true), buffers = model.named_buffers(true);
  auto lookup = [&](const std::string& name) -> WeightView {
    const auto* t = params.find(name);
    if (!t) t = buffers.find(name);
    if (!t) return {};
    if (t->device().type() != at::kCPU || t->scalar_type() != at::kFloat || !t->is_contiguous())
      throw std::invalid_argument("packing needs contiguous fp32 weights on the CPU (\"" + name + "\" is not)");
    sources_.push_back(*t);
    return {t->data_ptr<float>(), t->sizes().vec()};
  };
  model_ = std::make_shared<const PackedModel>(packed_shape(model), lookup, format);
  for (const auto& t : sources_) versions_.push_back(static_cast<std::int64_t>(t._version()));
}

bool PackedTransformer::current() const {
  for (std::size_t i = 0; i < sources_.size(); ++i)
    if (static_cast<std::int64_t>(sources_[i]._version()) != versions_[i]) return false;
  return true;
}

at::Tensor PackedTransformer::encode(const at::Tensor& src_in, std::vector<at::Tensor>* attention) const {
  const auto src = src_in.to(at::kCPU, at::kLong).contiguous();
  const std::int64_t B = src.size(0), S = src.size(1), D = model_->shape().d_model, H = model_->shape().heads;
  std::vector<std::vector<float>> maps;
  auto memory = model_->encode(src.data_ptr<std::int64_t>(), B, S, attention ? &maps : nullptr);
  if (attention) {
    attention->clear();
    for (auto& m : maps) attention->push_back(tensor_of(std::move(m), {B, H, S, S}));
  }
  return tensor_of(std::move(memory), {B, S, D});
}

void PackedTransformer::start(DecoderState& state, const at::Tensor& memory_in, const at::Tensor& src_mask,
                              bool record_attention) const {
  const auto memory = memory_in.to(at::kCPU, at::kFloat).contiguous();
  const auto mask = src_mask.to(at::kCPU, at::kFloat).contiguous();  // [B, 1, 1, S]
  const std::int64_t B = memory.size(0), S = memory.size(1);
  if (mask.numel() != B * S) throw std::invalid_argument("packed decoder start: a source mask of another shape");
  state.packed_state = std::make_shared<PackedDecoding>();
  model_->start(*state.packed_state, memory.data_ptr<float>(), mask.data_ptr<float>(), B, S);
  state.src_mask = mask;
  state.step = 0;
  state.record = record_attention;
  const auto layers = static_cast<std::size_t>(model_->shape().decoder_layers);
  state.self_weights.assign(record_attention ? layers : 0, {});
  state.cross_weights.assign(record_attention ? layers : 0, {});
}

at::Tensor PackedTransformer::step(DecoderState& state, const at::Tensor& tokens_in) const {
  if (!state.packed_state) throw std::invalid_argument("packed decoder step before start()");
  auto& decoding = *state.packed_state;
  const auto tokens = tokens_in.to(at::kCPU, at::kLong).contiguous();
  const std::int64_t B = tokens.size(0), H = model_->shape().heads, V = model_->shape().tgt_vocab;
  const std::int64_t n = decoding.step + 1, S = decoding.src_len;
  RecordedAttention recorded;
  std::vector<float> log_probs(static_cast<std::size_t>(B * V));
  model_->step(decoding, tokens.data_ptr<std::int64_t>(), B, log_probs.data(), state.record ? &recorded : nullptr);
  state.step = decoding.step;
  if (state.record)
    for (std::size_t li = 0; li < recorded.self.size(); ++li) {
      state.self_weights[li].push_back(tensor_of(std::move(recorded.self[li]), {B, H, 1, n}));
      state.cross_weights[li].push_back(tensor_of(std::move(recorded.cross[li]), {B, H, 1, S}));
    }
  return tensor_of(std::move(log_probs), {B, V}).to(tokens_in.device());
}

}  // namespace ts
