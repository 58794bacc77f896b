// SPDX-License-Identifier: GPL-3.0-or-later
// ProbePanel, part: the frame data. Reading a probe's JSON into a Frame, the [target][source]
// matrix of a layer and head (or their average), and the two alignment statistics the chart
// follows. These are static members: tests and the history loader call them without a panel.
#include "attention_over_training/probe_panel.h"

#include <algorithm>
#include <cmath>

namespace ts::ui {

namespace {

QStringList string_list(const nlohmann::json& j) {
  QStringList out;
  if (!j.is_array()) return out;
  for (const auto& s : j)
    out << (s.is_string() ? QString::fromStdString(s.get<std::string>()) : QString::fromStdString(s.dump()));
  return out;
}

}  // namespace

bool ProbePanel::parseFrame(const nlohmann::json& probe, qint64 step, Frame* frame, QString* error) {
  const auto fail = [error](const QString& why) {
    if (error) *error = why;
    return false;
  };
  if (!probe.is_object()) return fail(tr("no probe"));
  const auto it = probe.find("cross");
  if (it == probe.end() || !it->is_array() || it->empty()) return fail(tr("no cross-attention"));
  const auto& cross = *it;
  try {
    Frame f;
    f.step = step;
    f.layers = static_cast<int>(cross.size());
    for (const auto& layer : cross) {
      f.heads = std::max(f.heads, static_cast<int>(layer.size()));
      for (const auto& head : layer) {
        f.rows = std::max(f.rows, static_cast<int>(head.size()));
        for (const auto& row : head) f.columns = std::max(f.columns, static_cast<int>(row.size()));
      }
    }
    if (f.heads == 0 || f.rows == 0 || f.columns == 0) return fail(tr("empty cross-attention"));
    f.cross.assign(static_cast<std::size_t>(f.layers) * f.heads * f.rows * f.columns, 0.0F);
    for (int l = 0; l < f.layers; ++l)
      for (int h = 0; h < static_cast<int>(cross[l].size()); ++h)
        for (int r = 0; r < static_cast<int>(cross[l][h].size()); ++r) {
          const auto& row = cross[l][h][r];
          for (int c = 0; c < static_cast<int>(row.size()); ++c)
            f.cross[((static_cast<std::size_t>(l) * f.heads + h) * f.rows + r) * f.columns + c] = row[c].get<float>();
        }
    f.source = QString::fromStdString(probe.value("source", std::string()));
    f.text = QString::fromStdString(probe.value("text", std::string()));
    f.source_tokens = string_list(probe.value("source_tokens", nlohmann::json()));
    f.target_tokens = string_list(probe.value("target_tokens", nlohmann::json()));
    f.probe = probe;
    *frame = std::move(f);
    return true;
  } catch (const std::exception& e) {
    return fail(tr("malformed cross-attention: %1").arg(QString::fromUtf8(e.what())));
  }
}

QVector<QVector<double>> ProbePanel::matrix(const Frame& f, int layer, int head) {
  QVector<QVector<double>> m;
  if (layer < 0 || layer >= f.layers || head < -1 || head >= f.heads) return m;
  m.resize(f.rows);
  for (int r = 0; r < f.rows; ++r) {
    m[r].resize(f.columns);
    for (int c = 0; c < f.columns; ++c) {
      if (head >= 0) {
        m[r][c] = f.weight(layer, head, r, c);
      } else {
        double sum = 0;
        for (int h = 0; h < f.heads; ++h) sum += f.weight(layer, h, r, c);
        m[r][c] = sum / f.heads;
      }
    }
  }
  return m;
}

double ProbePanel::sharpness(const QVector<QVector<double>>& m) {
  double total = 0;
  int rows = 0;
  for (const auto& row : m) {
    if (row.isEmpty()) continue;
    total += *std::max_element(row.cbegin(), row.cend());
    ++rows;
  }
  return rows ? total / rows : 0;
}

double ProbePanel::normalizedEntropy(const QVector<QVector<double>>& m) {
  double total = 0;
  int rows = 0;
  for (const auto& row : m) {
    if (row.size() < 2) continue;
    double sum = 0;
    for (double w : row) sum += std::max(0.0, w);
    if (sum <= 0) continue;
    double h = 0;
    for (double w : row) {
      const double p = std::max(0.0, w) / sum;  // rows sum to 1 up to the stored rounding
      if (p > 0) h -= p * std::log(p);
    }
    total += h / std::log(static_cast<double>(row.size()));
    ++rows;
  }
  return rows ? total / rows : 0;
}

}  // namespace ts::ui
