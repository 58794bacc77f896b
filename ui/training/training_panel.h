// SPDX-License-Identifier: GPL-3.0-or-later
// The Training panel: Start with "Train for" (the run's time budget) / Pause / Resume / Stop, a
// progress bar with step, epoch, tokens/s and ETA or the time left in the budget, live charts (train
// loss raw and smoothed with dev loss, learning rate, BLEU/chrF), the sample translations of each
// validation, and the log. Charts are redrawn at most once per delivery of the
// TrainingController (about ten times a second), whatever the step rate.
#pragma once

#include <QVector>
#include <QWidget>

#include "ts/train/events.h"

class QComboBox;
class QCPTextElement;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace ts::ui {

class StudioState;
class TrainingController;

class TrainingPanel : public QWidget {
  Q_OBJECT
 public:
  TrainingPanel(StudioState* state, TrainingController* controller, QWidget* parent = nullptr);

  /// The charts, for tests and export: loss (graphs "train loss", "smoothed", "dev loss"),
  /// learning rate, and BLEU/chrF.
  QCustomPlot* lossChart() const { return loss_chart_; }
  QCustomPlot* lrChart() const { return lr_chart_; }
  QCustomPlot* metricChart() const { return metric_chart_; }
  /// "Train for" in minutes: what the next run's train.budget_minutes will be (0 = until stopped).
  double budgetMinutes() const;

 public Q_SLOTS:
  /// Starts training the current corpus/direction/config (the Start button; F5).
  void start();
  /// Pause when training, resume when paused.
  void togglePause();
  void stop();

 private:
  void onState();
  void showBudget();
  void onBudgetChosen();
  void onPhase(ts::SessionPhase phase);
  void onStarted(const ts::TrainingStart& start);
  void onProgress(const QVector<ts::TrainingProgress>& steps);
  void onValidated(const ts::ValidationResult& result);
  void onFinished(const ts::TrainingSummary& summary);
  void appendLog(const QString& line);
  /// The progress text, beside the bar (and as the bar's format).
  void setProgressText(const QString& text);
  void clearCharts();
  QCustomPlot* makeChart(const QString& object_name, const QString& y_label);
  void rescale(QCustomPlot* chart);

  StudioState* state_;
  TrainingController* controller_;
  QPushButton *start_, *pause_, *stop_;
  QLineEdit* name_;
  QComboBox* budget_;               // "Train for": minutes as item data; -1 = custom, 0 = until stopped
  QDoubleSpinBox* budget_minutes_;  // the custom number of minutes, shown with "custom"
  QLabel* budget_cap_;              // where train.max_minutes ends the run before "Train for" does
  QLabel* status_;
  QLabel* stats_;
  QProgressBar* progress_;
  QLabel* progress_text_;
  QCPTextElement* lr_note_ = nullptr;  // under the learning-rate chart: why it steps down
  QCustomPlot *loss_chart_, *lr_chart_, *metric_chart_;
  QTableWidget* samples_;
  QPlainTextEdit* log_;
  void showStats();

  ts::TrainingStart start_info_;
  std::int64_t first_step_ = 0;         // where this run's x-axes begin (the step a resume starts from)
  ts::TrainingProgress last_progress_;  // the latest step of this run
  bool have_progress_ = false;
  double best_bleu_ = -1;
  double last_bleu_ = -1, last_chrf_ = -1;
  double last_dev_loss_ = -1;
};

}  // namespace ts::ui
