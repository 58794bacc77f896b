// SPDX-License-Identifier: GPL-3.0-or-later
// Translation of a few rows over packed weights (see ts/model/packed_transformer.h).
#include "ts/model/packed_transformer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/log_softmax.h>

#include "ts/model/transformer.h"
#include "ts/text/vocab.h"

namespace ts {
namespace {

constexpr float kLayerNormEps = 1e-6F;  // as the model's LayerNorms

// Looks a parameter or buffer up by its registered name, e.g. "decoder.0.ff.fc1.weight".
class Named {
 public:
  explicit Named(const TransformerImpl& model)
      : params_(model.named_parameters(true)), buffers_(model.named_buffers(true)) {}
  bool has(const std::string& name) const { return params_.contains(name) || buffers_.contains(name); }
  at::Tensor get(const std::string& name) {
    const auto* t = params_.find(name);
    if (!t) t = buffers_.find(name);
    if (!t) throw std::invalid_argument("packing: the model has no tensor \"" + name + "\"");
    if (t->device().type() != at::kCPU || t->scalar_type() != at::kFloat)
      throw std::invalid_argument("packing needs fp32 weights on the CPU (\"" + name + "\" is not)");
    used.push_back(*t);
    return *t;
  }
  std::vector<at::Tensor> used;

 private:
  torch::OrderedDict<std::string, at::Tensor> params_, buffers_;
};

std::vector<float> to_vector(const at::Tensor& t) {
  const auto c = t.detach().contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

// Sums of n products in kLanes interleaved partial sums, added pairwise at the end: an order fixed
// in the code (the same on every CPU) that the compiler turns into vector instructions, where one
// running sum stays scalar (it may not reorder floating-point additions by itself).
constexpr int kLanes = 16;

inline float reduce(float (&part)[kLanes]) {
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int l = 0; l < width; ++l) part[l] += part[l + width];
  return part[0];
}

// sum_i f(i) for i < n, f(i) a float.
template <class F>
inline float lane_sum(std::int64_t n, F&& f) {
  float part[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] += f(i + l);
  for (; i < n; ++i) part[i % kLanes] += f(i);
  return reduce(part);
}

void layer_norm(const float* x, std::int64_t rows, std::int64_t d, const std::vector<float>& weight,
                const std::vector<float>& bias, float* __restrict out) {
  const float* w = weight.data();
  const float* b = bias.data();
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* __restrict o = out + r * d;
    const float mean = lane_sum(d, [xr](std::int64_t i) { return xr[i]; }) / static_cast<float>(d);
    const float var = lane_sum(d, [xr, mean](std::int64_t i) { return (xr[i] - mean) * (xr[i] - mean); });
    const float inv = 1.0F / std::sqrt(var / static_cast<float>(d) + kLayerNormEps);
    for (std::int64_t i = 0; i < d; ++i) o[i] = (xr[i] - mean) * inv * w[i] + b[i];
  }
}

// Softmax of n scores in place (the maximum subtracted first, as LibTorch does).
void softmax(float* s, std::int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (std::int64_t j = 0; j < n; ++j) max = std::max(max, s[j]);
  float sum = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    s[j] = std::exp(s[j] - max);
    sum += s[j];
  }
  const float inv = 1.0F / sum;
  for (std::int64_t j = 0; j < n; ++j) s[j] *= inv;
}

// One head of one query: q [K] against n keys and values, key j at keys + j * stride (likewise the
// values), optional additive mask [n]. Writes the context [K] and, when `weights` is given, the
// attention weights [n].
void attend_head(const float* q, const float* keys, const float* values, std::int64_t stride, const float* mask,
                 std::int64_t n, std::int64_t k_dim, float scale, float* scores, float* __restrict context,
                 float* weights) {
  for (std::int64_t j = 0; j < n; ++j) {
    const float* kj = keys + j * stride;
    const float s = lane_sum(k_dim, [q, kj](std::int64_t c) { return q[c] * kj[c]; });
    scores[j] = s * scale + (mask ? mask[j] : 0.0F);
  }
  softmax(scores, n);
  for (std::int64_t c = 0; c < k_dim; ++c) context[c] = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    const float* __restrict vj = values + j * stride;
    const float p = scores[j];
    for (std::int64_t c = 0; c < k_dim; ++c) context[c] += p * vj[c];
  }
  if (weights) std::memcpy(weights, scores, static_cast<std::size_t>(n) * sizeof(float));
}

