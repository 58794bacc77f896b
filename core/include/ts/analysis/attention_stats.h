// SPDX-License-Identifier: GPL-3.0-or-later
// Torch-free statistics of attention maps for the attention explorer: the average of a layer's
// heads, row entropies, and a one-line "what this head looks at" summary (diagonal, previous
// token, first token, </s>, broad; alignment or reordering for cross-attention).
//
// A matrix is rows = queries, columns = keys, as the translator's attention JSON stores one head
// ([query][key]). Rows may be ragged (missing entries read as 0); negative and non-finite weights
// read as 0 (a diverged model's NaN arrives as null/NaN). Rows are renormalised by their sum before
// entropies are taken, so float rounding or a truncated row does not distort them.
#pragma once

#include <string>
#include <vector>

namespace ts {

using AttentionMatrix = std::vector<std::vector<double>>;

enum class AttentionKind {
  EncoderSelf,  // [S][S]; the last key is the source "</s>"
  DecoderSelf,  // [T][T], causal: row i only sees keys 0..i (key 0 is "<s>")
  Cross,        // [T][S]: target queries over source keys; the last key is the source "</s>"
};

enum class AttentionPattern {
  Diagonal,       // self: each token attends to itself
  PreviousToken,  // self: to the token before it
  NextToken,      // encoder self: to the token after it
  FirstToken,     // self: to the first token ("<s>" in the decoder)
  EndOfSentence,  // encoder self and cross: to the last key, "</s>"
  Broad,          // spread out: high normalised entropy
  Alignment,      // cross: peaked, and the peak moves forward through the source
  Reordering,     // cross: peaked, but the peak jumps backwards often
  Mixed,          // no pattern reaches the threshold
  Undetermined,   // nothing to judge (empty, or only rows with a single visible key)
};

/// Long name: "previous token", "same token (diagonal)", "end of sentence (</s>)", ...
std::string attention_pattern_name(AttentionPattern pattern);
/// Caption-sized name: "prev", "diag", "next", "first", "eos", "broad", "align", "reord", "mixed", "n/a".
std::string attention_pattern_short_name(AttentionPattern pattern);

struct AttentionSummaryOptions {
  /// A positional pattern (diagonal, previous, ..., alignment) must explain at least this mean
  /// weight to be chosen; below it the head is "mixed".
  double min_strength = 0.4;
  /// "broad" competes (with its mean normalised entropy as strength) only from this entropy on.
  double broad_entropy = 0.85;
  /// Cross-attention: a peaked head whose argmax moves forward in at least this share of
  /// consecutive rows is an alignment; below it, reordering.
  double monotone_share = 0.75;
};

struct HeadSummary {
  AttentionPattern pattern = AttentionPattern::Undetermined;
  /// The mean weight the pattern explains (0..1); for Broad the mean normalised entropy; for Mixed
  /// the strongest candidate's strength.
  double strength = 0;
  double mean_entropy = 0;        // nats, over the rows with at least one visible weight
  double normalized_entropy = 0;  // entropy / log(visible keys), over rows with >= 2 visible keys
  /// Mean of the row maxima (how peaked the rows are), over the judged rows.
  double peakedness = 0;
  /// Cross-attention: share of consecutive rows whose argmax does not move backwards (1 when
  /// there is a single row); -1 for self-attention.
  double monotonicity = -1;
  /// Every candidate's strength (for tooltips and tests), in the order they were considered.
  std::vector<std::pair<AttentionPattern, double>> candidates;
  std::string description;  // "previous token (71%)", "alignment (88%, monotone 100%)", "mixed (best: first token 31%)"
  std::string caption;      // "prev 71%"
};

/// Number of columns (keys): the longest row's length.
std::size_t attention_columns(const AttentionMatrix& m);

/// Element-wise mean of the heads (ragged heads are padded with 0 to the largest shape). Empty
/// when `heads` is empty.
AttentionMatrix average_heads(const std::vector<AttentionMatrix>& heads);

/// Shannon entropy in nats of each row (renormalised by its sum; 0 for a row whose sum is 0). With
/// `causal`, row i only counts keys 0..i.
std::vector<double> row_entropies(const AttentionMatrix& m, bool causal = false);
/// Each row's entropy divided by log(number of keys the row can see): 1 for uniform rows, 0 for
/// one-hot rows and for rows that see a single key.
std::vector<double> normalized_row_entropies(const AttentionMatrix& m, bool causal = false);
/// Mean of row_entropies over rows with a positive sum (0 when there is none).
double mean_entropy(const AttentionMatrix& m, bool causal = false);
/// Mean of normalized_row_entropies over rows that see at least two keys and have a positive sum
/// (0 when there is none).
double mean_normalized_entropy(const AttentionMatrix& m, bool causal = false);

/// What one head (or a head average) looks at. Decoder self-attention only considers the causal
/// part of each row; rows that can see a single key tell nothing and are skipped.
HeadSummary summarize_head(const AttentionMatrix& m, AttentionKind kind, const AttentionSummaryOptions& options = {});

}  // namespace ts
