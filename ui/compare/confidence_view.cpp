// SPDX-License-Identifier: GPL-3.0-or-later
// Confidence against sentence score (see confidence_view.h).
#include "compare/confidence_view.h"

#include <algorithm>
#include <cmath>

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "compare/bucket_view.h"
#include "widgets/plot_style.h"
#include "widgets/qt_text.h"

namespace ts::ui {

ConfidenceView::ConfidenceView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("compareConfidence"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 4, 0, 0);
  auto* top = new QHBoxLayout;
  caption_ = new QLabel(this);
  caption_->setObjectName(QStringLiteral("compareConfidenceCaption"));
  caption_->setWordWrap(true);
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  least_ = new QPushButton(tr("Least confident first"), this);
  least_->setObjectName(QStringLiteral("compareLeastConfident"));
  least_->setToolTip(tr("Show the Sentences tab sorted by the model's confidence, least confident first"));
  least_->setEnabled(false);
  top->addWidget(caption_, 1);
  top->addWidget(least_, 0, Qt::AlignTop);
  layout->addLayout(top);
  connect(least_, &QPushButton::clicked, this, [this] {
    if (first_with_confidence_ >= 0) Q_EMIT leastConfidentRequested(first_with_confidence_);
  });

  plot_ = new QCustomPlot(this);
  plot_->setObjectName(QStringLiteral("compareConfidenceChart"));
  plot_->setMinimumHeight(180);
  style_plot(plot_);
  plot_->legend->setVisible(true);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
  plot_->xAxis->setLabel(tr("confidence: mean token log-probability (0 = certain)"));
  plot_->setToolTip(
      tr("One point per test sentence and system. Points that climb to the right: the surer the model, "
         "the better the translation. Drag to pan, wheel to zoom."));
  buckets_ = new BucketView(QStringLiteral("compareConfidenceBuckets"), this);

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(plot_);
  split->addWidget(buckets_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  split->setChildrenCollapsible(false);
  layout->addWidget(split, 1);
  clearComparison();
}

void ConfidenceView::clearComparison() {
  first_with_confidence_ = -1;
  least_->setEnabled(false);
  caption_->setText(tr("Compare models (not text files) to see how sure each was of its outputs."));
  plot_->clearGraphs();
  plot_->replot(QCustomPlot::rpQueuedReplot);
  buckets_->clearTable();
}

void ConfidenceView::setComparison(const Comparison& c, const CompareInput& in, const QStringList& names) {
  clearComparison();
  const QString metric = q(c.sentence_metric);
  plot_->yAxis->setLabel(tr("sentence %1").arg(metric));
  QStringList lines;
  double low = 0;
  for (int s = 0; s < names.size(); ++s) {
    const auto si = static_cast<std::size_t>(s);
    if (si >= c.confidence.size() || !c.confidence[si].available || si >= in.confidences.size()) continue;
    const auto& r = c.confidence[si];
    if (first_with_confidence_ < 0) first_with_confidence_ = s;
    auto* graph = plot_->addGraph();
    graph->setName(names[s]);
    graph->setLineStyle(QCPGraph::lsNone);
    QColor color = series_color(s);
    color.setAlpha(names.size() > 1 ? 110 : 150);
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 5));
    QVector<double> x, y;
    for (std::size_t i = 0; i < in.confidences[si].size() && i < c.sentence_scores[si].size(); ++i) {
      if (!std::isfinite(in.confidences[si][i])) continue;
      x << in.confidences[si][i];
      y << c.sentence_scores[si][i];
      low = std::min(low, in.confidences[si][i]);
    }
    graph->setData(x, y);  // unsorted keys: QCPGraph sorts them
    lines << tr("<b>%1</b>: r = %2, ρ = %3 over %4 sentences (mean log p %5)")
                 .arg(names[s].toHtmlEscaped())
                 .arg(r.pearson, 0, 'f', 2)
                 .arg(r.spearman, 0, 'f', 2)
                 .arg(r.sentences)
                 .arg(r.mean, 0, 'f', 2);
  }
  if (first_with_confidence_ < 0) {
    plot_->replot(QCustomPlot::rpQueuedReplot);
    return;  // text files: the caption says what to do
  }
  const auto& best = c.confidence[static_cast<std::size_t>(first_with_confidence_)];
  const QString verdict = best.spearman >= 0.5   ? tr("it mostly knows when it is wrong")
                          : best.spearman >= 0.2 ? tr("it knows only roughly when it is wrong")
                                                 : tr("its confidence says little about its quality");
  caption_->setText(
      tr("Does the model know when it is wrong? Confidence against sentence %1 (r: Pearson, ρ: Spearman): ")
          .arg(metric) +
      lines.join(QStringLiteral("; ")) + QStringLiteral(". ") +
      tr("For %1, %2.").arg(names[first_with_confidence_].toHtmlEscaped(), verdict));
  caption_->setTextFormat(Qt::RichText);
  plot_->xAxis->setRange(std::floor(low * 2) / 2 - 0.1, 0.05);
  plot_->yAxis->setRange(-2, 102);
  plot_->replot(QCustomPlot::rpQueuedReplot);
  buckets_->setTable(c.by_confidence, names, false);
  least_->setEnabled(true);
}

}  // namespace ts::ui
