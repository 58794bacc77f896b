// SPDX-License-Identifier: GPL-3.0-or-later
// The training loss: cross-entropy with label smoothing, summed over the target tokens that are not
// padding, in one autograd node. LibTorch's cross_entropy with label smoothing builds it from five
// operations, each with a [tokens, vocabulary] tensor for forward or backward; here a step allocates
// one such tensor instead of several (docs/benchmarks.md, "The training loss in one node"). fp32 logits
// on a CPU with AVX-512: forward keeps each row's log-sum-exp and backward writes the gradient from the
// logits in one pass; otherwise forward keeps the log-probabilities and backward turns them into the
// gradient in place.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace ts {

/// Sum over the rows whose target is not `pad` of (1 - s) * -log p(target) + s * mean over the
/// vocabulary of -log p: as at::cross_entropy_loss(logits, targets, {}, Sum, pad, s). `logits`
/// [N, V] in any floating type (computed in fp32), `targets` [N]. The gradient reaches `logits` in
/// its own type; backward may run once (the saved log-probabilities may become the gradient).
at::Tensor smoothed_cross_entropy_sum(const at::Tensor& logits, const at::Tensor& targets, std::int64_t pad,
                                      double smoothing);

/// smoothed_cross_entropy_sum(ts::linear(hidden, weight, bias), targets, pad, smoothing): the output
/// layer (ts/model/attention.h) and the loss. Where this thread trains on bf16 products (a
/// Bf16ProductsScope, gradients on, fp32 CPU tensors, hidden [N, D], weight [V, D], bias [V], a CPU
/// with AVX-512 BF16) they are one node whose backward never writes the logits' gradient [N, V] whole
/// (Bf16LinearGradients, ts/model/bf16_products.h): the same loss and gradients, bit for bit.
at::Tensor projected_cross_entropy_sum(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& bias,
                                       const at::Tensor& targets, std::int64_t pad, double smoothing);

}  // namespace ts
