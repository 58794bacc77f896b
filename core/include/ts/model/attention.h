// SPDX-License-Identifier: GPL-3.0-or-later
// Multi-head attention that can record its weights per head, plus the masks it uses.
//
// Shape legend: B batch, S source length, T target length, D model dim, H heads, K = D / H.
// Masks are additive floats (0 where attending is allowed, -inf where not), built once per batch.
#pragma once

#include <string>

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

namespace ts {

/// [B, S] token ids -> [B, 1, 1, S] additive mask hiding padding keys.
at::Tensor padding_mask(const at::Tensor& tokens, std::int64_t pad_id);
/// [1, 1, T, T] additive mask hiding future positions (upper triangle).
at::Tensor causal_mask(std::int64_t length, const at::TensorOptions& options);

/// `layer`'s affine map of x [..., in]. A single row (one token of incremental decoding) goes
/// through a matrix-vector product: OpenBLAS's matrix-matrix path would first copy the whole weight
/// matrix into its packed layout, which costs more than the product itself for one row.
/// Without gradients only; otherwise (training) it is at::linear, or, for fp32 CPU tensors, fp16_linear
/// or bf16_linear while an Fp16ProductsScope or a Bf16ProductsScope is enabled on the thread.
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);
inline at::Tensor linear(const torch::nn::Linear& layer, const at::Tensor& x) {
  return linear(x, layer->weight, layer->bias);
}

/// at::matmul(a, b) for the attention's products: a [B, H, M, K] and b [B, H, K, N] (`b_transposed`
/// false) or b [B, H, N, K] (true, giving a · bᵀ), each matrix small. LibTorch 1.13's CPU bmm in fp32
/// (without MKL, as Debian builds it) takes every matrix of the batch as tensor views and multiplies
/// them one at a time: three `select`s, an `as_strided` and a `resolve_conj` per matrix, which cost more
/// than the product of a 12 × 48 by 48 × 12 pair. Here fp32 CPU tensors whose matrices are small go
/// through one pass over raw pointers (16 lanes at a time on AVX-512), with gradients; anything else
/// (bf16 under autocast, a GPU, long sentences) is at::matmul. `heads_inner`: the small products'
/// result is laid out as a contiguous [B, M, H, N] (the attention's output, whose heads are joined
/// next, then needs no copy); the values are the same either way.
at::Tensor attention_matmul(const at::Tensor& a, const at::Tensor& b, bool b_transposed, bool heads_inner = false);

/// Inverted dropout of `x` with probability p, as at::dropout, but with the keep mask drawn by a
/// counter-based hash (splitmix64) in parallel and applied in the same pass. LibTorch's CPU
/// bernoulli_ draws every element from one locked Mersenne Twister, which cost a sixth of a
/// training step, and keeps the mask for backward; here backward regenerates the mask from the
/// seed, so a dropout keeps no activation-sized tensor. The seed is one draw from the default
/// generator, so runs stay reproducible under at::manual_seed and resume.
/// On a GPU it is at::dropout (already a fused kernel there).
at::Tensor fast_dropout(const at::Tensor& x, double p, bool training);
inline at::Tensor fast_dropout(const torch::nn::Dropout& module, const at::Tensor& x) {
  return fast_dropout(x, module->options.p(), module->is_training());
}

/// fast_dropout(at::relu(x), p, training) in one pass, with the same masks (one seed drawn where
/// fast_dropout draws it) and the same bits, forward and backward. Backward needs only the output
/// (the gradient passes, scaled, where it is not 0), so the feed-forward layer keeps one
/// activation-sized tensor fewer and makes two passes over it fewer. fp32 and bf16 on a CPU; anything
/// else is at::relu then fast_dropout.
at::Tensor relu_dropout(const at::Tensor& x, double p, bool training);
inline at::Tensor relu_dropout(const torch::nn::Dropout& module, const at::Tensor& x) {
  return relu_dropout(x, module->options.p(), module->is_training());
}

