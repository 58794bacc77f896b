// SPDX-License-Identifier: GPL-3.0-or-later
// How a model's output is searched: greedy, beam or sampling, and on which weights. The decode
// section of an experiment's configuration (ts/train/config.h reads it from JSON).
#pragma once

#include <cstdint>
#include <string>

namespace ts {

struct DecodeConfig {
  std::string mode = "greedy";           // "greedy" | "beam" | "sample"
  int beam = 5;
  double length_penalty = 0.6;           // GNMT alpha; 0 = raw log-probability
  int nbest = 1;
  double temperature = 1.0;
  int top_k = 0;                         // 0 = off
  double top_p = 1.0;                    // 1 = off
  int max_len_a = 0;                     // max output length = a * source_len + b
  int max_len_b = 0;                     // 0,0 -> 2 * source_len + 10
  std::uint64_t seed = 0;                // sampling seed
  /// How a few hypotheses at a time (one sentence: greedy, beam, sampling) are decoded on the CPU:
  /// on packed "fp32", "bf16" or "int8" weights (ts/model/packed_decoder.h), or "libtorch", LibTorch's
  /// operations on the model's own weights. Batched decoding and GPUs always use the latter.
  std::string weights = "bf16";
};

}  // namespace ts
