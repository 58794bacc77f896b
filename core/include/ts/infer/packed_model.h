// SPDX-License-Identifier: GPL-3.0-or-later
// A Transformer packed for translating on the CPU, without LibTorch: the encoder pass, the
// cross-attention projections and each incremental decoder step run as plain loops over packed
// weights (PackedLinear), about a dozen calls per layer instead of ~25 LibTorch operations, each with
// its dispatch overhead, and without BLAS copying every weight matrix into its packed layout for a
// product with a few rows.
//
// It is the one implementation of packed decoding: the LibTorch side (ts/model/packed_transformer.h)
// wraps it for the search strategies that run on tensors, and the LibTorch-free translator
// (ts/infer/batch_search.h, app/translate) runs on it directly, so a process that only translates
// does not load LibTorch (half a second of start-up on Debian's build).
//
// Weights are looked up by TransformerImpl's parameter and buffer names ("encoder.0.ff.fc1.weight"),
// from the live model or from a translator file (ts/infer/translator_file.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ts/infer/packed_linear.h"

namespace ts {

/// The architecture a packed model has (from TransformerImpl's ModelConfig and vocabularies).
struct PackedModelShape {
  int encoder_layers = 0, decoder_layers = 0;
  std::int64_t d_model = 0, heads = 0, d_ff = 0;
  std::int64_t src_vocab = 0, tgt_vocab = 0, pad_id = 0;
  bool pre_norm = false;
  float embed_scale = 1.0F;  // sqrt(d_model) when the model scales its embeddings
};

/// One fp32 tensor, row-major; null data when the model has none of that name.
struct WeightView {
  const float* data = nullptr;
  std::vector<std::int64_t> shape;
};
using WeightLookup = std::function<WeightView(const std::string& name)>;

/// Floats that are always overwritten before they are read: the decoder's key/value caches. Growing
/// keeps neither the old values nor zeroes the new ones (std::vector's resize does both), and the
/// capacity grows by half again, so a cache grown one position a step reallocates rarely. A batched
/// beam search of 128 sentences spent about a third of its time zeroing and first touching the pages
/// of the caches and scores that std::vector grew (docs/benchmarks.md, "Issue 35's translation targets
/// on an AMD EPYC Zen 5", 2026-12-01).
class FloatScratch {
 public:
  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  /// `n` floats, their values unspecified.
  void resize_discarding(std::size_t n) {
    if (n > capacity_) {
      capacity_ = std::max(n, capacity_ + capacity_ / 2);
      data_.reset(new float[capacity_]);  // default-initialised: not zeroed
    }
    size_ = n;
  }

 private:
  std::unique_ptr<float[]> data_;
  std::size_t size_ = 0, capacity_ = 0;
};

/// The decoder's state for one batch on a PackedModel: the cross-attention keys and values of each
/// source row, the self-attention caches of each hypothesis row, and where each row reads them.
struct PackedDecoding {
  std::int64_t sources = 0, src_len = 0;             // rows and length of the encoded batch
  std::vector<float> src_mask;                       // [sources, S]: 0, or -inf at padding
  std::vector<std::vector<float>> cross_k, cross_v;  // per layer [sources, H, S, K]
  std::vector<FloatScratch> self_k, self_v;          // per layer [rows of the last step, H, step, K]
  std::vector<FloatScratch> spare_k, spare_v;        // per layer, the step before's caches: the next ones' room
  std::int64_t step = 0;                             // target positions fed so far
  /// reorder() moves no cache but records where each new row comes from, and the next step reads
  /// through these. `cross_rows[r]`: the source row hypothesis row r reads (empty: row r);
  /// `self_rows[r]`: the cache row the next step extends for row r (empty: row r).
  std::vector<std::int64_t> cross_rows, self_rows;
  /// Lexical shortlist (PackedModel::set_shortlist): only `shortlist_ids`, the union of the batch's
  /// lists (sorted target ids), are scored, with those rows of the output layer; each row is
  /// normalised over its own sentence's list (`shortlist_positions`: per source row, the positions of
  /// its list in the union). Empty: the whole vocabulary.
  std::vector<std::int64_t> shortlist_ids;
  std::shared_ptr<const PackedLinear> shortlist_output;
  std::vector<std::vector<std::int64_t>> shortlist_positions;

