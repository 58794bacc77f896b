// SPDX-License-Identifier: GPL-3.0-or-later
// The probe panel's alignment strip: two statistics of the probe's cross-attention over the
// training steps, one point per captured validation (sharpness, the mean of each output token's
// largest weight, and the normalised entropy of the attention rows, both in [0, 1]), with a dashed
// marker at the step of the frame shown.
#pragma once

#include <QVector>

#include <qcustomplot.h>

namespace ts::ui {

class ProbeAlignmentChart : public QCustomPlot {
  Q_OBJECT
 public:
  explicit ProbeAlignmentChart(QWidget* parent = nullptr);

  /// Replaces both series (steps ascending) and fits the step axis to them.
  void setSeries(const QVector<double>& steps, const QVector<double>& sharpness, const QVector<double>& entropy);
  /// Puts the marker at `step` (and shows it), or hides it.
  void showMarker(double step);
  void hideMarker();
  /// The step the marker was last put at.
  double markerStep() const;

 private:
  QCPItemStraightLine* marker_ = nullptr;
};

}  // namespace ts::ui
