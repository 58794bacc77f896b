// SPDX-License-Identifier: GPL-3.0-or-later
// Parameter count by formula (see ts/model/size.h); tests check it against build_model().
#include "ts/model/size.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

namespace ts {

ModelSize estimate_model_size(const ExperimentConfig& config, std::int64_t src_vocab, std::int64_t tgt_vocab,
                              double avg_sentence_tokens) {
  const auto& m = config.model;
  // In doubles: exact for any model that fits in memory (< 2^53 parameters), and absurd sizes
  // cannot overflow on their way to check_memory().
  const double D = m.d_model, F = m.d_ff;
  const double attention = 4 * D * D + 4 * D;              // fused qkv (or q + kv) and the output projection
  const double feed_forward = 2 * D * F + F + D;
  const double norm = 2 * D;
  const double encoder_layer = attention + feed_forward + 2 * norm;
  const double decoder_layer = 2 * attention + feed_forward + 3 * norm;

  ModelSize size;
  double p = static_cast<double>(src_vocab) * D;          // source embedding
  if (!m.share_embeddings) p += static_cast<double>(tgt_vocab) * D;  // target embedding
  if (m.positions == "learned") p += m.max_positions * D;
  p += m.encoder_layers * encoder_layer + m.decoder_layers * decoder_layer;
  if (m.pre_norm) p += 2 * norm;                           // final encoder and decoder norms
  if (!m.tie_output) p += static_cast<double>(tgt_vocab) * D;  // output projection
  p += static_cast<double>(tgt_vocab);                     // output bias
  constexpr double kMax = 9.0e18;                          // below INT64_MAX
  size.parameters = static_cast<std::int64_t>(std::min(p, kMax));
  size.weight_bytes = static_cast<std::int64_t>(std::min(4 * p, kMax));

  // One batch of activations kept for the backward pass: per token and layer about 16 vectors of
  // width D, two of width F, and the attention probabilities with their dropout masks.
  const auto& t = config.train;
  const double tokens = t.batch_tokens > 0 ? t.batch_tokens : t.batch_sentences * avg_sentence_tokens;
  const double length = std::max(1.0, avg_sentence_tokens);
  const double per_token_layer = 16.0 * D + 2.0 * F + 2.0 * m.heads * length;
  const double layers = m.encoder_layers + 2.0 * m.decoder_layers;  // decoder layers attend twice
  const double activations = tokens * (layers * per_token_layer + 3.0 * tgt_vocab) * 4;  // + logits, softmax, grad
  size.batch_tokens = static_cast<std::int64_t>(tokens);
  size.training_bytes = static_cast<std::int64_t>(std::min(16 * p + activations, kMax));  // weights, grads, 2 Adam moments
  return size;
}

std::int64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

namespace {

std::string human_bytes(double bytes) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 1000 && u < 6) bytes /= 1000, ++u;
  return fmt::format(u == 0 ? "{:.0f} {}" : "{:.1f} {}", bytes, units[u]);
}

}  // namespace

void check_memory(double bytes, const std::string& what, const std::string& advice) {
  const auto available = available_memory_bytes();
  if (available <= 0 || bytes <= static_cast<double>(available)) return;
  throw ConfigError(fmt::format("{} needs about {} but this machine has {} available: {}", what, human_bytes(bytes),
                                human_bytes(static_cast<double>(available)), advice));
}

}  // namespace ts