// Rows of activations [rows, D] and the scratch one residual sublayer needs.
struct Residual {
  bool pre_norm;
  std::int64_t rows, d;
  std::vector<float> x, normed, sub;
  Residual(bool pre, std::int64_t r, std::int64_t dim)
      : pre_norm(pre), rows(r), d(dim), x(static_cast<std::size_t>(r * dim)), normed(x.size()), sub(x.size()) {}
  // pre-LN: x += f(norm(x)); post-LN: x = norm(x + f(x)). f(in, out) writes [rows, D] to out.
  template <class F>
  void apply(const std::vector<float>& weight, const std::vector<float>& bias, F&& f) {
    if (pre_norm) layer_norm(x.data(), rows, d, weight, bias, normed.data());
    f(pre_norm ? normed.data() : x.data(), sub.data());
    for (std::size_t i = 0; i < x.size(); ++i) sub[i] += x[i];
    if (pre_norm)
      x.swap(sub);
    else
      layer_norm(sub.data(), rows, d, weight, bias, x.data());
  }
  void final_norm(const std::vector<float>& weight, const std::vector<float>& bias) {
    layer_norm(x.data(), rows, d, weight, bias, normed.data());
    x.swap(normed);
  }
};

// fc2(relu(fc1(in))) for `rows` rows.
void feed_forward(const PackedLinear& fc1, const PackedLinear& fc2, const float* in, std::int64_t rows, float* out) {
  std::vector<float> hidden(static_cast<std::size_t>(rows * fc1.out_features()));
  fc1.apply(in, rows, hidden.data());
  for (auto& v : hidden) v = v > 0 ? v : 0.0F;
  fc2.apply(hidden.data(), rows, out);
}

}  // namespace

PackedTransformer::PackedTransformer(const TransformerImpl& model, WeightFormat format) : format_(format) {
  const auto& c = model.config();
  pre_norm_ = c.pre_norm;
  d_model_ = c.d_model;
  heads_ = c.heads;
  d_ff_ = c.d_ff;
  tgt_vocab_ = model.tgt_vocab_size();
  pad_id_ = model.pad_id();
  embed_scale_ = c.scale_embeddings ? std::sqrt(static_cast<float>(c.d_model)) : 1.0F;
  Named named(model);
  src_embedding_ = named.get("src_embed.weight").detach().clone();
  const std::string tgt_embed = named.has("tgt_embed.weight") ? "tgt_embed.weight" : "src_embed.weight";
  tgt_embedding_ = named.get(tgt_embed).detach().clone();
  positions_ = named.get(named.has("positions.weight") ? "positions.weight" : "sinusoid").detach().clone();
  std::string prefix;
  auto linear = [&](const std::string& name) {
    return PackedLinear(named.get(prefix + name + ".weight"), named.get(prefix + name + ".bias"), format);
  };
  auto norm = [&](const std::string& name) {
    return Norm{to_vector(named.get(prefix + name + ".weight")), to_vector(named.get(prefix + name + ".bias"))};
  };
  for (int i = 0; i < c.encoder_layers; ++i) {
    prefix = "encoder." + std::to_string(i) + ".";
    encoder_.push_back(EncoderLayer{linear("self_attention.qkv"), linear("self_attention.out"), linear("ff.fc1"),
                                    linear("ff.fc2"), norm("norm1"), norm("norm2")});
  }
  for (int i = 0; i < c.decoder_layers; ++i) {
    prefix = "decoder." + std::to_string(i) + ".";
    decoder_.push_back(DecoderLayer{linear("self_attention.qkv"), linear("self_attention.out"),
                                    linear("cross_attention.q"), linear("cross_attention.kv"),
                                    linear("cross_attention.out"), linear("ff.fc1"), linear("ff.fc2"), norm("norm1"),
                                    norm("norm2"), norm("norm3")});
  }
  prefix.clear();
  if (pre_norm_) {
    encoder_norm_ = norm("encoder_norm");
    decoder_norm_ = norm("decoder_norm");
  }
  output_ = PackedLinear(named.get(named.has("output_weight") ? "output_weight" : tgt_embed), named.get("output_bias"),
                         format);
  sources_ = std::move(named.used);
  for (const auto& t : sources_) versions_.push_back(static_cast<std::int64_t>(t._version()));
}

