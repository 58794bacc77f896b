// SPDX-License-Identifier: GPL-3.0-or-later
// Token-budget batching (see ts/train/batcher.h).
#include "ts/train/batcher.h"

#include <algorithm>
#include <random>

#include "ts/text/vocab.h"

namespace ts {
namespace {

// Fisher-Yates with our own index draw: identical on every standard library.
template <class T> void shuffle_in_place(std::vector<T>& v, std::mt19937_64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

std::size_t src_len(const Example& e) { return e.src.size(); }
std::size_t tgt_len(const Example& e) { return e.tgt.size() + 1; }

}  // namespace

TokenBucketBatcher::TokenBucketBatcher(const std::vector<Example>& examples, int batch_tokens, int batch_sentences,
                                       std::uint64_t seed)
    : examples_(examples), batch_tokens_(batch_tokens), batch_sentences_(batch_sentences), seed_(seed) {}

std::vector<std::vector<std::size_t>> TokenBucketBatcher::epoch_plan(std::int64_t epoch) const {
  std::mt19937_64 rng(seed_ * 1000003ULL + static_cast<std::uint64_t>(epoch));
  std::vector<std::size_t> order(examples_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  shuffle_in_place(order, rng);

  const std::size_t per_batch_guess = batch_tokens_ > 0 ? std::max<std::size_t>(1, batch_tokens_ / 16) : batch_sentences_;
  const std::size_t pool = std::max<std::size_t>(1, per_batch_guess * 100);
  std::vector<std::vector<std::size_t>> batches;
  for (std::size_t start = 0; start < order.size(); start += pool) {
    const auto end = std::min(order.size(), start + pool);
    std::stable_sort(order.begin() + start, order.begin() + end, [&](std::size_t a, std::size_t b) {
      const auto& x = examples_[a];
      const auto& y = examples_[b];
      return std::make_pair(src_len(x), tgt_len(x)) < std::make_pair(src_len(y), tgt_len(y));
    });
    std::vector<std::size_t> current;
    std::size_t max_src = 0, max_tgt = 0;
    for (std::size_t i = start; i < end; ++i) {
      const auto& e = examples_[order[i]];
      const std::size_t s = std::max(max_src, src_len(e)), t = std::max(max_tgt, tgt_len(e));
      const bool full = batch_tokens_ > 0
                            ? (current.size() + 1) * std::max(s, t) > static_cast<std::size_t>(batch_tokens_)
                            : current.size() >= static_cast<std::size_t>(batch_sentences_);
      if (full && !current.empty()) {
        batches.push_back(std::move(current));
        current.clear();
        max_src = max_tgt = 0;
      }
      current.push_back(order[i]);
      max_src = std::max(max_src, src_len(e));
      max_tgt = std::max(max_tgt, tgt_len(e));
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
      s = std::max(s, src_len(examples_[i]));
      t = std::max(t, tgt_len(examples_[i]));
      real += src_len(examples_[i]) + tgt_len(examples_[i]);
    }
    slots += batch.size() * (s + t);
  }
  return slots == 0 ? 0.0 : 1.0 - static_cast<double>(real) / static_cast<double>(slots);
}

Batch make_batch(const std::vector<Example>& examples, const std::vector<std::size_t>& indices, const at::Device& device) {
  std::size_t S = 0, T = 0;
  for (auto i : indices) {
    S = std::max(S, src_len(examples[i]));
    T = std::max(T, tgt_len(examples[i]));
  }
  const auto B = static_cast<std::int64_t>(indices.size());
  // For a GPU the batch is built in pinned (page-locked) host memory, so the copies below are truly
  // asynchronous and overlap with the previous step's kernels.
  const bool move = device.type() != at::kCPU;
  const auto options = at::TensorOptions(at::kLong).pinned_memory(move && device.is_cuda());
  auto src = at::full({B, static_cast<std::int64_t>(S)}, Vocab::kPad, options);
  auto tgt_in = at::full({B, static_cast<std::int64_t>(T)}, Vocab::kPad, options);
  auto tgt_out = at::full({B, static_cast<std::int64_t>(T)}, Vocab::kPad, options);
  auto s_acc = src.accessor<std::int64_t, 2>();
  auto i_acc = tgt_in.accessor<std::int64_t, 2>();
  auto o_acc = tgt_out.accessor<std::int64_t, 2>();
  Batch batch;
  for (std::int64_t b = 0; b < B; ++b) {
    const auto& e = examples[indices[b]];
    for (std::size_t j = 0; j < e.src.size(); ++j) s_acc[b][j] = e.src[j];
    i_acc[b][0] = Vocab::kBos;
    for (std::size_t j = 0; j < e.tgt.size(); ++j) {
      i_acc[b][j + 1] = e.tgt[j];
      o_acc[b][j] = e.tgt[j];
    }
    o_acc[b][e.tgt.size()] = Vocab::kEos;
    batch.src_tokens += static_cast<std::int64_t>(e.src.size());
    batch.tgt_tokens += static_cast<std::int64_t>(e.tgt.size() + 1);
  }
  batch.src = move ? src.to(device, /*non_blocking=*/true) : src;
  batch.tgt_in = move ? tgt_in.to(device, true) : tgt_in;
  batch.tgt_out = move ? tgt_out.to(device, true) : tgt_out;
  return batch;
}

}  // namespace ts
