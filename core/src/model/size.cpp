// SPDX-License-Identifier: GPL-3.0-or-later
// Parameter count by formula (see ts/model/size.h); tests check it against build_model().
#include "ts/model/size.h"

#include <fstream>

#include <fmt/format.h>

namespace ts {

double parameter_count(const ModelConfig& m, double src_vocab, double tgt_vocab) {
  const double D = m.d_model, F = m.d_ff;
  const double attention = 4 * D * D + 4 * D;  // fused qkv (or q + kv) and the output projection
  const double feed_forward = 2 * D * F + F + D;
  const double norm = 2 * D;
  const double encoder_layer = attention + feed_forward + 2 * norm;
  const double decoder_layer = 2 * attention + feed_forward + 3 * norm;

  double p = src_vocab * D;                     // source embedding
  if (!m.share_embeddings) p += tgt_vocab * D;  // target embedding
  if (m.positions == Positions::kLearned) p += m.max_positions * D;
  p += m.encoder_layers * encoder_layer + m.decoder_layers * decoder_layer;
  if (m.pre_norm) p += 2 * norm;          // final encoder and decoder norms
  if (!m.tie_output) p += tgt_vocab * D;  // output projection
  return p + tgt_vocab;                   // output bias
}

double forward_flops(const ModelConfig& m, double tgt_vocab, double S, double T) {
  const double D = m.d_model, F = m.d_ff;
  const double encoder_layer = S * 2 * (4 * D * D + 2 * D * F)              // q, k, v, output; feed-forward
                               + 2 * 2 * S * S * D;                         // scores and their weighted sum
  const double decoder_layer = T * 2 * (4 * D * D + 2 * D * D + 2 * D * F)  // self q, k, v, o; cross q, o; ff
                               + S * 2 * 2 * D * D                          // cross-attention keys and values
                               + 2 * 2 * T * T * D + 2 * 2 * T * S * D;     // self and cross attention products
  return m.encoder_layers * encoder_layer + m.decoder_layers * decoder_layer + T * 2 * D * tgt_vocab;
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
  return u == 0 ? fmt::format("{:.0f} {}", bytes, units[u]) : fmt::format("{:.1f} {}", bytes, units[u]);
}

}  // namespace

void check_memory(double bytes, const std::string& what, const std::string& advice) {
  const auto available = available_memory_bytes();
  if (available <= 0 || bytes <= static_cast<double>(available)) return;
  throw ConfigError(fmt::format("{} needs about {} but this machine has {} available: {}", what, human_bytes(bytes),
                                human_bytes(static_cast<double>(available)), advice));
}

}  // namespace ts