bool PackedTransformer::current() const {
  for (std::size_t i = 0; i < sources_.size(); ++i)
    if (static_cast<std::int64_t>(sources_[i]._version()) != versions_[i]) return false;
  return true;
}

std::size_t PackedTransformer::encoder_bytes() const {
  std::size_t n = 0;
  for (const auto& l : encoder_)
    for (const auto* p : {&l.qkv, &l.out, &l.fc1, &l.fc2}) n += p->weight_bytes();
  return n;
}

std::size_t PackedTransformer::decoder_bytes() const {
  std::size_t n = output_.weight_bytes();
  for (const auto& l : decoder_)
    for (const auto* p : {&l.qkv, &l.self_out, &l.cross_q, &l.cross_kv, &l.cross_out, &l.fc1, &l.fc2})
      n += p->weight_bytes();
  return n;
}

namespace {
void check_positions(std::int64_t needed, std::int64_t available) {
  if (needed > available)
    throw std::invalid_argument("sequence of " + std::to_string(needed) + " tokens exceeds the model's maximum of " +
                                std::to_string(available) + " positions");
}

// Token ids index the embedding tables directly: refuse any outside them (LibTorch's embedding does too).
void check_ids(const std::int64_t* ids, std::int64_t n, std::int64_t vocab) {
  for (std::int64_t k = 0; k < n; ++k)
    if (ids[k] < 0 || ids[k] >= vocab)
      throw std::out_of_range("token id " + std::to_string(ids[k]) + " is outside the vocabulary of " +
                              std::to_string(vocab) + " entries");
}
}  // namespace

at::Tensor PackedTransformer::encode(const at::Tensor& src_in, const at::Tensor& src_mask,
                                     std::vector<at::Tensor>* attention) const {
  const auto src = src_in.to(at::kCPU, at::kLong).contiguous();
  const auto mask = src_mask.to(at::kCPU, at::kFloat).contiguous();  // [B, 1, 1, S]
  const std::int64_t B = src.size(0), S = src.size(1), D = d_model_, H = heads_, K = D / H;
  check_positions(S, positions_.size(0));
  const float scale = 1.0F / std::sqrt(static_cast<float>(K));
  const auto* ids = src.data_ptr<std::int64_t>();
  check_ids(ids, B * S, src_embedding_.size(0));
  const float* emb = src_embedding_.data_ptr<float>();
  const float* pe = positions_.data_ptr<float>();
  Residual r(pre_norm_, B * S, D);
  for (std::int64_t row = 0; row < B * S; ++row)
    for (std::int64_t i = 0; i < D; ++i)
      r.x[static_cast<std::size_t>(row * D + i)] = emb[ids[row] * D + i] * embed_scale_ + pe[(row % S) * D + i];
  std::vector<float> qkv(static_cast<std::size_t>(B * S * 3 * D)), ctx(static_cast<std::size_t>(B * S * D)),
      scores(static_cast<std::size_t>(S));
  if (attention) attention->clear();
  for (const auto& layer : encoder_) {
    r.apply(layer.norm1.weight, layer.norm1.bias, [&](const float* in, float* out) {
      layer.qkv.apply(in, B * S, qkv.data());
      at::Tensor recorded = attention ? at::empty({B, H, S, S}, at::kFloat) : at::Tensor();
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
          for (std::int64_t i = 0; i < S; ++i) {
            const float* base = &qkv[static_cast<std::size_t>(b * S * 3 * D + h * K)];
            attend_head(base + i * 3 * D, base + D, base + 2 * D, 3 * D, mask.data_ptr<float>() + b * S, S, K, scale,
                        scores.data(), &ctx[static_cast<std::size_t>((b * S + i) * D + h * K)],
                        attention ? recorded.data_ptr<float>() + ((b * H + h) * S + i) * S : nullptr);
          }
      if (attention) attention->push_back(recorded);
      layer.out.apply(ctx.data(), B * S, out);
    });
    r.apply(layer.norm2.weight, layer.norm2.bias,
            [&](const float* in, float* out) { feed_forward(layer.fc1, layer.fc2, in, B * S, out); });
  }
  if (pre_norm_) r.final_norm(encoder_norm_.weight, encoder_norm_.bias);
  auto memory = at::empty({B, S, D}, at::kFloat);
  std::memcpy(memory.data_ptr<float>(), r.x.data(), r.x.size() * sizeof(float));
  return memory;
}

