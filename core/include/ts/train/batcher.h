// SPDX-License-Identifier: GPL-3.0-or-later
// Token-budget batching with length bucketing: little padding, shuffled per epoch,
// deterministic from a seed.
#pragma once

#include <cstdint>
#include <vector>

#include "ts/model/batch.h"
#include "ts/train/data.h"

namespace ts {

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

}  // namespace ts
