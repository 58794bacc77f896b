// SPDX-License-Identifier: GPL-3.0-or-later
// The Translate panel's cross-attention heatmap with its layer and head choices.
#include "translate/translate_attention_box.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "services/translation_service.h"
#include "widgets/attention_heatmap.h"

namespace ts::ui {

namespace {

QStringList json_strings(const nlohmann::json& j) {
  QStringList out;
  if (!j.is_array()) return out;
  for (const auto& s : j)
    if (s.is_string()) out << QString::fromStdString(s.get<std::string>());
  return out;
}

}  // namespace

TranslateAttentionBox::TranslateAttentionBox(QWidget* parent)
    : QGroupBox(tr("Attention: which source tokens each output token looked at"), parent) {
  auto* v = new QVBoxLayout(this);
  auto* row = new QHBoxLayout;
  layer_ = new QComboBox(this);
  layer_->setObjectName(QStringLiteral("attentionLayer"));
  layer_->setToolTip(tr("Decoder layer whose cross-attention is shown"));
  head_ = new QComboBox(this);
  head_->setObjectName(QStringLiteral("attentionHead"));
  head_->setToolTip(tr("One attention head, or the mean of all heads of the layer"));
  auto* layer_label = new QLabel(tr("La&yer"), this);
  layer_label->setBuddy(layer_);
  auto* head_label = new QLabel(tr("&Head"), this);
  head_label->setBuddy(head_);
  row->addWidget(layer_label);
  row->addWidget(layer_);
  row->addSpacing(12);
  row->addWidget(head_label);
  row->addWidget(head_);
  auto* hint = new QLabel(tr("Hover a cell for its weight · wheel zooms · double-click resets"), this);
  hint->setForegroundRole(QPalette::PlaceholderText);
  // Wrapped when the dock is narrow: on one line it made the Translate panel scroll sideways.
  hint->setWordWrap(true);
  hint->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  row->addWidget(hint, 1);
  heatmap_ = new AttentionHeatmap(this);
  heatmap_->setObjectName(QStringLiteral("attentionHeatmap"));
  heatmap_->setMinimumHeight(220);
  heatmap_->clear(tr("Translate a sentence to see its attention."));
  v->addLayout(row);
  v->addWidget(heatmap_, 1);
  connect(layer_, qOverload<int>(&QComboBox::currentIndexChanged), this, &TranslateAttentionBox::choiceChanged);
  connect(head_, qOverload<int>(&QComboBox::currentIndexChanged), this, &TranslateAttentionBox::choiceChanged);
}

int TranslateAttentionBox::layer() const { return layer_->currentIndex(); }
int TranslateAttentionBox::head() const { return head_->currentIndex() - 1; }

// Layer and head choices follow the model; a choice made for the previous sentence is kept.
void TranslateAttentionBox::followModel(const TranslationResult& r) {
  const auto& cross = r.attention.contains("cross") ? r.attention["cross"] : nlohmann::json();
  const int layers = cross.is_array() ? static_cast<int>(cross.size()) : 0;
  const int heads = layers > 0 && cross[0].is_array() ? static_cast<int>(cross[0].size()) : 0;
  const QSignalBlocker block_layer(layer_), block_head(head_);
  if (layer_->count() != layers) {
    layer_->clear();
    for (int l = 0; l < layers; ++l)
      layer_->addItem(l + 1 == layers ? tr("%1 (last)").arg(l + 1) : QString::number(l + 1));
    layer_->setCurrentIndex(layers - 1);
  }
  if (head_->count() != heads + 1) {
    head_->clear();
    if (heads > 0) {
      head_->addItem(tr("Average of heads"));
      for (int h = 0; h < heads; ++h) head_->addItem(tr("Head %1").arg(h + 1));
    }
    head_->setCurrentIndex(0);
  }
}

void TranslateAttentionBox::showAttention(const TranslationResult& r) {
  const auto& a = r.attention;
  const int layer = layer_->currentIndex(), head = head_->currentIndex() - 1;
  if (!a.is_object() || !a.contains("cross") || !a["cross"].is_array() || layer < 0 ||
      layer >= static_cast<int>(a["cross"].size())) {
    heatmap_->clear(r.id == 0 ? tr("Translate a sentence to see its attention.") : tr("No attention was recorded."));
    return;
  }
  const auto& heads = a["cross"][layer];  // [head][target][source]
  QVector<QVector<double>> matrix;
  const auto add_head = [&](const nlohmann::json& m, double weight) {
    for (std::size_t q = 0; q < m.size(); ++q) {
      if (matrix.size() <= static_cast<int>(q)) matrix.resize(static_cast<int>(q) + 1);
      auto& row = matrix[static_cast<int>(q)];
      if (row.size() < static_cast<int>(m[q].size())) row.resize(static_cast<int>(m[q].size()));
      for (std::size_t k = 0; k < m[q].size(); ++k)  // NaN is stored as null: a diverged model shows 0
        if (m[q][k].is_number()) row[static_cast<int>(k)] += weight * m[q][k].get<double>();
    }
  };
  if (head < 0) {
    for (const auto& m : heads) add_head(m, 1.0 / static_cast<double>(heads.size()));
  } else if (head < static_cast<int>(heads.size())) {
    add_head(heads[head], 1.0);
  }
  QStringList rows = json_strings(a.value("target_tokens", nlohmann::json::array()));
  QStringList columns = json_strings(a.value("source_tokens", nlohmann::json::array()));
  if (rows.isEmpty()) rows = r.target_tokens;
  if (columns.isEmpty()) columns = r.source_tokens;
  heatmap_->setMatrix(rows, columns, matrix);
}

}  // namespace ts::ui
