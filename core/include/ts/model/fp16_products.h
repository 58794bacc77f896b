// SPDX-License-Identifier: GPL-3.0-or-later
// fp16 matrix products for training on a CPU with AVX-512 FP16, on the calling thread's share of a
// batch: fp32 operands scaled by powers of two, rounded to fp16 as they are packed, multiplied and
// added in fp16 64 products at a time, the sums gathered in fp32; fp32 results. On an Intel Xeon model
// 207 without AMX, fp16 multiply-adds do twice the flops of fp32's and four times those of its bf16
// dot products (ts/host/vector_rates.h).
//
// Range: every 64 k of each row of the left operand and of each column of the right one is scaled by
// a power of two (exact) so that its largest magnitude lies in [8, 16); a product is then at most 256
// and the 64 of a chunk at most 16,384, under fp16's 65,504, and each chunk's sum is scaled back in fp32.
// No loss scaling is needed: a gradient row of 1e-9 is as precise as one of 1.
//
// Precision: fp16 has 11 significant bits (bf16 8); the sums of 64 in fp16 add rounding. On random
// operands the relative error is about 1.2e-3, against 2.3e-3 for bf16 operands summed in fp32.
#pragma once

#include <ATen/core/Tensor.h>

namespace ts {

/// True when this CPU has AVX-512 FP16's multiply-adds (and this build can use them).
bool fp16_products_available();

/// a [M, K] · b [K, N] (+ bias [N]) for fp32 CPU tensors of any strides, as described above; a
/// contiguous fp32 [M, N]. Throws std::invalid_argument on other shapes or types and
/// std::runtime_error where the CPU lacks AVX-512 FP16. Splits its columns over LibTorch's threads
/// where the caller is not on one share's thread already.
at::Tensor fp16_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias = {});

/// fp16_matmul where b is (a view of) a linear layer's weight: while a PackedWeightsScope
/// (ts/model/packed_weights.h) is alive on this thread, b is packed through its PackedWeights, once a
/// step for all the threads that share it. The same sums as fp16_matmul.
at::Tensor fp16_weight_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias = {});

/// x · weightᵀ + bias with fp32 outputs and gradients: forward and the two backward products are
/// fp16_matmul (fp16_weight_matmul where the weight is an operand), the bias gradient an fp32 sum.
/// x [..., in].
at::Tensor fp16_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

/// While one is alive on a thread, ts::linear (ts/model/attention.h) of fp32 CPU tensors with
/// gradients on that thread is fp16_linear. Nests; restores the previous state.
class Fp16ProductsScope {
 public:
  explicit Fp16ProductsScope(bool enable = true);
  ~Fp16ProductsScope();
  Fp16ProductsScope(const Fp16ProductsScope&) = delete;
  Fp16ProductsScope& operator=(const Fp16ProductsScope&) = delete;

 private:
  bool previous_;
};
/// Whether an Fp16ProductsScope is enabled on this thread.
bool fp16_products_enabled();

}  // namespace ts