void PackedTransformer::start(DecoderState& state, const at::Tensor& memory_in, const at::Tensor& src_mask,
                              bool record_attention) const {
  const auto memory = memory_in.to(at::kCPU, at::kFloat).contiguous();
  const std::int64_t B = memory.size(0), S = memory.size(1), D = d_model_, H = heads_, K = D / H;
  state.src_mask = src_mask.to(at::kCPU, at::kFloat).contiguous();
  state.record = record_attention;
  state.cross_k.clear();
  state.cross_v.clear();
  std::vector<float> kv(static_cast<std::size_t>(B * S * 2 * D));
  for (const auto& layer : decoder_) {
    layer.cross_kv.apply(memory.data_ptr<float>(), B * S, kv.data());
    auto k = at::empty({B, H, S, K}, at::kFloat), v = at::empty({B, H, S, K}, at::kFloat);
    float* kp = k.data_ptr<float>();
    float* vp = v.data_ptr<float>();
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t s = 0; s < S; ++s) {
          const float* row = &kv[static_cast<std::size_t>((b * S + s) * 2 * D + h * K)];
          std::memcpy(kp + ((b * H + h) * S + s) * K, row, static_cast<std::size_t>(K) * sizeof(float));
          std::memcpy(vp + ((b * H + h) * S + s) * K, row + D, static_cast<std::size_t>(K) * sizeof(float));
        }
    state.cross_k.push_back(k);
    state.cross_v.push_back(v);
  }
  state.self_k.assign(decoder_.size(), at::Tensor());
  state.self_v.assign(decoder_.size(), at::Tensor());
  state.cross_rows.clear();
  state.self_rows.clear();
  state.self_weights.assign(record_attention ? decoder_.size() : 0, {});
  state.cross_weights.assign(record_attention ? decoder_.size() : 0, {});
}

