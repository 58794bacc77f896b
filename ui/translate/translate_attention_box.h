// SPDX-License-Identifier: GPL-3.0-or-later
// The Translate panel's cross-attention view: which source tokens each output token looked at, as
// a heatmap, for one decoder layer and one head (or the average of the layer's heads).
#pragma once

#include <QGroupBox>

class QComboBox;

namespace ts::ui {

class AttentionHeatmap;
struct TranslationResult;

class TranslateAttentionBox : public QGroupBox {
  Q_OBJECT
 public:
  explicit TranslateAttentionBox(QWidget* parent = nullptr);

  AttentionHeatmap* heatmap() const { return heatmap_; }
  /// The decoder layer (0-based) and head (-1 = average of heads) chosen.
  int layer() const;
  int head() const;
  /// Offers the layers and heads of the model that made `r`, keeping the choice when they match.
  void followModel(const TranslationResult& r);
  /// Draws the chosen layer and head of `r`'s cross-attention, or says why there is none.
  void showAttention(const TranslationResult& r);

 Q_SIGNALS:
  /// The user chose another layer or head.
  void choiceChanged();

 private:
  QComboBox* layer_ = nullptr;
  QComboBox* head_ = nullptr;
  AttentionHeatmap* heatmap_ = nullptr;
};

}  // namespace ts::ui
