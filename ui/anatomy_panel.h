// "Model anatomy": the fixed ingredients of the Transformer shown as plots, following the current
// configuration — the sinusoidal position table (heatmap and chosen dimensions as curves), the
// learning-rate schedule against the Annotated Transformer's Noam comparisons, the label-smoothed
// target distribution the loss trains towards, and the causal and padding masks of an example batch.
#pragma once

#include <QWidget>

class QCPColorMap;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTabWidget;

namespace ts::ui {

class StudioState;

class AnatomyPanel : public QWidget {
  Q_OBJECT
 public:
  explicit AnatomyPanel(StudioState* state, QWidget* parent = nullptr);

  /// The Noam comparisons drawn after the current configuration's curve: {d_model, warmup}.
  static QList<QPair<int, int>> noamComparisons();
  /// The reference targets of the label-smoothing rows (as the Annotated Transformer's figure;
  /// target 0 is the pad id, a row the loss ignores).
  static QList<int> smoothingTargets();

 private:
  QWidget* buildPositionalTab();
  QWidget* buildLearningRateTab();
  QWidget* buildSmoothingTab();
  QWidget* buildMasksTab();
  void followConfig();
  void updatePositional();
  void updateLearningRate();
  void updateSmoothing();
  void updateMasks();

  StudioState* state_;
  QTabWidget* tabs_ = nullptr;
  // Positional encoding
  QSpinBox* pe_positions_ = nullptr;
  QSpinBox* pe_d_model_ = nullptr;
  QLineEdit* pe_dimensions_ = nullptr;
  QLabel* pe_message_ = nullptr;
  QCustomPlot* pe_heatmap_ = nullptr;
  QCPColorMap* pe_map_ = nullptr;
  QCustomPlot* pe_curves_ = nullptr;
  // Learning rate
  QSpinBox* lr_steps_ = nullptr;
  QLabel* lr_summary_ = nullptr;
  QCustomPlot* lr_plot_ = nullptr;
  // Label smoothing
  QDoubleSpinBox* ls_smoothing_ = nullptr;
  QSpinBox* ls_vocab_ = nullptr;
  QCustomPlot* ls_plot_ = nullptr;
  QCPColorMap* ls_map_ = nullptr;
  // Masks
  QSpinBox* mask_length_ = nullptr;
  QCustomPlot* causal_plot_ = nullptr;
  QCPColorMap* causal_map_ = nullptr;
  QCustomPlot* padding_plot_ = nullptr;
  QCPColorMap* padding_map_ = nullptr;
};

}  // namespace ts::ui
