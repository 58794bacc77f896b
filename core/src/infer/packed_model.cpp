// SPDX-License-Identifier: GPL-3.0-or-later
// Translation over packed weights without LibTorch (see ts/infer/packed_model.h).
#include "ts/infer/packed_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "ts/host/simd_exp.h"
#include "ts/text/vocab.h"

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define TS_INFER_X86 1
#include <immintrin.h>
#else
#define TS_INFER_X86 0
#endif

namespace ts {
namespace {

constexpr std::int64_t kBos = Vocab::kBos;  // never a valid output (nor is padding)

constexpr float kLayerNormEps = 1e-6F;  // as the model's LayerNorms

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

#if TS_INFER_X86
using simd::exp16;

__attribute__((target("avx512f"))) void log_softmax_avx512(float* x, std::int64_t n) {
  __m512 vmax = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(x + i));
  const auto tail = static_cast<__mmask16>((1U << (n - i)) - 1U);
  if (n > i) vmax = _mm512_mask_max_ps(vmax, tail, vmax, _mm512_maskz_loadu_ps(tail, x + i));
  // The lanes reduced through memory: GCC 12's _mm512_reduce_* trip -Wuninitialized in its own headers.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, vmax);
  float max = lanes[0];
  for (int l = 1; l < 16; ++l) max = std::max(max, lanes[l]);
  const __m512 m = _mm512_set1_ps(max);
  __m512 sum = _mm512_setzero_ps();
  for (i = 0; i + 16 <= n; i += 16) sum = _mm512_add_ps(sum, exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), m)));
  if (n > i) sum = _mm512_mask_add_ps(sum, tail, sum, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), m)));
  _mm512_store_ps(lanes, sum);
  for (int width = 8; width > 0; width /= 2)
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  const float log_sum = std::log(lanes[0]) + max;
  for (i = 0; i < n; ++i) x[i] -= log_sum;
}
#endif

void log_softmax_scalar(float* x, std::int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (std::int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
  float sum = 0;
  for (std::int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - max);
  const float log_sum = std::log(sum) + max;
  for (std::int64_t i = 0; i < n; ++i) x[i] -= log_sum;
}

bool has_avx512() {
  static const bool yes = best_isa() == Isa::kAvx512 || best_isa() == Isa::kAvx512Bf16 || best_isa() == Isa::kAmx;
  return yes;
}

// Looks tensors up by name, checking their shapes.
class Weights {
 public:
  explicit Weights(const WeightLookup& lookup) : lookup_(lookup) {}
  bool has(const std::string& name) const { return lookup_(name).data != nullptr; }
  WeightView get(const std::string& name, const std::vector<std::int64_t>& shape) const {
    auto w = lookup_(name);
    if (!w.data) throw std::invalid_argument("packing: the model has no tensor \"" + name + "\"");
    // A column count of -1 accepts any (the position table's rows).
    bool ok = w.shape.size() == shape.size();
    for (std::size_t i = 0; ok && i < shape.size(); ++i) ok = shape[i] < 0 || shape[i] == w.shape[i];
    if (!ok) throw std::invalid_argument("packing: tensor \"" + name + "\" has another shape than the model's");
    return w;
  }
  std::vector<float> vector(const std::string& name, const std::vector<std::int64_t>& shape) const {
    const auto w = get(name, shape);
    std::int64_t n = 1;
    for (auto d : w.shape) n *= d;
    return {w.data, w.data + n};
  }

 private:
  const WeightLookup& lookup_;
};

}  // namespace

void log_softmax_rows(float* x, std::int64_t rows, std::int64_t n) {
  for (std::int64_t r = 0; r < rows; ++r) {
#if TS_INFER_X86
    if (has_avx512()) {
      log_softmax_avx512(x + r * n, n);
      continue;
    }
#endif
    log_softmax_scalar(x + r * n, n);
  }
}

void PackedDecoding::clear() {
  sources = src_len = step = 0;
  src_mask.clear();
  cross_k.clear();
  cross_v.clear();
  for (auto* caches : {&self_k, &self_v, &spare_k, &spare_v})
    for (auto& cache : *caches) cache.resize_discarding(0);  // the memory stays
  cross_rows.clear();
  self_rows.clear();
  shortlist_ids.clear();
  shortlist_output.reset();
  shortlist_positions.clear();
}

