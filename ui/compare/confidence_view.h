// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare panel's "Confidence" tab: does each model know when it is wrong? A scatter of every
// test sentence, its mean token log-probability (the model's confidence in its own output) against
// its sentence score, one colour per system; the correlations (Pearson's r, Spearman's ρ) in the
// caption; the mean sentence score by confidence fifth as bars and a table; and a button that lists
// the least confident sentences first in the Sentences tab. Text files come without confidences:
// the tab says so.
#pragma once

#include <QStringList>
#include <QWidget>

#include "ts/analysis/compare.h"

class QCustomPlot;
class QLabel;
class QPushButton;

namespace ts::ui {

class BucketView;

class ConfidenceView : public QWidget {
  Q_OBJECT
 public:
  explicit ConfidenceView(QWidget* parent = nullptr);

  /// Shows the confidence of every system of `comparison` that has one; `input` holds the values.
  void setComparison(const Comparison& comparison, const CompareInput& input, const QStringList& names);
  void clearComparison();

  QLabel* caption() const { return caption_; }
  QCustomPlot* plot() const { return plot_; }
  BucketView* buckets() const { return buckets_; }
  QPushButton* leastConfidentButton() const { return least_; }

 Q_SIGNALS:
  /// The user asked for the least confident sentences of `system` first.
  void leastConfidentRequested(int system);

 private:
  QLabel* caption_;
  QCustomPlot* plot_;
  BucketView* buckets_;
  QPushButton* least_;
  int first_with_confidence_ = -1;
};

}  // namespace ts::ui
