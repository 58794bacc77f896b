// SPDX-License-Identifier: GPL-3.0-or-later
// Greedy decoding and beam search for many sentences at once on a PackedModel, without LibTorch:
// what `translate`, `compare`, the Compare panel and validation run when the weights are packed
// (decode_batches in ts/decode/translator.h comes here), and what the LibTorch-free translator
// (app/translate) runs.
//
// Sentences go in length-sorted batches; every live hypothesis of a batch shares one decoder step; a
// finished sentence (greedy) or a finished search (beam) leaves the batch. Each sentence's output is
// the one decoding it alone gives (the same candidates, ties and stopping rule as beam_search and
// greedy_search in ts/decode/search.h): the kernels compute each row on its own.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ts/decode/decode_config.h"
#include "ts/infer/packed_model.h"

namespace ts {

/// A decoded output's tokens and scores (ts::Hypothesis adds attention and the beam tree's node).
struct HypothesisTokens {
  std::vector<std::int64_t> ids;       // target ids, without BOS and EOS
  std::vector<float> token_log_probs;  // one per generated token, EOS included when it was produced
  double log_prob = 0;                 // sum of token_log_probs
  double score = 0;                    // log_prob normalised by the length penalty (beam) or log_prob
  bool finished = false;               // ended with EOS (false: cut at the length limit)
};

/// GNMT's length penalty ((5 + length) / 6)^alpha; 1 for alpha <= 0.
double gnmt_length_penalty(std::size_t length, double alpha);

/// Maximum output length for a source of `src_len` tokens under `config` (a * len + b, or
/// 2 * len + 10 when both are 0), below the model's `max_length` positions.
std::int64_t output_length_limit(const DecodeConfig& config, std::int64_t src_len, std::int64_t max_length);

/// A source sentence (ids ending with EOS) cut to the model's `max_length` positions, EOS kept.
std::vector<std::int64_t> fit_to_positions(std::vector<std::int64_t> src, std::int64_t max_length);

/// A decoder that runs one step for every live hypothesis row of a batch (ts::PackedDecoding on a
/// PackedModel, or LibTorch's DecoderState): the searches below run on either.
class StepDecoder {
 public:
  virtual ~StepDecoder() = default;
  /// Target vocabulary size and the model's positions.
  virtual std::int64_t vocab() const = 0;
  virtual std::int64_t max_length() const = 0;
  /// Feeds one token per row; writes log-probabilities [rows, vocab()] (resized to that).
  virtual void step(const std::vector<std::int64_t>& tokens, FloatScratch& log_probs) = 0;
  /// Keeps rows `rows` (indices into the current rows), in that order.
  virtual void reorder(const std::vector<std::int64_t>& rows) = 0;
};

/// Greedy decoding of a batch whose sources have `lengths` tokens (the decoder holds one row per
/// source): one output per source; a finished sentence leaves the batch.
std::vector<HypothesisTokens> greedy_steps(StepDecoder& decoder, const std::vector<std::int64_t>& lengths,
                                           const DecodeConfig& config);
/// Beam search of a batch whose sources have `lengths` tokens (the decoder holds one row per source):
/// each source's n-best (config.nbest), best first, as beam_search gives it for the source alone.
std::vector<std::vector<HypothesisTokens>> beam_steps(StepDecoder& decoder, const std::vector<std::int64_t>& lengths,
                                                      const DecodeConfig& config);

/// One batch (each source ids ending with EOS): the best output of each, in the batch's order, by
/// greedy decoding or beam search (config.mode; sampling is refused with std::invalid_argument).
/// With `shortlists` (one sorted list of target ids per source), only those are scored.
std::vector<HypothesisTokens> decode_packed_batch(const PackedModel& model,
                                                  const std::vector<std::vector<std::int64_t>>& batch,
                                                  const DecodeConfig& config,
                                                  const std::vector<std::vector<std::int64_t>>* shortlists = nullptr);

/// Hypothesis rows a CPU decodes in one step where nobody names a batch: a batch's rows share each
/// weight read, but the scores ([rows, vocabulary]) and the key/value caches grow with them, and past
/// a few dozen rows they no longer stay in the core's caches. On an AMD EPYC Zen 5 (2 threads,
/// 2026-12-01) the 1,000 dev pairs of two German-English models decoded fastest in batches of 8 to
/// 32 sentences greedily and 4 to 16 with a beam of 4, and 10-40% slower in batches of 64
/// (docs/benchmarks.md, "Issue 35's translation targets on an AMD EPYC Zen 5").
inline constexpr int kCpuDecodeRows = 32;
/// Sentences a CPU decodes together by default: kCpuDecodeRows hypothesis rows, so 32 greedily and 8
/// with a beam of 4 (at least 1).
std::size_t cpu_decode_batch(const DecodeConfig& config);

/// Decodes one batch of sources: one output each, in the batch's order.
using BatchDecode = std::function<std::vector<HypothesisTokens>(const std::vector<std::vector<std::int64_t>>& batch)>;

/// Every source through `decode`, in input order: length-sorted batches of `batch_size`, shared out
/// among `threads` threads (each decodes whole batches, longest first, on one core; `decode` must
/// allow that). `progress` hears the sentences done after each batch, from whichever thread decoded
/// it, one call at a time; an exception it (or decoding) throws stops the others at their next batch
/// and comes out of here.
std::vector<HypothesisTokens> decode_in_batches(const std::vector<std::vector<std::int64_t>>& sources,
                                                std::size_t batch_size, int threads,
                                                const std::function<void(std::size_t)>& progress,
                                                const BatchDecode& decode);

/// Each source's lexical shortlist (sorted target ids), asked for one source at a time.
using ShortlistOf = std::function<std::vector<std::int64_t>(const std::vector<std::int64_t>& source)>;

/// Every source on the packed model, in input order (decode_in_batches with decode_packed_batch; with
/// `shortlist`, each source's list).
std::vector<HypothesisTokens> decode_packed(const PackedModel& model,
                                            const std::vector<std::vector<std::int64_t>>& sources,
                                            const DecodeConfig& config, std::size_t batch_size, int threads,
                                            const std::function<void(std::size_t)>& progress = {},
                                            const ShortlistOf& shortlist = {});

}  // namespace ts
