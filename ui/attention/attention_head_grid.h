// SPDX-License-Identifier: GPL-3.0-or-later
// The attention explorer's model view: every layer × head of one kind of attention as a small
// heatmap (AttentionThumbnail), plus each layer's head average, in a scroll area. The thumbnails
// grow or shrink with the pane; clicking one (or Enter on it) asks the panel to open it large.
#pragma once

#include <vector>

#include <QWidget>

#include "attention/attention_data.h"
#include "ts/analysis/attention_stats.h"

class QLabel;
class QScrollArea;

namespace ts::ui {

class AttentionThumbnail;

class AttentionHeadGrid : public QWidget {
  Q_OBJECT
 public:
  explicit AttentionHeadGrid(QWidget* parent = nullptr);

  /// Makes one thumbnail per layer and head of `kind` (and one per layer for the head average),
  /// captioned from `summaries` ([layer][head + 1], index 0 the average); a message instead when
  /// `data` has no maps of that kind.
  void rebuild(const AttentionData& data, AttentionKind kind, const std::vector<std::vector<HeadSummary>>& summaries);
  /// The thumbnail of a layer and head (-1: average), or nullptr.
  AttentionThumbnail* thumbnail(int layer, int head) const;
  /// Marks the thumbnail of (layer, head) as the one shown large, and scrolls it into view.
  void setSelected(int layer, int head);

 Q_SIGNALS:
  /// A thumbnail was clicked (or activated with the keyboard): head -1 is the average.
  void headClicked(int layer, int head);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void updateThumbnailSide();

  int heads_ = 0;  // heads of the kind shown
  int thumb_side_ = 60;
  std::vector<std::vector<AttentionThumbnail*>> thumbs_;  // [layer][head + 1]

  QScrollArea* scroll_ = nullptr;
  QWidget* grid_ = nullptr;
  QLabel* message_ = nullptr;
};

}  // namespace ts::ui
