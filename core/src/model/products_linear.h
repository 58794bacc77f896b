// SPDX-License-Identifier: GPL-3.0-or-later
// What the training products (bf16_products.cpp, fp16_products.cpp) share: the checks of their
// operands, and their linear layer as an autograd function over one of their matrix products: forward
// x · Wᵀ (+ b), backward dX = G · W and dW = Gᵀ · X through the same product, the bias gradient an
// fp32 sum.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace ts::detail {

/// The result of `name`(a [M, K], b [K, N], bias [N] or undefined) for fp32 CPU tensors: throws
/// std::invalid_argument on other shapes or types and std::runtime_error ("`name`: this CPU has no
/// `missing`") where `available` is false. Returns C [M, N] uninitialised, with `done` false, or, where
/// C is empty or K is 0, already computed with `done` true.
inline at::Tensor start_product(const std::string& name, const at::Tensor& a, const at::Tensor& b,
                                const at::Tensor& bias, bool available, const char* missing, bool& done) {
  if (a.dim() != 2 || b.dim() != 2 || a.size(1) != b.size(0))
    throw std::invalid_argument(name + ": expected a [M, K] and b [K, N]");
  if (a.scalar_type() != at::kFloat || b.scalar_type() != at::kFloat || !a.device().is_cpu() || !b.device().is_cpu())
    throw std::invalid_argument(name + ": expected fp32 CPU tensors");
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != b.size(1) || bias.scalar_type() != at::kFloat))
    throw std::invalid_argument(name + ": expected an fp32 bias [N]");
  if (!available) throw std::runtime_error(name + ": this CPU has no " + missing);
  auto c = at::empty({a.size(0), b.size(1)}, a.options());
  done = c.numel() == 0 || a.size(1) == 0;
  if (done && c.numel() > 0) {  // K = 0: every sum is empty
    if (bias.defined())
      c.copy_(bias.expand_as(c));
    else
      c.zero_();
  }
  return c;
}

/// g [M, N] summed over its rows: [N], for fp32 each column's sum in row order in fp32 (the bias
/// gradient). LibTorch's sum(0) took about 1.4% of a bf16 training step; this is one pass over g.
inline at::Tensor column_sums(const at::Tensor& g_in) {
  if (g_in.scalar_type() != at::kFloat) return g_in.sum(0);
  const auto g = g_in.contiguous();
  const std::int64_t rows = g.size(0), cols = g.size(1);
  auto sums = at::zeros({cols}, g.options());
  float* out = sums.data_ptr<float>();
  const float* in = g.data_ptr<float>();
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* row = in + i * cols;
    for (std::int64_t j = 0; j < cols; ++j) out[j] += row[j];
  }
  return sums;
}

using MatrixProduct = at::Tensor (*)(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias);
/// A WeightProduct without bias that also sets its last argument to a's column sums (fp32, row order).
using SummingProduct = at::Tensor (*)(const at::Tensor& a, const at::Tensor& b, at::Tensor& a_column_sums);

/// `WeightProduct`: Product where b is (a view of) the layer's weight, which may be packed once for
/// every share of a step (ts/model/packed_weights.h). `Summing` where given: WeightProduct that adds up
/// G's columns while it packs G, so that dX and the bias gradient read G once.
template <MatrixProduct Product, MatrixProduct WeightProduct = Product, SummingProduct Summing = nullptr>
struct ProductsLinear : public torch::autograd::Function<ProductsLinear<Product, WeightProduct, Summing>> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias) {
    ctx->save_for_backward({x, weight});
    const bool has_bias = bias.numel() > 0;  // no bias: an empty tensor (LibTorch 1.13 refuses undefined inputs)
    ctx->saved_data["bias"] = has_bias;
    const auto in = weight.size(1);
    auto sizes = x.sizes().vec();
    sizes.back() = weight.size(0);
    return WeightProduct(x.reshape({-1, in}), weight.t(), has_bias ? bias : at::Tensor()).view(sizes);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& x = saved[0];
    const auto& weight = saved[1];
    const auto out = weight.size(0), in = weight.size(1);
    const auto g = grads[0].reshape({-1, out});
    at::Tensor grad_x, grad_weight, grad_bias;
    const bool bias_gradient = ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2);
    if (ctx->needs_input_grad(0)) {  // dX = G W
      if constexpr (Summing != nullptr) {
        if (bias_gradient) grad_x = Summing(g, weight, grad_bias).view(x.sizes());
      }
      if (!grad_x.defined()) grad_x = WeightProduct(g, weight, at::Tensor()).view(x.sizes());
    }
    if (ctx->needs_input_grad(1)) grad_weight = Product(g.t(), x.reshape({-1, in}), at::Tensor());  // dW = Gᵀ X
    if (bias_gradient && !grad_bias.defined()) grad_bias = column_sums(g);
    return {grad_x, grad_weight, grad_bias};
  }
};

/// x · weightᵀ + bias through ProductsLinear<Product, WeightProduct, Summing>; an undefined bias is none.
template <MatrixProduct Product, MatrixProduct WeightProduct = Product, SummingProduct Summing = nullptr>
at::Tensor products_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return ProductsLinear<Product, WeightProduct, Summing>::apply(
      x, weight, bias.defined() ? bias : at::empty({0}, weight.options()));
}

}  // namespace ts::detail
