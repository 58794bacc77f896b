// SPDX-License-Identifier: GPL-3.0-or-later
// Exports of the attention explorer: the shown map as SVG (a small writer of our own: cells as
// <rect>, tokens as <text>, since Qt's Svg module is not available), and all weights of a
// translation as JSON. The file dialogs live in the panel; these take a path so tests call them.
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>

#include <nlohmann/json_fwd.hpp>

namespace ts::ui {

struct TranslationResult;

struct AttentionSvgInput {
  QString title;                    // "Cross-attention · layer 2 · head 3"
  QString subtitle;                 // e.g. the sentence
  QString row_title, column_title;  // axis titles
  QStringList rows, columns;        // token labels
  QVector<QVector<double>> values;  // [row][column]; missing entries read as 0
  bool causal = false;              // cells with column > row are masked (drawn grey)
};

/// Escapes text for XML character data and attribute values (& < > " '), dropping the control
/// characters XML 1.0 forbids.
QString xml_escape(const QString& text);

/// A standalone SVG document: one <rect class="cell"> per visible cell (fill from viridis over
/// [0, max(1, largest weight)], a <title> naming the pair and weight), <rect class="masked"> for
/// the cells the causal mask hides, tokens as <text> (column labels upright), axis titles and a
/// colour bar.
QString attention_svg(const AttentionSvgInput& input);

/// TranslationResult::attention plus "source", "text" and "model" (empty object when the result
/// has no attention).
nlohmann::json attention_export_json(const TranslationResult& result);

/// Writes `data` to `path` atomically (QSaveFile); false with a message naming the file.
bool write_export_file(const QString& path, const QByteArray& data, QString* error = nullptr);

}  // namespace ts::ui
