// SPDX-License-Identifier: GPL-3.0-or-later
// Token-budget batching with length bucketing: little padding, shuffled per epoch,
// deterministic from a seed.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "ts/train/data.h"

namespace ts {

/// Padded tensors for one batch. tgt_in = BOS + target, tgt_out = target + EOS.
struct Batch {
  at::Tensor src;      // [B, S] long
  at::Tensor tgt_in;   // [B, T] long
  at::Tensor tgt_out;  // [B, T] long
  std::int64_t src_tokens = 0;  // non-pad source tokens (EOS included)
  std::int64_t tgt_tokens = 0;  // non-pad target tokens predicted (EOS included)
  std::int64_t size() const { return src.size(0); }
};

class TokenBucketBatcher {
 public:
  /// `batch_tokens` > 0: each batch holds as many sentences as fit in the budget, counting the
  /// padded size max(B * S, B * T). Otherwise `batch_sentences` per batch. Sentences are sorted by
  /// length inside pools of ~100 batches, so batches hold sentences of similar length.
  TokenBucketBatcher(const std::vector<Example>& examples, int batch_tokens, int batch_sentences, std::uint64_t seed);

  /// The batches of one epoch as example indices; the same (seed, epoch) always gives the same plan.
  std::vector<std::vector<std::size_t>> epoch_plan(std::int64_t epoch) const;

  /// Padding fraction of a plan: padded slots / all slots, over source and target.
  double padding_fraction(const std::vector<std::vector<std::size_t>>& plan) const;

 private:
  const std::vector<Example>& examples_;
  int batch_tokens_, batch_sentences_;
  std::uint64_t seed_;
};

/// Builds the padded tensors for `indices` of `examples` on `device`.
Batch make_batch(const std::vector<Example>& examples, const std::vector<std::size_t>& indices, const at::Device& device);

}  // namespace ts
