// SPDX-License-Identifier: GPL-3.0-or-later
// The model's own configuration: the architecture section of an experiment (ts/train/config.h puts
// it together with the data, training and decoding sections and reads them all from JSON). It lives
// here so that model/ depends on nothing above it.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace ts {

/// Raised for a bad configuration: the message names the key and what is allowed.
class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// How a token's position enters the model: fixed sinusoids (any length) or a learned table
/// (model.max_positions long).
enum class Positions { kSinusoidal, kLearned };
/// "sinusoidal", "learned".
const char* positions_name(Positions positions);
/// The inverse of positions_name; throws std::invalid_argument naming the accepted values.
Positions parse_positions(const std::string& name);

struct ModelConfig {
  int encoder_layers = 6;
  int decoder_layers = 6;  // 0 later means decoder-only is handled elsewhere; must be >= 1 here
  int d_model = 256;
  int heads = 8;
  int d_ff = 1024;
  double dropout = 0.1;
  bool pre_norm = false;  // pre-LN (norm before each sublayer) instead of post-LN
  Positions positions = Positions::kSinusoidal;
  int max_positions = 512;
  bool scale_embeddings = true;   // multiply embeddings by sqrt(d_model)
  bool tie_output = false;        // target embedding shared with the output projection
  bool share_embeddings = false;  // one embedding for source and target (needs shared vocab)

  /// Every problem of this section, each naming its key ("model.heads (5) must divide model.d_model
  /// (256)"); `shared_vocab` says whether both sides have one vocabulary (share_embeddings needs it).
  std::vector<std::string> problems(bool shared_vocab) const;
};

/// The check every configuration section uses to build its list of problems.
void check_positive(std::vector<std::string>& problems, const std::string& key, double value);
/// Throws ConfigError "invalid configuration:" followed by one line per problem, when there are any.
void throw_if_problems(const std::vector<std::string>& problems);

}  // namespace ts
