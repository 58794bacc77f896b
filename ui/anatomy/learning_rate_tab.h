// SPDX-License-Identifier: GPL-3.0-or-later
// The "Learning rate" tab of Model anatomy: the configuration's learning-rate schedule over the
// steps, drawn against the Annotated Transformer's Noam comparisons, with the peak it reaches.
#pragma once

#include <QList>
#include <QPair>
#include <QWidget>

class QCustomPlot;
class QLabel;
class QSpinBox;

namespace ts::ui {

class StudioState;

class LearningRateTab : public QWidget {
  Q_OBJECT
 public:
  /// Draws the schedule of `state`'s configuration (redraw() after it changes).
  explicit LearningRateTab(const StudioState* state, QWidget* parent = nullptr);

  /// The Noam comparisons drawn after the configuration's curve: {d_model, warmup}.
  static QList<QPair<int, int>> noamComparisons();

  void redraw();

 private:
  const StudioState* state_;
  QSpinBox* steps_ = nullptr;
  QLabel* summary_ = nullptr;
  QCustomPlot* plot_ = nullptr;
};

}  // namespace ts::ui
