// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare panel's "N-grams" tab (compare-mt's n-gram difference analysis): for the baseline
// against each other system (chosen in a list), the n-grams of the references that each of the two
// matches more often than the other, in two tables side by side with their match counts.
#pragma once

#include <vector>

#include <QStringList>
#include <QWidget>

#include "ts/analysis/compare.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace ts::ui {

class NgramView : public QWidget {
  Q_OBJECT
 public:
  explicit NgramView(QWidget* parent = nullptr);

  void setComparison(const Comparison& comparison, const QStringList& names);
  void clearComparison();
  /// Shows the pair of the baseline with system `pair` + 1 (an index into Comparison::pairs).
  void showPair(int pair);

  QComboBox* pairChooser() const { return pairs_; }
  /// The n-grams the baseline (`baseline` true) or the other system matches more often.
  QTableWidget* table(bool baseline) const { return baseline ? a_better_ : b_better_; }

 private:
  void fill(QTableWidget* table, const std::vector<NgramDifference>& rows, const QString& a, const QString& b);

  std::vector<PairComparison> data_;
  QStringList names_;
  QComboBox* pairs_;
  QLabel* note_;
  QLabel *a_title_, *b_title_;
  QTableWidget *a_better_, *b_better_;
};

}  // namespace ts::ui