/// Layer norm of x over its last dimension (weight and bias of that size), as at::layer_norm computes it
/// up to fp32 rounding, for training: where gradients are being recorded for fp32 CPU tensors whose last
/// dimension is a multiple of 16 on a CPU with AVX-512, one pass a row forward (the row's mean, its
/// variance about the mean, then the normalised row scaled and shifted; the mean and 1/σ kept for
/// backward) and one pass a row backward, the weight's and bias's gradients summed in blocks of 64 rows
/// (the same sums whatever the threads). LibTorch 1.13's kernels took 3.7% of a bf16 training step.
/// Anything else (no gradients, as in translation and validation; a GPU; other types or widths) is
/// at::layer_norm.
at::Tensor layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps);
/// `module`'s layer norm of x: layer_norm above where the module normalises the last dimension, else
/// module->forward(x).
at::Tensor layer_norm(torch::nn::LayerNorm module, const at::Tensor& x);

/// While one is alive on a thread, fast_dropout on that thread takes its seeds from this scope's own
/// sequence (a hash of `base` and a counter) instead of the default generator. Threads that run
/// shares of one batch at the same time (ts/train/thread_shards.h) each hold one with a base drawn
/// beforehand on the calling thread (draw_base), so a run's masks do not depend on which thread
/// reached the generator first: training stays reproducible. Scopes nest; the inner one applies.
class DropoutSeeds {
 public:
  explicit DropoutSeeds(std::uint64_t base);
  ~DropoutSeeds();
  DropoutSeeds(const DropoutSeeds&) = delete;
  DropoutSeeds& operator=(const DropoutSeeds&) = delete;
  /// One draw from LibTorch's default CPU generator (reproducible under at::manual_seed and resume).
  static std::uint64_t draw_base();
  /// The next seed on this thread: from the innermost live scope, else draw_base().
  static std::uint64_t next();

 private:
  std::uint64_t base_, count_ = 0;
  DropoutSeeds* outer_;
};
namespace detail {
/// fast_dropout's pass: `x` (on the CPU) times 1/(1-p) where the hash of (seed, element) keeps the
/// element, else 0. fp32 and bf16 run 16 elements at a time on a CPU with AVX-512 (DQ, BW);
/// `vectorised` false forces the one-element loop, which gives the same bits (a test holds them equal).
at::Tensor hash_dropout(const at::Tensor& x, std::uint64_t seed, double p, bool vectorised = true);
/// The attention's weights, softmax(scores · scale + mask) over the last dimension, in one pass a row:
/// `scores` fp32 [B, H, T, S] on the CPU, `mask` (additive, fp32, -inf where masked) broadcastable to
/// it or undefined. The exponential is a polynomial (ts/host/simd_exp.h, relative error about 2e-7)
/// on AVX-512, std::exp otherwise (`vectorised` false). A row whose logits are all -inf gives NaN, as softmax does.
at::Tensor attention_softmax(const at::Tensor& scores, const at::Tensor& mask, double scale, bool vectorised = true);
/// Its backward from the weights w: (w · (grad - Σ grad · w)) · scale, row by row.
at::Tensor attention_softmax_backward(const at::Tensor& grad, const at::Tensor& weights, double scale,
                                      bool vectorised = true);
/// relu_dropout's forward: hash_dropout of max(0, x) (p 0: max(0, x) alone, nothing hashed).
at::Tensor relu_hash_dropout(const at::Tensor& x, std::uint64_t seed, double p, bool vectorised = true);
/// relu_dropout's backward from its output y: grad · scale where y is not 0, else 0.
at::Tensor relu_dropout_backward(const at::Tensor& grad, const at::Tensor& y, double scale, bool vectorised = true);
}  // namespace detail

/// The rows of a right-padded [B, T, ...] batch that hold real tokens, for layers that work row by
/// row (linear maps, layer norm, dropout, residual sums) to skip the padded ones: `index` [N] (long,
/// ascending) into the B·T rows. Attention needs the [B, T] layout: scatter before, gather after.
struct RealRows {
  at::Tensor index;
  std::int64_t batch = 0, length = 0;
  /// The rows of `tokens` [B, T] that are not `pad`.
  static RealRows of(const at::Tensor& tokens, std::int64_t pad);
  std::int64_t count() const { return index.size(0); }
  /// x [B, T, C] -> [N, C]. On the CPU its gradient is scattered back in one pass (no zeroed tensor
  /// then index_add, as LibTorch's index_select backward makes).
  at::Tensor gather(const at::Tensor& x) const;
  /// y [N, C] -> [B, T, C], zeros at the padded positions (with gradients both ways). On the CPU one
  /// pass writes each row once: the real rows copied, the padded ones zeroed.
  at::Tensor scatter(const at::Tensor& y) const;
};

