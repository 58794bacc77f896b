// SPDX-License-Identifier: GPL-3.0-or-later
// Text-to-text translation over a model and its text pipeline (see ts/decode/translator.h).
#include "ts/decode/translator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>

#include <ATen/Parallel.h>

#include "ts/model/batch.h"
#include "ts/model/mode_guard.h"
#include "ts/model/packed_transformer.h"

namespace ts {
namespace {

nlohmann::json maps_to_json(const std::vector<at::Tensor>& maps) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& m : maps) {
    const auto t = m.select(0, 0).contiguous().to(at::kFloat);  // [H, Q, K]
    nlohmann::json heads = nlohmann::json::array();
    for (std::int64_t h = 0; h < t.size(0); ++h) {
      nlohmann::json rows = nlohmann::json::array();
      for (std::int64_t q = 0; q < t.size(1); ++q) {
        const auto row = t[h][q];
        rows.push_back(std::vector<float>(row.data_ptr<float>(), row.data_ptr<float>() + row.numel()));
      }
      heads.push_back(std::move(rows));
    }
    layers.push_back(std::move(heads));
  }
  return layers;
}

// One length-sorted batch: the best hypothesis of each of its sources (an empty one when beam
// search found none), in the batch's order.
std::vector<Hypothesis> decode_batch(Transformer& model, const std::vector<std::vector<std::int64_t>>& batch,
                                     const DecodeConfig& config) {
  std::vector<Hypothesis> best(batch.size());
  if (config.mode == DecodeMode::kBeam) {
    auto results = beam_search_batched(model, batch, config);
    for (std::size_t k = 0; k < batch.size(); ++k)
      if (!results[k].empty()) best[k] = std::move(results[k].front());
    return best;
  }
  std::vector<Example> examples;
  examples.reserve(batch.size());
  for (const auto& src : batch) examples.push_back({src, {}});
  std::vector<std::size_t> all(batch.size());
  for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
  const auto device = model->parameters().front().device();
  return greedy_search(model, make_batch(examples, all, device).src, config);
}

// The detokenised text of each hypothesis and, with `confidences`, its mean token log-probability.
std::vector<std::string> texts_of(const std::vector<Hypothesis>& best, const TextPipeline& pipeline,
                                  std::vector<double>* confidences) {
  std::vector<std::string> out(best.size());
  if (confidences) confidences->assign(best.size(), 0.0);
  for (std::size_t i = 0; i < best.size(); ++i) {
    out[i] = pipeline.decode_target(best[i].ids);
    if (confidences) (*confidences)[i] = mean_token_log_prob(best[i]);
  }
  return out;
}

}  // namespace

std::size_t default_decode_batch(const at::Device& device, const DecodeConfig& config) {
  return device.is_cuda() ? 512 : cpu_decode_batch(config);
}

std::vector<Hypothesis> decode_batches(Transformer& model, const std::vector<std::vector<std::int64_t>>& sources,
                                       const DecodeConfig& config, std::size_t batch_size,
                                       const std::function<void(std::size_t)>& progress) {
  if (batch_size == kDeviceBatch) batch_size = default_decode_batch(model->parameters().front().device(), config);
  batch_size = std::max<std::size_t>(1, batch_size);
  const auto rows = static_cast<std::int64_t>(config.mode == DecodeMode::kBeam
                                                  ? std::max(1, config.beam)
                                                  : static_cast<int>(std::min(batch_size, sources.size())));
  // The workers only read the model: it is put into eval mode here, once (the searches' own guards
  // then write nothing), and its packed copy exists before they start.
  const EvalModeGuard eval(*model);
  std::vector<HypothesisTokens> found;
  if (const auto packed = config.mode == DecodeMode::kSample ? nullptr : packed_for(model, config, rows)) {
    // On the packed CPU kernels the threads share out the batches (ts/infer/batch_search.h).
    const int threads = at::in_parallel_region() ? 1 : at::get_num_threads();
    found = decode_packed(packed->model(), sources, config, batch_size, threads, progress,
                          sentence_shortlists(model, config));
  } else {
    found = decode_in_batches(sources, batch_size, 1, progress, [&](const auto& batch) {
      auto best = decode_batch(model, batch, config);
      return std::vector<HypothesisTokens>(std::make_move_iterator(best.begin()), std::make_move_iterator(best.end()));
    });
  }
  std::vector<Hypothesis> out;
  out.reserve(found.size());
  for (auto& h : found) out.emplace_back(std::move(h));
  return out;
}

