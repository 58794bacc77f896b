// SPDX-License-Identifier: GPL-3.0-or-later
// An embedding table's gradient kept as rows during training (see EmbeddingRowGradients).
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include <ATen/core/Tensor.h>

namespace ts {

/// While one is alive on a thread, embedding_lookup on that thread (where gradients are recorded, for
/// an fp32 CPU table) hands the table no gradient through autograd: its backward records the lookup's
/// tokens and the gradient of each looked-up row here instead, and add_to adds those rows into the
/// table's gradient afterwards, each row onto the row of its token.
///
/// Why: LibTorch's embedding backward makes a zero tensor of the whole table's size for every lookup,
/// adds the rows into it, and autograd then adds that tensor to the table's other gradients. With the
/// default recipe's one table for both sides and the output layer, that is two zeroed tables and two
/// added per share of a batch, for about a thousand rows: 5.2% of a bf16 training step's samples at
/// 2+2 d 192 with 8,000 pieces, 0.45% left with this (perf, 2026-11-30, docs/benchmarks.md). A table
/// with no other gradient (not tied to the output layer) gets a zero tensor from add_to, as before.
///
/// A record whose scope has ended, or a backward run on another thread, finds no scope: that lookup's
/// gradient then goes through autograd as a whole table, as before (correct, only slower). The trainer
/// keeps one per share of a batch and calls add_to after the share's backward (ts/train/trainer.cpp).
class EmbeddingRowGradients {
 public:
  EmbeddingRowGradients();
  ~EmbeddingRowGradients();
  EmbeddingRowGradients(const EmbeddingRowGradients&) = delete;
  EmbeddingRowGradients& operator=(const EmbeddingRowGradients&) = delete;

  /// The innermost live scope on this thread, or null.
  static EmbeddingRowGradients* current();
  /// This scope's number, unique in the process: a lookup made under it records only into it.
  std::uint64_t id() const { return id_; }

  /// Called by embedding_lookup's backward: `tokens` [N] (long), `rows` [N, D] (fp32, the gradient of
  /// the lookup's output, before `scale`).
  void record(const at::Tensor& table, const at::Tensor& tokens, const at::Tensor& rows, double scale);
  /// Lookups recorded and not yet added.
  std::size_t pending() const;
  /// Adds every recorded row, times its scale, into grads[i] where parameters[i] is the recorded table
  /// (an undefined gradient becomes zeros first), in the order recorded, row by row: the same sums
  /// whatever the threads. Throws std::logic_error for a table that is not among `parameters`. Clears
  /// the records.
  void add_to(const std::vector<at::Tensor>& parameters, std::vector<at::Tensor>& grads);
  /// The same into the parameters' own .grad.
  void add_to_grads(const std::vector<at::Tensor>& parameters);

 private:
  struct Record {
    at::Tensor table, tokens, rows;
    double scale = 1;
  };
  mutable std::mutex mutex_;
  std::vector<Record> records_;
  std::uint64_t id_;
  EmbeddingRowGradients* outer_;
};

/// table[tokens] · scale: tokens of any shape (long), table [V, D]; the result has tokens' shape then D.
/// Where gradients are recorded for an fp32 CPU table and an EmbeddingRowGradients scope is alive on this
/// thread, the table's gradient goes to that scope (see above); anything else is at::embedding times
/// scale, LibTorch's own gradient. The forward's values are the same bits either way. Tokens outside
/// [0, V) throw std::out_of_range naming the token.
at::Tensor embedding_lookup(const at::Tensor& table, const at::Tensor& tokens, double scale);

}  // namespace ts
