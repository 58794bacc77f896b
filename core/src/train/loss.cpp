// SPDX-License-Identifier: GPL-3.0-or-later
// The training loss in one autograd node (see ts/train/loss.h).
#include "ts/train/loss.h"

#include "ts/model/attention.h"
#include "ts/model/bf16_products.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define TS_LOSS_X86 1
#include <immintrin.h>
#else
#define TS_LOSS_X86 0
#endif

namespace ts {
namespace {

// fp32 logits on a CPU with AVX-512: the loss from each row's maximum, sum and log-sum-exp, without
// the [N, V] log-probabilities; backward computes the gradient from the saved logits in one pass.
// (LibTorch's log_softmax and the passes after it were 7% of a bf16 step of the 5-minute shape.)
struct RowSums {
  float max, sum;  // of the row's logits
};

#if TS_LOSS_X86
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq")
#endif

// e^x for x <= 0 (the logits less their row's maximum): 2^k e^r with k = round(x log2 e) and
// |r| <= ln 2 / 2, e^r by its Taylor polynomial to r^7 (relative error below 2e-7); NaN stays NaN.
inline __m512 exp_nonpositive(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);  // e^-104 is 0 in fp32; a NaN x (second operand) stays
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.428606765330187e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, k);
}

inline __mmask16 tail_mask(std::int64_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
}

RowSums row_sums(const float* x, std::int64_t v) {
  __m512 mx = _mm512_set1_ps(-std::numeric_limits<float>::infinity()), sum = _mm512_setzero_ps();
  for (std::int64_t i = 0; i < v; i += 16) {
    const __mmask16 m = tail_mask(v - i);
    const __m512 a = _mm512_maskz_loadu_ps(m, x + i);
    mx = _mm512_mask_max_ps(mx, m, mx, a);
    sum = _mm512_add_ps(sum, a);
  }
  return {_mm512_reduce_max_ps(mx), _mm512_reduce_add_ps(sum)};
}

float row_exp_sum(const float* x, std::int64_t v, float max) {
  const __m512 shift = _mm512_set1_ps(max);
  __m512 sum = _mm512_setzero_ps();
  for (std::int64_t i = 0; i < v; i += 16) {
    const __mmask16 m = tail_mask(v - i);
    const __m512 e = exp_nonpositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), shift));
    sum = _mm512_mask_add_ps(sum, m, sum, e);
  }
  return _mm512_reduce_add_ps(sum);
}

// g = scale * (e^(x - lse) - floor) over a row.
void row_gradient(const float* x, std::int64_t v, float lse, float scale, float floor, float* g) {
  const __m512 shift = _mm512_set1_ps(lse), factor = _mm512_set1_ps(scale), less = _mm512_set1_ps(floor);
  for (std::int64_t i = 0; i < v; i += 16) {
    const __mmask16 m = tail_mask(v - i);
    const __m512 e = exp_nonpositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), shift));
    _mm512_mask_storeu_ps(g + i, m, _mm512_mul_ps(_mm512_sub_ps(e, less), factor));
  }
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

bool row_kernels_available() {
  static const bool available = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  }();
  return available;
}

// The summed loss over fp32 contiguous logits [N, V] with int64 targets [N]; `lse` set to the rows'
// log-sum-exp [N].
at::Tensor row_losses(const at::Tensor& logits, const at::Tensor& targets64, std::int64_t pad, double smoothing,
                      at::Tensor& lse) {
  const std::int64_t n = logits.size(0), v = logits.size(1);
  lse = at::empty({n}, logits.options());
  auto per_row = at::empty({n}, logits.options().dtype(at::kDouble));
  const float* x = logits.data_ptr<float>();
  const std::int64_t* t = targets64.data_ptr<std::int64_t>();
  float* l = lse.data_ptr<float>();
  double* out = per_row.data_ptr<double>();
  at::parallel_for(0, n, 8, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float* row = x + r * v;
      const auto sums = row_sums(row, v);
      const float log_sum = sums.max + std::log(row_exp_sum(row, v, sums.max));
      l[r] = log_sum;
      if (t[r] == pad) {
        out[r] = 0;
        continue;
      }
      if (t[r] < 0 || t[r] >= v)
        throw std::out_of_range("smoothed_cross_entropy_sum: target " + std::to_string(t[r]) + " outside the " +
                                std::to_string(v) + " logits of a row");
      out[r] = (1.0 - smoothing) * (static_cast<double>(log_sum) - row[t[r]]) +
               smoothing * (static_cast<double>(log_sum) - static_cast<double>(sums.sum) / static_cast<double>(v));
    }
  });
  return per_row.sum().to(at::kFloat);
}

// row_losses for a node's forward: saves `before`, then the logits, their rows' log-sum-exp and the int64
// targets for backward, with `pad` and `smoothing`.
at::Tensor saved_row_losses(torch::autograd::AutogradContext* ctx, std::vector<at::Tensor> before,
                            const at::Tensor& logits, const at::Tensor& targets, std::int64_t pad, double smoothing) {
  const auto targets64 = targets.to(at::kLong).contiguous();
  at::Tensor lse;
  auto loss = row_losses(logits, targets64, pad, smoothing, lse);
  before.insert(before.end(), {logits, lse, targets64});
  ctx->save_for_backward(before);
  ctx->saved_data["pad"] = pad;
  ctx->saved_data["smoothing"] = smoothing;
  return loss;
}

