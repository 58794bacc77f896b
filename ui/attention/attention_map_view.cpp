// SPDX-License-Identifier: GPL-3.0-or-later
// The attention explorer's large map with its head line and hover line (see attention_map_view.h).
#include "attention/attention_map_view.h"

#include <QLabel>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "attention/attention_util.h"
#include "widgets/attention_heatmap.h"

namespace ts::ui {

using attention_util::percent;
using attention_util::plain_tooltip;

AttentionMapView::AttentionMapView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  head_info_ = new QLabel(this);
  head_info_->setObjectName(QStringLiteral("attentionHeadInfo"));
  head_info_->setTextFormat(Qt::PlainText);
  head_info_->setWordWrap(true);
  layout->addWidget(head_info_);
  heatmap_ = new AttentionHeatmap(this);
  heatmap_->setObjectName(QStringLiteral("attentionLarge"));
  heatmap_->setMinimumSize(280, 220);
  layout->addWidget(heatmap_, 1);
  hover_ = new QLabel(this);
  hover_->setObjectName(QStringLiteral("attentionHover"));
  hover_->setTextFormat(Qt::PlainText);
  hover_->setWordWrap(true);  // on one line the causal-mask hint widened a 1280-pixel window
  hover_->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(hover_);
  connect(heatmap_, &AttentionHeatmap::cellHovered, this, &AttentionMapView::onHover);
  hover_->setText(hoverHint());
}

void AttentionMapView::showMap(const AttentionData& data, AttentionKind kind, int layer, int head,
                               const HeadSummary& summary, const QString& title) {
  kind_ = kind;
  const AttentionMatrix m = data.matrix(kind, layer, head);
  if (m.empty() || attention_columns(m) == 0) {
    heatmap_->clear(data.isEmpty() ? tr("Translate a sentence to explore its attention.")
                                   : tr("No %1 in this translation.").arg(AttentionData::kindName(kind).toLower()));
    head_info_->clear();
    return;
  }
  heatmap_->setAxisTitles(AttentionData::rowTitle(kind), AttentionData::columnTitle(kind));
  heatmap_->setMatrix(data.rowLabels(kind), data.columnLabels(kind), to_qvector(m));

  // The causal mask: cells of later tokens are transparent over a hatched background, so they
  // read as "not there" rather than as weight 0.
  if (auto* map = qobject_cast<QCPColorMap*>(heatmap_->plot()->plottable(0))) {
    map->data()->clearAlpha();
    const int rows = heatmap_->rowCount(), columns = heatmap_->columnCount();
    if (kind == AttentionKind::DecoderSelf && rows >= 2 && columns >= 2)
      for (int r = 0; r < rows; ++r)
        for (int c = r + 1; c < columns; ++c) map->data()->setAlpha(c, r, 0);
  }
  QColor hatch = palette().color(QPalette::Mid);
  heatmap_->plot()->axisRect()->setBackground(QBrush(hatch, Qt::BDiagPattern));
  heatmap_->plot()->replot(QCustomPlot::rpQueuedReplot);

  head_info_->setText(tr("%1: %2 · mean entropy %3 nats (%4 of the maximum)")
                          .arg(title, QString::fromStdString(summary.description))
                          .arg(summary.mean_entropy, 0, 'f', 2)
                          .arg(percent(summary.normalized_entropy)));
  hover_->setText(hoverHint());
}

QString AttentionMapView::hoverHint() const {
  return kind_ == AttentionKind::DecoderSelf
             ? tr("Hover a cell to read its weight; hatched cells are later tokens, hidden by the causal mask.")
             : tr("Hover a cell to read its weight.");
}

QString AttentionMapView::cellText(int row, int column) const {
  if (row < 0 || column < 0 || row >= heatmap_->rowCount() || column >= heatmap_->columnCount()) return {};
  if (AttentionData::isMasked(kind_, row, column))
    return tr("%1 ← %2: masked: later tokens")
        .arg(heatmap_->rowLabels().value(row), heatmap_->columnLabels().value(column));
  return heatmap_->cellText(row, column);
}

void AttentionMapView::onHover(int row, int column, double) {
  if (row < 0) {
    hover_->setText(hoverHint());
    return;
  }
  const QString text = cellText(row, column);
  hover_->setText(text);
  // The heatmap's own tooltip would show the weight 0; say why there is none.
  if (AttentionData::isMasked(kind_, row, column))
    QToolTip::showText(heatmap_->plot()->mapToGlobal(heatmap_->cellCenter(row, column)), plain_tooltip(text),
                       heatmap_->plot());
}

}  // namespace ts::ui
