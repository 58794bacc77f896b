// SPDX-License-Identifier: GPL-3.0-or-later
// One chart of the Dataset panel's "Sentence lengths" box: how many sentences of one side have each
// length in tokens, as bars under a title row, with whole-number ticks. Plottable 0 is the
// QCPBars and layout element (0, 0) the title (the tests read both).
#pragma once

#include <cstddef>
#include <vector>

#include <QColor>
#include <QFont>
#include <QString>

#include <qcustomplot.h>

namespace ts::ui {

class LengthHistogram : public QCustomPlot {
  Q_OBJECT
 public:
  /// `color` indexes series_color; the title is drawn in `title_font` and `title_color`.
  LengthHistogram(const QString& object_name, int color, const QFont& title_font, const QColor& title_color,
                  QWidget* parent = nullptr);

  /// Shows histogram[n] = sentences with n tokens under `title`.
  void setHistogram(const std::vector<std::size_t>& histogram, const QString& title);
  /// Removes the bars (until the statistics for new settings are shown).
  void clearHistogram();
};

}  // namespace ts::ui