void PackedDecoding::reorder(const std::vector<std::int64_t>& rows) {
  // Copying every cache at every reorder took a sixth of a batched beam search: the caches stay,
  // the maps follow (composed when two reorders come between steps).
  auto follow = [&rows](std::vector<std::int64_t>& map) {
    std::vector<std::int64_t> next(rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r)
      next[r] = map.empty() ? rows[r] : map.at(static_cast<std::size_t>(rows[r]));
    map = std::move(next);
  };
  follow(cross_rows);
  follow(self_rows);
}

PackedModel::PackedModel(const PackedModelShape& shape, const WeightLookup& lookup, WeightFormat format)
    : shape_(shape), format_(format) {
  const std::int64_t D = shape.d_model, F = shape.d_ff;
  if (D <= 0 || shape.heads <= 0 || D % shape.heads != 0 || F <= 0 || shape.src_vocab <= 0 || shape.tgt_vocab <= 0)
    throw std::invalid_argument("packing: a model shape without sizes, or heads that do not divide d_model");
  const Weights w(lookup);
  src_embedding_ = w.vector("src_embed.weight", {shape.src_vocab, D});
  const std::string tgt_embed = w.has("tgt_embed.weight") ? "tgt_embed.weight" : "src_embed.weight";
  tgt_embedding_ = w.vector(tgt_embed, {shape.tgt_vocab, D});
  const auto positions = w.get(w.has("positions.weight") ? "positions.weight" : "sinusoid", {-1, D});
  positions_rows_ = positions.shape[0];
  positions_.assign(positions.data, positions.data + positions_rows_ * D);
  std::string prefix;
  auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in) {
    const auto weight = w.get(prefix + name + ".weight", {out, in});
    const auto bias = w.get(prefix + name + ".bias", {out});
    return PackedLinear(weight.data, out, in, bias.data, format);
  };
  auto norm = [&](const std::string& name) {
    return Norm{w.vector(prefix + name + ".weight", {D}), w.vector(prefix + name + ".bias", {D})};
  };
  for (int i = 0; i < shape.encoder_layers; ++i) {
    prefix = "encoder." + std::to_string(i) + ".";
    encoder_.push_back(EncoderLayer{linear("self_attention.qkv", 3 * D, D), linear("self_attention.out", D, D),
                                    linear("ff.fc1", F, D), linear("ff.fc2", D, F), norm("norm1"), norm("norm2")});
  }
  for (int i = 0; i < shape.decoder_layers; ++i) {
    prefix = "decoder." + std::to_string(i) + ".";
    decoder_.push_back(DecoderLayer{linear("self_attention.qkv", 3 * D, D), linear("self_attention.out", D, D),
                                    linear("cross_attention.q", D, D), linear("cross_attention.kv", 2 * D, D),
                                    linear("cross_attention.out", D, D), linear("ff.fc1", F, D), linear("ff.fc2", D, F),
                                    norm("norm1"), norm("norm2"), norm("norm3")});
  }
  prefix.clear();
  if (shape.pre_norm) {
    encoder_norm_ = norm("encoder_norm");
    decoder_norm_ = norm("decoder_norm");
  }
  const auto out_weight = w.get(w.has("output_weight") ? "output_weight" : tgt_embed, {shape.tgt_vocab, D});
  const auto out_bias = w.get("output_bias", {shape.tgt_vocab});
  output_ = PackedLinear(out_weight.data, shape.tgt_vocab, D, out_bias.data, format);
}

std::size_t PackedModel::encoder_bytes() const {
  std::size_t n = 0;
  for (const auto& l : encoder_)
    for (const auto* p : {&l.qkv, &l.out, &l.fc1, &l.fc2}) n += p->weight_bytes();
  return n;
}

std::size_t PackedModel::decoder_bytes() const {
  std::size_t n = output_.weight_bytes();
  for (const auto& l : decoder_)
    for (const auto* p : {&l.qkv, &l.self_out, &l.cross_q, &l.cross_kv, &l.cross_out, &l.fc1, &l.fc2})
      n += p->weight_bytes();
  return n;
}

