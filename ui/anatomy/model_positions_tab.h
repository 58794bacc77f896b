// SPDX-License-Identifier: GPL-3.0-or-later
// The "Model positions" tab of Model anatomy: the loaded model's own position table (a heatmap,
// when it is learned) and the cosine similarity between its positions, with a note on how to read
// them. The panel requests the tables and hands them over; it shows the tab in a scroll area.
#pragma once

#include <QWidget>

#include "services/translation_service.h"

class QCPColorMap;
class QCustomPlot;
class QLabel;
class QSpinBox;

namespace ts::ui {

class ModelPositionsTab : public QWidget {
  Q_OBJECT
 public:
  explicit ModelPositionsTab(QWidget* parent = nullptr);

  /// How many positions (from 0) of the model's table are to be drawn.
  int positionCount() const;
  /// Replaces the line above the plots (e.g. while the tables are read).
  void setMessage(const QString& message);
  /// Hides the plots and says `message` instead.
  void showNoModel(const QString& message);
  /// Draws the position tables of `tables` (which has no error).
  void showTables(const ModelTables& tables);

 Q_SIGNALS:
  /// The user changed positionCount(): the tables are to be requested again.
  void positionCountChanged();

 private:
  QLabel* message_ = nullptr;
  QSpinBox* count_ = nullptr;
  QWidget* learned_box_ = nullptr;
  QCustomPlot* learned_ = nullptr;
  QCPColorMap* learned_map_ = nullptr;
  QWidget* similarity_box_ = nullptr;
  QLabel* similarity_title_ = nullptr;
  QCustomPlot* similarity_ = nullptr;
  QCPColorMap* similarity_map_ = nullptr;
  QLabel* note_ = nullptr;
};

}  // namespace ts::ui
