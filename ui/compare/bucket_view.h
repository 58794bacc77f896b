// SPDX-License-Identifier: GPL-3.0-or-later
// One of the Compare panel's bucket analyses (compare-mt's): a grouped bar chart, one bar per
// system in each bucket (word accuracy by word frequency, corpus score by reference length,
// sentences by score or by length difference) in the systems' colours with a legend, and the same
// numbers in a table below (values with the number of words or sentences behind them).
#pragma once

#include <QStringList>
#include <QWidget>

#include "ts/analysis/compare.h"

class QCPBarsGroup;
class QCustomPlot;
class QLabel;
class QStackedWidget;
class QTableWidget;

namespace ts::ui {

class BucketView : public QWidget {
  Q_OBJECT
 public:
  explicit BucketView(const QString& object_name, QWidget* parent = nullptr);

  /// Draws `table` for the systems `names`. `counts_are_values`: the values are counts
  /// (sentences), shown as whole numbers without a second count.
  void setTable(const BucketTable& table, const QStringList& names, bool counts_are_values);
  /// Back to the placeholder that says what to do (no empty chart before there is data).
  void clearTable();
  /// True while the placeholder is shown instead of the chart and table.
  bool showsPlaceholder() const;

  QCustomPlot* plot() const { return plot_; }
  QTableWidget* table() const { return table_; }

 private:
  QStackedWidget* stack_;
  QLabel* placeholder_;
  QWidget* content_;
  QLabel* title_;
  QCustomPlot* plot_;
  QCPBarsGroup* group_;
  QTableWidget* table_;
};

}  // namespace ts::ui
