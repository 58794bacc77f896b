// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/attention_heatmap.h"

#include <algorithm>
#include <cmath>

#include <QAction>
#include <QFileDialog>
#include <QLabel>
#include <QMessageBox>
#include <QStackedLayout>
#include <QToolTip>

#include <qcustomplot.h>

#include "widgets/bidi_delegate.h"
#include "widgets/plot_style.h"

namespace ts::ui {

namespace {

// Keeps a range inside [lo, hi] (the map's extent) while dragging or zooming.
QCPRange bounded(QCPRange r, double lo, double hi) {
  if (r.size() >= hi - lo) return QCPRange(lo, hi);
  if (r.lower < lo) r += lo - r.lower;
  if (r.upper > hi) r += hi - r.upper;
  return r;
}

void style_axis(QCPAxis* axis, const QPalette& pal) {
  const QColor fg = pal.color(QPalette::WindowText);
  axis->setBasePen(QPen(fg));
  axis->setTickPen(QPen(fg));
  axis->setSubTickPen(QPen(fg));
  axis->setTickLabelColor(fg);
  axis->setLabelColor(fg);
}

}  // namespace

AttentionHeatmap::AttentionHeatmap(QWidget* parent) : QWidget(parent) {
  stack_ = new QStackedLayout(this);
  stack_->setContentsMargins(0, 0, 0, 0);
  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("heatmapMessage"));
  message_->setAlignment(Qt::AlignCenter);
  message_->setWordWrap(true);
  message_->setForegroundRole(QPalette::PlaceholderText);
  plot_ = new QCustomPlot(this);
  plot_->setObjectName(QStringLiteral("heatmapPlot"));
  plot_->setMinimumSize(220, 160);
  stack_->addWidget(message_);
  stack_->addWidget(plot_);

  style_plot(plot_);
  for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) {
    axis->grid()->setVisible(false);
    axis->setSubTicks(false);
    axis->setTickLength(0, 3);
    axis->setTicker(QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText));
  }
  plot_->yAxis->setRangeReversed(true);  // first output token at the top, as it is read
  plot_->setMouseTracking(true);         // mouseMove without a button pressed: the tooltip
  plot_->installEventFilter(this);

  map_ = new QCPColorMap(plot_->xAxis, plot_->yAxis);
  map_->setInterpolate(false);  // one flat colour per cell: each cell is one token pair
  map_->setTightBoundary(false);
  scale_ = new QCPColorScale(plot_);
  plot_->plotLayout()->addElement(0, 1, scale_);
  scale_->setType(QCPAxis::atRight);
  scale_->setBarWidth(12);
  scale_->axis()->setLabel(tr("weight"));
  style_axis(scale_->axis(), plot_->palette());
  map_->setColorScale(scale_);
  scale_->setGradient(viridis_gradient());
  scale_->setDataRange(QCPRange(0, 1));
  auto* margins = new QCPMarginGroup(plot_);
  plot_->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  scale_->setMarginGroup(QCP::msBottom | QCP::msTop, margins);

  hover_rect_ = new QCPItemRect(plot_);
  hover_rect_->setPen(QPen(palette().color(QPalette::Highlight), 2));
  hover_rect_->setBrush(Qt::NoBrush);
  hover_rect_->setVisible(false);
  hover_rect_->setSelectable(false);
  row_rect_ = new QCPItemRect(plot_);
  row_rect_->setPen(QPen(palette().color(QPalette::Highlight), 2, Qt::DashLine));
  row_rect_->setBrush(Qt::NoBrush);
  row_rect_->setVisible(false);
  row_rect_->setSelectable(false);

  connect(plot_, &QCustomPlot::mouseMove, this, &AttentionHeatmap::onMouseMove);
  connect(plot_, &QCustomPlot::mouseDoubleClick, this, &AttentionHeatmap::resetView);
  // Dragging and zooming stay inside the map; the labels follow the visible cells.
  connect(plot_->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange& r) {
    const auto b = bounded(r, -0.5, std::max(1, columnCount()) - 0.5);
    if (b != r) plot_->xAxis->setRange(b);
  });
  connect(plot_->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange& r) {
    const auto b = bounded(r, -0.5, std::max(1, rowCount()) - 0.5);
    if (b != r) plot_->yAxis->setRange(b);
  });
  // Cell sizes are only known after QCustomPlot's layout pass; re-thin the labels when they change.
  connect(plot_, &QCustomPlot::afterLayout, this, [this] {
    if (updating_ticks_ || cellCount() == 0) return;
    if (std::abs(cellSize().width() - labelled_cell_.width()) < 0.5 &&
        std::abs(cellSize().height() - labelled_cell_.height()) < 0.5)
      return;
    QMetaObject::invokeMethod(this, &AttentionHeatmap::updateTickLabels, Qt::QueuedConnection);
  });

  auto* reset = new QAction(tr("Reset view"), plot_);
  connect(reset, &QAction::triggered, this, &AttentionHeatmap::resetView);
  auto* save = new QAction(tr("Save image…"), plot_);
  connect(save, &QAction::triggered, this, &AttentionHeatmap::saveImage);
  plot_->addAction(reset);
  plot_->addAction(save);
  plot_->setContextMenuPolicy(Qt::ActionsContextMenu);
  plot_->setToolTip(QString());

  clear();
}

