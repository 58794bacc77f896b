// SPDX-License-Identifier: GPL-3.0-or-later
// The encoder-decoder Transformer: embeddings (scaled, optionally shared/tied), sinusoidal or
// learned positions, pre-LN or post-LN layers, and incremental decoding with cached keys/values.
//
// Shape legend: B batch, S source length, T target length, D model dim, H heads, V target vocab.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include "ts/model/attention.h"
#include "ts/infer/packed_model.h"
#include "ts/model/model_config.h"

namespace ts {

/// Attention weights of one forward pass, one tensor [B, H, Tq, Tk] (float, detached) per layer.
struct AttentionMaps {
  std::vector<at::Tensor> encoder_self;  // [B, H, S, S]
  std::vector<at::Tensor> decoder_self;  // [B, H, T, T] (zero above the diagonal)
  std::vector<at::Tensor> cross;         // [B, H, T, S]
  bool empty() const { return encoder_self.empty() && decoder_self.empty() && cross.empty(); }
};

class FeedForwardImpl : public torch::nn::Module {
 public:
  FeedForwardImpl(std::int64_t d_model, std::int64_t d_ff, double dropout);
  at::Tensor forward(const at::Tensor& x);

 private:
  torch::nn::Linear in_{nullptr}, out_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(FeedForward);

class EncoderLayerImpl : public torch::nn::Module {
 public:
  EncoderLayerImpl(const ModelConfig& config);
  at::Tensor forward(const at::Tensor& x, const at::Tensor& src_mask);  // [B, S, D]
  MultiHeadAttention self_attention{nullptr};

 private:
  bool pre_norm_;
  FeedForward ff_{nullptr};
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(EncoderLayer);

class DecoderLayerImpl : public torch::nn::Module {
 public:
  DecoderLayerImpl(const ModelConfig& config);
  /// Whole-sequence pass (training): x [B, T, D], memory [B, S, D].
  at::Tensor forward(const at::Tensor& x, const at::Tensor& memory, const at::Tensor& src_mask,
                     const at::Tensor& tgt_mask);
  /// forward() on the real rows of a right-padded target batch only: x [N, D] (rows.gather of the
  /// [B, T, D] input); returns forward()'s rows [N, D] (MultiHeadAttentionImpl::forward_rows).
  at::Tensor forward_rows(const at::Tensor& x, const RealRows& rows, const at::Tensor& memory,
                          const at::Tensor& src_mask, const at::Tensor& tgt_mask);
  /// One step: x [B, 1, D]; appends this step's keys/values to self_k/self_v ([B, H, t, K]),
  /// attends to the cached cross keys/values.
  at::Tensor step(const at::Tensor& x, at::Tensor& self_k, at::Tensor& self_v, const at::Tensor& cross_k,
                  const at::Tensor& cross_v, const at::Tensor& src_mask);
  MultiHeadAttention self_attention{nullptr}, cross_attention{nullptr};

 private:
  bool pre_norm_;
  FeedForward ff_{nullptr};
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr}, norm3_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(DecoderLayer);

class PackedTransformer;
class LexicalShortlist;

/// Incremental decoding state for a batch of hypotheses (beam search reorders it).
struct DecoderState {
  /// When set, TransformerImpl::step runs on these packed weights (CPU) instead of LibTorch ops, and
  /// the caches are in `packed_state`: src_mask holds the mask, cross_k/v and self_k/v stay empty.
  std::shared_ptr<const PackedTransformer> packed;
  std::shared_ptr<PackedDecoding> packed_state;
  at::Tensor src_mask;                       // [B, 1, 1, S]
  std::vector<at::Tensor> cross_k, cross_v;  // per layer [B, H, S, K]
  std::vector<at::Tensor> self_k, self_v;    // per layer [B, H, t, K]
  std::int64_t step = 0;
  bool record = false;
  /// Recorded per step when `record`: [layer][step] -> [B, H, 1, t] and [B, H, 1, S], each in the row
  /// order of its own step (see `parents`).
  std::vector<std::vector<at::Tensor>> self_weights, cross_weights;
  /// When recording: for each reorder k (made after step k), the old row of every new row. The
  /// recorded weights are not moved at each reorder (that was ~12·t small copies per step of a
  /// beam); attention() follows these back-pointers instead.
  std::vector<std::vector<std::int64_t>> parents;
  /// Lexical shortlist (DecodeConfig::shortlist) on LibTorch's step: an additive mask over the target
  /// vocabulary, 0 for the tokens a sentence may produce and -inf elsewhere, one row per source
  /// sentence like src_mask (undefined: every token). Packed decoding keeps its own
  /// (PackedDecoding's shortlist).
  at::Tensor shortlist_mask;

  /// Keeps rows `index` ([B'] long) of every cached tensor, e.g. to follow surviving beams (packed:
  /// PackedDecoding::reorder).
  void reorder(const at::Tensor& index);
  /// The recorded steps as full maps for row `row`: decoder self [1, H, T, T], cross [1, H, T, S].
  AttentionMaps attention(std::int64_t row) const;
};

class TransformerImpl : public torch::nn::Module {
 public:
  TransformerImpl(const ModelConfig& config, std::int64_t src_vocab, std::int64_t tgt_vocab, std::int64_t pad_id);

