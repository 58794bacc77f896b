// SPDX-License-Identifier: GPL-3.0-or-later
#include "language_model/lm_attention_view.h"

#include <algorithm>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "services/lm_service.h"
#include "widgets/attention_heatmap.h"

namespace ts::ui {

LmAttentionView::LmAttentionView(const LmService* service, QWidget* parent) : QWidget(parent), service_(service) {
  auto* layout = new QVBoxLayout(this);
  auto* row = new QHBoxLayout;
  layer_ = new QComboBox;
  layer_->setObjectName(QStringLiteral("lmAttentionLayer"));
  head_ = new QComboBox;
  head_->setObjectName(QStringLiteral("lmAttentionHead"));
  connect(layer_, QOverload<int>::of(&QComboBox::currentIndexChanged), this, &LmAttentionView::showSelected);
  connect(head_, QOverload<int>::of(&QComboBox::currentIndexChanged), this, &LmAttentionView::showSelected);
  row->addWidget(new QLabel(tr("Layer")));
  row->addWidget(layer_);
  row->addWidget(new QLabel(tr("Head")));
  row->addWidget(head_);
  row->addStretch(1);
  layout->addLayout(row);
  attention_info_ = new QLabel(tr("Generate some text to see where each position looks."));
  attention_info_->setObjectName(QStringLiteral("lmAttentionInfo"));
  attention_info_->setWordWrap(true);
  layout->addWidget(attention_info_);
  heatmap_ = new AttentionHeatmap;
  heatmap_->setObjectName(QStringLiteral("lmAttentionMap"));
  heatmap_->setAxisTitles(tr("position (reads)"), tr("earlier position (attended to)"));
  heatmap_->clear(tr("No generation yet."));
  layout->addWidget(heatmap_, 1);
}

void LmAttentionView::setAttention(const LmAttention& attention) {
  attention_ = attention;
  const QSignalBlocker block_layer(layer_), block_head(head_);
  layer_->clear();
  head_->clear();
  for (int l = 0; l < attention_.layers(); ++l) layer_->addItem(tr("layer %1").arg(l + 1));
  for (int h = 0; h < attention_.heads(); ++h) head_->addItem(tr("head %1").arg(h + 1));
  if (attention_.heads() > 1) head_->addItem(tr("mean of heads"));
  showSelected();
}

void LmAttentionView::showSelected() {
  if (attention_.layers() == 0) {
    const bool bigram = service_->hasModel() && service_->modelConfig().kind == LmKind::kBigram;
    heatmap_->clear(
        bigram ? tr("The bigram model has no attention: each token's next-token scores are one row of its table.")
               : tr("No attention recorded (the generation was stopped, or none ran yet)."));
    attention_info_->clear();
    return;
  }
  const int layer = std::max(0, layer_->currentIndex());
  const int head = std::max(0, head_->currentIndex());
  const auto& heads = attention_.weights[layer];
  QVector<QVector<double>> values;
  if (head < heads.size()) {
    values = heads[head];
  } else {  // mean of heads
    values = heads[0];
    for (int h = 1; h < heads.size(); ++h)
      for (int r = 0; r < values.size(); ++r)
        for (int c = 0; c < values[r].size(); ++c) values[r][c] += heads[h][r][c];
    for (auto& row : values)
      for (auto& v : row) v /= heads.size();
  }
  heatmap_->setMatrix(attention_.tokens, attention_.tokens, values);
  attention_info_->setText(tr("Causal self-attention over the last %1 tokens of prompt and generated text (the context "
                              "is at most %2). Row: the position reading; column: an earlier position it attends to. "
                              "The output at a row predicts the token after it.")
                               .arg(attention_.tokens.size())
                               .arg(service_->modelConfig().block_size));
}

}  // namespace ts::ui
