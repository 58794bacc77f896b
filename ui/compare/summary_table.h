// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare panel's summary: one row per system with its corpus BLEU and chrF and their 95%
// intervals, the paired-bootstrap p-values against the baseline (the first system says
// "baseline"), and its mean sentence score. Differences with p < 0.05 are marked. Each score cell
// holds its number in Qt::UserRole (the p-value cells theirs).
#pragma once

#include <QTableWidget>

#include "ts/analysis/compare.h"

namespace ts::ui {

class SummaryTable : public QTableWidget {
  Q_OBJECT
 public:
  enum Column { System, Bleu, Chrf, PBleu, PChrf, MeanSentence, ColumnCount };
  /// A difference against the baseline this unlikely by chance is marked.
  static constexpr double kSignificance = 0.05;

  explicit SummaryTable(QWidget* parent = nullptr);
  void setComparison(const Comparison& comparison, const QStringList& tooltips = {});
  void clearComparison();
  /// What the numbers are: sentences, resamples, the sentence metric.
  static QString caption(const Comparison& comparison);

 private:
  /// A height that shows every row (up to eight).
  void fitHeight();
};

}  // namespace ts::ui
