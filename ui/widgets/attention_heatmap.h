// SPDX-License-Identifier: GPL-3.0-or-later
// A reusable attention heatmap: one row per query token, one column per key token, a colour scale
// from 0 to 1, tokens as tick labels (thinned or turned upright when they would overlap) and a
// tooltip "row ← column: weight" under the mouse. The Translate panel shows cross-attention with it;
// the attention views reuse it for encoder and decoder self-attention.
#pragma once

#include <QStringList>
#include <QVector>
#include <QWidget>

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPItemRect;
class QLabel;
class QMouseEvent;
class QStackedLayout;

namespace ts::ui {

class AttentionHeatmap : public QWidget {
  Q_OBJECT
 public:
  explicit AttentionHeatmap(QWidget* parent = nullptr);

  /// Shows `values[row][col]` (rows × columns, missing entries read as 0). Labels beyond the
  /// matrix are ignored; missing labels are shown as their index.
  void setMatrix(const QStringList& row_labels, const QStringList& column_labels,
                 const QVector<QVector<double>>& values);
  /// Removes the map and shows `message` in its place.
  void clear(const QString& message = QString());
  /// Axis titles, e.g. "output (target)" and "input (source)".
  void setAxisTitles(const QString& rows, const QString& columns);

  int rowCount() const { return rows_.size(); }
  int columnCount() const { return columns_.size(); }
  /// Number of cells shown (rows × columns); 0 when cleared.
  int cellCount() const { return rowCount() * columnCount(); }
  double value(int row, int column) const;
  const QStringList& rowLabels() const { return rows_; }
  const QStringList& columnLabels() const { return columns_; }
  /// What the tooltip says for a cell: "Katze ← cat: 0.62".
  QString cellText(int row, int column) const;
  /// The cell under a pixel of the plot widget, or false when there is none.
  bool cellAt(const QPoint& pos, int* row, int* column) const;
  /// The centre of a cell in plot-widget pixels (for tests and overlays).
  QPoint cellCenter(int row, int column) const;
  /// The text of the tooltip shown last (empty when the mouse left the cells).
  QString hoverText() const { return hover_text_; }
  QCustomPlot* plot() const { return plot_; }
  /// Outlines one row (the output token picked elsewhere, e.g. a click in the Translate panel's
  /// token strip); -1 removes the outline. A new matrix keeps the row when it still exists.
  void highlightRow(int row);
  int highlightedRow() const { return highlighted_row_; }

 Q_SIGNALS:
  /// The mouse moved onto a cell (-1, -1 when it left the map).
  void cellHovered(int row, int column, double value);

 protected:
  void resizeEvent(QResizeEvent* event) override;
  void changeEvent(QEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void onMouseMove(QMouseEvent* event);
  void updateTickLabels();
  void resetView();
  void saveImage();
  QSizeF cellSize() const;

  QStackedLayout* stack_ = nullptr;
  QLabel* message_ = nullptr;
  QCustomPlot* plot_ = nullptr;
  QCPColorMap* map_ = nullptr;
  QCPColorScale* scale_ = nullptr;
  QCPItemRect* hover_rect_ = nullptr;
  QCPItemRect* row_rect_ = nullptr;  // highlightRow's outline
  int highlighted_row_ = -1;
  QStringList rows_, columns_;
  QVector<QVector<double>> values_;
  QString hover_text_;
  bool updating_ticks_ = false;
  QSizeF labelled_cell_;  // cell size in pixels the tick labels were last laid out for
};

}  // namespace ts::ui
