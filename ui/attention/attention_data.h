// SPDX-License-Identifier: GPL-3.0-or-later
// The attention maps of one translated sentence, unpacked from the translator's JSON into plain
// matrices once (so the explorer's views never walk JSON while drawing), with the token labels and
// axis titles each kind of attention is read with.
#pragma once

#include <vector>

#include <QString>
#include <QStringList>
#include <QVector>

#include <nlohmann/json_fwd.hpp>

#include "ts/analysis/attention_stats.h"

namespace ts::ui {

class AttentionData {
 public:
  AttentionData() = default;
  /// `attention` is TranslationResult::attention: {"source_tokens", "target_tokens",
  /// "encoder_self"/"decoder_self"/"cross": [layer][head][query][key]}. Missing kinds stay empty;
  /// null weights (NaN from a diverged model) read as 0. The fallback tokens are used when the
  /// JSON has none.
  static AttentionData fromJson(const nlohmann::json& attention, const QStringList& source_fallback = {},
                                const QStringList& target_fallback = {});

  bool isEmpty() const;
  int layers(AttentionKind kind) const;
  /// Heads of the first layer (every layer of one kind has the same number).
  int heads(AttentionKind kind) const;
  /// One head, or the average of the layer's heads for head == -1; empty when out of range.
  AttentionMatrix matrix(AttentionKind kind, int layer, int head) const;
  const std::vector<AttentionMatrix>& layerHeads(AttentionKind kind, int layer) const;

  const QStringList& sourceTokens() const { return source_tokens_; }
  const QStringList& targetTokens() const { return target_tokens_; }
  /// Query labels: source tokens (encoder), decoder inputs "<s>", y1 … y(T-1) (decoder self:
  /// query t is the token fed at step t, which predicts target token t), target tokens (cross).
  QStringList rowLabels(AttentionKind kind) const;
  /// Key labels: source tokens (encoder, cross), decoder inputs (decoder self).
  QStringList columnLabels(AttentionKind kind) const;

  /// True for the cells the causal mask hides (decoder self-attention, key after query).
  static bool isMasked(AttentionKind kind, int row, int column) {
    return kind == AttentionKind::DecoderSelf && column > row;
  }
  static QString kindName(AttentionKind kind);
  static QString rowTitle(AttentionKind kind);
  static QString columnTitle(AttentionKind kind);
  /// The JSON key of a kind: "encoder_self", "decoder_self", "cross".
  static const char* jsonKey(AttentionKind kind);

 private:
  static int index(AttentionKind kind) { return static_cast<int>(kind); }
  std::vector<std::vector<AttentionMatrix>> maps_[3];  // [kind][layer][head]
  QStringList source_tokens_, target_tokens_;
};

/// A matrix as the heatmap takes it.
QVector<QVector<double>> to_qvector(const AttentionMatrix& m);

}  // namespace ts::ui
