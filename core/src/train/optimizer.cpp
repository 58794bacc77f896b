// SPDX-License-Identifier: GPL-3.0-or-later
// Fused Adam/AdamW (see ts/train/optimizer.h). The arithmetic follows LibTorch 1.13's Adam::step and
// AdamW::step term by term, in fp32 as they compute it.
#include "ts/train/optimizer.h"
#include "ts/model/float_mode.h"
#include "ts/model/torch_compat.h"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <ATen/Parallel.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

namespace ts {
namespace detail {

namespace {

// The loop in plain C++; the constants are copies, so that stores through the pointers cannot
// make the compiler reload them for every element.
void adam_update_loop(float* __restrict w, const float* __restrict g, float* __restrict m, float* __restrict v,
                      std::int64_t begin, std::int64_t end, const AdamConstants c) {
  for (std::int64_t i = begin; i < end; ++i) {
    const float wi = w[i] * c.shrink;
    const float gi = c.l2 != 0.0f ? g[i] + wi * c.l2 : g[i];
    const float mi = m[i] * c.beta1 + gi * c.one_minus_beta1;
    const float vi = v[i] * c.beta2 + gi * gi * c.one_minus_beta2;
    m[i] = mi;
    v[i] = vi;
    w[i] = wi - c.step_size * (mi / (std::sqrt(vi) / c.sqrt_bias2 + c.eps));
  }
}

#if defined(__x86_64__)
// 16 elements at a time, the same operations in the same order (separate multiplies and adds, no
// fused multiply-add; IEEE square root and division), so the bits equal the loop's. Returns
// where the loop must take over. (The square root is the masked form with every lane set: GCC 12
// warns that the plain form's undefined source register "may be used uninitialized".)
__attribute__((target("avx512f"))) std::int64_t adam_update_avx512(float* w, const float* g, float* m, float* v,
                                                                   std::int64_t begin, std::int64_t end,
                                                                   const AdamConstants c) {
  const __m512 shrink = _mm512_set1_ps(c.shrink), l2 = _mm512_set1_ps(c.l2);
  const __m512 b1 = _mm512_set1_ps(c.beta1), omb1 = _mm512_set1_ps(c.one_minus_beta1);
  const __m512 b2 = _mm512_set1_ps(c.beta2), omb2 = _mm512_set1_ps(c.one_minus_beta2);
  const __m512 step = _mm512_set1_ps(c.step_size), sqrt_bias2 = _mm512_set1_ps(c.sqrt_bias2);
  const __m512 eps = _mm512_set1_ps(c.eps);
  const bool decay = c.l2 != 0.0f;
  std::int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m512 wi = _mm512_mul_ps(_mm512_loadu_ps(w + i), shrink);
    __m512 gi = _mm512_loadu_ps(g + i);
    if (decay) gi = _mm512_add_ps(gi, _mm512_mul_ps(wi, l2));
    const __m512 mi = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(m + i), b1), _mm512_mul_ps(gi, omb1));
    const __m512 vi =
        _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(v + i), b2), _mm512_mul_ps(_mm512_mul_ps(gi, gi), omb2));
    _mm512_storeu_ps(m + i, mi);
    _mm512_storeu_ps(v + i, vi);
    const __m512 denominator = _mm512_add_ps(_mm512_div_ps(_mm512_mask_sqrt_ps(vi, 0xFFFF, vi), sqrt_bias2), eps);
    _mm512_storeu_ps(w + i, _mm512_sub_ps(wi, _mm512_mul_ps(step, _mm512_div_ps(mi, denominator))));
  }
  return i;
}

bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}
#endif

}  // namespace

void adam_update(float* w, const float* g, float* m, float* v, std::int64_t begin, std::int64_t end,
                 const AdamConstants& c, bool vectorised) {
#if defined(__x86_64__)
  if (vectorised && has_avx512()) begin = adam_update_avx512(w, g, m, v, begin, end, c);
#else
  (void)vectorised;
#endif
  adam_update_loop(w, g, m, v, begin, end, c);
}

}  // namespace detail

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
      detail::AdamConstants c;
      c.beta1 = static_cast<float>(beta1);
      c.beta2 = static_cast<float>(beta2);
      c.one_minus_beta1 = static_cast<float>(1 - beta1);
      c.one_minus_beta2 = static_cast<float>(1 - beta2);
      c.sqrt_bias2 = static_cast<float>(std::sqrt(bias2));
      c.step_size = static_cast<float>(lr / bias1);
      c.eps = static_cast<float>(eps);
      c.l2 = decoupled_decay ? 0.0f : static_cast<float>(wd);
      c.shrink = decoupled_decay ? static_cast<float>(1 - lr * wd) : 1.0f;
      float* w = p.data_ptr<float>();
      const float* g = p.grad().data_ptr<float>();
      float* m = state.exp_avg().template data_ptr<float>();
      float* v = state.exp_avg_sq().template data_ptr<float>();
      at::parallel_for(0, p.numel(), 16384, [&](std::int64_t begin, std::int64_t end) {
        const FloatMode::Scope same(mode);  // flush-to-zero on every thread: subnormal moments are slow
        detail::adam_update(w, g, m, v, begin, end, c);
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

void clear_gradients(const std::vector<at::Tensor>& parameters) {
  for (const auto& p : parameters) p.mutable_grad().reset();
}

}  // namespace ts
