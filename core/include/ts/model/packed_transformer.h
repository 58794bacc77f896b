// SPDX-License-Identifier: GPL-3.0-or-later
// A Transformer packed for translating one sentence at a time on the CPU: the encoder pass, the
// cross-attention projections and each incremental decoder step run as plain loops over packed
// weights (PackedLinear), about a dozen calls per layer instead of ~25 LibTorch operations, each with
// its dispatch overhead, and without BLAS copying every weight matrix into its packed layout for a
// product with a few rows.
//
// It fills and reads the same DecoderState as TransformerImpl (cached keys/values [B, H, t, K], the
// cross keys/values, the source mask, the recorded attention) and returns the same log-probabilities,
// so every search strategy runs unchanged on either. With fp32 weights the results equal LibTorch's up
// to the order of floating-point sums; bf16 and int8 weights trade a little accuracy for less memory
// traffic (see docs/benchmarks.md, "Interactive translation latency").
#pragma once

#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ts/model/packed_linear.h"

namespace ts {

class TransformerImpl;
struct DecoderState;

class PackedTransformer {
 public:
  /// Packs every matrix of `model` (fp32 weights on the CPU). Throws std::invalid_argument when it
  /// cannot (another dtype or device, int8 packing of a weight that is not finite).
  PackedTransformer(const TransformerImpl& model, WeightFormat format);

  /// True while the model still holds the weights that were packed (no in-place update since).
  bool current() const;
  WeightFormat format() const { return format_; }
  /// Bytes of packed weights: the encoder's (read once per sentence) and the decoder's (read at every
  /// step, the output projection included; the cross-attention keys/values once per sentence).
  std::size_t encoder_bytes() const;
  std::size_t decoder_bytes() const;
  /// The output projection [target vocabulary, D], packed (DecoderState::shortlist_output takes rows
  /// of it).
  const PackedLinear& output() const { return output_; }

  /// TransformerImpl::encode: src [B, S] (CPU, long), src_mask [B, 1, 1, S] -> memory [B, S, D].
  /// When `attention` is given it receives the encoder self-attention weights, [B, H, S, S] per layer.
  at::Tensor encode(const at::Tensor& src, const at::Tensor& src_mask, std::vector<at::Tensor>* attention) const;
  /// Fills what TransformerImpl::start does: the cross-attention keys and values of `memory` [B, S, D]
  /// per layer, and the caches' slots. Set state.packed to this object so that every step runs here.
  void start(DecoderState& state, const at::Tensor& memory, const at::Tensor& src_mask, bool record_attention) const;
  /// TransformerImpl::step: feeds tokens [B] at position state.step; returns log-probabilities [B, V]
  /// with padding and BOS excluded (with a shortlist, each row normalised over its own sentence's list
  /// alone, in the list's order, and -inf elsewhere: a sentence scores alike alone or in a batch).
  at::Tensor step(DecoderState& state, const at::Tensor& tokens) const;

 private:
  struct Norm {
    std::vector<float> weight, bias;
  };
  struct EncoderLayer {
    PackedLinear qkv, out, fc1, fc2;
    Norm norm1, norm2;
  };
  struct DecoderLayer {
    PackedLinear qkv, self_out, cross_q, cross_kv, cross_out, fc1, fc2;
    Norm norm1, norm2, norm3;
  };
  WeightFormat format_;
  bool pre_norm_;
  std::int64_t d_model_, heads_, d_ff_, tgt_vocab_, pad_id_;
  float embed_scale_;
  at::Tensor src_embedding_, tgt_embedding_, positions_;  // fp32 [V, D] and [P, D]
  std::vector<EncoderLayer> encoder_;
  std::vector<DecoderLayer> decoder_;
  Norm encoder_norm_, decoder_norm_;  // pre-LN only
  PackedLinear output_;
  // What was packed, to notice later in-place updates (training, loading weights).
  std::vector<at::Tensor> sources_;
  std::vector<std::int64_t> versions_;
};

}  // namespace ts
