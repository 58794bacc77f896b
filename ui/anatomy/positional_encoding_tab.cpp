// SPDX-License-Identifier: GPL-3.0-or-later
// The "Positional encoding" tab of Model anatomy (see positional_encoding_tab.h).
#include "anatomy/positional_encoding_tab.h"

#include <algorithm>

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "anatomy/anatomy_util.h"
#include "ts/model/positional.h"
#include "ts/train/config.h"
#include "widgets/plot_style.h"

namespace ts::ui {

using anatomy::fill_heatmap;
using anatomy::make_heatmap;
using anatomy::note;

PositionalEncodingTab::PositionalEncodingTab(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("positionalTab"));
  auto* layout = new QVBoxLayout(this);
  auto* controls = new QHBoxLayout;
  positions_ = new QSpinBox(this);
  positions_->setObjectName(QStringLiteral("pePositions"));
  positions_->setRange(1, 1024);
  positions_->setValue(100);
  positions_->setToolTip(tr("Number of positions (rows of the table)"));
  d_model_ = new QSpinBox(this);
  d_model_->setObjectName(QStringLiteral("peDModel"));
  d_model_->setRange(2, 1024);
  d_model_->setSingleStep(2);
  d_model_->setToolTip(tr("Model dimension (columns of the table); follows model.d_model of the configuration"));
  dimensions_ = new QLineEdit(QStringLiteral("4,5,6,7"), this);
  dimensions_->setObjectName(QStringLiteral("peDimensions"));
  dimensions_->setToolTip(
      tr("Dimensions drawn as curves over positions, separated by commas "
         "(4,5,6,7 as in the Annotated Transformer's figure)"));
  controls->addWidget(new QLabel(tr("Positions:"), this));
  controls->addWidget(positions_);
  controls->addWidget(new QLabel(tr("d_model:"), this));
  controls->addWidget(d_model_);
  controls->addWidget(new QLabel(tr("Curves of dimensions:"), this));
  controls->addWidget(dimensions_, 1);
  layout->addLayout(controls);
  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("peMessage"));
  message_->setWordWrap(true);
  message_->setVisible(false);
  layout->addWidget(message_);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  heatmap_ = new QCustomPlot(splitter);
  heatmap_->setObjectName(QStringLiteral("peHeatmap"));
  map_ = make_heatmap(heatmap_, tr("PE value"));
  heatmap_->xAxis->setLabel(tr("Dimension"));
  heatmap_->yAxis->setLabel(tr("Position"));
  curves_ = new QCustomPlot(splitter);
  curves_->setObjectName(QStringLiteral("peCurves"));
  curves_->setMinimumSize(260, 180);
  style_plot(curves_);
  curves_->xAxis->setLabel(tr("Position"));
  curves_->yAxis->setLabel(tr("Encoding value"));
  legend_above_plot(curves_, 8);  // inside, it hid the curves' right end
  splitter->addWidget(heatmap_);
  splitter->addWidget(curves_);
  layout->addWidget(splitter, 1);
  layout->addWidget(
      note(tr("PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)): "
              "each pair of dimensions is a sinusoid of its own wavelength, from 2π to 10000·2π."),
           this));

  connect(positions_, &QSpinBox::valueChanged, this, &PositionalEncodingTab::redraw);
  connect(d_model_, &QSpinBox::valueChanged, this, &PositionalEncodingTab::redraw);
  connect(dimensions_, &QLineEdit::textChanged, this, &PositionalEncodingTab::redraw);
}

void PositionalEncodingTab::followConfig(const ExperimentConfig& config) {
  {
    const QSignalBlocker blocker(d_model_);  // setting it would redraw through its signal: redraw once
    d_model_->setValue(config.model.d_model);
  }
  redraw();
}

void PositionalEncodingTab::redraw() {
  const int positions = positions_->value();
  const int d = d_model_->value();
  const auto table = sinusoidal_values(positions, d);
  fill_heatmap(heatmap_, map_, table, positions, d, QCPRange(-1, 1));

  // The chosen dimensions: those that are not numbers or not below d_model are named, not drawn.
  QStringList bad;
  QList<int> dims;
  const QStringList parts =
      dimensions_->text().split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts);
  for (const QString& part : parts) {
    bool ok = false;
    const int dim = part.toInt(&ok);
    if (!ok || dim < 0 || dim >= d)
      bad << part;
    else if (!dims.contains(dim))
      dims << dim;
  }
  message_->setVisible(!bad.isEmpty());
  if (!bad.isEmpty())
    message_->setText(tr("Not drawn: %1 (dimensions are whole numbers from 0 to %2).")
                          .arg(bad.join(QStringLiteral(", ")))
                          .arg(d - 1));

  curves_->clearGraphs();
  QVector<double> keys(positions);
  for (int p = 0; p < positions; ++p) keys[p] = p;
  for (int i = 0; i < dims.size(); ++i) {
    QVector<double> values(positions);
    for (int p = 0; p < positions; ++p) values[p] = table[static_cast<std::size_t>(p) * d + dims[i]];
    QCPGraph* graph = curves_->addGraph();
    graph->setName(tr("dim %1").arg(dims[i]));
    graph->setPen(QPen(series_color(i), 1.6));
    graph->setData(keys, values, true);
  }
  curves_->xAxis->setRange(0, std::max(positions - 1, 1));
  curves_->yAxis->setRange(-1.1, 1.1);
  curves_->replot();
}

}  // namespace ts::ui