  /// Back to the state of no batch, keeping the caches' memory for the next one (PackedModel::start).
  void clear();
  /// Keeps hypothesis rows `rows` (each an index into the current rows), in that order.
  void reorder(const std::vector<std::int64_t>& rows);
  /// The source row hypothesis row `r` reads.
  std::int64_t source_row(std::int64_t r) const {
    return cross_rows.empty() ? r : cross_rows[static_cast<std::size_t>(r)];
  }
};

/// Attention weights one call recorded, per layer, row-major: the encoder's self-attention
/// [B, H, S, S]; a decoder step's self-attention [B, H, 1, step + 1] and cross-attention [B, H, 1, S].
struct RecordedAttention {
  std::vector<std::vector<float>> self, cross;
};

class PackedModel {
 public:
  /// Packs every matrix `weights` names for `shape` in `format`. Throws std::invalid_argument naming
  /// the tensor when one is missing or has another shape, or when int8 packing meets a weight that is
  /// not finite.
  PackedModel(const PackedModelShape& shape, const WeightLookup& weights, WeightFormat format);

  const PackedModelShape& shape() const { return shape_; }
  WeightFormat format() const { return format_; }
  /// Target positions the model has (rows of its position table).
  std::int64_t max_length() const { return positions_rows_; }
  /// Bytes of packed weights: the encoder's (read once per sentence) and the decoder's (read at every
  /// step, the output projection included; the cross-attention keys/values once per sentence).
  std::size_t encoder_bytes() const;
  std::size_t decoder_bytes() const;
  /// The output projection [target vocabulary, D], packed.
  const PackedLinear& output() const { return output_; }

  /// src [B, S] token ids (padding = shape().pad_id) -> memory [B, S, D]. With `attention`, the
  /// encoder's self-attention weights per layer [B, H, S, S]. Throws std::out_of_range for an id
  /// outside the source vocabulary, std::invalid_argument for more positions than the model has.
  std::vector<float> encode(const std::int64_t* src, std::int64_t B, std::int64_t S,
                            std::vector<std::vector<float>>* attention = nullptr) const;
  /// The additive padding mask of src [B, S]: 0, or -inf where the id is padding.
  std::vector<float> padding_mask(const std::int64_t* src, std::int64_t B, std::int64_t S) const;
  /// Prepares `state` for decoding a batch of B sources of S positions: its padding mask [B, S] and
  /// the cross-attention keys and values of `memory` [B, S, D] per layer. One hypothesis row per
  /// source.
  void start(PackedDecoding& state, const float* memory, const float* mask, std::int64_t B, std::int64_t S) const;
  /// Each source row's list of target ids it may produce (sorted), for the steps that follow.
  void set_shortlist(PackedDecoding& state, const std::vector<std::vector<std::int64_t>>& lists) const;
  /// Feeds tokens [B] (one per hypothesis row) at position state.step; writes log-probabilities
  /// [B, V] to `log_probs` (room for B * V floats), padding and BOS -inf (with a shortlist, -inf
  /// outside each row's list). With `record`, the step's attention weights.
  void step(PackedDecoding& state, const std::int64_t* tokens, std::int64_t B, float* log_probs,
            RecordedAttention* record = nullptr) const;

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
  PackedModelShape shape_;
  WeightFormat format_;
  std::int64_t positions_rows_ = 0;
  std::vector<float> src_embedding_, tgt_embedding_, positions_;  // [V, D] and [P, D]
  std::vector<EncoderLayer> encoder_;
  std::vector<DecoderLayer> decoder_;
  Norm encoder_norm_, decoder_norm_;  // pre-LN only
  PackedLinear output_;
};

/// Rows of `n` logits in place -> log-probabilities (the maximum subtracted first); entries that are
/// -inf stay so. Vectorised where the CPU has AVX-512.
void log_softmax_rows(float* x, std::int64_t rows, std::int64_t n);

}  // namespace ts
