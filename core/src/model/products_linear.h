// SPDX-License-Identifier: GPL-3.0-or-later
// The linear layer of the training products (bf16_products.cpp, fp16_products.cpp) as an autograd
// function over one of their matrix products: forward x · Wᵀ (+ b), backward dX = G · W and
// dW = Gᵀ · X through the same product, the bias gradient an fp32 sum.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace ts::detail {

using MatrixProduct = at::Tensor (*)(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias);

template <MatrixProduct Product>
struct ProductsLinear : public torch::autograd::Function<ProductsLinear<Product>> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias) {
    ctx->save_for_backward({x, weight});
    const bool has_bias = bias.numel() > 0;  // no bias: an empty tensor (LibTorch 1.13 refuses undefined inputs)
    ctx->saved_data["bias"] = has_bias;
    const auto in = weight.size(1);
    auto sizes = x.sizes().vec();
    sizes.back() = weight.size(0);
    return Product(x.reshape({-1, in}), weight.t(), has_bias ? bias : at::Tensor()).view(sizes);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& x = saved[0];
    const auto& weight = saved[1];
    const auto out = weight.size(0), in = weight.size(1);
    const auto g = grads[0].reshape({-1, out});
    at::Tensor grad_x, grad_weight, grad_bias;
    if (ctx->needs_input_grad(0)) grad_x = Product(g, weight, at::Tensor()).view(x.sizes());        // dX = G W
    if (ctx->needs_input_grad(1)) grad_weight = Product(g.t(), x.reshape({-1, in}), at::Tensor());  // dW = Gᵀ X
    if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2)) grad_bias = g.sum(0);
    return {grad_x, grad_weight, grad_bias};
  }
};

/// x · weightᵀ + bias through ProductsLinear<Product>; an undefined bias is none.
template <MatrixProduct Product>
at::Tensor products_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return ProductsLinear<Product>::apply(x, weight, bias.defined() ? bias : at::empty({0}, weight.options()));
}

}  // namespace ts::detail
