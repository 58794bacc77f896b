// SPDX-License-Identifier: GPL-3.0-or-later
#include "attention/attention_data.h"

#include <QCoreApplication>

#include <nlohmann/json.hpp>

namespace ts::ui {

namespace {

QStringList json_strings(const nlohmann::json& j) {
  QStringList out;
  if (!j.is_array()) return out;
  for (const auto& s : j) out << (s.is_string() ? QString::fromStdString(s.get<std::string>()) : QString());
  return out;
}

// [layer][head][query][key]; anything that is not an array where one is expected is skipped.
std::vector<std::vector<AttentionMatrix>> parse_maps(const nlohmann::json& layers) {
  std::vector<std::vector<AttentionMatrix>> out;
  if (!layers.is_array()) return out;
  out.reserve(layers.size());
  for (const auto& heads : layers) {
    std::vector<AttentionMatrix> layer;
    if (heads.is_array()) {
      layer.reserve(heads.size());
      for (const auto& rows : heads) {
        AttentionMatrix m;
        if (rows.is_array()) {
          m.reserve(rows.size());
          for (const auto& row : rows) {
            std::vector<double> r;
            if (row.is_array()) {
              r.reserve(row.size());
              for (const auto& v : row) r.push_back(v.is_number() ? v.get<double>() : 0.0);
            }
            m.push_back(std::move(r));
          }
        }
        layer.push_back(std::move(m));
      }
    }
    out.push_back(std::move(layer));
  }
  return out;
}

QString tr(const char* text) { return QCoreApplication::translate("ts::ui::AttentionData", text); }

}  // namespace

AttentionData AttentionData::fromJson(const nlohmann::json& attention, const QStringList& source_fallback,
                                      const QStringList& target_fallback) {
  AttentionData d;
  if (attention.is_object()) {
    for (auto kind : {AttentionKind::EncoderSelf, AttentionKind::DecoderSelf, AttentionKind::Cross})
      if (attention.contains(jsonKey(kind))) d.maps_[index(kind)] = parse_maps(attention[jsonKey(kind)]);
    if (attention.contains("source_tokens")) d.source_tokens_ = json_strings(attention["source_tokens"]);
    if (attention.contains("target_tokens")) d.target_tokens_ = json_strings(attention["target_tokens"]);
  }
  if (d.source_tokens_.isEmpty()) d.source_tokens_ = source_fallback;
  if (d.target_tokens_.isEmpty()) d.target_tokens_ = target_fallback;
  return d;
}

bool AttentionData::isEmpty() const {
  for (const auto& kind : maps_)
    for (const auto& layer : kind)
      for (const auto& head : layer)
        if (!head.empty()) return false;
  return true;
}

int AttentionData::layers(AttentionKind kind) const { return static_cast<int>(maps_[index(kind)].size()); }

int AttentionData::heads(AttentionKind kind) const {
  const auto& m = maps_[index(kind)];
  return m.empty() ? 0 : static_cast<int>(m.front().size());
}

const std::vector<AttentionMatrix>& AttentionData::layerHeads(AttentionKind kind, int layer) const {
  static const std::vector<AttentionMatrix> none;
  const auto& m = maps_[index(kind)];
  return layer >= 0 && layer < static_cast<int>(m.size()) ? m[static_cast<std::size_t>(layer)] : none;
}

AttentionMatrix AttentionData::matrix(AttentionKind kind, int layer, int head) const {
  const auto& heads = layerHeads(kind, layer);
  if (head < 0) return average_heads(heads);
  return head < static_cast<int>(heads.size()) ? heads[static_cast<std::size_t>(head)] : AttentionMatrix();
}

QStringList AttentionData::rowLabels(AttentionKind kind) const {
  switch (kind) {
    case AttentionKind::EncoderSelf:
      return source_tokens_;
    case AttentionKind::Cross:
      return target_tokens_;
    case AttentionKind::DecoderSelf:
      break;
  }
  // The decoder is fed "<s>" first, then each token it produced: step t sees y(t-1) and predicts y(t).
  QStringList inputs{QStringLiteral("<s>")};
  for (int t = 0; t + 1 < target_tokens_.size(); ++t) inputs << target_tokens_[t];
  return inputs;
}

QStringList AttentionData::columnLabels(AttentionKind kind) const {
  return kind == AttentionKind::DecoderSelf ? rowLabels(kind) : source_tokens_;
}

QString AttentionData::kindName(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::EncoderSelf:
      return tr("Encoder self-attention");
    case AttentionKind::DecoderSelf:
      return tr("Decoder self-attention (causal)");
    case AttentionKind::Cross:
      return tr("Cross-attention");
  }
  return {};
}

QString AttentionData::rowTitle(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::EncoderSelf:
      return tr("query (source token)");
    case AttentionKind::DecoderSelf:
      return tr("query (decoder input, predicts the next token)");
    case AttentionKind::Cross:
      return tr("output (target token)");
  }
  return {};
}

QString AttentionData::columnTitle(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::EncoderSelf:
      return tr("key (source token)");
    case AttentionKind::DecoderSelf:
      return tr("key (earlier decoder input)");
    case AttentionKind::Cross:
      return tr("input (source token)");
  }
  return {};
}

const char* AttentionData::jsonKey(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::EncoderSelf:
      return "encoder_self";
    case AttentionKind::DecoderSelf:
      return "decoder_self";
    case AttentionKind::Cross:
      return "cross";
  }
  return "";
}

QVector<QVector<double>> to_qvector(const AttentionMatrix& m) {
  QVector<QVector<double>> out;
  out.reserve(static_cast<int>(m.size()));
  for (const auto& row : m) out.push_back(QVector<double>(row.begin(), row.end()));
  return out;
}

}  // namespace ts::ui
