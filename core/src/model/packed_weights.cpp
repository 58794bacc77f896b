// SPDX-License-Identifier: GPL-3.0-or-later
// Weights packed once per training step (see ts/model/packed_weights.h).
#include "ts/model/packed_weights.h"

#include <atomic>
#include <thread>
#include <vector>

namespace ts {

struct PackedWeights::Entry {
  std::vector<std::uint32_t> words;
  std::int64_t chunks = 0;
  std::int64_t step = -1;             // the step it was packed in
  std::uint32_t version = 0;          // the operand's version it was packed from
  std::atomic<std::int64_t> next{0};  // the next chunk to take
  std::atomic<std::int64_t> done{0};  // chunks packed
};

PackedWeights::PackedWeights() = default;
PackedWeights::~PackedWeights() = default;

const std::uint32_t* PackedWeights::get(const Key& key, std::uint32_t version, std::int64_t words, std::int64_t chunks,
                                        const PackChunk& pack) {
  Entry* entry = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = entries_[key];
    if (!slot) slot = std::make_unique<Entry>();
    entry = slot.get();
    if (entry->step == step_ && entry->version != version) return nullptr;
    if (entry->step != step_) {  // the first call of this step: its chunks are to be packed
      if (static_cast<std::int64_t>(entry->words.size()) < words) entry->words.resize(static_cast<std::size_t>(words));
      entry->chunks = chunks;
      entry->next.store(0, std::memory_order_relaxed);
      entry->done.store(0, std::memory_order_relaxed);
      entry->step = step_;
      entry->version = version;
      ++packings_;
    }
  }
  // Take chunks while any are left, then wait for those other threads took.
  for (std::int64_t c = entry->next.fetch_add(1); c < entry->chunks; c = entry->next.fetch_add(1)) {
    pack(c, entry->words.data());
    entry->done.fetch_add(1, std::memory_order_release);
  }
  for (int spins = 0; entry->done.load(std::memory_order_acquire) < entry->chunks; ++spins)
    if (spins > 64) std::this_thread::yield();
  return entry->words.data();
}

void PackedWeights::next_step() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end();)
    it = it->second->step == step_ ? std::next(it) : entries_.erase(it);
  ++step_;
}

std::int64_t PackedWeights::packings() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return packings_;
}

namespace {
thread_local PackedWeights* current = nullptr;
}  // namespace

PackedWeightsScope::PackedWeightsScope(PackedWeights* weights) : previous_(current) { current = weights; }
PackedWeightsScope::~PackedWeightsScope() { current = previous_; }
PackedWeights* current_packed_weights() { return current; }

}  // namespace ts
