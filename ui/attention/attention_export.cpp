// SPDX-License-Identifier: GPL-3.0-or-later
#include "attention/attention_export.h"

#include <algorithm>
#include <cmath>

#include <QColor>
#include <QFileInfo>
#include <QSaveFile>

#include <nlohmann/json.hpp>

#include "widgets/attention_thumbnail.h"
#include "services/translation_service.h"

namespace ts::ui {

namespace {

QString num(double x) { return QString::number(x, 'f', 1); }

// Rough advance of a label in pixels (no font machinery in a file writer): wide for CJK and
// other full-width characters, about 0.6 em otherwise.
double text_width(const QString& s, double font_px) {
  double w = 0;
  for (const QChar c : s)
    w += c.unicode() >= 0x1100 && !(c.unicode() >= 0x2500 && c.unicode() < 0x2E80) ? font_px : 0.62 * font_px;
  return w;
}

QString hex(QRgb rgb) { return QColor(rgb).name(QColor::HexRgb); }

}  // namespace

QString xml_escape(const QString& text) {
  QString out;
  out.reserve(text.size() + 8);
  for (const QChar c : text) {
    const ushort u = c.unicode();
    if (u < 0x20 && u != 0x9 && u != 0xA && u != 0xD) continue;  // not allowed in XML 1.0
    if (u == 0xFFFE || u == 0xFFFF) continue;
    switch (u) {
      case '&':
        out += QLatin1String("&amp;");
        break;
      case '<':
        out += QLatin1String("&lt;");
        break;
      case '>':
        out += QLatin1String("&gt;");
        break;
      case '"':
        out += QLatin1String("&quot;");
        break;
      case '\'':
        out += QLatin1String("&apos;");
        break;
      default:
        out += c;
    }
  }
  return out;
}

QString attention_svg(const AttentionSvgInput& in) {
  const int rows = static_cast<int>(in.values.size());
  int columns = 0;
  for (const auto& r : in.values) columns = std::max(columns, static_cast<int>(r.size()));
  const auto label = [](const QStringList& labels, int i) {
    return i < labels.size() ? labels[i] : QString::number(i + 1);
  };
  double top_value = 1;
  for (const auto& r : in.values)
    for (double v : r)
      if (std::isfinite(v)) top_value = std::max(top_value, v);

  // Cells shrink for long sentences so the drawing stays about 500 px; labels follow the cells.
  const double cell = std::clamp(520.0 / std::max({rows, columns, 1}), 8.0, 28.0);
  const double font = std::clamp(cell * 0.72, 7.0, 12.0);
  double widest_row = 0, widest_column = 0;
  for (int r = 0; r < rows; ++r) widest_row = std::max(widest_row, text_width(label(in.rows, r), font));
  for (int c = 0; c < columns; ++c) widest_column = std::max(widest_column, text_width(label(in.columns, c), font));
  const double title_h = in.title.isEmpty() ? 8 : 26, subtitle_h = in.subtitle.isEmpty() ? 0 : 18;
  const double left = 30 + widest_row + 6;
  const double top = title_h + subtitle_h + 22 + widest_column + 6;
  const double map_w = columns * cell, map_h = rows * cell;
  const double bar_x = left + map_w + 18;
  // Wide enough for the title and the sentence too (a short sentence makes a narrow map).
  const double width =
      std::max({bar_x + 14 + 48, 20 + text_width(in.title, 15) * 1.08, 20 + text_width(in.subtitle, 12)});
  const double height = top + map_h + 24;

  QString s;
  s.reserve(256 + rows * columns * 160);
  s += QLatin1String("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  s += QStringLiteral(
           "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%1\" height=\"%2\" viewBox=\"0 0 %1 %2\" "
           "font-family=\"'Noto Sans', 'Noto Sans CJK SC', 'DejaVu Sans', sans-serif\">\n")
           .arg(num(width), num(height));
  s += QStringLiteral("<defs><linearGradient id=\"viridis\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">");
  for (double stop : {0.0, 0.25, 0.5, 0.75, 1.0})
    s += QStringLiteral("<stop offset=\"%1\" stop-color=\"%2\"/>").arg(stop).arg(hex(attention_color(stop)));
  s += QLatin1String("</linearGradient></defs>\n");
  s += QStringLiteral("<rect class=\"background\" x=\"0\" y=\"0\" width=\"%1\" height=\"%2\" fill=\"#ffffff\"/>\n")
           .arg(num(width), num(height));
  if (!in.title.isEmpty())
    s += QStringLiteral("<text x=\"10\" y=\"19\" font-size=\"15\" font-weight=\"bold\" fill=\"#202020\">%1</text>\n")
             .arg(xml_escape(in.title));
  if (!in.subtitle.isEmpty())
    s += QStringLiteral("<text x=\"10\" y=\"%1\" font-size=\"12\" fill=\"#404040\">%2</text>\n")
             .arg(num(title_h + 13), xml_escape(in.subtitle));
  // Axis titles.
  s +=
      QStringLiteral(
          "<text class=\"axis-title\" x=\"%1\" y=\"%2\" font-size=\"12\" text-anchor=\"middle\" fill=\"#404040\">%3</text>\n")
          .arg(num(left + map_w / 2), num(title_h + subtitle_h + 14), xml_escape(in.column_title));
  s +=
      QStringLiteral(
          "<text class=\"axis-title\" transform=\"translate(14 %1) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\" "
          "dominant-baseline=\"central\" fill=\"#404040\">%2</text>\n")
          .arg(num(top + map_h / 2), xml_escape(in.row_title));
  // Token labels.
  s +=
      QStringLiteral(
          "<g class=\"row-labels\" font-size=\"%1\" fill=\"#202020\" text-anchor=\"end\" dominant-baseline=\"central\">\n")
          .arg(num(font));
  for (int r = 0; r < rows; ++r)
    s += QStringLiteral("<text x=\"%1\" y=\"%2\">%3</text>\n")
             .arg(num(left - 4), num(top + (r + 0.5) * cell), xml_escape(label(in.rows, r)));
  s += QLatin1String("</g>\n");
  s +=
      QStringLiteral(
          "<g class=\"column-labels\" font-size=\"%1\" fill=\"#202020\" text-anchor=\"start\" dominant-baseline=\"central\">\n")
          .arg(num(font));
  for (int c = 0; c < columns; ++c)
    s += QStringLiteral("<text transform=\"translate(%1 %2) rotate(-90)\">%3</text>\n")
             .arg(num(left + (c + 0.5) * cell), num(top - 4), xml_escape(label(in.columns, c)));
  s += QLatin1String("</g>\n");
  // Cells: a <title> in each makes browsers show the pair and the weight on hover.
  s += QLatin1String("<g class=\"cells\" shape-rendering=\"crispEdges\">\n");
  for (int r = 0; r < rows; ++r) {
    const auto& row = in.values[r];
    for (int c = 0; c < columns; ++c) {
      const QString pair = xml_escape(label(in.rows, r) + QStringLiteral(" ← ") + label(in.columns, c));
      const QString geometry = QStringLiteral("x=\"%1\" y=\"%2\" width=\"%3\" height=\"%3\"")
                                   .arg(num(left + c * cell), num(top + r * cell), num(cell));
      if (in.causal && c > r) {
        s += QStringLiteral(
                 "<rect class=\"masked\" %1 fill=\"#d4d4d4\"><title>%2: masked (later token)</title></rect>\n")
                 .arg(geometry, pair);
        continue;
      }
      const double v = c < row.size() && std::isfinite(row[c]) ? row[c] : 0.0;
      s += QStringLiteral("<rect class=\"cell\" %1 fill=\"%2\"><title>%3: %4</title></rect>\n")
               .arg(geometry, hex(attention_color(v / top_value)), pair, QString::number(v, 'f', 4));
    }
  }
  s += QLatin1String("</g>\n");
  // Colour bar.
  s +=
      QStringLiteral(
          "<rect class=\"colorbar\" x=\"%1\" y=\"%2\" width=\"12\" height=\"%3\" fill=\"url(#viridis)\" stroke=\"#808080\" stroke-width=\"0.5\"/>\n")
          .arg(num(bar_x), num(top), num(std::max(map_h, 1.0)));
  s += QStringLiteral(
           "<g font-size=\"10\" fill=\"#202020\" dominant-baseline=\"central\">"
           "<text x=\"%1\" y=\"%2\">%3</text><text x=\"%1\" y=\"%4\">0</text>"
           "<text transform=\"translate(%5 %6) rotate(-90)\" text-anchor=\"middle\">weight</text></g>\n")
           .arg(num(bar_x + 16), num(top + 4), QString::number(top_value, 'g', 3), num(top + map_h - 4),
                num(bar_x + 40), num(top + map_h / 2));
  s += QLatin1String("</svg>\n");
  return s;
}

nlohmann::json attention_export_json(const TranslationResult& result) {
  if (!result.attention.is_object()) return nlohmann::json::object();
  nlohmann::json j = result.attention;
  j["source"] = result.source.toStdString();
  j["text"] = result.text.toStdString();
  j["model"] = result.model.toStdString();
  return j;
}

bool write_export_file(const QString& path, const QByteArray& data, QString* error) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    if (error)
      *error = QObject::tr("%1: cannot be written (%2)").arg(QFileInfo(path).absoluteFilePath(), file.errorString());
    return false;
  }
  if (file.write(data) != data.size() || !file.commit()) {
    if (error)
      *error = QObject::tr("%1: writing failed (%2)").arg(QFileInfo(path).absoluteFilePath(), file.errorString());
    return false;
  }
  return true;
}

}  // namespace ts::ui
