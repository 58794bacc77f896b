// SPDX-License-Identifier: GPL-3.0-or-later
// Fused Adam/AdamW (see ts/train/optimizer.h). The arithmetic follows LibTorch 1.13's Adam::step and
// AdamW::step term by term, in fp32 as they compute it.
#include "ts/train/optimizer.h"
#include "ts/model/float_mode.h"
#include "ts/model/torch_compat.h"

#include <cmath>

#include <ATen/Parallel.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

namespace ts {
namespace {

bool applicable(const torch::optim::Optimizer& optimizer) {
  for (const auto& group : optimizer.param_groups())
    for (const auto& p : group.params())
      if (p.grad().defined() && (!p.device().is_cpu() || p.scalar_type() != at::kFloat || !p.is_contiguous() ||
                                 !p.grad().is_contiguous() || p.grad().scalar_type() != at::kFloat))
        return false;
  return true;
}

template <class Options, class State>
void step_all(torch::optim::Optimizer& optimizer, bool decoupled_decay) {
  const auto mode = FloatMode::current();
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const Options&>(group.options());
    const double lr = o.lr(), eps = o.eps(), wd = o.weight_decay();
    const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = optimizer.state()[torch_compat::optimizer_state_key(p)];
      if (!slot) {
        auto fresh = std::make_unique<State>();
        fresh->step(0);
        fresh->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
        fresh->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& state = static_cast<State&>(*slot);
      state.step(state.step() + 1);
      const double bias1 = 1 - std::pow(beta1, static_cast<double>(state.step()));
      const double bias2 = 1 - std::pow(beta2, static_cast<double>(state.step()));
      const float b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2);
      const float one_minus_b1 = static_cast<float>(1 - beta1), one_minus_b2 = static_cast<float>(1 - beta2);
      const float sqrt_bias2 = static_cast<float>(std::sqrt(bias2));
      const float step_size = static_cast<float>(lr / bias1);
      const float feps = static_cast<float>(eps);
      const float l2 = decoupled_decay ? 0.0f : static_cast<float>(wd);
      const float shrink = decoupled_decay ? static_cast<float>(1 - lr * wd) : 1.0f;
      float* w = p.data_ptr<float>();
      const float* g = p.grad().data_ptr<float>();
      float* m = state.exp_avg().template data_ptr<float>();
      float* v = state.exp_avg_sq().template data_ptr<float>();
      at::parallel_for(0, p.numel(), 16384, [&](std::int64_t begin, std::int64_t end) {
        const FloatMode::Scope same(mode);  // flush-to-zero on every thread: subnormal moments are slow
        for (std::int64_t i = begin; i < end; ++i) {
          const float wi = w[i] * shrink;
          const float gi = l2 != 0.0f ? g[i] + wi * l2 : g[i];
          const float mi = m[i] * b1 + gi * one_minus_b1;
          const float vi = v[i] * b2 + gi * gi * one_minus_b2;
          m[i] = mi;
          v[i] = vi;
          w[i] = wi - step_size * (mi / (std::sqrt(vi) / sqrt_bias2 + feps));
        }
      });
      // Written through raw pointers: say so, as an in-place op would (packed decoders, autograd's
      // saved-tensor checks and anything else that watches the version see the change).
      p.unsafeGetTensorImpl()->bump_version();
    }
  }
}

}  // namespace

bool fused_adam_step(torch::optim::Optimizer& optimizer) {
  at::NoGradGuard no_grad;
  if (auto* adam = dynamic_cast<torch::optim::Adam*>(&optimizer)) {
    for (const auto& group : adam->param_groups())
      if (static_cast<const torch::optim::AdamOptions&>(group.options()).amsgrad()) return false;
    if (!applicable(optimizer)) return false;
    step_all<torch::optim::AdamOptions, torch::optim::AdamParamState>(optimizer, false);
    return true;
  }
  if (auto* adamw = dynamic_cast<torch::optim::AdamW*>(&optimizer)) {
    for (const auto& group : adamw->param_groups())
      if (static_cast<const torch::optim::AdamWOptions&>(group.options()).amsgrad()) return false;
    if (!applicable(optimizer)) return false;
    step_all<torch::optim::AdamWOptions, torch::optim::AdamWParamState>(optimizer, true);
    return true;
  }
  return false;
}

}  // namespace ts
