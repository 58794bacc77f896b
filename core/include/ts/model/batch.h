// SPDX-License-Identifier: GPL-3.0-or-later
// What a Transformer reads: sentence pairs as padded id tensors, BOS and EOS added. Training batches
// them by tokens (ts/train/batcher.h); decoding batches sources by length (ts/decode/translator.h).
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "ts/text/pipeline.h"

namespace ts {

/// Padded tensors for one batch. tgt_in = BOS + target, tgt_out = target + EOS.
struct Batch {
  at::Tensor src;               // [B, S] long
  at::Tensor tgt_in;            // [B, T] long
  at::Tensor tgt_out;           // [B, T] long
  std::int64_t src_tokens = 0;  // non-pad source tokens (EOS included)
  std::int64_t tgt_tokens = 0;  // non-pad target tokens predicted (EOS included)
  std::int64_t size() const { return src.size(0); }
};

/// Positions a pair takes in a batch: the source with its EOS, the target with its BOS (or EOS).
inline std::size_t source_positions(const Example& e) { return e.src.size(); }
inline std::size_t target_positions(const Example& e) { return e.tgt.size() + 1; }

/// Builds the padded tensors for `indices` of `examples` on `device`.
Batch make_batch(const std::vector<Example>& examples, const std::vector<std::size_t>& indices,
                 const at::Device& device);

}  // namespace ts
