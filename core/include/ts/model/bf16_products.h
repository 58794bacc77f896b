// SPDX-License-Identifier: GPL-3.0-or-later
// bf16 matrix products for training on a CPU with AVX-512 BF16, on its AMX tiles where it has them,
// on the calling thread: fp32 operands rounded to bf16 as they are packed, products summed in fp32,
// fp32 results. The
// training step's shares of a batch (ts/train/thread_shards.h) run one on each thread; LibTorch
// 1.13's bf16 products (oneDNN) failed when two threads created their kernels at once, so bf16 used
// to train the whole batch on LibTorch's threads, waiting at the end of every small operation.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace ts {

/// True when this CPU has AVX-512 BF16's dot products, which bf16_matmul needs.
bool bf16_dot_products_available();
/// The kernels bf16_matmul runs on: AVX-512 BF16's dot products (8 rows × 48 columns of fp32 sums in
/// vector registers, 16 × 2 products an instruction) or AMX's tiles (32 × 32 sums in tile registers,
/// 16 × 16 × 32 products an instruction).
enum class Bf16Kernel { kDotProducts, kTiles };
/// True when this CPU (and, for tiles, the operating system) lets bf16_matmul run on `kernel`.
bool bf16_kernel_available(Bf16Kernel kernel);
/// The kernel bf16_matmul runs on: tiles where they are available, else dot products.
Bf16Kernel bf16_kernel();
/// "AMX tiles" or "AVX-512 BF16 dot products".
const char* bf16_kernel_name(Bf16Kernel kernel);

/// While one is alive on a thread, bf16_kernel() there answers `kernel` (for benchmarks and tests that
/// compare the two on one CPU). Nests; restores the previous answer.
class Bf16KernelScope {
 public:
  explicit Bf16KernelScope(Bf16Kernel kernel);
  ~Bf16KernelScope();
  Bf16KernelScope(const Bf16KernelScope&) = delete;
  Bf16KernelScope& operator=(const Bf16KernelScope&) = delete;

 private:
  int previous_;
};

/// True when training in bf16 on this CPU should use bf16_linear with a share of the batch per thread
/// rather than autocast on the whole batch: wherever bf16_matmul runs (AVX-512 BF16; with AMX on its
/// tiles, which ran 1.5 times as many training tokens a second as autocast on oneDNN's AMX kernels).
bool bf16_products_preferred();

/// For tests: while one is alive, bf16_products_preferred() answers `preferred` whatever the CPU. With
/// false, bf16 trains the whole batch under autocast on LibTorch's kernels, so that path is tested on
/// any CPU. Process-wide; nests; restores the previous answer.
class Bf16ProductsPreferenceScope {
 public:
  explicit Bf16ProductsPreferenceScope(bool preferred);
  ~Bf16ProductsPreferenceScope();
  Bf16ProductsPreferenceScope(const Bf16ProductsPreferenceScope&) = delete;
  Bf16ProductsPreferenceScope& operator=(const Bf16ProductsPreferenceScope&) = delete;

 private:
  int previous_;
};

/// a [M, K] · b [K, N] (+ bias [N]) for fp32 CPU tensors of any strides: each element rounded to bf16
/// (to nearest even), the products summed in fp32; a contiguous fp32 [M, N]. Throws
/// std::invalid_argument on other shapes or types and std::runtime_error where the CPU lacks
/// AVX-512 BF16. Runs on the calling thread.
at::Tensor bf16_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias = {});
/// bf16_matmul on the given kernel (the same sums up to fp32 rounding); throws std::runtime_error where
/// `kernel` is not available.
at::Tensor bf16_matmul_on(Bf16Kernel kernel, const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias = {});

/// bf16_matmul where b is (a view of) a linear layer's weight: while a PackedWeightsScope
/// (ts/model/packed_weights.h) is alive on this thread, b is packed through its PackedWeights, once a
/// step for all the threads that share it. The same sums as bf16_matmul.
at::Tensor bf16_weight_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias = {});

/// bf16_weight_matmul(a, b) without a bias that also sets `a_column_sums` to a's columns added up
/// ([K], each in row order in fp32: the same sums as a.sum(0) ordered row by row), in the pass that packs
/// a where a's rows are contiguous. The linear layer's backward: a = G, whose column sums are the
/// bias gradient, so G is read once for both.
at::Tensor bf16_weight_matmul_summing(const at::Tensor& a, const at::Tensor& b, at::Tensor& a_column_sums);

/// x · weightᵀ + bias as autocast's bf16 linear layer computes it, with fp32 outputs and gradients:
/// forward and the two backward products are bf16_matmul (bf16_weight_matmul where the weight is an
/// operand), the bias gradient an fp32 sum. x [..., in].
at::Tensor bf16_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

/// The backward of a linear layer y = x · Wᵀ + b on bf16_linear's products, for a caller that makes the
/// output's gradient G [rows, outputs] a band of rows at a time (the training loss writes it from the
/// logits): each band is rounded to bf16 into the packings of both products while it is in the core's
/// cache, and its columns are added into the bias gradient, so G is never written whole in memory, nor
/// read back twice to be packed. The results are bf16_linear's backward given the whole G, bit for bit.
/// On the calling thread, the kernel of bf16_kernel() at construction. One alive per thread at a time
/// (its packings live in the thread's buffers): a second throws std::logic_error.
class Bf16LinearGradients {
 public:
  static constexpr std::int64_t kBandRows = 32;

  /// Throws std::runtime_error where the CPU lacks the kernel, std::invalid_argument on negative sizes.
  Bf16LinearGradients(std::int64_t rows, std::int64_t outputs);
  ~Bf16LinearGradients();
  Bf16LinearGradients(const Bf16LinearGradients&) = delete;
  Bf16LinearGradients& operator=(const Bf16LinearGradients&) = delete;

  /// G's next `count` rows, [count, outputs] contiguous fp32: the bands in order, each kBandRows rows
  /// but the last. Throws std::logic_error past `rows` or on a short band before the last.
  void add_band(const float* band, std::int64_t count);
  /// G · weight: [rows, in] for weight [outputs, in] (through this thread's PackedWeights where a
  /// PackedWeightsScope is alive). Needs every band.
  at::Tensor input_gradient(const at::Tensor& weight) const;
  /// Gᵀ · x: [outputs, in] for x [rows, in]. Needs every band.
  at::Tensor weight_gradient(const at::Tensor& x) const;
  /// G's columns added up: [outputs], each in row order in fp32 (the bias gradient).
  at::Tensor bias_gradient() const;

 private:
  void check_complete(const char* what) const;
  Bf16Kernel kernel_;
  std::int64_t rows_, outputs_, added_ = 0;
  std::int64_t output_pairs_, row_pairs_;  // pair words a row of packed G, and of packed Gᵀ
  std::uint32_t *g_ = nullptr, *gt_ = nullptr;
  at::Tensor sums_;
};

/// While one is alive on a thread, ts::linear (ts/model/attention.h) of fp32 CPU tensors with
/// gradients on that thread is bf16_linear. Nests; restores the previous state.
class Bf16ProductsScope {
 public:
  explicit Bf16ProductsScope(bool enable = true);
  ~Bf16ProductsScope();
  Bf16ProductsScope(const Bf16ProductsScope&) = delete;
  Bf16ProductsScope& operator=(const Bf16ProductsScope&) = delete;

 private:
  bool previous_;
};
/// Whether a Bf16ProductsScope is enabled on this thread.
bool bf16_products_enabled();

}  // namespace ts
