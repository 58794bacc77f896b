// SPDX-License-Identifier: GPL-3.0-or-later
// Fused Adam/AdamW (see ts/train/optimizer.h). The arithmetic follows LibTorch 1.13's Adam::step and
// AdamW::step term by term, in fp32 as they compute it.
#include "ts/train/optimizer.h"
#include "ts/model/float_mode.h"
#include "ts/model/torch_compat.h"

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <ATen/Parallel.h>
#include <torch/types.h>  // before clip_grad.h, which uses torch:: names it does not include
#include <torch/nn/utils/clip_grad.h>
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
    const float gc = c.grad_scale != 1.0f ? g[i] * c.grad_scale : g[i];
    const float gi = c.l2 != 0.0f ? gc + wi * c.l2 : gc;
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
  const __m512 eps = _mm512_set1_ps(c.eps), grad_scale = _mm512_set1_ps(c.grad_scale);
  const bool decay = c.l2 != 0.0f, scaled = c.grad_scale != 1.0f;
  std::int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m512 wi = _mm512_mul_ps(_mm512_loadu_ps(w + i), shrink);
    __m512 gi = _mm512_loadu_ps(g + i);
    if (scaled) gi = _mm512_mul_ps(gi, grad_scale);
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

// The optimizer's state for `p`, made on the first step as LibTorch's step makes it; its step count
// is advanced by one.
template <class State>
State& advance_state(torch::optim::Optimizer& optimizer, const at::Tensor& p) {
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
  return state;
}

template <class Options, class State>
void step_all(torch::optim::Optimizer& optimizer, bool decoupled_decay, float grad_scale) {
  const auto mode = FloatMode::current();
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const Options&>(group.options());
    const double lr = o.lr(), eps = o.eps(), wd = o.weight_decay();
    const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& state = advance_state<State>(optimizer, p);
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
      c.grad_scale = grad_scale;
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

// LibTorch's own multi-tensor kernel: every parameter of a group in one call (a few kernel launches
// on a GPU where LibTorch's step launches about eight per parameter). The parameters that share a
// step count go together; the count is handed over as one tensor on their device, made by a fill
// (no copy from the host, nothing that waits for the device).
template <class Options, class State>
bool aten_step_all(torch::optim::Optimizer& optimizer, bool decoupled_decay) {
#if TS_TORCH_AT_LEAST(2, 0)
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const Options&>(group.options());
    struct Lists {
      std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
    };
    std::map<std::pair<std::int64_t, std::string>, Lists> by_step;  // (step, device) -> lists
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& state = advance_state<State>(optimizer, p);
      auto& lists = by_step[{state.step(), p.device().str()}];
      lists.params.push_back(p);
      lists.grads.push_back(p.grad());
      lists.exp_avgs.push_back(state.exp_avg());
      lists.exp_avg_sqs.push_back(state.exp_avg_sq());
    }
    for (auto& [key, lists] : by_step) {
      const auto step = at::full({}, static_cast<double>(key.first), lists.params.front().options().dtype(at::kFloat));
      lists.steps.assign(lists.params.size(), step);
      const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
      if (decoupled_decay)
        at::_fused_adamw_(lists.params, lists.grads, lists.exp_avgs, lists.exp_avg_sqs, {}, lists.steps, o.lr(), beta1,
                          beta2, o.weight_decay(), o.eps(), /*amsgrad=*/false, /*maximize=*/false);
      else
        at::_fused_adam_(lists.params, lists.grads, lists.exp_avgs, lists.exp_avg_sqs, {}, lists.steps, o.lr(), beta1,
                         beta2, o.weight_decay(), o.eps(), /*amsgrad=*/false, /*maximize=*/false);
    }
  }
  return true;
#else
  (void)optimizer;
  (void)decoupled_decay;
  return false;
#endif
}

