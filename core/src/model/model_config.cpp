// SPDX-License-Identifier: GPL-3.0-or-later
// The model section's checks (see ts/model/model_config.h).
#include "ts/model/model_config.h"

namespace ts {

const char* positions_name(Positions positions) { return positions == Positions::kLearned ? "learned" : "sinusoidal"; }

Positions parse_positions(const std::string& name) {
  for (auto positions : {Positions::kSinusoidal, Positions::kLearned})
    if (name == positions_name(positions)) return positions;
  throw std::invalid_argument("unknown position encoding \"" + name + "\" (expected sinusoidal or learned)");
}

void check_positive(std::vector<std::string>& problems, const std::string& key, double value) {
  if (!(value > 0)) problems.push_back(key + " must be positive (is " + std::to_string(value) + ")");
}

void throw_if_problems(const std::vector<std::string>& problems) {
  if (problems.empty()) return;
  std::string message = "invalid configuration:";
  for (const auto& item : problems) message += "\n  - " + item;
  throw ConfigError(message);
}

std::vector<std::string> ModelConfig::problems(bool shared_vocab) const {
  std::vector<std::string> p;
  check_positive(p, "model.encoder_layers", encoder_layers);
  check_positive(p, "model.decoder_layers", decoder_layers);
  check_positive(p, "model.d_model", d_model);
  check_positive(p, "model.heads", heads);
  check_positive(p, "model.d_ff", d_ff);
  check_positive(p, "model.max_positions", max_positions);
  if (heads > 0 && d_model % heads != 0)
    p.push_back("model.heads (" + std::to_string(heads) + ") must divide model.d_model (" + std::to_string(d_model) +
                ")");
  if (positions == Positions::kSinusoidal && d_model % 2 != 0)
    p.push_back("model.d_model must be even for sinusoidal positions");
  if (dropout < 0 || dropout >= 1) p.push_back("model.dropout must be in [0, 1)");
  if (share_embeddings && !shared_vocab)
    p.push_back("model.share_embeddings needs data.shared_vocab (one vocabulary for both sides)");
  return p;
}

}  // namespace ts
