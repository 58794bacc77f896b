// SPDX-License-Identifier: GPL-3.0-or-later
// The "Model positions" tab of Model anatomy (see model_positions_tab.h).
#include "anatomy/model_positions_tab.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "anatomy/anatomy_util.h"

namespace ts::ui {

using anatomy::fill_heatmap;
using anatomy::make_heatmap;
using anatomy::note;

namespace {

// Hovering a heatmap shows the cell under the mouse as a tooltip; the text is also kept in the
// plot's "hoverText" property (tests and screenshots read it).
void attach_hover(QCustomPlot* plot, QCPColorMap* map,
                  std::function<QString(int column, int row, double value)> describe) {
  QObject::connect(plot, &QCustomPlot::mouseMove, plot, [plot, map, describe](QMouseEvent* event) {
    const QPointF pos = event->position();
    int column = -1, row = -1;
    QString text;
    if (map->visible() && plot->axisRect()->rect().contains(pos.toPoint()) && map->data()->keySize() > 0) {
      map->data()->coordToCell(plot->xAxis->pixelToCoord(pos.x()), plot->yAxis->pixelToCoord(pos.y()), &column, &row);
      if (column >= 0 && row >= 0 && column < map->data()->keySize() && row < map->data()->valueSize())
        text = describe(column, row, map->data()->cell(column, row));
    }
    plot->setProperty("hoverText", text);
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(plot->mapToGlobal(pos.toPoint()), text, plot);
  });
}

}  // namespace

ModelPositionsTab::ModelPositionsTab(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("modelPositionsMessage"));
  message_->setWordWrap(true);
  message_->setTextFormat(Qt::PlainText);
  layout->addWidget(message_);
  auto* controls = new QHBoxLayout;
  count_ = new QSpinBox(this);
  count_->setObjectName(QStringLiteral("modelPositionsCount"));
  count_->setRange(2, 256);
  count_->setValue(64);
  count_->setToolTip(tr("How many positions (from position 0) of the model's table are drawn"));
  controls->addWidget(new QLabel(tr("Positions shown:"), this));
  controls->addWidget(count_);
  controls->addStretch(1);
  layout->addLayout(controls);

  learned_box_ = new QWidget(this);
  auto* learned_layout = new QVBoxLayout(learned_box_);
  learned_layout->setContentsMargins(0, 0, 0, 0);
  learned_layout->addWidget(
      note(tr("The learned position table: one row per position, one column per dimension."), learned_box_));
  learned_ = new QCustomPlot(learned_box_);
  learned_->setObjectName(QStringLiteral("anatomyLearnedPositions"));
  learned_map_ = make_heatmap(learned_, tr("Value"));
  learned_->xAxis->setLabel(tr("Dimension"));
  learned_->yAxis->setLabel(tr("Position"));
  learned_->setMinimumHeight(260);
  attach_hover(learned_, learned_map_, [](int column, int row, double value) {
    return tr("position %1, dimension %2: %3").arg(row).arg(column).arg(value, 0, 'f', 4);
  });
  learned_layout->addWidget(learned_, 1);  // the plot takes the height, not its title
  layout->addWidget(learned_box_, 1);

  similarity_box_ = new QWidget(this);
  auto* similarity_layout = new QVBoxLayout(similarity_box_);
  similarity_layout->setContentsMargins(0, 0, 0, 0);
  similarity_title_ = note(QString(), similarity_box_);
  similarity_layout->addWidget(similarity_title_);
  similarity_ = new QCustomPlot(similarity_box_);
  similarity_->setObjectName(QStringLiteral("anatomyPositionSimilarity"));
  similarity_map_ = make_heatmap(similarity_, tr("Cosine similarity"));
  similarity_->xAxis->setLabel(tr("Position"));
  similarity_->yAxis->setLabel(tr("Position"));
  similarity_->setMinimumHeight(320);
  attach_hover(similarity_, similarity_map_, [](int column, int row, double value) {
    return tr("positions %1 and %2 (distance %3): cosine similarity %4")
        .arg(row)
        .arg(column)
        .arg(std::abs(row - column))
        .arg(value, 0, 'f', 3);
  });
  similarity_layout->addWidget(similarity_, 1);
  layout->addWidget(similarity_box_, 1);
  note_ = note(QString(), this);
  note_->setObjectName(QStringLiteral("modelPositionsNote"));
  layout->addWidget(note_);
  layout->addStretch(0);

  connect(count_, &QSpinBox::valueChanged, this, &ModelPositionsTab::positionCountChanged);
}

int ModelPositionsTab::positionCount() const { return count_->value(); }

void ModelPositionsTab::setMessage(const QString& message) { message_->setText(message); }

void ModelPositionsTab::showNoModel(const QString& message) {
  message_->setText(message);
  learned_box_->setVisible(false);
  similarity_box_->setVisible(false);
  note_->setVisible(false);
}

void ModelPositionsTab::showTables(const ModelTables& tables) {
  const int p = tables.positions;
  message_->setText(tr("%1: %2 positions, the first %3 of %4 shown, d_model %5.")
                        .arg(tables.model, tables.learned_positions ? tr("learned") : tr("sinusoidal (fixed)"))
                        .arg(p)
                        .arg(tables.max_positions)
                        .arg(tables.d_model));
  learned_box_->setVisible(tables.learned_positions);
  if (tables.learned_positions) {
    float top = 0;
    for (float v : tables.position_table) top = std::max(top, std::abs(v));
    fill_heatmap(learned_, learned_map_, tables.position_table, p, tables.d_model,
                 QCPRange(-std::max(top, 1e-6f), std::max(top, 1e-6f)));
  }
  similarity_box_->setVisible(true);
  similarity_title_->setText(tables.learned_positions
                                 ? tr("Cosine similarity between the learned positions (P \u00d7 P).")
                                 : tr("Cosine similarity between the model's sinusoidal positions (P \u00d7 P)."));
  fill_heatmap(similarity_, similarity_map_, tables.position_similarity, p, p, QCPRange(-1, 1));
  note_->setVisible(true);
  note_->setText(
      tables.learned_positions
          ? tr("Learned positions start random; training pulls neighbouring positions together, which shows as "
               "a bright band along the diagonal. Positions beyond the longest training sentences get no "
               "gradient and stay close to their random start.")
          : tr("This model adds the fixed sinusoidal table (drawn in the Positional encoding tab). Every "
               "row has the same length and PE(i)\u00b7PE(j) = \u03a3 cos(\u03c9\u2096(i \u2212 j)), so the "
               "similarity depends only on the distance |i \u2212 j|: every diagonal of the matrix is "
               "constant. A learned table has no such constraint."));
}

}  // namespace ts::ui