  /// Full teacher-forced pass: src [B, S], tgt_in [B, T] -> logits [B, T, V].
  at::Tensor forward(const at::Tensor& src, const at::Tensor& tgt_in);
  /// src [B, S] -> memory [B, S, D]; `src_mask` from padding_mask(src).
  at::Tensor encode(const at::Tensor& src, const at::Tensor& src_mask);
  /// tgt_in [B, T] -> decoder output [B, T, D] (before the output projection).
  at::Tensor decode(const at::Tensor& tgt_in, const at::Tensor& memory, const at::Tensor& src_mask);
  /// decode() for the real rows of tgt_in only ([N, D], the rows of `rows`, from RealRows::of(tgt_out,
  /// pad): tgt_in's real positions are tgt_out's): every row-wise layer skips the padded positions,
  /// 13-17% of the target positions in default-recipe runs. Training's loss on a CPU uses it.
  at::Tensor decode_rows(const at::Tensor& tgt_in, const at::Tensor& memory, const at::Tensor& src_mask,
                         const RealRows& rows);
  /// [.., D] -> [.., V] logits: linear(hidden, output_weight(), output_bias()) (ts/model/attention.h).
  at::Tensor project(const at::Tensor& hidden);
  /// The output layer's weight [V, D] (the target embedding's table where tied) and bias [V].
  const at::Tensor& output_weight() const { return output_weight_; }
  const at::Tensor& output_bias() const { return output_bias_; }

  /// Encodes once and prepares the cross-attention caches.
  DecoderState start(const at::Tensor& memory, const at::Tensor& src_mask, bool record_attention);
  /// Feeds tokens [B] at position state.step; returns log-probabilities [B, V].
  at::Tensor step(DecoderState& state, const at::Tensor& tokens);
  /// The model packed for CPU translation in `format` (ts/model/packed_transformer.h), made on first
  /// use and kept until the weights change (in-place update) or the model is put back into training
  /// mode. Null when the model cannot be packed (not fp32 on the CPU, or in training mode).
  std::shared_ptr<const PackedTransformer> packed(WeightFormat format);
  /// Module::train, which also drops the packed copies (training changes the weights).
  void train(bool on = true) override;
  /// The lexical shortlist that decoding with DecodeConfig::shortlist reads (null: none).
  void set_shortlist(std::shared_ptr<const LexicalShortlist> shortlist) { shortlist_ = std::move(shortlist); }
  const std::shared_ptr<const LexicalShortlist>& shortlist() const { return shortlist_; }

  /// Turns weight recording on/off in every attention module (off by default).
  void set_record_attention(bool on);
  /// Sets which kernels every attention module uses (AttentionKernel::kAuto by default).
  void set_attention_kernel(AttentionKernel kernel);
  /// The weights recorded during the last forward()/encode()/decode().
  AttentionMaps recorded_attention() const;

  const ModelConfig& config() const { return config_; }
  std::int64_t src_vocab_size() const { return src_vocab_; }
  std::int64_t tgt_vocab_size() const { return tgt_vocab_; }
  std::int64_t pad_id() const { return pad_id_; }
  std::int64_t max_length() const;
  std::int64_t parameter_count() const;
  /// True when positions are learned embeddings (false: the fixed sinusoidal table).
  bool learned_positions() const { return static_cast<bool>(learned_positions_); }
  /// The position table the model adds to its embeddings: [max_length(), D] (detached, CPU, float).
  at::Tensor position_table() const;
  /// The token embedding table of one side: [V, D] (detached, CPU, float; the same table for both
  /// sides when embeddings are shared).
  at::Tensor embedding_table(bool target) const;

 private:
  at::Tensor embed(torch::nn::Embedding& table, const at::Tensor& tokens, std::int64_t offset);
  at::Tensor positions(std::int64_t offset, std::int64_t length, const at::Device& device);

  ModelConfig config_;
  std::int64_t src_vocab_, tgt_vocab_, pad_id_;
  double embed_scale_;
  torch::nn::Embedding src_embed_{nullptr}, tgt_embed_{nullptr}, learned_positions_{nullptr};
  at::Tensor sinusoid_;  // [P, D] buffer for sinusoidal positions
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::ModuleList encoder_, decoder_;
  std::vector<EncoderLayer> encoder_layers_;
  std::vector<DecoderLayer> decoder_layers_;
  torch::nn::LayerNorm encoder_norm_{nullptr}, decoder_norm_{nullptr};  // pre-LN only
  at::Tensor output_weight_, output_bias_;
  std::map<WeightFormat, std::shared_ptr<const PackedTransformer>> packed_;
  std::shared_ptr<const LexicalShortlist> shortlist_;
};
TORCH_MODULE(Transformer);

/// The sinusoidal table of "Attention Is All You Need": [positions, d_model].
at::Tensor sinusoidal_table(std::int64_t positions, std::int64_t d_model);

/// An independent copy of `model` (same configuration, weights and buffers) on `device`, in eval
/// mode: a snapshot that another thread can decode with while the original keeps training.
/// Call it where the original is not being updated (e.g. TrainerOptions::between_steps).
Transformer copy_model(Transformer& model, const at::Device& device);

/// Builds a model, rejecting impossible combinations with a ConfigError.
Transformer build_model(const ModelConfig& config, std::int64_t src_vocab, std::int64_t tgt_vocab, std::int64_t pad_id,
                        bool shared_vocab);

}  // namespace ts