/// Which kernels compute softmax(q kᵀ / √K + mask) v.
enum class AttentionKernel {
  kAuto,      ///< LibTorch's fused attention on a GPU where it has one (2.0 and later), else kExplicit
  kExplicit,  ///< the products, softmax and dropout one by one (attention_matmul, fast_dropout)
  kFused,     ///< at::scaled_dot_product_attention on any device, where this LibTorch has it
};

/// Whether this LibTorch has a fused attention (at::scaled_dot_product_attention: 2.0 and later).
bool fused_attention_available();

/// "auto", "explicit", "fused".
const char* attention_kernel_name(AttentionKernel kernel);
/// The inverse of attention_kernel_name; throws std::invalid_argument naming the accepted names.
AttentionKernel parse_attention_kernel(const std::string& name);
/// The kernel a new attention layer starts with: kAuto, or the one the environment's TS_ATTENTION
/// names (for benchmarks, as TS_DECODING_ISA is for decoding; an unknown name is said on stderr and
/// ignored). The first call also keeps LibTorch's fused attention off cuDNN's kernels (2.5 and later;
/// with them bf16 trained 3.6 times slower on an H200) unless the environment has TS_SDPA_CUDNN=1.
AttentionKernel default_attention_kernel();

class MultiHeadAttentionImpl : public torch::nn::Module {
 public:
  /// `self_attention` fuses the Q, K and V projections into one matrix product.
  MultiHeadAttentionImpl(std::int64_t d_model, std::int64_t heads, double dropout, bool self_attention);

  /// query [B, T, D], keys_values [B, S, D] (ignored for self-attention), mask broadcastable to
  /// [B, H, T, S] or undefined. Returns [B, T, D].
  at::Tensor forward(const at::Tensor& query, const at::Tensor& keys_values, const at::Tensor& mask);

  /// Projects `x` [B, S, D] into keys and values [B, H, S, K] (cross-attention caches these once).
  std::pair<at::Tensor, at::Tensor> project_keys_values(const at::Tensor& x);
  /// Projects a self-attention input [B, T, D] into q, k, v, each [B, H, T, K].
  std::tuple<at::Tensor, at::Tensor, at::Tensor> project_self(const at::Tensor& x);
  /// Projects a cross-attention query [B, T, D] into [B, H, T, K].
  at::Tensor project_query(const at::Tensor& x);
  /// Attention over already projected heads; returns [B, T, D] after the output projection.
  at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask);
  /// forward() for the real rows of a right-padded query batch only: query_rows [N, D] (rows.gather of
  /// the [B, T, D] query), keys_values [B, S, D] (ignored for self-attention, whose keys are the query
  /// rows). The projections run on the N rows; a padded position's key and value are zero, which a
  /// causal or padding mask keeps every real query from reading. Returns [N, D]: forward()'s rows.
  at::Tensor forward_rows(const at::Tensor& query_rows, const RealRows& rows, const at::Tensor& keys_values,
                          const at::Tensor& mask);

  /// When true, the next forward passes keep their weights [B, H, T, S] in last_weights().
  void set_record(bool on) { record_ = on; }
  bool recording() const { return record_; }
  const at::Tensor& last_weights() const { return last_weights_; }

  std::int64_t heads() const { return heads_; }

  /// kAuto unless set. The fused kernel keeps no weights, so recording always takes the explicit
  /// one; on a CPU so does training with dropout (fast_dropout's masks keep thread shares
  /// reproducible, LibTorch's generator would not).
  void set_kernel(AttentionKernel kernel) { kernel_ = kernel; }
  AttentionKernel kernel() const { return kernel_; }

 private:
  bool fused_for(const at::Tensor& q) const;
  at::Tensor context(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     const at::Tensor& mask);         // [B, T, D], before the output projection
  at::Tensor split_heads(const at::Tensor& x) const;  // [B, T, D] -> [B, H, T, K]
  std::int64_t d_model_, heads_, head_dim_;
  bool self_attention_;
  torch::nn::Linear qkv_{nullptr};  // self-attention: D -> 3D
  torch::nn::Linear q_{nullptr};    // cross-attention: D -> D
  torch::nn::Linear kv_{nullptr};   // cross-attention: D -> 2D
  torch::nn::Linear out_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  bool record_ = false;
  AttentionKernel kernel_ = AttentionKernel::kAuto;
  at::Tensor last_weights_;
};
TORCH_MODULE(MultiHeadAttention);

}  // namespace ts
