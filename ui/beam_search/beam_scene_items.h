// SPDX-License-Identifier: GPL-3.0-or-later
// What the beam search tree is painted with: the colours and metrics of one scene (BeamStyle), the
// box of one candidate (BeamNodeItem) and the graphics view that zooms with Ctrl+wheel
// (BeamGraphicsView). Internal to ui/beam_search/: BeamTreeView owns and fills them.
#pragma once

#include <QColor>
#include <QFont>
#include <QGraphicsItem>
#include <QGraphicsView>
#include <QRectF>
#include <QStringList>

namespace ts::ui {

// Colours and metrics shared by every item of one scene (taken from the widget's palette and font,
// so light and dark themes both read).
struct BeamStyle {
  QColor base, text, dim_text, border, accent, finished;
  QFont font, small;
  double box_w = 100, line_h = 16, pad = 4, column = 140;

  /// Takes the colours from the widget's palette and the metrics (line height, box width, column
  /// pitch) from its font; called before each rebuild of the scene.
  void takeFrom(const QWidget& widget);
};

// One candidate: a rounded box with its token, cumulative log-probability and, when finished, its
// normalised score and n-best rank. Pruned candidates are one line high (token and log-prob side
// by side) so that the many leaves they make take less room. Painted directly (no child items) so
// thousands stay cheap; pens are cosmetic so the outline survives when the tree is zoomed out.
class BeamNodeItem : public QGraphicsItem {
 public:
  BeamNodeItem(const BeamStyle* style, qint64 id, QStringList lines, bool best, bool finished, bool faded);

  static double height(const BeamStyle& style, int lines) { return lines * style.line_h + 2 * style.pad; }

  QRectF boundingRect() const override { return rect_.adjusted(-2, -2, 2, 2); }
  QRectF box() const { return rect_; }
  qint64 id() const { return id_; }
  const QStringList& lines() const { return lines_; }
  bool best() const { return best_; }
  bool faded() const { return faded_; }

  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override;

 private:
  const BeamStyle* style_;
  qint64 id_;
  QStringList lines_;
  bool best_, finished_, faded_;
  QRectF rect_;
};

// Ctrl+wheel zooms around the mouse; the plain wheel scrolls as usual.
class BeamGraphicsView : public QGraphicsView {
 public:
  using QGraphicsView::QGraphicsView;

  void zoomBy(double factor);

 protected:
  void wheelEvent(QWheelEvent* event) override;
};

}  // namespace ts::ui
