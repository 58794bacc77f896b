// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers shared by the tabs of the Model anatomy panel: the styled heatmap most tabs draw (a
// discrete colour map with its colour scale), filling it from a row-major table, text ticks, the
// explanatory notes under the plots, and the message shown while there is no model.
#pragma once

#include <algorithm>
#include <cstddef>

#include <QString>
#include <QStringList>

#include <qcustomplot.h>

class QLabel;
class QWidget;

namespace ts::ui::anatomy {

inline constexpr int kPad = 0;  // Vocab::kPad (ts/text/vocab.h): the id the loss ignores

/// A styled plot holding one discrete colour map (row 0 at the top, as matrices are read) and a
/// colour scale beside it.
QCPColorMap* make_heatmap(QCustomPlot* plot, const QString& scaleLabel);

/// Fills `map` with a row-major [rows × cols] table: x = column index, y = row index.
template <class Container>
void fill_heatmap(QCustomPlot* plot, QCPColorMap* map, const Container& values, int rows, int cols,
                  QCPRange dataRange) {
  map->data()->setSize(cols, rows);
  map->data()->setRange(QCPRange(0, std::max(cols - 1, 0)), QCPRange(0, std::max(rows - 1, 0)));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      map->data()->setCell(c, r, static_cast<double>(values[static_cast<std::size_t>(r) * cols + c]));
  map->setDataRange(dataRange);
  plot->xAxis->setRange(-0.5, cols - 0.5);
  plot->yAxis->setRange(-0.5, rows - 0.5);
  plot->replot();
}

/// Integer ticks with the given labels (used where there are few rows/columns).
void set_text_ticks(QCPAxis* axis, const QStringList& labels);

/// A word-wrapped plain-text label: the explanations under the plots.
QLabel* note(const QString& text, QWidget* parent);

/// What the Model positions and Embeddings tabs say while there is no model.
QString no_model_message();

}  // namespace ts::ui::anatomy
