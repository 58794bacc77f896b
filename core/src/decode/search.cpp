// SPDX-License-Identifier: GPL-3.0-or-later
// Greedy, beam and sampling search over the incremental decoder (see ts/decode/search.h).
#include "ts/decode/search.h"

#include <ATen/CPUGeneratorImpl.h>
#include <algorithm>
#include <optional>
#include <cmath>
#include <limits>
#include <torch/csrc/autograd/grad_mode.h>

#include "ts/model/mode_guard.h"
#include "ts/decode/shortlist.h"
#include "ts/model/packed_transformer.h"
#include "ts/text/vocab.h"

namespace ts {
namespace {

// Puts the model in eval mode without gradients for the scope, restoring training mode after.
class InferenceScope {
 public:
  explicit InferenceScope(Transformer& model) : eval_(*model) {}

 private:
  EvalModeGuard eval_;
  torch::NoGradGuard no_grad_;
};

at::Tensor source_tensor(const std::vector<std::int64_t>& src, const at::Device& device) {
  return at::tensor(src, at::kLong).unsqueeze(0).to(device);  // [1, S]
}

at::Device model_device(Transformer& model) { return model->parameters().front().device(); }

// With fp32 weights, up to this many hypotheses at a time run on the packed copy; larger batches
// (validation) are matrix-matrix products, which LibTorch's BLAS does as well, with the same results.
// bf16 and int8 weights exist only packed, so they are used for any batch on the CPU.
constexpr std::int64_t kPackedFp32MaxRows = 16;

// The packed format `weights` names, or none for LibTorch's own operations.
std::optional<WeightFormat> packed_format(DecodeWeights weights) {
  switch (weights) {
    case DecodeWeights::kFloat32:
      return WeightFormat::kFloat32;
    case DecodeWeights::kBFloat16:
      return WeightFormat::kBFloat16;
    case DecodeWeights::kInt8:
      return WeightFormat::kInt8;
    case DecodeWeights::kLibTorch:
      break;
  }
  return std::nullopt;
}

// With config.shortlist and a shortlist attached to the model: each source row's list of target
// tokens (ts/decode/shortlist.h), as a mask for LibTorch's step, or on packed weights as the output
// rows of the batch's lists.
void attach_shortlist(Transformer& model, const at::Tensor& src, const DecodeConfig& config, DecoderState& state) {
  const auto shortlist_of = sentence_shortlists(model, config);
  if (!shortlist_of) return;
  const auto V = model->tgt_vocab_size();
  const auto cpu = src.to(at::kCPU, at::kLong).contiguous();
  const auto B = cpu.size(0), S = cpu.size(1);
  const auto* ids = cpu.data_ptr<std::int64_t>();
  std::vector<std::vector<std::int64_t>> lists(static_cast<std::size_t>(B));
  for (std::int64_t b = 0; b < B; ++b)
    lists[static_cast<std::size_t>(b)] = shortlist_of(std::vector<std::int64_t>(ids + b * S, ids + (b + 1) * S));
  if (!state.packed) {  // LibTorch's step adds a mask to its logits
    auto mask = at::full({B, V}, -std::numeric_limits<float>::infinity(), at::kFloat);
    float* m = mask.data_ptr<float>();
    for (std::int64_t b = 0; b < B; ++b)
      for (auto t : lists[static_cast<std::size_t>(b)]) m[b * V + t] = 0.0F;
    state.shortlist_mask = mask.to(src.device());
    return;
  }
  state.packed->model().set_shortlist(*state.packed_state, lists);
}

// Encodes src [B, S] and prepares the decoder; records encoder attention into `encoder_maps` when
// asked. On the CPU it runs on packed weights as config.weights says (see above), otherwise on
// LibTorch's operations.
// `rows` overrides the hypotheses counted for that choice (batched beam search counts one sentence's
// beam, so that each sentence runs on the kernels it would run on alone).
DecoderState begin(Transformer& model, const at::Tensor& src, const DecodeConfig& config, bool record,
                   std::vector<at::Tensor>* encoder_maps, std::int64_t rows = -1) {
  const auto src_mask = padding_mask(src, Vocab::kPad);
  if (rows < 0)
    rows = config.mode == DecodeMode::kBeam ? std::max<std::int64_t>(src.size(0), config.beam) : src.size(0);
  auto packed = src.device().is_cpu() ? packed_for(model, config, rows) : nullptr;
  if (packed) {
    DecoderState state;
    std::vector<at::Tensor> maps;
    const auto memory = packed->encode(src, record ? &maps : nullptr);
    if (record && encoder_maps) *encoder_maps = std::move(maps);
    packed->start(state, memory, src_mask, record);
    state.packed = std::move(packed);
    attach_shortlist(model, src, config, state);
    return state;
  }
  model->set_record_attention(record);
  auto memory = model->encode(src, src_mask);
  if (record && encoder_maps) *encoder_maps = model->recorded_attention().encoder_self;
  model->set_record_attention(false);
  auto state = model->start(memory, src_mask, record);
  attach_shortlist(model, src, config, state);
  return state;
}

void attach_attention(Hypothesis& h, const DecoderState& state, std::int64_t row,
                      const std::vector<at::Tensor>& encoder_maps, std::int64_t encoder_row) {
  h.attention = state.attention(row);
  for (const auto& m : encoder_maps)
    h.attention.encoder_self.push_back(m.select(0, encoder_row).unsqueeze(0).to(at::kCPU));
}

// Turns per-step token/score columns [B, L] (CPU) into hypotheses, cutting each row at its EOS.
std::vector<Hypothesis> collect_rows(const at::Tensor& ids, const at::Tensor& lp, const DecoderState& state,
                                     const std::vector<at::Tensor>& encoder_maps, bool record_attention) {
  auto id_acc = ids.accessor<std::int64_t, 2>();
  auto lp_acc = lp.accessor<float, 2>();
  std::vector<Hypothesis> out(static_cast<std::size_t>(ids.size(0)));
  for (std::int64_t b = 0; b < ids.size(0); ++b) {
    auto& h = out[b];
    for (std::int64_t t = 0; t < ids.size(1); ++t) {
      const auto id = id_acc[b][t];
      if (id == Vocab::kPad) break;
      h.token_log_probs.push_back(lp_acc[b][t]);
      h.log_prob += lp_acc[b][t];
      if (id == Vocab::kEos) {
        h.finished = true;
        break;
      }
      h.ids.push_back(id);
    }
    h.score = h.log_prob;
    if (!record_attention) continue;
    // The batch ran as long as its longest row: trim this row's maps to its own length.
    attach_attention(h, state, b, encoder_maps, b);
    const auto T = static_cast<std::int64_t>(h.token_log_probs.size());
    for (auto& m : h.attention.decoder_self) m = m.slice(2, 0, T).slice(3, 0, T);
    for (auto& m : h.attention.cross) m = m.slice(2, 0, T);
  }
  return out;
}

}  // namespace

ShortlistOf sentence_shortlists(Transformer& model, const DecodeConfig& config) {
  auto shortlist = model->shortlist();
  if (!config.shortlist || !shortlist) return {};
  if (shortlist->src_vocab() != model->src_vocab_size() || shortlist->tgt_vocab() != model->tgt_vocab_size())
    throw std::invalid_argument("the lexical shortlist was made for other vocabularies than this model's");
  return [shortlist](const std::vector<std::int64_t>& source) {
    std::vector<std::int64_t> sentence;
    for (auto id : source)
      if (id != Vocab::kPad) sentence.push_back(id);
    return shortlist->targets(sentence);
  };
}

std::shared_ptr<const PackedTransformer> packed_for(Transformer& model, const DecodeConfig& config, std::int64_t rows) {
  const auto format = packed_format(config.weights);
  if (!format || (*format == WeightFormat::kFloat32 && rows > kPackedFp32MaxRows) || !model_device(model).is_cpu())
    return nullptr;
  return model->packed(*format);
}

std::vector<std::int64_t> BeamTree::path(int rank) const {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].rank != rank) continue;
    for (auto n = static_cast<std::int64_t>(i); n >= 0; n = nodes[static_cast<std::size_t>(n)].parent) out.push_back(n);
    std::reverse(out.begin(), out.end());
    break;
  }
  return out;
}