void AttentionHeatmap::setAxisTitles(const QString& rows, const QString& columns) {
  plot_->yAxis->setLabel(rows);
  plot_->xAxis->setLabel(columns);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void AttentionHeatmap::clear(const QString& message) {
  rows_.clear();
  columns_.clear();
  values_.clear();
  hover_text_.clear();
  hover_rect_->setVisible(false);
  row_rect_->setVisible(false);
  map_->data()->clear();
  message_->setText(message.isEmpty() ? tr("No attention to show yet.") : message);
  stack_->setCurrentWidget(message_);
}

void AttentionHeatmap::setMatrix(const QStringList& row_labels, const QStringList& column_labels,
                                 const QVector<QVector<double>>& values) {
  int columns = 0;
  for (const auto& row : values) columns = std::max(columns, static_cast<int>(row.size()));
  const int rows = static_cast<int>(values.size());
  if (rows == 0 || columns == 0) {
    clear(tr("The attention matrix is empty."));
    return;
  }
  rows_.clear();
  columns_.clear();
  for (int r = 0; r < rows; ++r) rows_ << (r < row_labels.size() ? row_labels[r] : QString::number(r + 1));
  for (int c = 0; c < columns; ++c) columns_ << (c < column_labels.size() ? column_labels[c] : QString::number(c + 1));
  values_ = values;
  // Right-to-left tokens (an Arabic source) run from the right, as they are read: the first token
  // at the right end of the axis.
  // Special tokens (<unk>, </s>) say nothing about the direction.
  QStringList words;
  for (const auto& label : columns_)
    if (!(label.startsWith(QLatin1Char('<')) && label.endsWith(QLatin1Char('>')))) words << label;
  plot_->xAxis->setRangeReversed(text_direction(words.join(QLatin1Char(' '))) == Qt::RightToLeft);
  double top = 1;
  for (const auto& row : values_)
    for (double v : row) top = std::max(top, v);

  // QCPColorMap spreads n cells over a range between the first and last cell centres, so a single
  // row or column would have no extent: draw it as two identical half-cells instead.
  const int nx = std::max(columns, 2), ny = std::max(rows, 2);
  map_->data()->setSize(nx, ny);
  map_->data()->setRange(columns == 1 ? QCPRange(-0.25, 0.25) : QCPRange(0, columns - 1),
                         rows == 1 ? QCPRange(-0.25, 0.25) : QCPRange(0, rows - 1));
  for (int x = 0; x < nx; ++x)
    for (int y = 0; y < ny; ++y) map_->data()->setCell(x, y, value(rows == 1 ? 0 : y, columns == 1 ? 0 : x));
  scale_->setDataRange(QCPRange(0, top));
  hover_text_.clear();
  hover_rect_->setVisible(false);
  stack_->setCurrentWidget(plot_);
  highlightRow(highlighted_row_ < rowCount() ? highlighted_row_ : -1);
  resetView();
}

void AttentionHeatmap::highlightRow(int row) {
  highlighted_row_ = row >= 0 && row < rowCount() ? row : -1;
  row_rect_->setVisible(highlighted_row_ >= 0);
  if (highlighted_row_ >= 0) {
    row_rect_->topLeft->setCoords(-0.5, highlighted_row_ - 0.5);
    row_rect_->bottomRight->setCoords(columnCount() - 0.5, highlighted_row_ + 0.5);
  }
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

double AttentionHeatmap::value(int row, int column) const {
  if (row < 0 || row >= values_.size() || column < 0 || column >= values_[row].size()) return 0;
  return values_[row][column];
}

QString AttentionHeatmap::cellText(int row, int column) const {
  if (row < 0 || row >= rowCount() || column < 0 || column >= columnCount()) return {};
  return tr("%1 ← %2: %3").arg(rows_[row], columns_[column]).arg(value(row, column), 0, 'f', 3);
}

bool AttentionHeatmap::cellAt(const QPoint& pos, int* row, int* column) const {
  if (cellCount() == 0 || !plot_->axisRect()->rect().contains(pos)) return false;
  const int c = static_cast<int>(std::floor(plot_->xAxis->pixelToCoord(pos.x()) + 0.5));
  const int r = static_cast<int>(std::floor(plot_->yAxis->pixelToCoord(pos.y()) + 0.5));
  if (r < 0 || r >= rowCount() || c < 0 || c >= columnCount()) return false;
  if (row) *row = r;
  if (column) *column = c;
  return true;
}

QPoint AttentionHeatmap::cellCenter(int row, int column) const {
  return QPoint(qRound(plot_->xAxis->coordToPixel(column)), qRound(plot_->yAxis->coordToPixel(row)));
}

QSizeF AttentionHeatmap::cellSize() const {
  const QRect rect = plot_->axisRect()->rect();
  return QSizeF(rect.width() / std::max(1e-9, plot_->xAxis->range().size()),
                rect.height() / std::max(1e-9, plot_->yAxis->range().size()));
}

void AttentionHeatmap::onMouseMove(QMouseEvent* event) {
  int row = -1, column = -1;
  const QPoint pos = event->position().toPoint();
  if (!cellAt(pos, &row, &column)) {
    if (!hover_text_.isEmpty()) {
      hover_text_.clear();
      hover_rect_->setVisible(false);
      QToolTip::hideText();
      plot_->replot(QCustomPlot::rpQueuedReplot);
      Q_EMIT cellHovered(-1, -1, 0);
    }
    return;
  }
  const QString text = cellText(row, column);
  if (text == hover_text_) return;
  hover_text_ = text;
  hover_rect_->topLeft->setCoords(column - 0.5, row - 0.5);
  hover_rect_->bottomRight->setCoords(column + 0.5, row + 0.5);
  hover_rect_->setVisible(true);
  plot_->replot(QCustomPlot::rpQueuedReplot);
  QToolTip::showText(plot_->mapToGlobal(pos), text, plot_);
  Q_EMIT cellHovered(row, column, value(row, column));
}

bool AttentionHeatmap::eventFilter(QObject* watched, QEvent* event) {
  if (watched == plot_ && event->type() == QEvent::Leave && !hover_text_.isEmpty()) {
    hover_text_.clear();
    hover_rect_->setVisible(false);
    plot_->replot(QCustomPlot::rpQueuedReplot);
    Q_EMIT cellHovered(-1, -1, 0);
  }
  return QWidget::eventFilter(watched, event);
}

void AttentionHeatmap::resetView() {
  plot_->xAxis->setRange(-0.5, std::max(1, columnCount()) - 0.5);
  plot_->yAxis->setRange(-0.5, std::max(1, rowCount()) - 0.5);
  updateTickLabels();
}

// Shows as many token labels as fit: column labels are staggered or turn upright when wider than a
// cell, and both axes keep only every k-th label when even that would overlap (the tooltip still
// names each cell).
void AttentionHeatmap::updateTickLabels() {
  if (cellCount() == 0) return;
  updating_ticks_ = true;
  const QFontMetrics fm(plot_->xAxis->tickLabelFont());
  const int max_label = fm.horizontalAdvance(QLatin1Char('M')) * 10;
  const auto elide = [&](const QString& s) { return fm.elidedText(s, Qt::ElideMiddle, max_label); };
  labelled_cell_ = cellSize();
  const double cell_w = labelled_cell_.width(), cell_h = labelled_cell_.height();

  int widest = 0;
  for (const auto& label : columns_) widest = std::max(widest, fm.horizontalAdvance(elide(label)));
  // Column labels: side by side when they fit a cell, else on two staggered lines (two cells of
  // room each, far shorter than upright words), else upright.
  const bool stagger = widest + 6 > cell_w && widest + 6 <= 2 * cell_w;
  const bool upright = widest + 6 > 2 * cell_w;
  // A line of text per label (touching lines still read; overlapping ones do not).
  const int step_x = upright ? std::max(1, static_cast<int>(std::ceil(fm.height() / std::max(1.0, cell_w) - 1e-6))) : 1;
  const int step_y = std::max(1, static_cast<int>(std::ceil(fm.height() / std::max(1.0, cell_h) - 1e-6)));

  auto x_ticker = plot_->xAxis->ticker().dynamicCast<QCPAxisTickerText>();
  auto y_ticker = plot_->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
  x_ticker->clear();
  y_ticker->clear();
  for (int c = 0; c < columnCount(); c += step_x)
    x_ticker->addTick(c, stagger && c % 2 == 1 ? QLatin1Char('\n') + elide(columns_[c]) : elide(columns_[c]));
  for (int r = 0; r < rowCount(); r += step_y) y_ticker->addTick(r, elide(rows_[r]));
  plot_->xAxis->setTickLabelRotation(upright ? -90 : 0);
  // The margin group aligns the colour scale with the map by taking the larger bottom margin of
  // the two, and the scale reports its current one: without this reset, the room once made for
  // upright labels would never be given back.
  scale_->setMargins(QMargins());
  plot_->replot();
  updating_ticks_ = false;
}

void AttentionHeatmap::saveImage() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save attention map"), QStringLiteral("attention.png"),
                                                    tr("Images (*.png *.pdf *.jpg *.bmp)"));
  if (path.isEmpty()) return;
  QString error;
  if (!export_plot(plot_, path, &error)) QMessageBox::warning(this, tr("Cannot save the image"), error);
}

void AttentionHeatmap::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // At once, not queued: QCustomPlot would otherwise show its old, smaller buffer until the next
  // pass of the event loop (and a grab() taken now would have a blank strip).
  if (cellCount() > 0) updateTickLabels();
}

void AttentionHeatmap::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    style_plot(plot_);
    for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) axis->grid()->setVisible(false);
    style_axis(scale_->axis(), plot_->palette());
    hover_rect_->setPen(QPen(palette().color(QPalette::Highlight), 2));
    row_rect_->setPen(QPen(palette().color(QPalette::Highlight), 2, Qt::DashLine));
    plot_->replot(QCustomPlot::rpQueuedReplot);
  } else if (event->type() == QEvent::FontChange) {
    updateTickLabels();
  }
}

}  // namespace ts::ui