std::vector<float> PackedModel::encode(const std::int64_t* ids, std::int64_t B, std::int64_t S,
                                       std::vector<std::vector<float>>* attention) const {
  const std::int64_t D = shape_.d_model, H = shape_.heads, K = D / H;
  check_positions(S, positions_rows_);
  const float scale = 1.0F / std::sqrt(static_cast<float>(K));
  check_ids(ids, B * S, shape_.src_vocab);
  const auto mask = padding_mask(ids, B, S);
  const float* emb = src_embedding_.data();
  const float* pe = positions_.data();
  Residual r(shape_.pre_norm, B * S, D);
  for (std::int64_t row = 0; row < B * S; ++row)
    for (std::int64_t i = 0; i < D; ++i)
      r.x[static_cast<std::size_t>(row * D + i)] = emb[ids[row] * D + i] * shape_.embed_scale + pe[(row % S) * D + i];
  std::vector<float> qkv(static_cast<std::size_t>(B * S * 3 * D)), ctx(static_cast<std::size_t>(B * S * D)),
      scores(static_cast<std::size_t>(S));
  if (attention) attention->clear();
  for (const auto& layer : encoder_) {
    r.apply(layer.norm1.weight, layer.norm1.bias, [&](const float* in, float* out) {
      layer.qkv.apply(in, B * S, qkv.data());
      std::vector<float> recorded(attention ? static_cast<std::size_t>(B * H * S * S) : 0);
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
          for (std::int64_t i = 0; i < S; ++i) {
            const float* base = &qkv[static_cast<std::size_t>(b * S * 3 * D + h * K)];
            attend_head(base + i * 3 * D, base + D, base + 2 * D, 3 * D, mask.data() + b * S, S, K, scale,
                        scores.data(), &ctx[static_cast<std::size_t>((b * S + i) * D + h * K)],
                        attention ? recorded.data() + ((b * H + h) * S + i) * S : nullptr);
          }
      if (attention) attention->push_back(std::move(recorded));
      layer.out.apply(ctx.data(), B * S, out);
    });
    r.apply(layer.norm2.weight, layer.norm2.bias,
            [&](const float* in, float* out) { feed_forward(layer.fc1, layer.fc2, in, B * S, out); });
  }
  if (shape_.pre_norm) r.final_norm(encoder_norm_.weight, encoder_norm_.bias);
  return std::move(r.x);
}

std::vector<float> PackedModel::padding_mask(const std::int64_t* ids, std::int64_t B, std::int64_t S) const {
  std::vector<float> mask(static_cast<std::size_t>(B * S));
  for (std::int64_t k = 0; k < B * S; ++k)
    mask[static_cast<std::size_t>(k)] = ids[k] == shape_.pad_id ? -std::numeric_limits<float>::infinity() : 0.0F;
  return mask;
}

void PackedModel::start(PackedDecoding& state, const float* memory, const float* mask, std::int64_t B,
                        std::int64_t S) const {
  const std::int64_t D = shape_.d_model, H = shape_.heads, K = D / H;
  state.clear();
  state.sources = B;
  state.src_len = S;
  state.src_mask.assign(mask, mask + B * S);
  std::vector<float> kv(static_cast<std::size_t>(B * S * 2 * D));
  for (const auto& layer : decoder_) {
    layer.cross_kv.apply(memory, B * S, kv.data());
    std::vector<float> k(static_cast<std::size_t>(B * H * S * K)), v(k.size());
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t s = 0; s < S; ++s) {
          const float* row = &kv[static_cast<std::size_t>((b * S + s) * 2 * D + h * K)];
          std::memcpy(&k[static_cast<std::size_t>(((b * H + h) * S + s) * K)], row,
                      static_cast<std::size_t>(K) * sizeof(float));
          std::memcpy(&v[static_cast<std::size_t>(((b * H + h) * S + s) * K)], row + D,
                      static_cast<std::size_t>(K) * sizeof(float));
        }
    state.cross_k.push_back(std::move(k));
    state.cross_v.push_back(std::move(v));
  }
  for (auto* caches : {&state.self_k, &state.self_v, &state.spare_k, &state.spare_v})
    caches->resize(decoder_.size());  // a state used before keeps its buffers (clear())
}

