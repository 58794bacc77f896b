// SPDX-License-Identifier: GPL-3.0-or-later
// A fused Adam/AdamW step, gradient clipping that does not wait for a GPU, and the sum of the gradients
// of a batch's shares.
#pragma once

#include <optional>

#include <torch/optim/optimizer.h>

namespace ts {

/// One step of `optimizer` (a torch::optim::Adam or AdamW) with each parameter updated in a single
/// parallel pass that reads the gradient and both moments once. LibTorch's step runs about eight
/// separate tensor operations per parameter, each a full pass over memory: for a 14 M-parameter
/// model that was ~12% of a training step on 2 cores. The moments and step counts stay in the
/// optimizer's own state objects, so checkpoints, resume and optimizer.step() are interchangeable.
/// Elsewhere (a GPU; CPU tensors that are not contiguous fp32) it is LibTorch's own multi-tensor
/// kernel where this LibTorch has one (at::_fused_adam_: 2.0 on a GPU, 2.4 on a CPU): every
/// parameter in one call instead of about eight kernel launches per parameter.
/// Returns false, having changed nothing, when neither applies (another optimizer, amsgrad, LibTorch
/// 1.13 on a GPU): then call optimizer.step().
bool fused_adam_step(torch::optim::Optimizer& optimizer);

/// clip_gradient_norm over the optimizer's parameters, then fused_adam_step, with one pass over the
/// gradients fewer where the step is ours: the clipping factor (computed as clip_grad_norm_ computes
/// it) multiplies each gradient as the update reads it, so the update is the same and the gradients
/// keep their unclipped values afterwards. On a CPU the separate pass (LibTorch multiplies every
/// gradient by the factor, 1 or not) cost 1.5-2 ms of a 160 ms bf16 step of the 3+3 d 256 model on 2 cores.
/// Elsewhere the gradients are clipped in place first. `max_norm` 0 or less: no clipping. Returns what
/// fused_adam_step returns; false leaves the gradients clipped, for the caller's optimizer.step().
/// `squared_norm`: the sum of the squares of the gradients as they are now, where the caller has it
/// (add_share_gradients computes it in the pass that adds the shares up): the factor is then
/// max_norm / (√squared_norm + 1e-6), at most 1, without a pass over the gradients to find their norm.
bool clipped_fused_adam_step(torch::optim::Optimizer& optimizer, double max_norm,
                             std::optional<double> squared_norm = std::nullopt);

/// Scales the gradients of `parameters` so that their joint L2 norm is at most `max_norm`, as
/// torch::nn::utils::clip_grad_norm_ does. On a GPU with LibTorch 2.1 or later the norm and the
/// factor stay on the device (two multi-tensor kernels): LibTorch's clip_grad_norm_ copies the norm to
/// the host, which makes the program wait for the GPU at every step.
void clip_gradient_norm(const std::vector<at::Tensor>& parameters, double max_norm);

/// Adds the gradients of a batch's shares up into the parameters' gradients: grads[k][p] is share k's
/// gradient of parameters[p] (undefined where that share had none); afterwards parameters[p].grad() is
/// their sum, added to the gradient it had if it had one. The first share's tensor becomes the sum where
/// nothing else holds it, so no tensor of a parameter's size is made. (One parallel pass over all the
/// parameters' elements instead of LibTorch's add_ per parameter was no faster: both move about 26 GB/s
/// on the Intel Xeon model 207 VM with 2 threads, `ts_bench_train_ops --step-tail`, 2026-11-30.)
/// `squared_norm`, where given, receives the sum of the squares of every parameter's gradient
/// afterwards (for clipped_fused_adam_step), computed in the pass that adds the last share in: fp32
/// squares summed in blocks of 16,384 elements, the blocks in double, so the same for any number of
/// threads. LibTorch's norm pass over every gradient took 2% of a bf16 step of 2+2 d 192 on 2 cores.
void add_share_gradients(std::vector<std::vector<at::Tensor>>& grads, const std::vector<at::Tensor>& parameters,
                         double* squared_norm = nullptr);

/// Drops the gradients of `parameters` (PyTorch's zero_grad(set_to_none=True)): the next backward
/// hands its gradient tensors over instead of adding them to zeros, a pass over every gradient
/// saved, and the zeroing pass before it. A parameter without a gradient is one Adam skips.
void clear_gradients(const std::vector<at::Tensor>& parameters);

namespace detail {
/// Whether this LibTorch has at::_fused_adam_ for tensors on `device`.
bool aten_fused_adam_available(c10::DeviceType device);
/// fused_adam_step through at::_fused_adam_ / _fused_adamw_ on any device that has it (a test runs it
/// on a CPU under LibTorch 2.4 and later); false, having changed nothing, where it does not apply.
bool aten_fused_adam_step(torch::optim::Optimizer& optimizer);
/// clip_gradient_norm's on-device path on any device (LibTorch 2.1 and later); false, having changed
/// nothing, on an older LibTorch.
bool clip_gradient_norm_on_device(const std::vector<at::Tensor>& parameters, double max_norm);
/// One Adam step's constants, in fp32 as the update computes with them.
struct AdamConstants {
  float shrink = 1, l2 = 0;  // AdamW's decoupled decay (w *= shrink); Adam's L2 term (g += w * l2)
  float beta1 = 0.9f, one_minus_beta1 = 0.1f, beta2 = 0.999f, one_minus_beta2 = 0.001f;
  float step_size = 1e-3f, sqrt_bias2 = 1, eps = 1e-8f;  // lr / (1 - beta1^t), sqrt(1 - beta2^t)
  float grad_scale = 1;  // each gradient is multiplied by it first (gradient clipping's factor)
};
/// fused_adam_step's pass over elements [begin, end) of one parameter: w, its gradient g and the
/// moments m, v. On a CPU with AVX-512 it runs 16 elements at a time; `vectorised` false forces
/// the one-element loop, which gives the same bits (a test holds them equal).
void adam_update(float* w, const float* g, float* m, float* v, std::int64_t begin, std::int64_t end,
                 const AdamConstants& c, bool vectorised = true);
}  // namespace detail

}  // namespace ts
