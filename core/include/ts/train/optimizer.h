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

}  // namespace ts
