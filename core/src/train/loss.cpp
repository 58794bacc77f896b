// SPDX-License-Identifier: GPL-3.0-or-later
// The training loss in one autograd node (see ts/train/loss.h).
#include "ts/train/loss.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace ts {
namespace {

struct SmoothedCrossEntropy : public torch::autograd::Function<SmoothedCrossEntropy> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits, const at::Tensor& targets,
                            std::int64_t pad, double smoothing) {
    const auto log_probs = at::log_softmax(logits.to(at::kFloat), 1);  // [N, V]
    const auto keep = targets.ne(pad);                                 // [N]
    const auto index = targets.masked_fill(keep.logical_not(), 0).unsqueeze(1);
    auto per_token = log_probs.gather(1, index).squeeze(1).mul(-(1.0 - smoothing));
    if (smoothing > 0) per_token.sub_(log_probs.sum(1), smoothing / static_cast<double>(log_probs.size(1)));
    const auto loss = per_token.mul_(keep).sum();
    ctx->save_for_backward({log_probs, index, keep});
    ctx->saved_data["smoothing"] = smoothing;
    ctx->saved_data["dtype"] = static_cast<std::int64_t>(logits.scalar_type());
    return loss;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    at::Tensor gradient = saved[0];  // the log-probabilities, turned into the gradient in place
    const auto& index = saved[1];
    const auto& keep = saved[2];
    const double smoothing = ctx->saved_data["smoothing"].toDouble();
    const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
    // d loss / d logits = (softmax - q) for a kept row, q = (1 - s) at the target + s / V everywhere.
    const auto scale = keep.to(at::kFloat).mul_(grads[0].to(at::kFloat)).unsqueeze(1);  // [N, 1]
    gradient.exp_();
    if (smoothing > 0) gradient.sub_(smoothing / static_cast<double>(gradient.size(1)));
    gradient.mul_(scale);
    gradient.scatter_add_(1, index, scale.mul(-(1.0 - smoothing)));
    return {gradient.to(dtype), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor smoothed_cross_entropy_sum(const at::Tensor& logits, const at::Tensor& targets, std::int64_t pad,
                                      double smoothing) {
  return SmoothedCrossEntropy::apply(logits, targets, pad, smoothing);
}

}  // namespace ts
