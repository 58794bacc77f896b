// SPDX-License-Identifier: GPL-3.0-or-later
// Decoding strategies behind one interface: greedy (batched), beam search and sampling.
// All return plain Hypothesis structs with ids, scores and, on request, attention per layer/head.
// Decoding is incremental: the encoder runs once and the decoder caches keys/values per layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "ts/decode/beam_node_state.h"
#include "ts/decode/decode_config.h"
#include "ts/infer/batch_search.h"
#include "ts/model/transformer.h"

namespace ts {

/// A decoded output: its tokens and scores (HypothesisTokens), and what the one-sentence searches add.
struct Hypothesis : HypothesisTokens {
  AttentionMaps attention;  // filled when attention was requested: [1, H, ., .] per layer
  std::int64_t node = -1;   // beam search: this hypothesis's last node in the BeamTree
  Hypothesis() = default;
  explicit Hypothesis(HypothesisTokens tokens) : HypothesisTokens(std::move(tokens)) {}
};

/// The model's confidence in a hypothesis: its mean token log-probability (EOS included when
/// produced); 0 for an empty one.
inline double mean_token_log_prob(const HypothesisTokens& h) {
  return h.token_log_probs.empty() ? 0.0 : h.log_prob / static_cast<double>(h.token_log_probs.size());
}

/// One candidate that beam search scored: the root (BOS), then one node per candidate extension.
struct BeamNode {
  std::int64_t parent = -1;  // index into BeamTree::nodes; -1 for the root
  std::int64_t token = 0;    // target id (EOS for a finished hypothesis)
  std::string text;          // the token as text (filled by Translator; "<s>" for the root)
  std::int64_t step = 0;     // 0 for the root, t + 1 for the token chosen at decoding step t
  float token_log_prob = 0;  // log P(token | prefix)
  double log_prob = 0;       // cumulative: parent's log_prob + token_log_prob
  double score = 0;          // finished: log_prob / length penalty; otherwise log_prob
  BeamNodeState state = BeamNodeState::kKept;
  int rank = -1;  // position in the returned n-best (0 = best), -1 otherwise
};

/// Every hypothesis beam search considered, as a tree rooted at node 0 (parents before children).
struct BeamTree {
  std::vector<BeamNode> nodes;
  /// Nodes from the root to the leaf of n-best entry `rank` (empty when there is none).
  std::vector<std::int64_t> path(int rank) const;
};

/// The packed copy of `model` (ts/model/packed_transformer.h) that decoding `rows` hypotheses at a
/// time under `config` runs on, or null for LibTorch's operations. On the CPU, bf16 and int8 weights
/// are always packed, fp32 weights up to 16 rows (larger batches are matrix-matrix products, which
/// LibTorch's BLAS does as well); `libtorch` weights, a GPU, a model in training mode or one whose
/// weights cannot be packed (not fp32) get null. Beam search counts one sentence's beam: batched beam
/// search runs each sentence on the kernels it would run on alone.
std::shared_ptr<const PackedTransformer> packed_for(Transformer& model, const DecodeConfig& config, std::int64_t rows);

/// With config.shortlist and a lexical shortlist attached to the model (TransformerImpl::set_shortlist):
/// each source's list of target ids (padding ignored); otherwise an empty function. Throws
/// std::invalid_argument when the shortlist was made for other vocabularies.
ShortlistOf sentence_shortlists(Transformer& model, const DecodeConfig& config);

/// Maximum output length for a source of `src_len` tokens under `config` and the model's limit.
std::int64_t max_output_length(const DecodeConfig& config, std::int64_t src_len, const Transformer& model);

/// Greedy decoding of a padded batch src [B, S] (validation uses this); one hypothesis per row.
std::vector<Hypothesis> greedy_search(Transformer& model, const at::Tensor& src, const DecodeConfig& config,
                                      bool record_attention = false);

/// Beam search for one source sentence (ids ending with EOS); returns the n-best, best first.
/// When `tree` is given it receives every candidate scored on the way (see BeamTree).
std::vector<Hypothesis> beam_search(Transformer& model, const std::vector<std::int64_t>& src,
                                    const DecodeConfig& config, bool record_attention = false,
                                    BeamTree* tree = nullptr);

/// Beam search for many source sentences at once (each ids ending with EOS): the encoder runs on
/// a padded batch, and every live hypothesis of every sentence shares one decoder step; a sentence
/// leaves the batch when it is done. Each sentence's n-best is what beam_search returns for it alone
/// (the same candidates, ties and stopping rule; the same weights: the choice of packed or LibTorch
/// kernels follows the beam width, not the batch). No attention and no tree. In input order.
std::vector<std::vector<Hypothesis>> beam_search_batched(Transformer& model,
                                                         const std::vector<std::vector<std::int64_t>>& sources,
                                                         const DecodeConfig& config);

/// Draws one token per row of `log_probs` [N, V] (CPU): temperature > 0, then top-k (0 = off) and
/// top-p (1 = off) filtering, from `generator`. Shared by sample_search and the language models.
at::Tensor sample_tokens(const at::Tensor& log_probs, double temperature, int top_k, double top_p,
                         at::Generator& generator);

/// Samples config.nbest outputs (temperature, top-k, top-p), best log-probability first.
std::vector<Hypothesis> sample_search(Transformer& model, const std::vector<std::int64_t>& src,
                                      const DecodeConfig& config, bool record_attention = false);

/// Dispatches on config.mode (greedy, beam or sampling) for one sentence.
/// `tree` is filled by beam search only.
std::vector<Hypothesis> search(Transformer& model, const std::vector<std::int64_t>& src, const DecodeConfig& config,
                               bool record_attention = false, BeamTree* tree = nullptr);

}  // namespace ts
