// SPDX-License-Identifier: GPL-3.0-or-later
// The loss chart of the language-model window: per run, each step's loss (thin), the train
// estimates (solid) and the val estimates (dashed), in the run's own colour, with the bigram
// table's val loss as a dash-dot line. Runs stay on the chart until Clear chart, so models can be
// compared; Save image… writes the chart to a file.
#pragma once

#include <QPointF>
#include <QVector>
#include <QWidget>

class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCustomPlot;

namespace ts::ui {

class LmLossChart : public QWidget {
  Q_OBJECT
 public:
  explicit LmLossChart(QWidget* parent = nullptr);

  QCustomPlot* plot() const { return plot_; }

  /// Adds a run's three series in the next colour, labelled "<n> · <name>"; returns the label.
  QString addRun(const QString& name);
  /// Adds to the latest run (nothing without one). A negative train loss is left out.
  void addStepLoss(double step, double loss);
  void addEstimate(double step, double train_loss, double val_loss);
  /// Removes the latest run if it has no data (a run that never started).
  void dropEmptyLastRun();
  /// Removes every run but, with `keep_last`, the latest, and rescales the axes.
  void removeRuns(bool keep_last);
  /// Fits the axes to the data (call showBaseline after it, which replots).
  void rescale();
  /// Draws the bigram table's loss `baseline` (hidden when NaN) and replots. With no step losses
  /// yet the y range spans it up to `uniform_loss`; an empty x range spans `max_steps`.
  void showBaseline(double baseline, double uniform_loss, double max_steps);

  int curveCount() const { return curves_.size(); }
  QString curveLabel(int run) const;
  /// Points of one run's series: "step", "train" or "val".
  QVector<QPointF> curvePoints(int run, const QString& series) const;

 Q_SIGNALS:
  /// The Clear chart button was pressed (the window decides which run stays).
  void clearRequested();
  /// Save image… could not write the file.
  void saveFailed(const QString& message);

 private:
  struct Curve {
    QString label;
    QCPGraph* step = nullptr;
    QCPGraph* train = nullptr;
    QCPGraph* val = nullptr;
  };
  void removeCurve(const Curve& c);

  QCustomPlot* plot_ = nullptr;
  QCPItemStraightLine* baseline_line_ = nullptr;
  QCPItemText* baseline_text_ = nullptr;
  QVector<Curve> curves_;
};

}  // namespace ts::ui
