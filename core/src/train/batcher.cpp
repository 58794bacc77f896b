// SPDX-License-Identifier: GPL-3.0-or-later
// Token-budget batching (see ts/train/batcher.h).
#include "ts/train/batcher.h"

#include <algorithm>
#include <random>

namespace ts {
namespace {

// Fisher-Yates with our own index draw: identical on every standard library.
template <class T>
void shuffle_in_place(std::vector<T>& v, std::mt19937_64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

}  // namespace

TokenBucketBatcher::TokenBucketBatcher(const std::vector<Example>& examples, int batch_tokens, int batch_sentences,
                                       std::uint64_t seed)
    : examples_(examples), batch_tokens_(batch_tokens), batch_sentences_(batch_sentences), seed_(seed) {}

std::vector<std::vector<std::size_t>> TokenBucketBatcher::epoch_plan(std::int64_t epoch) const {
  std::mt19937_64 rng(seed_ * 1000003ULL + static_cast<std::uint64_t>(epoch));
  std::vector<std::size_t> order(examples_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  shuffle_in_place(order, rng);

  const std::size_t per_batch_guess =
      batch_tokens_ > 0 ? std::max<std::size_t>(1, batch_tokens_ / 16) : batch_sentences_;
  const std::size_t pool = std::max<std::size_t>(1, per_batch_guess * 100);
  std::vector<std::vector<std::size_t>> batches;
  for (std::size_t start = 0; start < order.size(); start += pool) {
    const auto end = std::min(order.size(), start + pool);
    std::stable_sort(order.begin() + start, order.begin() + end, [&](std::size_t a, std::size_t b) {
      const auto& x = examples_[a];
      const auto& y = examples_[b];
      return std::make_pair(source_positions(x), target_positions(x)) <
             std::make_pair(source_positions(y), target_positions(y));
    });
    std::vector<std::size_t> current;
    std::size_t max_src = 0, max_tgt = 0;
    for (std::size_t i = start; i < end; ++i) {
      const auto& e = examples_[order[i]];
      const std::size_t s = std::max(max_src, source_positions(e)), t = std::max(max_tgt, target_positions(e));
      const bool full = batch_tokens_ > 0
                            ? (current.size() + 1) * std::max(s, t) > static_cast<std::size_t>(batch_tokens_)
                            : current.size() >= static_cast<std::size_t>(batch_sentences_);
      if (full && !current.empty()) {
        batches.push_back(std::move(current));
        current.clear();
        max_src = max_tgt = 0;
      }
      current.push_back(order[i]);
      max_src = std::max(max_src, source_positions(e));
      max_tgt = std::max(max_tgt, target_positions(e));
    }
    if (!current.empty()) batches.push_back(std::move(current));
  }
  shuffle_in_place(batches, rng);
  return batches;
}

double TokenBucketBatcher::padding_fraction(const std::vector<std::vector<std::size_t>>& plan) const {
  std::size_t slots = 0, real = 0;
  for (const auto& batch : plan) {
    std::size_t s = 0, t = 0;
    for (auto i : batch) {
      s = std::max(s, source_positions(examples_[i]));
      t = std::max(t, target_positions(examples_[i]));
      real += source_positions(examples_[i]) + target_positions(examples_[i]);
    }
    slots += batch.size() * (s + t);
  }
  return slots == 0 ? 0.0 : 1.0 - static_cast<double>(real) / static_cast<double>(slots);
}

}  // namespace ts
