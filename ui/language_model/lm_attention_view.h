// SPDX-License-Identifier: GPL-3.0-or-later
// The Attention tab of the language-model window: the causal self-attention recorded over the last
// generation, one layer and head at a time (or the mean of the heads), as a heatmap of positions
// against the earlier positions they attend to.
#pragma once

#include <QWidget>

#include "services/lm_types.h"

class QComboBox;
class QLabel;

namespace ts::ui {

class AttentionHeatmap;
class LmService;

class LmAttentionView : public QWidget {
  Q_OBJECT
 public:
  /// `service`: the model that generated (asked for its kind and context length).
  explicit LmAttentionView(const LmService* service, QWidget* parent = nullptr);

  /// Takes the attention of a generation (empty: none recorded) and shows its first layer and head.
  void setAttention(const LmAttention& attention);
  const LmAttention& attention() const { return attention_; }
  AttentionHeatmap* heatmap() const { return heatmap_; }

 private:
  void showSelected();

  const LmService* service_;
  LmAttention attention_;
  QComboBox* layer_ = nullptr;
  QComboBox* head_ = nullptr;
  QLabel* attention_info_ = nullptr;
  AttentionHeatmap* heatmap_ = nullptr;
};

}  // namespace ts::ui