void PackedModel::set_shortlist(PackedDecoding& state, const std::vector<std::vector<std::int64_t>>& lists) const {
  if (static_cast<std::int64_t>(lists.size()) != state.sources)
    throw std::invalid_argument("shortlist: " + std::to_string(lists.size()) + " lists for " +
                                std::to_string(state.sources) + " sources");
  auto& all = state.shortlist_ids;
  all.clear();
  for (const auto& list : lists) all.insert(all.end(), list.begin(), list.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  state.shortlist_output = std::make_shared<const PackedLinear>(output_.select_outputs(all));
  state.shortlist_positions.assign(lists.size(), {});
  for (std::size_t b = 0; b < lists.size(); ++b)
    for (auto t : lists[b])
      state.shortlist_positions[b].push_back(std::lower_bound(all.begin(), all.end(), t) - all.begin());
}

void PackedModel::step(PackedDecoding& state, const std::int64_t* ids, std::int64_t B, float* log_probs,
                       RecordedAttention* record) const {
  const std::int64_t D = shape_.d_model, H = shape_.heads, K = D / H, V = shape_.tgt_vocab;
  const std::int64_t pos = state.step;
  check_positions(pos + 1, positions_rows_);
  const float scale = 1.0F / std::sqrt(static_cast<float>(K));
  check_ids(ids, B, V);
  // Where each row's cross-attention and past keys/values are (reorder() moves no cache).
  for (const auto* map : {&state.cross_rows, &state.self_rows})
    if (!map->empty() && static_cast<std::int64_t>(map->size()) != B)
      throw std::invalid_argument("packed decoder step: " + std::to_string(B) + " tokens for " +
                                  std::to_string(map->size()) + " hypotheses");
  if (state.cross_rows.empty() && B != state.sources)
    throw std::invalid_argument("packed decoder step: " + std::to_string(B) + " tokens for " +
                                std::to_string(state.sources) + " sources");
  auto self_row = [&state](std::int64_t b) {
    return state.self_rows.empty() ? b : state.self_rows[static_cast<std::size_t>(b)];
  };
  if (record) {
    record->self.assign(decoder_.size(), {});
    record->cross.assign(decoder_.size(), {});
  }

  // x = embedding * scale + position, one row per hypothesis.
  Residual r(shape_.pre_norm, B, D);
  const float* emb = tgt_embedding_.data();
  const float* pe = positions_.data() + pos * D;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < D; ++i)
      r.x[static_cast<std::size_t>(b * D + i)] = emb[ids[b] * D + i] * shape_.embed_scale + pe[i];

  std::vector<float> qkv(static_cast<std::size_t>(B * 3 * D)), ctx(static_cast<std::size_t>(B * D)), scores;
  const std::int64_t t = state.step, n = t + 1, S = state.src_len;
  for (std::size_t li = 0; li < decoder_.size(); ++li) {
    const DecoderLayer& layer = decoder_[li];
    // Self-attention: this step's keys and values join the cache, then every head attends to it.
    r.apply(layer.norm1.weight, layer.norm1.bias, [&](const float* in, float* out) {
      layer.qkv.apply(in, B, qkv.data());
      auto& cache_k = state.self_k[li];
      auto& cache_v = state.self_v[li];
      // The cache grows by a copy at every step; the rows move in that same copy (self_row). The copy
      // goes into the buffers the step before last filled: no allocation but growth's, and no zeroing.
      auto& new_k = state.spare_k[li];
      auto& new_v = state.spare_v[li];
      new_k.resize_discarding(static_cast<std::size_t>(B * H * n * K));
      new_v.resize_discarding(new_k.size());
      float* nk = new_k.data();
      float* nv = new_v.data();
      const auto block_bytes = static_cast<std::size_t>(t * K) * sizeof(float),
                 row_bytes = static_cast<std::size_t>(K) * sizeof(float);
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h) {
          const std::int64_t block = (b * H + h) * n * K;
          if (t) {
            const std::int64_t from = (self_row(b) * H + h) * t * K;
            std::memcpy(nk + block, cache_k.data() + from, block_bytes);
            std::memcpy(nv + block, cache_v.data() + from, block_bytes);
          }
          std::memcpy(nk + block + t * K, &qkv[static_cast<std::size_t>(b * 3 * D + D + h * K)], row_bytes);
          std::memcpy(nv + block + t * K, &qkv[static_cast<std::size_t>(b * 3 * D + 2 * D + h * K)], row_bytes);
        }
      std::swap(cache_k, new_k);
      std::swap(cache_v, new_v);
      float* recorded = nullptr;
      if (record) {
        record->self[li].resize(static_cast<std::size_t>(B * H * n));
        recorded = record->self[li].data();
      }
      scores.resize(static_cast<std::size_t>(n));
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h) {
          const std::int64_t block = (b * H + h) * n * K;
          attend_head(&qkv[static_cast<std::size_t>(b * 3 * D + h * K)], cache_k.data() + block, cache_v.data() + block,
                      K, nullptr, n, K, scale, scores.data(), &ctx[static_cast<std::size_t>(b * D + h * K)],
                      recorded ? recorded + (b * H + h) * n : nullptr);
        }
      layer.self_out.apply(ctx.data(), B, out);
    });
    // Cross-attention over the cached projections of the encoder output.
    r.apply(layer.norm2.weight, layer.norm2.bias, [&](const float* in, float* out) {
      layer.cross_q.apply(in, B, qkv.data());  // [B, D]
      const float* ck = state.cross_k[li].data();
      const float* cv = state.cross_v[li].data();
      float* recorded = nullptr;
      if (record) {
        record->cross[li].resize(static_cast<std::size_t>(B * H * S));
        recorded = record->cross[li].data();
      }
      scores.resize(static_cast<std::size_t>(S));
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h) {
          const std::int64_t c = state.source_row(b), block = (c * H + h) * S * K;
          attend_head(&qkv[static_cast<std::size_t>(b * D + h * K)], ck + block, cv + block, K,
                      state.src_mask.data() + c * S, S, K, scale, scores.data(),
                      &ctx[static_cast<std::size_t>(b * D + h * K)], recorded ? recorded + (b * H + h) * S : nullptr);
        }
      layer.cross_out.apply(ctx.data(), B, out);
    });
    r.apply(layer.norm3.weight, layer.norm3.bias,
            [&](const float* in, float* out) { feed_forward(layer.fc1, layer.fc2, in, B, out); });
  }
  if (shape_.pre_norm) r.final_norm(decoder_norm_.weight, decoder_norm_.bias);
  ++state.step;
  state.self_rows.clear();  // the caches are in row order now

  const float neg_inf = -std::numeric_limits<float>::infinity();
  float* lp = log_probs;
  if (state.shortlist_output) {
    // Only the batch's shortlist is scored; each row is normalised over its own sentence's list, in
    // that list's order: a sentence scores alike alone or in any batch.
    const auto& list_ids = state.shortlist_ids;
    const auto U = static_cast<std::int64_t>(list_ids.size());
    std::vector<float> sub(static_cast<std::size_t>(B * U));
    state.shortlist_output->apply(r.x.data(), B, sub.data());
    std::fill(lp, lp + B * V, neg_inf);
    for (std::int64_t b = 0; b < B; ++b) {
      const auto& own = state.shortlist_positions.at(static_cast<std::size_t>(state.source_row(b)));
      const float* row = sub.data() + b * U;
      const auto m = static_cast<std::int64_t>(own.size());
      auto at = [&](std::int64_t k) { return own[static_cast<std::size_t>(k)]; };
      auto valid = [&](std::int64_t k) {
        const auto id = list_ids[static_cast<std::size_t>(at(k))];
        return id != shape_.pad_id && id != kBos;  // never valid outputs
      };
      float max = neg_inf;
      for (std::int64_t k = 0; k < m; ++k)
        if (valid(k)) max = std::max(max, row[at(k)]);
      const float sum = lane_sum(m, [&](std::int64_t k) { return valid(k) ? std::exp(row[at(k)] - max) : 0.0F; });
      const float log_sum = std::log(sum) + max;
      for (std::int64_t k = 0; k < m; ++k)
        if (valid(k)) lp[b * V + list_ids[static_cast<std::size_t>(at(k))]] = row[at(k)] - log_sum;
    }
    return;
  }
  output_.apply(r.x.data(), B, lp);
  for (std::int64_t b = 0; b < B; ++b) {
    // Padding and begin-of-sentence are never valid outputs.
    lp[b * V + shape_.pad_id] = neg_inf;
    if (kBos < V) lp[b * V + kBos] = neg_inf;
  }
  log_softmax_rows(lp, B, V);
}

}  // namespace ts
