// SPDX-License-Identifier: GPL-3.0-or-later
// The "Positional encoding" tab of Model anatomy: the sinusoidal position table as a heatmap
// (positions × d_model) and chosen dimensions drawn as curves over the positions. d_model follows
// the configuration; the number of positions and the dimensions are the user's.
#pragma once

#include <QWidget>

class QCPColorMap;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace ts {
struct ExperimentConfig;
}

namespace ts::ui {

class PositionalEncodingTab : public QWidget {
  Q_OBJECT
 public:
  explicit PositionalEncodingTab(QWidget* parent = nullptr);

  /// Takes model.d_model of `config` and redraws.
  void followConfig(const ExperimentConfig& config);

 private:
  void redraw();

  QSpinBox* positions_ = nullptr;
  QSpinBox* d_model_ = nullptr;
  QLineEdit* dimensions_ = nullptr;
  QLabel* message_ = nullptr;
  QCustomPlot* heatmap_ = nullptr;
  QCPColorMap* map_ = nullptr;
  QCustomPlot* curves_ = nullptr;
};

}  // namespace ts::ui
