// SPDX-License-Identifier: GPL-3.0-or-later
// The attention explorer's large map: the selected layer and head (or head average) as a heatmap
// with token labels, a line above it saying what the head looks at, and a line below it reading
// the weight under the mouse. Decoder self-attention shows its causal mask as hatched cells.
#pragma once

#include <QString>
#include <QWidget>

#include "attention/attention_data.h"
#include "ts/analysis/attention_stats.h"

class QLabel;

namespace ts::ui {

class AttentionHeatmap;

class AttentionMapView : public QWidget {
  Q_OBJECT
 public:
  explicit AttentionMapView(QWidget* parent = nullptr);

  /// Shows the map of (layer, head) of `kind` (head -1: the average of the heads), headed
  /// "`title`: what `summary` says"; a message instead when `data` has no such map.
  void showMap(const AttentionData& data, AttentionKind kind, int layer, int head, const HeadSummary& summary,
               const QString& title);
  /// What hovering a cell says: "Katze ← cat: 0.620", or "… masked: later tokens" for the cells
  /// the causal mask hides; empty outside the map.
  QString cellText(int row, int column) const;
  AttentionHeatmap* heatmap() const { return heatmap_; }

 private:
  QString hoverHint() const;
  void onHover(int row, int column, double value);

  AttentionKind kind_ = AttentionKind::Cross;  // of the map shown
  QLabel* head_info_ = nullptr;
  AttentionHeatmap* heatmap_ = nullptr;
  QLabel* hover_ = nullptr;
};

}  // namespace ts::ui
