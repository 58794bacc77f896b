// SPDX-License-Identifier: GPL-3.0-or-later
// The "Masks" tab of Model anatomy: the causal (subsequent) mask of a target of chosen length, and
// the padding mask of a batch of three source sentences of the corpus. The panel shows it in a
// scroll area.
#pragma once

#include <QWidget>

class QCPColorMap;
class QCustomPlot;
class QSpinBox;

namespace ts::ui {

class StudioState;

class MasksTab : public QWidget {
  Q_OBJECT
 public:
  /// Takes its example batch from `state`'s corpus and direction (redraw() after they change).
  explicit MasksTab(const StudioState* state, QWidget* parent = nullptr);

  void redraw();

 private:
  const StudioState* state_;
  QSpinBox* length_ = nullptr;
  QCustomPlot* causal_plot_ = nullptr;
  QCPColorMap* causal_map_ = nullptr;
  QCustomPlot* padding_plot_ = nullptr;
  QCPColorMap* padding_map_ = nullptr;
};

}  // namespace ts::ui
