// Parameter count by formula (see ts/model/size.h); tests check it against build_model().
#include "ts/model/size.h"

#include <algorithm>

namespace ts {

ModelSize estimate_model_size(const ExperimentConfig& config, std::int64_t src_vocab, std::int64_t tgt_vocab,
                              double avg_sentence_tokens) {
  const auto& m = config.model;
  const std::int64_t D = m.d_model, F = m.d_ff;
  const std::int64_t attention = 4 * D * D + 4 * D;       // fused qkv (or q + kv) and the output projection
  const std::int64_t feed_forward = 2 * D * F + F + D;
  const std::int64_t norm = 2 * D;
  const std::int64_t encoder_layer = attention + feed_forward + 2 * norm;
  const std::int64_t decoder_layer = 2 * attention + feed_forward + 3 * norm;

  ModelSize size;
  std::int64_t p = src_vocab * D;                          // source embedding
  if (!m.share_embeddings) p += tgt_vocab * D;             // target embedding
  if (m.positions == "learned") p += static_cast<std::int64_t>(m.max_positions) * D;
  p += m.encoder_layers * encoder_layer + m.decoder_layers * decoder_layer;
  if (m.pre_norm) p += 2 * norm;                           // final encoder and decoder norms
  if (!m.tie_output) p += tgt_vocab * D;                   // output projection
  p += tgt_vocab;                                          // output bias
  size.parameters = p;
  size.weight_bytes = 4 * p;

  // One batch of activations kept for the backward pass: per token and layer about 16 vectors of
  // width D, two of width F, and the attention probabilities with their dropout masks.
  const auto& t = config.train;
  const double tokens = t.batch_tokens > 0 ? t.batch_tokens : t.batch_sentences * avg_sentence_tokens;
  const double length = std::max(1.0, avg_sentence_tokens);
  const double per_token_layer = 16.0 * D + 2.0 * F + 2.0 * m.heads * length;
  const double layers = m.encoder_layers + 2.0 * m.decoder_layers;  // decoder layers attend twice
  const double activations = tokens * (layers * per_token_layer + 3.0 * tgt_vocab) * 4;  // + logits, softmax, grad
  size.batch_tokens = static_cast<std::int64_t>(tokens);
  size.training_bytes = 4 * size.weight_bytes + static_cast<std::int64_t>(activations);  // weights, grads, 2 Adam moments
  return size;
}

}  // namespace ts
