// SPDX-License-Identifier: GPL-3.0-or-later
// Text in, text out: a loaded checkpoint plus its tokenizers and vocabularies behind one call.
// The CLI's translate command and the desktop app's translate panel both use this.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ts/decode/search.h"
#include "ts/model/transformer.h"
#include "ts/text/pipeline.h"

namespace ts {

struct TranslationCandidate {
  std::string text;
  double score = 0;
  double log_prob = 0;
};

struct Translation {
  std::string text;                         // best hypothesis, detokenised
  std::vector<std::string> source_tokens;   // as the model saw them, "</s>" last
  std::vector<std::string> target_tokens;   // generated tokens, "</s>" last when finished
  std::vector<TranslationCandidate> nbest;  // best first
  Hypothesis best;                          // ids, per-token scores, attention if requested
  double milliseconds = 0;
  BeamTree beam_tree;  // beam search only: every candidate it scored
  /// {"source_tokens", "target_tokens", "encoder_self"/"decoder_self"/"cross": [layer][head][q][k]}
  nlohmann::json attention_json() const;
  /// Empty for greedy/sampling; otherwise {"nodes": [{"id", "parent", "token", "token_id", "step",
  /// "token_log_prob", "log_prob", "score", "state", "rank"}], "best_path": [node ids root..leaf]}.
  nlohmann::json beam_tree_json() const;
  /// What the trainer records for its probe sentence: {"source", "text", "source_tokens",
  /// "target_tokens", "cross": [layer][head][target][source]}, weights rounded to 4 decimals.
  /// Needs attention recorded.
  nlohmann::json probe_json(const std::string& source) const;
};

/// Sentences decoded together where a caller names no number (kDeviceBatch): on a CPU, where the
/// packed kernels share the batches out among the threads, cpu_decode_batch(config) (32 greedily, 8
/// with a beam of 4: batches whose rows stay in the caches); on a GPU 512, where a decoding step costs
/// a few dozen kernel launches whatever its batch (an H200 decoded 1,000 German sentences greedily at
/// 1,727 sentences/s in batches of 64, 2026-12-01; the larger batch is not yet timed there).
std::size_t default_decode_batch(const at::Device& device, const DecodeConfig& config);
/// Asks decode_batches and the callers below for default_decode_batch of the model's device.
inline constexpr std::size_t kDeviceBatch = 0;

/// The best hypothesis of each source (already encoded, each ending with EOS), in input order: greedy
/// decoding or beam search as config.mode says (not sampling), in length-sorted batches of
/// `batch_size` sentences (kDeviceBatch: the device's default), each hypothesis the same as decoding
/// its sentence alone gives. On the packed CPU kernels the batches are shared out among LibTorch's
/// threads. `progress` hears the sentences done after each batch, from whichever thread decoded it,
/// one call at a time; an exception it throws stops the decoding (the other threads stop at their
/// next batch) and comes out of here.
std::vector<Hypothesis> decode_batches(Transformer& model, const std::vector<std::vector<std::int64_t>>& sources,
                                       const DecodeConfig& config, std::size_t batch_size = kDeviceBatch,
                                       const std::function<void(std::size_t)>& progress = {});

/// Greedy-decodes `sources` (already encoded, each ending with EOS) in length-sorted batches and
/// returns the detokenised outputs in input order; with `confidences`, also each output's mean token
/// log-probability (mean_token_log_prob), in input order.
std::vector<std::string> greedy_translate_batched(Transformer& model, const TextPipeline& pipeline,
                                                  const std::vector<std::vector<std::int64_t>>& sources,
                                                  const DecodeConfig& config, std::size_t batch_size = kDeviceBatch,
                                                  std::vector<double>* confidences = nullptr);

class Translator {
 public:
  Translator(Transformer model, TextPipeline pipeline);
  // A checkpoint is loaded by load_translator (ts/train/checkpoint.h): checkpoints are training's format.

  Translation translate(const std::string& text, const DecodeConfig& config, bool record_attention = false);
  /// Best translation of each source, in input order: greedy decoding and beam search run in
  /// length-sorted batches of `batch_size` sentences (kDeviceBatch: the device's default; the same
  /// outputs as translate() one at a time), sampling one sentence at a time (see decode_batches).
  /// With `confidences`, also each translation's mean token log-probability (mean_token_log_prob);
  /// `progress` hears the sentences done after each batch, possibly from another thread, one call at
  /// a time.
  std::vector<std::string> translate_all(const std::vector<std::string>& sources, const DecodeConfig& config,
                                         std::size_t batch_size = kDeviceBatch,
                                         std::vector<double>* confidences = nullptr,
                                         const std::function<void(std::size_t)>& progress = {});
  /// A source sentence as the model reads it: encoded, cut to the model's positions (EOS kept).
  std::vector<std::int64_t> encode(const std::string& text) const;

  const TextPipeline& pipeline() const { return pipeline_; }
  Transformer& model() { return model_; }

 private:
  Transformer model_;
  TextPipeline pipeline_;
};

}  // namespace ts