// What at::_fused_adam_ takes: floating-point parameters with gradients of their own dtype, all of
// a group on one device of a type it has a kernel for (CPU tensors only with `allow_cpu`: in
// training, the CPU's are ours or LibTorch's step).
bool aten_applicable(const torch::optim::Optimizer& optimizer, bool allow_cpu) {
  for (const auto& group : optimizer.param_groups()) {
    std::optional<at::Device> device;
    for (const auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if ((p.device().is_cpu() && !allow_cpu) || !detail::aten_fused_adam_available(p.device().type()) ||
          !at::isFloatingType(p.scalar_type()) || p.grad().scalar_type() != p.scalar_type() || p.grad().is_sparse() ||
          (device && *device != p.device()))
        return false;
      device = p.device();
    }
  }
  return true;
}

// Which kernels a step may use: in training ours for contiguous fp32 CPU tensors, LibTorch's fused
// one on a GPU; in the test of LibTorch's, LibTorch's wherever it has one.
enum class StepKernels { kTraining, kLibTorchsAnywhere };

// One step if the optimizer is an `Opt`: true when done, false (nothing changed) when neither kernel
// applies (amsgrad, a device or dtype without one); nothing when it is another optimizer. Ours
// multiplies each gradient by `grad_scale` as it reads it.
template <class Opt, class Options, class State>
std::optional<bool> step_if(torch::optim::Optimizer& optimizer, bool decoupled_decay, StepKernels kernels,
                            float grad_scale) {
  auto* opt = dynamic_cast<Opt*>(&optimizer);
  if (!opt) return std::nullopt;
  for (const auto& group : opt->param_groups())
    if (static_cast<const Options&>(group.options()).amsgrad()) return false;
  if (kernels == StepKernels::kTraining && applicable(*opt)) {
    step_all<Options, State>(*opt, decoupled_decay, grad_scale);
    return true;
  }
  return aten_applicable(*opt, kernels == StepKernels::kLibTorchsAnywhere) &&
         aten_step_all<Options, State>(*opt, decoupled_decay);
}

bool adam_step(torch::optim::Optimizer& optimizer, StepKernels kernels, float grad_scale = 1.0f) {
  at::NoGradGuard no_grad;
  using torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState;
  using torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState;
  if (const auto done = step_if<Adam, AdamOptions, AdamParamState>(optimizer, false, kernels, grad_scale)) return *done;
  if (const auto done = step_if<AdamW, AdamWOptions, AdamWParamState>(optimizer, true, kernels, grad_scale))
    return *done;
  return false;
}

// Whether adam_step(optimizer, kTraining) would run our own kernel on every parameter.
template <class Opt, class Options>
bool own_kernel_for(const torch::optim::Optimizer& optimizer) {
  const auto* opt = dynamic_cast<const Opt*>(&optimizer);
  if (!opt) return false;
  for (const auto& group : opt->param_groups())
    if (static_cast<const Options&>(group.options()).amsgrad()) return false;
  return applicable(*opt);
}

std::vector<at::Tensor> parameters_of(const torch::optim::Optimizer& optimizer) {
  std::vector<at::Tensor> all;
  for (const auto& group : optimizer.param_groups())
    for (const auto& p : group.params()) all.push_back(p);
  return all;
}

// torch::nn::utils::clip_grad_norm_'s factor, computed as it computes it (the norm of the gradients'
// norms; max_norm / (norm + 1e-6), at most 1) without applying it.
float clip_factor(const std::vector<at::Tensor>& parameters, double max_norm) {
  std::vector<at::Tensor> norms;
  for (const auto& p : parameters)
    if (p.grad().defined()) norms.push_back(p.grad().norm(2));
  if (norms.empty()) return 1.0f;
  const auto total = norms.size() == 1 ? norms.front() : at::stack(norms).norm(2);
  return at::clamp_max(max_norm / (total + 1e-6), 1.0).item<float>();
}

}  // namespace

bool fused_adam_step(torch::optim::Optimizer& optimizer) { return adam_step(optimizer, StepKernels::kTraining); }