std::int64_t max_output_length(const DecodeConfig& config, std::int64_t src_len, const Transformer& model) {
  return output_length_limit(config, src_len, model->max_length());
}

std::vector<Hypothesis> greedy_search(Transformer& model, const at::Tensor& src, const DecodeConfig& config,
                                      bool record_attention) {
  InferenceScope scope(model);
  const auto B = src.size(0);
  std::vector<at::Tensor> encoder_maps;
  auto state = begin(model, src, config, record_attention, &encoder_maps);
  // Each row has the length limit of its own source, as if decoded alone.
  std::vector<std::int64_t> limits;
  const auto lengths = src.ne(Vocab::kPad).sum(1).to(at::kCPU);
  for (std::int64_t b = 0; b < B; ++b)
    limits.push_back(max_output_length(config, lengths[b].item<std::int64_t>(), model));
  const auto row_limit = at::tensor(limits, at::kLong).to(src.device());
  const auto max_len = *std::max_element(limits.begin(), limits.end());
  auto tokens = at::full({B}, Vocab::kBos, src.options());
  auto done = at::zeros({B}, src.options().dtype(at::kBool));
  std::vector<at::Tensor> chosen, scores;
  for (std::int64_t t = 0; t < max_len; ++t) {
    auto log_probs = model->step(state, tokens);  // [B, V]
    auto [best, index] = log_probs.max(-1);
    tokens = index.masked_fill(done, Vocab::kPad);
    chosen.push_back(tokens);
    scores.push_back(best.masked_fill(done, 0));
    done = done | tokens.eq(Vocab::kEos) | row_limit.le(t + 1);
    if (done.all().item<bool>()) break;
  }
  return collect_rows(at::stack(chosen, 1).to(at::kCPU), at::stack(scores, 1).to(at::kCPU), state, encoder_maps,
                      record_attention);
}

