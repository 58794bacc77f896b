// SPDX-License-Identifier: GPL-3.0-or-later
// Multi-head scaled dot-product attention with optional weight recording.
#include "ts/model/attention.h"

#include "ts/model/float_mode.h"

#include <cmath>
#include <limits>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <ATen/Dispatch.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/custom_function.h>

namespace ts {

at::Tensor padding_mask(const at::Tensor& tokens, std::int64_t pad_id) {
  auto options = at::TensorOptions().dtype(at::kFloat).device(tokens.device());
  auto mask = at::zeros(tokens.sizes(), options);
  mask.masked_fill_(tokens.eq(pad_id), -std::numeric_limits<float>::infinity());
  return mask.unsqueeze(1).unsqueeze(1);  // [B, 1, 1, S]
}

at::Tensor causal_mask(std::int64_t length, const at::TensorOptions& options) {
  auto mask = at::full({length, length}, -std::numeric_limits<float>::infinity(), options.dtype(at::kFloat));
  return mask.triu(/*diagonal=*/1).unsqueeze(0).unsqueeze(0);  // [1, 1, T, T]
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (x.dim() >= 1 && x.numel() == x.size(-1) && x.device().is_cpu() && !at::GradMode::is_enabled()) {
    auto sizes = x.sizes().vec();
    sizes.back() = weight.size(0);
    const auto row = x.reshape({-1});
    return (bias.defined() ? at::addmv(bias, weight, row) : at::mv(weight, row)).view(sizes);
  }
  return at::linear(x, weight, bias);
}

namespace {
inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// out[i] = in[i] * scale where the hash of (seed, i) keeps element i, else 0. Each 64-bit hash gives
// two 32-bit uniforms, one per element of a pair.
at::Tensor apply_hash_mask(const at::Tensor& input, std::uint64_t seed, double p) {
  const auto in = input.contiguous();
  auto out = at::empty_like(in);
  const std::int64_t n = in.numel();
  const auto threshold = static_cast<std::uint32_t>(std::min(p * 4294967296.0, 4294967295.0));
  const double scale = 1.0 / (1.0 - p);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, in.scalar_type(), "fast_dropout", [&] {
    const auto* src = in.data_ptr<scalar_t>();
    auto* dst = out.data_ptr<scalar_t>();
    const auto s = static_cast<scalar_t>(scale);
    const auto mode = FloatMode::current();
    at::parallel_for(0, (n + 1) / 2, 8192, [&](std::int64_t begin, std::int64_t end) {
      const FloatMode::Scope same(mode);
      for (std::int64_t k = begin; k < end; ++k) {
        const std::uint64_t h = splitmix64(seed + static_cast<std::uint64_t>(k) * 0xd1342543de82ef95ULL);
        dst[2 * k] = static_cast<std::uint32_t>(h) >= threshold ? static_cast<scalar_t>(src[2 * k] * s) : scalar_t(0);
        if (2 * k + 1 < n)
          dst[2 * k + 1] = static_cast<std::uint32_t>(h >> 32) >= threshold ? static_cast<scalar_t>(src[2 * k + 1] * s)
                                                                            : scalar_t(0);
      }
    });
  });
  return out;
}

// Dropout that keeps nothing for backward but its seed: the gradient goes through the same mask,
// regenerated from the hash. LibTorch's dropout keeps a mask as large as the activation.
struct HashDropout : public torch::autograd::Function<HashDropout> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, double p, std::int64_t seed) {
    ctx->saved_data["p"] = p;
    ctx->saved_data["seed"] = seed;
    return apply_hash_mask(x, static_cast<std::uint64_t>(seed), p);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto seed = static_cast<std::uint64_t>(ctx->saved_data["seed"].toInt());
    return {apply_hash_mask(grads[0], seed, ctx->saved_data["p"].toDouble()), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor fast_dropout(const at::Tensor& x, double p, bool training) {
  if (!training || p <= 0 || x.numel() == 0) return x;
  if (!x.device().is_cpu()) return at::dropout(x, p, true);
  if (p >= 1) return x * 0;
  std::uint64_t seed = 0;
  {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    seed = at::check_generator<at::CPUGeneratorImpl>(generator)->random64();
  }
  return HashDropout::apply(x, p, static_cast<std::int64_t>(seed));
}

MultiHeadAttentionImpl::MultiHeadAttentionImpl(std::int64_t d_model, std::int64_t heads, double dropout,
                                               bool self_attention)
    : d_model_(d_model), heads_(heads), head_dim_(d_model / heads), self_attention_(self_attention) {
  TORCH_CHECK(d_model % heads == 0, "heads (", heads, ") must divide d_model (", d_model, ")");
  if (self_attention_) {
    qkv_ = register_module("qkv", torch::nn::Linear(d_model, 3 * d_model));
  } else {
    q_ = register_module("q", torch::nn::Linear(d_model, d_model));
    kv_ = register_module("kv", torch::nn::Linear(d_model, 2 * d_model));
  }
  out_ = register_module("out", torch::nn::Linear(d_model, d_model));
  dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
}

at::Tensor MultiHeadAttentionImpl::split_heads(const at::Tensor& x) const {
  return x.view({x.size(0), x.size(1), heads_, head_dim_}).transpose(1, 2);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> MultiHeadAttentionImpl::project_self(const at::Tensor& x) {
  auto parts = linear(qkv_, x).chunk(3, /*dim=*/-1);  // 3 x [B, T, D]
  return {split_heads(parts[0]), split_heads(parts[1]), split_heads(parts[2])};
}

at::Tensor MultiHeadAttentionImpl::project_query(const at::Tensor& x) { return split_heads(linear(q_, x)); }

std::pair<at::Tensor, at::Tensor> MultiHeadAttentionImpl::project_keys_values(const at::Tensor& x) {
  auto parts = linear(kv_, x).chunk(2, /*dim=*/-1);
  return {split_heads(parts[0]), split_heads(parts[1])};
}

at::Tensor MultiHeadAttentionImpl::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                          const at::Tensor& mask) {
  auto scores = at::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(head_dim_)));  // [B, H, T, S]
  if (mask.defined()) scores = scores + mask;
  auto weights = at::softmax(scores, /*dim=*/-1, at::kFloat).to(q.scalar_type());
  if (record_) last_weights_ = weights.detach().to(at::kFloat);
  auto context = at::matmul(fast_dropout(dropout_, weights), v);                // [B, H, T, K]
  context = context.transpose(1, 2).reshape({q.size(0), q.size(2), d_model_});  // [B, T, D]
  return linear(out_, context);
}

at::Tensor MultiHeadAttentionImpl::forward(const at::Tensor& query, const at::Tensor& keys_values,
                                           const at::Tensor& mask) {
  if (self_attention_) {
    auto [q, k, v] = project_self(query);
    return attend(q, k, v, mask);
  }
  auto [k, v] = project_keys_values(keys_values);
  return attend(project_query(query), k, v, mask);
}

}  // namespace ts
