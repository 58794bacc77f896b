// SPDX-License-Identifier: GPL-3.0-or-later
// Weights packed for the CPU's bf16 products once per training step, shared by the threads that run
// the step's shares of a batch. Each thread used to pack every weight twice a step (for the forward
// product and for the input gradient's), so with two threads each weight was packed four times while
// it did not change; now each layout is packed once, the threads that ask at the same time splitting
// the work.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace ts {

/// Packed weights for one training run: filled lazily by the products while a step runs, made stale
/// by next_step() before the next one (the optimizer changes the weights between steps). Thread-safe
/// while a step runs; next_step() only while no thread uses it.
class PackedWeights {
 public:
  /// What a packing is of: the operand's memory and layout (data, rows, columns, strides) and the
  /// packing (a kernel's words per row).
  struct Key {
    const void* data = nullptr;
    std::int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 0;
    std::int64_t layout = 0;
    bool operator<(const Key& o) const {
      return std::tie(data, rows, cols, row_stride, col_stride, layout) <
             std::tie(o.data, o.rows, o.cols, o.row_stride, o.col_stride, o.layout);
    }
  };
  /// Packs chunk `chunk` (0 ≤ chunk < chunks) into `out`, the whole packing's words; chunks write
  /// disjoint words.
  using PackChunk = std::function<void(std::int64_t chunk, std::uint32_t* out)>;

  PackedWeights();
  ~PackedWeights();
  PackedWeights(const PackedWeights&) = delete;
  PackedWeights& operator=(const PackedWeights&) = delete;

  /// The `words` words of `key`'s packing in this step, of the operand at `version` (LibTorch's count
  /// of its in-place changes). The first call of a step packs it; threads that call while it is being
  /// packed take the chunks not yet started and return when all are done; later calls return it at
  /// once. Valid until next_step(). nullptr where the operand changed within the step (another
  /// version than the step's packing): the caller packs it itself.
  const std::uint32_t* get(const Key& key, std::uint32_t version, std::int64_t words, std::int64_t chunks,
                           const PackChunk& pack);
  /// A new step: every packing is stale (its memory kept for the same key); packings not asked for in
  /// the step that ended are dropped.
  void next_step();
  /// Packings made since construction (for tests: a weight asked for twice in a step counts once).
  std::int64_t packings() const;

 private:
  struct Entry;
  mutable std::mutex mutex_;
  std::map<Key, std::unique_ptr<Entry>> entries_;
  std::int64_t step_ = 0;
  std::int64_t packings_ = 0;
};

/// While one is alive on a thread, the bf16 products there (ts/model/bf16_products.h) pack the
/// weights of linear layers through `weights` (none: each product packs its own). Nests.
class PackedWeightsScope {
 public:
  explicit PackedWeightsScope(PackedWeights* weights);
  ~PackedWeightsScope();
  PackedWeightsScope(const PackedWeightsScope&) = delete;
  PackedWeightsScope& operator=(const PackedWeightsScope&) = delete;

 private:
  PackedWeights* previous_;
};
/// The PackedWeights of this thread's innermost scope, or nullptr.
PackedWeights* current_packed_weights();

}  // namespace ts
