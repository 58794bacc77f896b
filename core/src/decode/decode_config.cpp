// SPDX-License-Identifier: GPL-3.0-or-later
// Names of the decode section's closed sets (see ts/decode/decode_config.h).
#include "ts/decode/decode_config.h"

#include <stdexcept>

namespace ts {

const char* decode_mode_name(DecodeMode mode) {
  switch (mode) {
    case DecodeMode::kGreedy:
      return "greedy";
    case DecodeMode::kBeam:
      return "beam";
    case DecodeMode::kSample:
      return "sample";
  }
  return "greedy";
}

DecodeMode parse_decode_mode(const std::string& name) {
  for (auto mode : {DecodeMode::kGreedy, DecodeMode::kBeam, DecodeMode::kSample})
    if (name == decode_mode_name(mode)) return mode;
  throw std::invalid_argument("unknown search \"" + name + "\" (expected greedy, beam or sample)");
}

const char* decode_weights_name(DecodeWeights weights) {
  switch (weights) {
    case DecodeWeights::kFloat32:
      return "fp32";
    case DecodeWeights::kBFloat16:
      return "bf16";
    case DecodeWeights::kInt8:
      return "int8";
    case DecodeWeights::kLibTorch:
      return "libtorch";
  }
  return "bf16";
}

DecodeWeights parse_decode_weights(const std::string& name) {
  for (auto weights :
       {DecodeWeights::kFloat32, DecodeWeights::kBFloat16, DecodeWeights::kInt8, DecodeWeights::kLibTorch})
    if (name == decode_weights_name(weights)) return weights;
  throw std::invalid_argument("unknown weights \"" + name + "\" (expected fp32, bf16, int8 or libtorch)");
}

}  // namespace ts
