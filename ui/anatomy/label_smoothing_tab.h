// SPDX-License-Identifier: GPL-3.0-or-later
// The "Label smoothing" tab of Model anatomy: the target distribution the loss trains towards for
// a few reference tokens of a toy vocabulary, as a heatmap. The smoothing follows the
// configuration; the vocabulary size is the user's.
#pragma once

#include <QList>
#include <QWidget>

class QCPColorMap;
class QCustomPlot;
class QDoubleSpinBox;
class QSpinBox;

namespace ts {
struct ExperimentConfig;
}

namespace ts::ui {

class LabelSmoothingTab : public QWidget {
  Q_OBJECT
 public:
  explicit LabelSmoothingTab(QWidget* parent = nullptr);

  /// The reference targets of the rows (as the Annotated Transformer's figure; target 0 is the pad
  /// id, a row the loss ignores).
  static QList<int> smoothingTargets();

  /// Takes train.label_smoothing of `config` and redraws.
  void followConfig(const ExperimentConfig& config);

 private:
  void redraw();

  QDoubleSpinBox* smoothing_ = nullptr;
  QSpinBox* vocab_ = nullptr;
  QCustomPlot* plot_ = nullptr;
  QCPColorMap* map_ = nullptr;
};

}  // namespace ts::ui