// The gradient of rows [begin, end) of the summed loss times g, from the logits x [N, V], the rows'
// log-sum-exp l and targets t, into out ([end - begin, V]): padded rows 0.
void gradient_rows(const float* x, std::int64_t v, const float* l, const std::int64_t* t, std::int64_t pad, float g,
                   double smoothing, std::int64_t begin, std::int64_t end, float* out) {
  const float floor = static_cast<float>(smoothing / static_cast<double>(v));
  for (std::int64_t r = begin; r < end; ++r) {
    float* row = out + (r - begin) * v;
    if (t[r] == pad) {
      std::fill(row, row + v, 0.0f);
      continue;
    }
    row_gradient(x + r * v, v, l[r], g, floor, row);
    row[t[r]] -= g * static_cast<float>(1.0 - smoothing);
  }
}

// The rows' log-sum-exp [N] and the summed loss, for fp32 contiguous logits [N, V].
struct RowLoss : public torch::autograd::Function<RowLoss> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits, const at::Tensor& targets,
                            std::int64_t pad, double smoothing) {
    return saved_row_losses(ctx, {}, logits, targets, pad, smoothing);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& logits = saved[0];
    const auto& lse = saved[1];
    const auto& targets = saved[2];
    const std::int64_t pad = ctx->saved_data["pad"].toInt();
    const double smoothing = ctx->saved_data["smoothing"].toDouble();
    const float g = grads[0].to(at::kFloat).item<float>();
    const std::int64_t n = logits.size(0), v = logits.size(1);
    auto gradient = at::empty_like(logits);
    const float* x = logits.data_ptr<float>();
    const float* l = lse.data_ptr<float>();
    const std::int64_t* t = targets.data_ptr<std::int64_t>();
    float* out = gradient.data_ptr<float>();
    at::parallel_for(0, n, 8, [&](std::int64_t begin, std::int64_t end) {
      gradient_rows(x, v, l, t, pad, g, smoothing, begin, end, out + begin * v);
    });
    return {gradient, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// The output layer and the loss in one node, where the thread trains on bf16 products: forward is
// bf16_linear's product and RowLoss; backward writes G a band of rows at a time into a buffer the core
// keeps in its cache and hands each band to Bf16LinearGradients, which packs it for both products. G
// (rows × vocabulary in fp32, 16 MB for 500 rows of 8,000) was written whole by RowLoss, then read by
// both packings: about 80 MB of memory traffic a share, about 32 MB now.
struct OutputLoss : public torch::autograd::Function<OutputLoss> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& hidden, const at::Tensor& weight,
                            const at::Tensor& bias, const at::Tensor& targets, std::int64_t pad, double smoothing) {
    const auto logits = bf16_weight_matmul(hidden, weight.t(), bias);  // bf16_linear's forward
    return saved_row_losses(ctx, {hidden, weight}, logits, targets, pad, smoothing);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &hidden = saved[0], &weight = saved[1], &logits = saved[2], &lse = saved[3], &targets = saved[4];
    const std::int64_t pad = ctx->saved_data["pad"].toInt();
    const double smoothing = ctx->saved_data["smoothing"].toDouble();
    const float g = grads[0].to(at::kFloat).item<float>();
    const std::int64_t n = logits.size(0), v = logits.size(1);
    Bf16LinearGradients gradients(n, v);
    constexpr std::int64_t kBand = Bf16LinearGradients::kBandRows;
    thread_local std::vector<float> band;
    band.resize(static_cast<std::size_t>(kBand * v));
    for (std::int64_t r0 = 0; r0 < n; r0 += kBand) {
      const std::int64_t end = std::min(n, r0 + kBand);
      gradient_rows(logits.data_ptr<float>(), v, lse.data_ptr<float>(), targets.data_ptr<std::int64_t>(), pad, g,
                    smoothing, r0, end, band.data());
      gradients.add_band(band.data(), end - r0);
    }
    at::Tensor grad_hidden, grad_weight, grad_bias;
    if (ctx->needs_input_grad(0)) grad_hidden = gradients.input_gradient(weight);
    if (ctx->needs_input_grad(1)) grad_weight = gradients.weight_gradient(hidden);
    if (ctx->needs_input_grad(2)) grad_bias = gradients.bias_gradient();
    return {grad_hidden, grad_weight, grad_bias, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};
#endif  // TS_LOSS_X86

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

at::Tensor projected_cross_entropy_sum(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& bias,
                                       const at::Tensor& targets, std::int64_t pad, double smoothing) {
#if TS_LOSS_X86
  const auto fp32_cpu = [](const at::Tensor& t) {
    return t.defined() && t.scalar_type() == at::kFloat && t.device().is_cpu();
  };
  if (bf16_products_enabled() && at::GradMode::is_enabled() && hidden.dim() == 2 && weight.dim() == 2 &&
      bias.dim() == 1 && fp32_cpu(hidden) && fp32_cpu(weight) && fp32_cpu(bias) && weight.size(0) > 0 &&
      hidden.size(1) == weight.size(1) && bias.size(0) == weight.size(0) && targets.dim() == 1 &&
      targets.size(0) == hidden.size(0) && row_kernels_available() && bf16_kernel_available(bf16_kernel()))
    return OutputLoss::apply(hidden, weight, bias, targets, pad, smoothing);
#endif
  return smoothed_cross_entropy_sum(linear(hidden, weight, bias), targets, pad, smoothing);
}

at::Tensor smoothed_cross_entropy_sum(const at::Tensor& logits, const at::Tensor& targets, std::int64_t pad,
                                      double smoothing) {
#if TS_LOSS_X86
  if (logits.dim() == 2 && logits.scalar_type() == at::kFloat && logits.device().is_cpu() && logits.is_contiguous() &&
      logits.size(1) > 0 && row_kernels_available())
    return RowLoss::apply(logits, targets, pad, smoothing);
#endif
  return SmoothedCrossEntropy::apply(logits, targets, pad, smoothing);
}

}  // namespace ts