at::Tensor PackedTransformer::step(DecoderState& state, const at::Tensor& tokens_in) const {
  const auto tokens = tokens_in.to(at::kCPU, at::kLong).contiguous();
  const std::int64_t B = tokens.size(0), D = d_model_, H = heads_, K = D / H;
  const std::int64_t pos = state.step;
  check_positions(pos + 1, positions_.size(0));
  const float scale = 1.0F / std::sqrt(static_cast<float>(K));
  const auto* ids = tokens.data_ptr<std::int64_t>();
  check_ids(ids, B, tgt_embedding_.size(0));

  // x = embedding * scale + position, one row per hypothesis.
  Residual r(pre_norm_, B, D);
  const float* emb = tgt_embedding_.data_ptr<float>();
  const float* pe = positions_.data_ptr<float>() + pos * D;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < D; ++i)
      r.x[static_cast<std::size_t>(b * D + i)] = emb[ids[b] * D + i] * embed_scale_ + pe[i];

  std::vector<float> qkv(static_cast<std::size_t>(B * 3 * D)), ctx(static_cast<std::size_t>(B * D)), scores;
  state.src_mask = state.src_mask.to(at::kCPU, at::kFloat).contiguous();  // a no-op after start()
  // Where each row's cross-attention and past keys/values are (DecoderState::reorder moves no tensor).
  for (const auto* map : {&state.cross_rows, &state.self_rows})
    if (!map->empty() && static_cast<std::int64_t>(map->size()) != B)
      throw std::invalid_argument("packed decoder step: " + std::to_string(B) + " tokens for " +
                                  std::to_string(map->size()) + " hypotheses");
  auto cross_row = [&state](std::int64_t b) {
    return state.cross_rows.empty() ? b : state.cross_rows[static_cast<std::size_t>(b)];
  };
  auto self_row = [&state](std::int64_t b) {
    return state.self_rows.empty() ? b : state.self_rows[static_cast<std::size_t>(b)];
  };
  for (std::size_t li = 0; li < decoder_.size(); ++li) {
    const DecoderLayer& layer = decoder_[li];
    // Self-attention: this step's keys and values join the cache, then every head attends to it.
    r.apply(layer.norm1.weight, layer.norm1.bias, [&](const float* in, float* out) {
      layer.qkv.apply(in, B, qkv.data());
      auto& cache_k = state.self_k[li];
      auto& cache_v = state.self_v[li];
      const std::int64_t t = cache_k.defined() ? cache_k.size(2) : 0, n = t + 1;
      // The cache grows by a copy at every step; the rows move in that same copy (self_row).
      auto new_k = at::empty({B, H, n, K}, at::kFloat), new_v = at::empty({B, H, n, K}, at::kFloat);
      const auto old_k = t ? cache_k.contiguous() : at::Tensor(), old_v = t ? cache_v.contiguous() : at::Tensor();
      float* nk = new_k.data_ptr<float>();
      float* nv = new_v.data_ptr<float>();
      const auto block_bytes = static_cast<std::size_t>(t * K) * sizeof(float),
                 row_bytes = static_cast<std::size_t>(K) * sizeof(float);
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h) {
          const std::int64_t block = (b * H + h) * n * K;
          if (t) {
            const std::int64_t from = (self_row(b) * H + h) * t * K;
            std::memcpy(nk + block, old_k.data_ptr<float>() + from, block_bytes);
            std::memcpy(nv + block, old_v.data_ptr<float>() + from, block_bytes);
          }
          std::memcpy(nk + block + t * K, &qkv[static_cast<std::size_t>(b * 3 * D + D + h * K)], row_bytes);
          std::memcpy(nv + block + t * K, &qkv[static_cast<std::size_t>(b * 3 * D + 2 * D + h * K)], row_bytes);
        }
      cache_k = new_k;
      cache_v = new_v;
      at::Tensor recorded = state.record ? at::empty({B, H, 1, n}, at::kFloat) : at::Tensor();
      scores.resize(static_cast<std::size_t>(n));
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h) {
          const std::int64_t block = (b * H + h) * n * K;
          attend_head(&qkv[static_cast<std::size_t>(b * 3 * D + h * K)], nk + block, nv + block, K, nullptr, n, K,
                      scale, scores.data(), &ctx[static_cast<std::size_t>(b * D + h * K)],
                      state.record ? recorded.data_ptr<float>() + (b * H + h) * n : nullptr);
        }
      if (state.record) state.self_weights[li].push_back(recorded);
      layer.self_out.apply(ctx.data(), B, out);
    });
    // Cross-attention over the cached projections of the encoder output.
    r.apply(layer.norm2.weight, layer.norm2.bias, [&](const float* in, float* out) {
      layer.cross_q.apply(in, B, qkv.data());  // [B, D]
      auto& ck = state.cross_k[li];
      auto& cv = state.cross_v[li];
      ck = ck.to(at::kCPU, at::kFloat).contiguous();
      cv = cv.to(at::kCPU, at::kFloat).contiguous();
      const std::int64_t S = ck.size(2);
      at::Tensor recorded = state.record ? at::empty({B, H, 1, S}, at::kFloat) : at::Tensor();
      scores.resize(static_cast<std::size_t>(S));
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h) {
          const std::int64_t c = cross_row(b), block = (c * H + h) * S * K;
          attend_head(&qkv[static_cast<std::size_t>(b * D + h * K)], ck.data_ptr<float>() + block,
                      cv.data_ptr<float>() + block, K, state.src_mask.data_ptr<float>() + c * S, S, K, scale,
                      scores.data(), &ctx[static_cast<std::size_t>(b * D + h * K)],
                      state.record ? recorded.data_ptr<float>() + (b * H + h) * S : nullptr);
        }
      if (state.record) state.cross_weights[li].push_back(recorded);
      layer.cross_out.apply(ctx.data(), B, out);
    });
    r.apply(layer.norm3.weight, layer.norm3.bias,
            [&](const float* in, float* out) { feed_forward(layer.fc1, layer.fc2, in, B, out); });
  }
  if (pre_norm_) r.final_norm(decoder_norm_.weight, decoder_norm_.bias);
  ++state.step;
  state.self_rows.clear();  // the caches are in row order now

  const float neg_inf = -std::numeric_limits<float>::infinity();
  if (state.shortlist_output) {
    // Only the batch's shortlist is scored; each row is normalised over its own sentence's list, in
    // that list's order: a sentence scores alike alone or in any batch.
    const auto& ids = state.shortlist_ids;
    const auto U = static_cast<std::int64_t>(ids.size());
    std::vector<float> sub(static_cast<std::size_t>(B * U));
    state.shortlist_output->apply(r.x.data(), B, sub.data());
    auto log_probs = at::full({B, tgt_vocab_}, neg_inf, at::kFloat);
    float* lp = log_probs.data_ptr<float>();
    for (std::int64_t b = 0; b < B; ++b) {
      const auto& own = state.shortlist_positions.at(static_cast<std::size_t>(cross_row(b)));
      const float* row = sub.data() + b * U;
      const auto n = static_cast<std::int64_t>(own.size());
      auto at = [&](std::int64_t k) { return own[static_cast<std::size_t>(k)]; };
      auto valid = [&](std::int64_t k) {
        const auto t = ids[static_cast<std::size_t>(at(k))];
        return t != pad_id_ && t != Vocab::kBos;  // never valid outputs
      };
      float max = neg_inf;
      for (std::int64_t k = 0; k < n; ++k)
        if (valid(k)) max = std::max(max, row[at(k)]);
      const float sum = lane_sum(n, [&](std::int64_t k) { return valid(k) ? std::exp(row[at(k)] - max) : 0.0F; });
      const float log_sum = std::log(sum) + max;
      for (std::int64_t k = 0; k < n; ++k)
        if (valid(k)) lp[b * tgt_vocab_ + ids[static_cast<std::size_t>(at(k))]] = row[at(k)] - log_sum;
    }
    return log_probs.to(tokens_in.device());
  }
  auto logits = at::empty({B, tgt_vocab_}, at::kFloat);
  float* lp = logits.data_ptr<float>();
  output_.apply(r.x.data(), B, lp);
  for (std::int64_t b = 0; b < B; ++b) {
    // Padding and begin-of-sentence are never valid outputs.
    lp[b * tgt_vocab_ + pad_id_] = neg_inf;
    if (Vocab::kBos < tgt_vocab_) lp[b * tgt_vocab_ + Vocab::kBos] = neg_inf;
  }
  // LibTorch's vectorised log-softmax: a scalar exp per vocabulary entry took a tenth of the time.
  const auto log_probs = at::log_softmax(logits, 1);
  return log_probs.to(tokens_in.device());
}

}  // namespace ts
