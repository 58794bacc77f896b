// SPDX-License-Identifier: GPL-3.0-or-later
// A TransformerImpl packed for translating a few rows at a time on the CPU: LibTorch's face of
// PackedModel (ts/infer/packed_model.h), which does the work without LibTorch. It reads the live
// model's weights, notices when training has changed them since, and fills and reads the same
// DecoderState as TransformerImpl (its packed caches in DecoderState::packed_state; the recorded
// attention as tensors), returning the same log-probabilities, so every search strategy runs
// unchanged on either. With fp32 weights the results equal LibTorch's up to the order of
// floating-point sums; bf16 and int8 weights trade a little accuracy for less memory traffic (see
// docs/benchmarks.md, "Interactive translation latency").
#pragma once

#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ts/infer/packed_model.h"

namespace ts {

class TransformerImpl;
struct DecoderState;

/// The shape and named fp32 weights PackedModel reads, taken from a live model (the views point into
/// its tensors: valid while they are). Throws std::invalid_argument naming a tensor that is not fp32
/// on the CPU.
PackedModelShape packed_shape(const TransformerImpl& model);

class PackedTransformer {
 public:
  /// Packs every matrix of `model` (fp32 weights on the CPU). Throws std::invalid_argument when it
  /// cannot (another dtype or device, int8 packing of a weight that is not finite).
  PackedTransformer(const TransformerImpl& model, WeightFormat format);

  /// True while the model still holds the weights that were packed (no in-place update since).
  bool current() const;
  WeightFormat format() const { return model_->format(); }
  std::size_t encoder_bytes() const { return model_->encoder_bytes(); }
  std::size_t decoder_bytes() const { return model_->decoder_bytes(); }
  const PackedLinear& output() const { return model_->output(); }
  /// The LibTorch-free model this wraps (the batched translator runs on it directly).
  const PackedModel& model() const { return *model_; }

  /// TransformerImpl::encode: src [B, S] (CPU, long) -> memory [B, S, D]; the mask is the padding of
  /// `src`. When `attention` is given it receives the encoder self-attention weights, [B, H, S, S]
  /// per layer.
  at::Tensor encode(const at::Tensor& src, std::vector<at::Tensor>* attention) const;
  /// Fills what TransformerImpl::start does for the packed step: the cross-attention keys and values
  /// of `memory` [B, S, D] (in state.packed_state), with src_mask [B, 1, 1, S]. Set state.packed to
  /// this object so that every step runs here.
  void start(DecoderState& state, const at::Tensor& memory, const at::Tensor& src_mask, bool record_attention) const;
  /// TransformerImpl::step: feeds tokens [B] at position state.step; returns log-probabilities [B, V]
  /// with padding and BOS excluded (with a shortlist, each row normalised over its own sentence's list
  /// alone, in the list's order, and -inf elsewhere: a sentence scores alike alone or in a batch).
  at::Tensor step(DecoderState& state, const at::Tensor& tokens) const;

 private:
  std::shared_ptr<const PackedModel> model_;
  // What was packed, to notice later in-place updates (training, loading weights).
  std::vector<at::Tensor> sources_;
  std::vector<std::int64_t> versions_;
};

}  // namespace ts
