// SPDX-License-Identifier: GPL-3.0-or-later
// A fused Adam/AdamW step for CPU training.
#pragma once

#include <torch/optim/optimizer.h>

namespace ts {

/// One step of `optimizer` (a torch::optim::Adam or AdamW) with each parameter updated in a single
/// parallel pass that reads the gradient and both moments once. LibTorch's step runs about eight
/// separate tensor operations per parameter, each a full pass over memory: for a 14 M-parameter
/// model that was ~12% of a training step on 2 cores. The moments and step counts stay in the
/// optimizer's own state objects, so checkpoints, resume and optimizer.step() are interchangeable.
/// Returns false, having changed nothing, when it does not apply (another optimizer, amsgrad,
/// parameters that are not contiguous fp32 CPU tensors): then call optimizer.step().
bool fused_adam_step(torch::optim::Optimizer& optimizer);

/// Drops the gradients of `parameters` (PyTorch's zero_grad(set_to_none=True)): the next backward
/// hands its gradient tensors over instead of adding them to zeros, a pass over every gradient
/// saved, and the zeroing pass before it. A parameter without a gradient is one Adam skips.
void clear_gradients(const std::vector<at::Tensor>& parameters);

namespace detail {
/// One Adam step's constants, in fp32 as the update computes with them.
struct AdamConstants {
  float shrink = 1, l2 = 0;  // AdamW's decoupled decay (w *= shrink); Adam's L2 term (g += w * l2)
  float beta1 = 0.9f, one_minus_beta1 = 0.1f, beta2 = 0.999f, one_minus_beta2 = 0.001f;
  float step_size = 1e-3f, sqrt_bias2 = 1, eps = 1e-8f;  // lr / (1 - beta1^t), sqrt(1 - beta2^t)
};
/// fused_adam_step's pass over elements [begin, end) of one parameter: w, its gradient g and the
/// moments m, v. On a CPU with AVX-512 it runs 16 elements at a time; `vectorised` false forces
/// the one-element loop, which gives the same bits (a test holds them equal).
void adam_update(float* w, const float* g, float* m, float* v, std::int64_t begin, std::int64_t end,
                 const AdamConstants& c, bool vectorised = true);
}  // namespace detail

}  // namespace ts
