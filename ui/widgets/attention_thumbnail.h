// SPDX-License-Identifier: GPL-3.0-or-later
// One cell of the attention model view: a small heatmap drawn as a QImage with one pixel per
// (query, key) pair, scaled up without smoothing, and a caption naming what the head looks at.
// A few dozen of these must draw instantly, so there is no QCustomPlot here.
#pragma once

#include <QImage>
#include <QStringList>
#include <QWidget>

#include "ts/analysis/attention_stats.h"

namespace ts::ui {

/// The matrix as an image, one pixel per cell, coloured by viridis over [0, 1] (values above 1
/// saturate); cells hidden by the causal mask (`causal`, key after query) are fully transparent.
QImage attention_image(const AttentionMatrix& m, bool causal);
/// The viridis colour of a weight in [0, 1] (as the heatmaps draw it).
QRgb attention_color(double weight);

class AttentionThumbnail : public QWidget {
  Q_OBJECT
 public:
  /// `head` is -1 for the average of the layer's heads.
  AttentionThumbnail(int layer, int head, QWidget* parent = nullptr);

  void setMatrix(const AttentionMatrix& m, bool causal);
  void setCaption(const QString& caption);
  void setSelected(bool selected);
  /// Side of the square drawing area in pixels.
  void setSide(int side);

  int layer() const { return layer_; }
  int head() const { return head_; }
  bool isSelected() const { return selected_; }
  QString caption() const { return caption_; }
  const QImage& image() const { return image_; }
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override { return sizeHint(); }

 Q_SIGNALS:
  void clicked(int layer, int head);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  QRect mapRect() const;
  QFont captionFont() const;
  QStringList captionLines() const;

  int layer_, head_;
  int side_ = 64;
  bool selected_ = false;
  QImage image_;
  QString caption_;
};

}  // namespace ts::ui