bool clipped_fused_adam_step(torch::optim::Optimizer& optimizer, double max_norm, std::optional<double> squared_norm) {
  if (max_norm <= 0) return fused_adam_step(optimizer);
  at::NoGradGuard no_grad;
  const auto parameters = parameters_of(optimizer);
  using torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamW, torch::optim::AdamWOptions;
  if (own_kernel_for<Adam, AdamOptions>(optimizer) || own_kernel_for<AdamW, AdamWOptions>(optimizer)) {
    const float factor = squared_norm ? static_cast<float>(std::min(1.0, max_norm / (std::sqrt(*squared_norm) + 1e-6)))
                                      : clip_factor(parameters, max_norm);
    return adam_step(optimizer, StepKernels::kTraining, factor);
  }
  clip_gradient_norm(parameters, max_norm);
  return fused_adam_step(optimizer);
}

namespace detail {

bool aten_fused_adam_available(c10::DeviceType device) {
  if (device == c10::DeviceType::CUDA) return TS_TORCH_AT_LEAST(2, 0);
  if (device == c10::DeviceType::CPU) return TS_TORCH_AT_LEAST(2, 4);
  return false;
}

bool aten_fused_adam_step(torch::optim::Optimizer& optimizer) {
  return adam_step(optimizer, StepKernels::kLibTorchsAnywhere);
}

bool clip_gradient_norm_on_device(const std::vector<at::Tensor>& parameters, double max_norm) {
#if TS_TORCH_AT_LEAST(2, 1)
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return true;
  // As torch::nn::utils::clip_grad_norm_: the norm of the gradients' norms, and a factor
  // max_norm / (norm + 1e-6) where that is below 1; here the factor is clamped to 1 on the device
  // instead of compared on the host (a factor of 1 leaves every gradient as it was).
  const auto norms = at::_foreach_norm(grads, 2);
  const auto total = at::linalg_vector_norm(at::stack(norms), 2);
  const auto factor = at::clamp_max((total + 1e-6).reciprocal() * max_norm, 1.0);
  at::_foreach_mul_(grads, factor);
  return true;
#else
  (void)parameters;
  (void)max_norm;
  return false;
#endif
}

}  // namespace detail

void clip_gradient_norm(const std::vector<at::Tensor>& parameters, double max_norm) {
  const bool on_device = !parameters.empty() && !parameters.front().device().is_cpu();
  if (on_device && detail::clip_gradient_norm_on_device(parameters, max_norm)) return;
  torch::nn::utils::clip_grad_norm_(parameters, max_norm);
}

namespace {

// Blocks of this many elements: each block's sum of squares is added up within the block (16 float
// lanes at a time where the CPU has AVX-512) and the blocks in order in double, so the total does not
// depend on how many threads share the work.
constexpr std::int64_t kSquareBlock = 16384;

#if defined(__x86_64__)
// dst[i] += src[i] (where src is not null) over one block, returning the sum of the squares of dst.
__attribute__((target("avx512f"))) double add_and_square_block_avx512(float* dst, const float* src, std::int64_t n) {
  __m512 even = _mm512_setzero_ps(), odd = _mm512_setzero_ps();
  std::int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 x = _mm512_loadu_ps(dst + i), y = _mm512_loadu_ps(dst + i + 16);
    if (src) {
      x = _mm512_add_ps(x, _mm512_loadu_ps(src + i));
      y = _mm512_add_ps(y, _mm512_loadu_ps(src + i + 16));
      _mm512_storeu_ps(dst + i, x);
      _mm512_storeu_ps(dst + i + 16, y);
    }
    even = _mm512_fmadd_ps(x, x, even);
    odd = _mm512_fmadd_ps(y, y, odd);
  }
  alignas(64) float lanes[16];  // stored and added in order (GCC 12 warns inside _mm512_reduce_add_ps)
  _mm512_store_ps(lanes, _mm512_add_ps(even, odd));
  double total = 0;
  for (const float lane : lanes) total += lane;
  for (; i < n; ++i) {
    if (src) dst[i] += src[i];
    total += static_cast<double>(dst[i]) * dst[i];
  }
  return total;
}
#endif

double add_and_square_block(float* dst, const float* src, std::int64_t n) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return add_and_square_block_avx512(dst, src, n);
#endif
  double total = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (src) dst[i] += src[i];
    total += static_cast<double>(dst[i]) * dst[i];
  }
  return total;
}

