// SPDX-License-Identifier: GPL-3.0-or-later
// How a model's output is searched: greedy, beam or sampling, and on which weights. The decode
// section of an experiment's configuration (ts/train/config.h reads it from JSON). The closed sets
// are enums; their names ("beam", "bf16") are used only at the edges: configuration files, the
// command line, the app's choices.
#pragma once

#include <cstdint>
#include <string>

namespace ts {

/// How the next token is chosen.
enum class DecodeMode { kGreedy, kBeam, kSample };
/// "greedy", "beam", "sample".
const char* decode_mode_name(DecodeMode mode);
/// The inverse of decode_mode_name; throws std::invalid_argument naming the accepted values.
DecodeMode parse_decode_mode(const std::string& name);

/// Which weights the CPU decodes a few hypotheses at a time with: packed fp32, bf16 or int8 copies
/// (ts/model/packed_transformer.h), or LibTorch's own operations on the model's weights.
enum class DecodeWeights { kFloat32, kBFloat16, kInt8, kLibTorch };
/// "fp32", "bf16", "int8", "libtorch".
const char* decode_weights_name(DecodeWeights weights);
/// The inverse of decode_weights_name; throws std::invalid_argument naming the accepted values.
DecodeWeights parse_decode_weights(const std::string& name);

struct DecodeConfig {
  DecodeMode mode = DecodeMode::kGreedy;
  int beam = 5;
  double length_penalty = 0.6;  // GNMT alpha; 0 = raw log-probability
  int nbest = 1;
  double temperature = 1.0;
  int top_k = 0;           // 0 = off
  double top_p = 1.0;      // 1 = off
  int max_len_a = 0;       // max output length = a * source_len + b
  int max_len_b = 0;       // 0,0 -> 2 * source_len + 10
  std::uint64_t seed = 0;  // sampling seed
  /// On the CPU: packed weights, or LibTorch's operations. GPUs always use the latter.
  DecodeWeights weights = DecodeWeights::kBFloat16;
  /// Score only each sentence's lexical shortlist of target tokens (ts/decode/shortlist.h) where the
  /// model has one attached (TransformerImpl::set_shortlist); the whole vocabulary otherwise.
  bool shortlist = false;
};

}  // namespace ts
