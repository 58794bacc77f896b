// SPDX-License-Identifier: GPL-3.0-or-later
// Shared look and behaviour of every chart: colours from the widget palette (so light and dark
// themes both read well), a consistent series palette, drag/zoom, and export to PNG/PDF/SVG-less
// formats QCustomPlot supports.
#pragma once

#include <QColor>
#include <QString>

class QCPColorGradient;
class QCustomPlot;

namespace ts::ui {

/// Applies the palette's colours to axes, grid, legend and background; enables drag and wheel zoom.
void style_plot(QCustomPlot* plot);
/// Shows the legend above the plot area, where it never covers a curve (the end of a training curve
/// is what people look at, and an inset legend sat on it): in one row, or in rows of `columns` entries.
void legend_above_plot(QCustomPlot* plot, int columns = 0);
/// The i-th colour of a qualitative palette that reads on light and dark backgrounds.
QColor series_color(int i);
/// The colour of something the model gave probability `p`: red when unsure, through amber, to green
/// when sure; pale, for dark text on it (the Translate panel's tokens, the Compare panel's confidences).
QColor confidence_color(double p);
/// Viridis: perceptually uniform, readable with colour-blindness and on light and dark themes
/// (every heatmap uses it).
QCPColorGradient viridis_gradient();
/// Saves the plot by the file's suffix: .png, .pdf, .jpg or .bmp. Returns false and fills `error`.
bool export_plot(QCustomPlot* plot, const QString& path, QString* error = nullptr);

}  // namespace ts::ui