nlohmann::json Translation::attention_json() const {
  return {{"source_tokens", source_tokens},
          {"target_tokens", target_tokens},
          {"encoder_self", maps_to_json(best.attention.encoder_self)},
          {"decoder_self", maps_to_json(best.attention.decoder_self)},
          {"cross", maps_to_json(best.attention.cross)}};
}

nlohmann::json Translation::beam_tree_json() const {
  if (beam_tree.nodes.empty()) return nlohmann::json();
  auto nodes = nlohmann::json::array();
  for (std::size_t i = 0; i < beam_tree.nodes.size(); ++i) {
    const auto& n = beam_tree.nodes[i];
    nodes.push_back({{"id", i},
                     {"parent", n.parent},
                     {"token", n.text},
                     {"token_id", n.token},
                     {"step", n.step},
                     {"token_log_prob", n.token_log_prob},
                     {"log_prob", n.log_prob},
                     {"score", n.score},
                     {"state", beam_node_state_name(n.state)},
                     {"rank", n.rank}});
  }
  return {{"nodes", std::move(nodes)}, {"best_path", beam_tree.path(0)}};
}

nlohmann::json Translation::probe_json(const std::string& source) const {
  // Rounded so that a run's probes stay small in the run store (4 decimals are below what a
  // colour scale shows).
  auto cross = maps_to_json(best.attention.cross);
  for (auto& layer : cross)
    for (auto& head : layer)
      for (auto& row : head)
        for (auto& w : row) w = std::round(w.get<double>() * 1e4) / 1e4;
  return {{"source", source},
          {"text", text},
          {"source_tokens", source_tokens},
          {"target_tokens", target_tokens},
          {"cross", std::move(cross)}};
}

std::vector<std::string> greedy_translate_batched(Transformer& model, const TextPipeline& pipeline,
                                                  const std::vector<std::vector<std::int64_t>>& sources,
                                                  const DecodeConfig& config, std::size_t batch_size,
                                                  std::vector<double>* confidences) {
  auto greedy = config;
  greedy.mode = DecodeMode::kGreedy;
  return texts_of(decode_batches(model, sources, greedy, batch_size), pipeline, confidences);
}

Translator::Translator(Transformer model, TextPipeline pipeline)
    : model_(std::move(model)), pipeline_(std::move(pipeline)) {}

std::vector<std::int64_t> Translator::encode(const std::string& text) const {
  return fit_to_positions(pipeline_.encode_source(text), model_->max_length());
}

Translation Translator::translate(const std::string& text, const DecodeConfig& config, bool record_attention) {
  const auto t0 = std::chrono::steady_clock::now();
  Translation out;
  const auto src = encode(text);
  const auto& src_vocab = *pipeline_.src_vocab;
  for (auto id : src) out.source_tokens.push_back(src_vocab.token(id));
  auto hypotheses = search(model_, src, config, record_attention, &out.beam_tree);
  for (auto& node : out.beam_tree.nodes)
    node.text = node.parent < 0 ? std::string(Vocab::kBosToken) : pipeline_.tgt_vocab->token(node.token);
  for (const auto& h : hypotheses) out.nbest.push_back({pipeline_.decode_target(h.ids), h.score, h.log_prob});
  if (!hypotheses.empty()) {
    out.best = std::move(hypotheses.front());
    out.text = out.nbest.front().text;
    for (auto id : out.best.ids) out.target_tokens.push_back(pipeline_.tgt_vocab->token(id));
    if (out.best.finished) out.target_tokens.push_back(Vocab::kEosToken);
  }
  out.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::vector<std::string> Translator::translate_all(const std::vector<std::string>& sources, const DecodeConfig& config,
                                                   std::size_t batch_size, std::vector<double>* confidences,
                                                   const std::function<void(std::size_t)>& progress) {
  if (config.mode == DecodeMode::kSample) {  // one at a time: each sentence draws from the seeded generator in order
    std::vector<std::string> out(sources.size());
    if (confidences) confidences->assign(sources.size(), 0.0);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      auto t = translate(sources[i], config);
      out[i] = std::move(t.text);
      if (confidences) (*confidences)[i] = mean_token_log_prob(t.best);
      if (progress) progress(i + 1);
    }
    return out;
  }
  std::vector<std::vector<std::int64_t>> encoded;
  encoded.reserve(sources.size());
  for (const auto& text : sources) encoded.push_back(encode(text));
  return texts_of(decode_batches(model_, encoded, config, batch_size, progress), pipeline_, confidences);
}

}  // namespace ts
