// SPDX-License-Identifier: GPL-3.0-or-later
// Training memory by formula (see ts/train/model_size.h); tests check the parameter count against
// build_model().
#include "ts/train/model_size.h"

#include <algorithm>

namespace ts {

ModelSize estimate_model_size(const ExperimentConfig& config, std::int64_t src_vocab, std::int64_t tgt_vocab,
                              double avg_sentence_tokens) {
  const auto& m = config.model;
  const double D = m.d_model, F = m.d_ff;
  const double p = parameter_count(m, static_cast<double>(src_vocab), static_cast<double>(tgt_vocab));
  ModelSize size;
  constexpr double kMax = 9.0e18;  // below INT64_MAX
  size.parameters = static_cast<std::int64_t>(std::min(p, kMax));
  size.weight_bytes = static_cast<std::int64_t>(std::min(4 * p, kMax));

  // One batch of activations kept for the backward pass: per token and layer about 16 vectors of
  // width D, two of width F, and the attention probabilities with their dropout masks.
  const auto& t = config.train;
  const double tokens = t.batch_tokens > 0 ? t.batch_tokens : t.batch_sentences * avg_sentence_tokens;
  const double length = std::max(1.0, avg_sentence_tokens);
  const double per_token_layer = 16.0 * D + 2.0 * F + 2.0 * m.heads * length;
  const double layers = m.encoder_layers + 2.0 * m.decoder_layers;                       // decoder layers attend twice
  const double activations = tokens * (layers * per_token_layer + 3.0 * tgt_vocab) * 4;  // + logits, softmax, grad
  size.batch_tokens = static_cast<std::int64_t>(tokens);
  size.training_bytes =
      static_cast<std::int64_t>(std::min(16 * p + activations, kMax));  // weights, grads, 2 Adam moments
  return size;
}

}  // namespace ts