std::vector<Hypothesis> beam_search(Transformer& model, const std::vector<std::int64_t>& src,
                                    const DecodeConfig& config, bool record_attention, BeamTree* tree) {
  InferenceScope scope(model);
  const auto device = model_device(model);
  const auto width = static_cast<std::int64_t>(std::max(1, config.beam));
  const auto nbest = static_cast<std::size_t>(std::clamp(config.nbest, 1, config.beam));
  std::vector<at::Tensor> encoder_maps;
  auto state = begin(model, source_tensor(src, device), config, record_attention, &encoder_maps);
  const auto max_len = max_output_length(config, static_cast<std::int64_t>(src.size()), model);

  std::vector<Hypothesis> alive(1), finished;
  // The tree records every candidate examined: kept, finished, or cut because the beam was full.
  auto add_node = [tree](std::int64_t parent, std::int64_t token, std::int64_t step, float token_lp, double lp,
                         BeamNodeState state) -> std::int64_t {
    if (!tree) return -1;
    BeamNode n;
    n.parent = parent;
    n.token = token;
    n.step = step;
    n.token_log_prob = token_lp;
    n.log_prob = n.score = lp;
    n.state = state;
    tree->nodes.push_back(std::move(n));
    return static_cast<std::int64_t>(tree->nodes.size()) - 1;
  };
  if (tree) {
    tree->nodes.clear();
    alive[0].node = add_node(-1, Vocab::kBos, 0, 0.0F, 0.0, BeamNodeState::kRoot);
  }
  auto mark_finished = [tree](const Hypothesis& h) {
    if (!tree || h.node < 0) return;
    auto& n = tree->nodes[static_cast<std::size_t>(h.node)];
    n.state = BeamNodeState::kFinished;
    n.score = h.score;
  };
  auto tokens = at::full({1}, Vocab::kBos, at::TensorOptions().dtype(at::kLong).device(device));
  for (std::int64_t t = 0; t < max_len && !alive.empty(); ++t) {
    auto log_probs = model->step(state, tokens).to(at::kCPU);  // [n, V]
    std::vector<double> base;
    for (const auto& h : alive) base.push_back(h.log_prob);
    auto total = log_probs + at::tensor(base, at::kDouble).to(at::kFloat).unsqueeze(1);
    const auto V = total.size(1);
    auto [top_scores, top_index] = total.view({-1}).topk(std::min<std::int64_t>(2 * width, total.numel()));
    auto s_acc = top_scores.accessor<float, 1>();
    auto i_acc = top_index.accessor<std::int64_t, 1>();
    std::vector<Hypothesis> next;
    std::vector<std::int64_t> origins, next_tokens;
    auto lp_acc = log_probs.accessor<float, 2>();
    for (std::int64_t k = 0; k < top_scores.size(0); ++k) {
      const auto row = i_acc[k] / V;
      const auto token = i_acc[k] % V;
      if (static_cast<std::int64_t>(next.size()) >= width) {
        // The beam is full: the remaining candidates are cut (only the tree keeps them).
        if (!tree) break;
        add_node(alive[row].node, token, t + 1, lp_acc[row][token], s_acc[k], BeamNodeState::kPruned);
        continue;
      }
      Hypothesis h = alive[row];
      h.token_log_probs.push_back(lp_acc[row][token]);
      h.log_prob = s_acc[k];
      h.node = add_node(h.node, token, t + 1, lp_acc[row][token], h.log_prob, BeamNodeState::kKept);
      if (token == Vocab::kEos) {
        h.finished = true;
        h.score = h.log_prob / gnmt_length_penalty(h.ids.size() + 1, config.length_penalty);
        mark_finished(h);
        if (record_attention) attach_attention(h, state, row, encoder_maps, 0);
        finished.push_back(std::move(h));
        continue;
      }
      h.ids.push_back(token);
      next.push_back(std::move(h));
      origins.push_back(row);
      next_tokens.push_back(token);
    }
    if (finished.size() >= nbest && !finished.empty()) {
      // Stop once the best finished hypothesis beats every live one (scores only fall with length).
      double best_finished = -INFINITY;
      for (const auto& h : finished) best_finished = std::max(best_finished, h.score);
      double best_alive = -INFINITY;
      for (const auto& h : next)
        best_alive = std::max(best_alive, h.log_prob / gnmt_length_penalty(max_len, config.length_penalty));
      if (static_cast<std::int64_t>(finished.size()) >= width || best_finished >= best_alive) break;
    }
    if (next.empty()) break;
    const auto index = at::tensor(origins, at::kLong).to(device);
    state.reorder(index);
    alive = std::move(next);
    tokens = at::tensor(next_tokens, at::kLong).to(device);
    if (t + 1 == max_len) {
      for (std::size_t r = 0; r < alive.size(); ++r) {
        auto& h = alive[r];
        h.score = h.log_prob / gnmt_length_penalty(h.ids.size(), config.length_penalty);
        mark_finished(h);
        if (record_attention) attach_attention(h, state, static_cast<std::int64_t>(r), encoder_maps, 0);
        finished.push_back(std::move(h));
      }
    }
  }
  std::stable_sort(finished.begin(), finished.end(),
                   [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  if (finished.size() > nbest) finished.resize(nbest);
  if (tree) {
    for (std::size_t i = 0; i < finished.size(); ++i)
      if (finished[i].node >= 0) tree->nodes[static_cast<std::size_t>(finished[i].node)].rank = static_cast<int>(i);
  }
  return finished;
}

namespace {

// A batch's DecoderState (packed or LibTorch's) as the searches of ts/infer/batch_search.h see it.
class TensorStepDecoder : public StepDecoder {
 public:
  TensorStepDecoder(Transformer& model, DecoderState state, const at::Device& device)
      : model_(model), state_(std::move(state)), device_(device) {}
  std::int64_t vocab() const override { return model_->tgt_vocab_size(); }
  std::int64_t max_length() const override { return model_->max_length(); }
  void step(const std::vector<std::int64_t>& tokens, FloatScratch& log_probs) override {
    const auto out = model_->step(state_, at::tensor(tokens, at::kLong).to(device_)).to(at::kCPU).contiguous();
    log_probs.resize_discarding(static_cast<std::size_t>(out.numel()));
    std::copy(out.data_ptr<float>(), out.data_ptr<float>() + out.numel(), log_probs.data());
  }
  void reorder(const std::vector<std::int64_t>& rows) override {
    state_.reorder(at::tensor(rows, at::kLong).to(device_));
  }

 private:
  Transformer& model_;
  DecoderState state_;
  at::Device device_;
};

}  // namespace

std::vector<std::vector<Hypothesis>> beam_search_batched(Transformer& model,
                                                         const std::vector<std::vector<std::int64_t>>& sources,
                                                         const DecodeConfig& config) {
  std::vector<std::vector<Hypothesis>> out(sources.size());
  if (sources.empty()) return out;
  InferenceScope scope(model);
  const auto device = model_device(model);
  const auto B = static_cast<std::int64_t>(sources.size());
  std::int64_t longest = 0;
  std::vector<std::int64_t> lengths;
  for (const auto& s : sources) {
    lengths.push_back(static_cast<std::int64_t>(s.size()));
    longest = std::max(longest, lengths.back());
  }
  auto src = at::full({B, longest}, Vocab::kPad, at::kLong);
  for (std::int64_t b = 0; b < B; ++b) {
    const auto& s = sources[static_cast<std::size_t>(b)];
    src[b].slice(0, 0, static_cast<std::int64_t>(s.size())).copy_(at::tensor(s, at::kLong));
  }
  const auto width = std::max(1, config.beam);
  TensorStepDecoder decoder(model, begin(model, src.to(device), config, /*record=*/false, nullptr, width), device);
  auto found = beam_steps(decoder, lengths, config);
  for (std::size_t i = 0; i < found.size(); ++i)
    for (auto& h : found[i]) out[i].emplace_back(std::move(h));
  return out;
}

at::Tensor sample_tokens(const at::Tensor& log_probs, double temperature, int top_k, double top_p,
                         at::Generator& generator) {
  auto logits = log_probs / temperature;
  if (top_k > 0 && top_k < logits.size(1)) {
    auto kth = std::get<0>(logits.topk(top_k, -1)).select(1, top_k - 1).unsqueeze(1);
    logits = logits.masked_fill(logits < kth, -INFINITY);
  }
  auto probs = at::softmax(logits, -1);
  if (top_p < 1.0) {
    auto [sorted, order] = probs.sort(-1, /*descending=*/true);
    auto cumulative = sorted.cumsum(-1);
    auto drop = (cumulative - sorted) > top_p;  // keep the smallest prefix reaching top_p
    probs = probs.scatter(1, order, sorted.masked_fill(drop, 0));
  }
  return at::multinomial(probs, 1, false, generator).squeeze(1);
}

std::vector<Hypothesis> sample_search(Transformer& model, const std::vector<std::int64_t>& src,
                                      const DecodeConfig& config, bool record_attention) {
  InferenceScope scope(model);
  const auto device = model_device(model);
  const auto n = static_cast<std::int64_t>(std::max(1, config.nbest));
  auto src_t = source_tensor(src, device).expand({n, static_cast<std::int64_t>(src.size())}).contiguous();
  std::vector<at::Tensor> encoder_maps;
  auto state = begin(model, src_t, config, record_attention, &encoder_maps);
  const auto max_len = max_output_length(config, static_cast<std::int64_t>(src.size()), model);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(config.seed);
  auto tokens = at::full({n}, Vocab::kBos, src_t.options());
  auto done = at::zeros({n}, src_t.options().dtype(at::kBool));
  std::vector<at::Tensor> chosen, scores;
  for (std::int64_t t = 0; t < max_len; ++t) {
    auto log_probs = model->step(state, tokens).to(at::kCPU);  // [n, V]
    auto next = sample_tokens(log_probs, config.temperature, config.top_k, config.top_p, generator);
    next = next.masked_fill(done.to(at::kCPU), Vocab::kPad);
    chosen.push_back(next);
    scores.push_back(log_probs.gather(1, next.clamp_min(0).unsqueeze(1)).squeeze(1).masked_fill(done.to(at::kCPU), 0));
    done = done | next.to(device).eq(Vocab::kEos);
    tokens = next.to(device);
    if (done.all().item<bool>()) break;
  }
  auto out = collect_rows(at::stack(chosen, 1), at::stack(scores, 1), state, encoder_maps, record_attention);
  std::stable_sort(out.begin(), out.end(), [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  return out;
}

std::vector<Hypothesis> search(Transformer& model, const std::vector<std::int64_t>& src, const DecodeConfig& config,
                               bool record_attention, BeamTree* tree) {
  switch (config.mode) {
    case DecodeMode::kBeam:
      return beam_search(model, src, config, record_attention, tree);
    case DecodeMode::kSample:
      return sample_search(model, src, config, record_attention);
    case DecodeMode::kGreedy:
      break;
  }
  return greedy_search(model, source_tensor(src, model_device(model)), config, record_attention);
}

}  // namespace ts
