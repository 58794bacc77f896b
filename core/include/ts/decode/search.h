// Decoding strategies behind one interface: greedy (batched), beam search and sampling.
// All return plain Hypothesis structs with ids, scores and, on request, attention per layer/head.
// Decoding is incremental: the encoder runs once and the decoder caches keys/values per layer.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "ts/model/transformer.h"
#include "ts/train/config.h"

namespace ts {

struct Hypothesis {
  std::vector<std::int64_t> ids;      // target ids, without BOS and EOS
  std::vector<float> token_log_probs; // one per generated token, EOS included when it was produced
  double log_prob = 0;                // sum of token_log_probs
  double score = 0;                   // log_prob normalised by the length penalty (beam) or log_prob
  bool finished = false;              // ended with EOS (false: cut at the length limit)
  AttentionMaps attention;            // filled when attention was requested: [1, H, ., .] per layer
};

/// Maximum output length for a source of `src_len` tokens under `config` and the model's limit.
std::int64_t max_output_length(const DecodeConfig& config, std::int64_t src_len, const Transformer& model);

/// Greedy decoding of a padded batch src [B, S] (validation uses this); one hypothesis per row.
std::vector<Hypothesis> greedy_search(Transformer& model, const at::Tensor& src, const DecodeConfig& config,
                                      bool record_attention = false);

/// Beam search for one source sentence (ids ending with EOS); returns the n-best, best first.
std::vector<Hypothesis> beam_search(Transformer& model, const std::vector<std::int64_t>& src,
                                    const DecodeConfig& config, bool record_attention = false);

/// Samples config.nbest outputs (temperature, top-k, top-p), best log-probability first.
std::vector<Hypothesis> sample_search(Transformer& model, const std::vector<std::int64_t>& src,
                                      const DecodeConfig& config, bool record_attention = false);

/// Dispatches on config.mode ("greedy", "beam", "sample") for one sentence.
std::vector<Hypothesis> search(Transformer& model, const std::vector<std::int64_t>& src, const DecodeConfig& config,
                               bool record_attention = false);

}  // namespace ts
