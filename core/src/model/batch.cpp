// SPDX-License-Identifier: GPL-3.0-or-later
// Padded batches (see ts/model/batch.h).
#include "ts/model/batch.h"

#include <algorithm>

#include "ts/text/vocab.h"

namespace ts {

Batch make_batch(const std::vector<Example>& examples, const std::vector<std::size_t>& indices,
                 const at::Device& device) {
  std::size_t S = 0, T = 0;
  for (auto i : indices) {
    S = std::max(S, source_positions(examples[i]));
    T = std::max(T, target_positions(examples[i]));
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