// `dst` += `src` (an undefined src: nothing added), both fp32 CPU tensors of one size, dst contiguous;
// returns the sum of the squares of dst's elements afterwards.
double add_and_square(at::Tensor& dst, const at::Tensor& src) {
  const auto source = src.defined() ? src.contiguous() : src;
  float* d = dst.data_ptr<float>();
  const float* s = source.defined() ? source.data_ptr<float>() : nullptr;
  const std::int64_t n = dst.numel(), blocks = (n + kSquareBlock - 1) / kSquareBlock;
  std::vector<double> partial(static_cast<std::size_t>(blocks), 0.0);
  const auto mode = FloatMode::current();
  at::parallel_for(0, blocks, 1, [&](std::int64_t begin, std::int64_t end) {
    const FloatMode::Scope same(mode);
    for (std::int64_t b = begin; b < end; ++b) {
      const std::int64_t first = b * kSquareBlock, count = std::min(kSquareBlock, n - first);
      partial[static_cast<std::size_t>(b)] = add_and_square_block(d + first, s ? s + first : nullptr, count);
    }
  });
  double total = 0;
  for (const double p : partial) total += p;
  return total;
}

bool plain_fp32(const at::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous();
}

}  // namespace

void add_share_gradients(std::vector<std::vector<at::Tensor>>& grads, const std::vector<at::Tensor>& parameters,
                         double* squared_norm) {
  // A share's tensor becomes the sum only where nothing else holds it and no other parameter's
  // gradient shares its memory (autograd may hand one tensor, or views of one, to two parameters).
  std::vector<std::map<const void*, int>> holders(grads.size());  // per share: storage -> gradients in it
  for (std::size_t k = 0; k < grads.size(); ++k)
    for (const auto& g : grads[k])
      if (g.defined()) ++holders[k][g.storage().unsafeGetStorageImpl()];
  at::NoGradGuard no_grad;
  double squares = 0;
  const bool squared = squared_norm != nullptr;
  for (std::size_t p = 0; p < parameters.size(); ++p) {
    at::Tensor sum;
    // The last share's gradient is added in the pass that squares the sum, where that sum is final.
    const bool had = parameters[p].grad().defined();
    std::size_t last = grads.size();
    for (std::size_t k = 0; k < grads.size(); ++k)
      if (grads[k][p].defined()) last = k;
    bool squares_done = false;
    for (std::size_t k = 0; k < grads.size(); ++k) {
      auto& g = grads[k][p];
      if (!g.defined()) continue;
      if (sum.defined()) {
        if (squared && k == last && !had && plain_fp32(sum) && g.device().is_cpu() && g.scalar_type() == at::kFloat &&
            g.sizes() == sum.sizes()) {
          squares += add_and_square(sum, g);
          squares_done = true;
        } else {
          sum.add_(g);
        }
      } else {
        const bool owned =
            g.is_contiguous() && g.use_count() == 1 && holders[k][g.storage().unsafeGetStorageImpl()] == 1;
        sum = owned ? std::move(g) : g.clone(at::MemoryFormat::Contiguous);
      }
    }
    if (!sum.defined()) {  // no share had a gradient for it: the one it had (if any) counts as it is
      const auto& kept = parameters[p].grad();
      if (squared && kept.defined()) squares += kept.to(at::kDouble).pow(2).sum().item<double>();
      continue;
    }
    auto& grad = parameters[p].mutable_grad();
    grad = grad.defined() ? grad.add_(sum) : std::move(sum);
    if (squared && !squares_done) {  // one share, a gradient added to, or another type: a pass of its own
      if (plain_fp32(grad))
        squares += add_and_square(grad, at::Tensor());
      else
        squares += grad.to(at::kDouble).pow(2).sum().item<double>();
    }
  }
  if (squared_norm) *squared_norm = squares;
}

void clear_gradients(const std::vector<at::Tensor>& parameters) {
  for (const auto& p : parameters) p.mutable_grad().reset();
}

}  // namespace ts
