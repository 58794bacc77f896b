// SPDX-License-Identifier: GPL-3.0-or-later
// The run report as one self-contained HTML5 file (see ts/store/html_report.h).
//
// Everything is generated here as text: inline CSS, inline SVG charts and heatmaps, no scripts.
// Every string that came from the user, the corpus or the model goes through html_escape().
#include "ts/store/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "ts/text/numbers.h"

namespace ts {
namespace {

// ---- text -------------------------------------------------------------------------------------

std::string esc(std::string_view s) { return html_escape(s); }

/// printf into a std::string (numbers only; no user text goes through a format string).
template <typename... Args>
std::string sfmt(const char* format, Args... args) {
  char buf[128];
  const int n = std::snprintf(buf, sizeof buf, format, args...);
  return n < 0 ? std::string() : std::string(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

/// "1234567" -> "1,234,567".

/// A metric value for a table: thousands for big numbers, 4 significant digits, exponent for tiny.
std::string value_text(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : (v > 0 ? "∞" : "−∞");
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1000) return thousands(static_cast<std::int64_t>(std::llround(v)));
  if (a >= 0.01) return sfmt("%.4g", v);
  return sfmt("%.3e", v);
}

/// An SVG coordinate: one decimal, no trailing ".0".
std::string coord(double v) {
  if (!std::isfinite(v)) v = 0;
  std::string s = sfmt("%.1f", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

std::string bytes_text(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? thousands(bytes) + " B" : sfmt("%.1f %s", v, units[u]);
}

/// Decodes one UTF-8 code point at `i` (advancing it); an invalid byte counts as one character.
char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) {
    ++i;
    return 0xFFFD;
  }
  char32_t cp = len == 1 ? b : b & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (c & 0x3F);
  }
  i += len;
  return cp;
}

bool is_wide(char32_t c) {
  return (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) || (c >= 0xAC00 && c <= 0xD7A3) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
         (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x20000 && c <= 0x3FFFD);
}

/// At most `max_chars` code points of `s`, "…" appended when cut.
std::string truncate_utf8(std::string_view s, std::size_t max_chars) {
  std::size_t i = 0, n = 0;
  while (i < s.size() && n < max_chars) {
    next_code_point(s, i);
    ++n;
  }
  return i < s.size() ? std::string(s.substr(0, i)) + "…" : std::string(s);
}

/// The approximate rendered width of `s` in pixels at `font_px` (CJK characters are square).
double text_width(std::string_view s, double font_px) {
  double w = 0;
  for (std::size_t i = 0; i < s.size();) w += is_wide(next_code_point(s, i)) ? 1.0 : 0.6;
  return w * font_px;
}

std::string base_name(const std::string& path) {
  const auto p = path.find_last_of("/\\");
  return p == std::string::npos ? path : path.substr(p + 1);
}

std::string now_iso_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<std::int64_t> parse_iso(const std::string& s) {
  std::tm tm{};
  if (std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec) != 6)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<std::int64_t>(timegm(&tm));
}

std::string duration_text(std::int64_t seconds) {
  if (seconds < 0) return {};
  const auto h = seconds / 3600, m = seconds / 60 % 60, s = seconds % 60;
  if (h > 0) return sfmt("%lldh %02lldm", static_cast<long long>(h), static_cast<long long>(m));
  if (m > 0) return sfmt("%lldm %02llds", static_cast<long long>(m), static_cast<long long>(s));
  return sfmt("%llds", static_cast<long long>(s));
}

// ---- metrics ----------------------------------------------------------------------------------

enum class Better { Higher, Lower, None };

Better better_of(const std::string& name) {
  if (name.find("bleu") != std::string::npos || name.find("chrf") != std::string::npos ||
      name.find("acc") != std::string::npos)
    return Better::Higher;
  if (name.find("loss") != std::string::npos || name.find("ppl") != std::string::npos ||
      name.find("perplexity") != std::string::npos)
    return Better::Lower;
  return Better::None;
}

std::string metric_label(const std::string& name, bool language_model) {
  static const std::map<std::string, std::string> labels = {{"train_loss", "Training loss"},
                                                            {"dev_loss", "Dev loss"},
                                                            {"dev_ppl", "Dev perplexity"},
                                                            {"bleu", "BLEU"},
                                                            {"chrf", "chrF"},
                                                            {"lr", "Learning rate"},
                                                            {"tokens_per_s", "Tokens/s"},
                                                            {"train_loss_estimate", "Training loss (estimate)"}};
  if (language_model && name == "dev_loss") return "Validation loss";
  if (language_model && name == "dev_ppl") return "Validation perplexity";
  const auto it = labels.find(name);
  return it == labels.end() ? name : it->second;
}

/// Metric names in reading order: the known ones first, then the others alphabetically.
std::vector<std::string> ordered_names(const std::vector<std::string>& names) {
  static const std::vector<std::string> known = {"train_loss", "dev_loss", "train_loss_estimate", "dev_ppl", "bleu",
                                                 "chrf",       "lr",       "tokens_per_s"};
  std::vector<std::string> out;
  for (const auto& k : known)
    if (std::find(names.begin(), names.end(), k) != names.end()) out.push_back(k);
  for (const auto& n : names)
    if (std::find(known.begin(), known.end(), n) == known.end()) out.push_back(n);
  return out;
}

// ---- charts -----------------------------------------------------------------------------------

using Point = std::pair<double, double>;  // step, value

struct Series {
  std::string label, color;
  std::vector<Point> points;  // by step, finite values only
};

constexpr double kChartW = 640, kChartH = 300;
constexpr double kLeft = 70, kRight = 18, kTop = 40, kBottom = 46;
constexpr double kPlotW = kChartW - kLeft - kRight, kPlotH = kChartH - kTop - kBottom;
const char* const kSvgFonts =
    "system-ui, -apple-system, 'Segoe UI', Roboto, Arial, 'Noto Sans', 'Noto Sans CJK SC', 'PingFang SC', "
    "'Microsoft YaHei', sans-serif";
const char* const kColors[] = {"#2563eb", "#ea580c", "#16a34a", "#9333ea", "#db2777", "#0891b2"};

/// M4 downsampling: per pixel column the first, last, lowest and highest point, in order. The
/// drawn line is the same as with every point, and a series never has more than 4 points a pixel.
std::vector<Point> downsample(const std::vector<Point>& pts, double x0, double x1, int columns) {
  if (pts.size() <= static_cast<std::size_t>(4 * columns) || x1 <= x0) return pts;
  std::vector<Point> out;
  out.reserve(4 * static_cast<std::size_t>(columns) + 4);
  const auto bucket = [&](double x) {
    return std::min(columns - 1, std::max(0, static_cast<int>((x - x0) / (x1 - x0) * columns)));
  };
  std::size_t i = 0;
  while (i < pts.size()) {
    const int b = bucket(pts[i].first);
    std::size_t first = i, last = i, lo = i, hi = i;
    for (; i < pts.size() && bucket(pts[i].first) == b; ++i) {
      last = i;
      if (pts[i].second < pts[lo].second) lo = i;
      if (pts[i].second > pts[hi].second) hi = i;
    }
    std::size_t keep[] = {first, lo, hi, last};
    std::sort(std::begin(keep), std::end(keep));
    for (std::size_t k = 0; k < 4; ++k)
      if (k == 0 || keep[k] != keep[k - 1]) out.push_back(pts[keep[k]]);
  }
  return out;
}

struct Ticks {
  double lo = 0, hi = 1, step = 1;
  std::vector<double> values;
};

double nice_step(double range, int target) {
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

/// Ticks over [lo, hi]; `extend` widens the range to whole ticks (the y axis), otherwise only the
/// ticks inside the data's range are kept (the x axis: the curve fills the width).
Ticks make_ticks(double lo, double hi, int target, bool extend) {
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  Ticks t;
  t.step = nice_step(hi - lo, target);
  const double first = std::floor(lo / t.step + 1e-9) * t.step, last = std::ceil(hi / t.step - 1e-9) * t.step;
  t.lo = extend ? first : lo;
  t.hi = extend ? last : hi;
  for (double v = extend ? first : std::ceil(lo / t.step - 1e-9) * t.step; v <= t.hi + t.step * 1e-6; v += t.step)
    t.values.push_back(std::fabs(v) < t.step * 1e-9 ? 0.0 : v);
  return t;
}

std::string tick_label(double v, double step) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  for (const auto& [scale, suffix] : {std::pair<double, const char*>{1e9, "G"}, {1e6, "M"}, {1e3, "k"}}) {
    if (step >= scale && a >= scale) {
      const double s = step / scale;
      const int decimals = s >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(s) - 1e-9));
      return sfmt("%.*f", decimals, v / scale) + suffix;
    }
  }
  if (step >= 1e-4) {
    const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
    return sfmt("%.*f", decimals, v);
  }
  return sfmt("%.2g", v);
}

/// The opening tag shared by charts and heatmaps: presentation attributes rather than the page's
/// CSS, so that an SVG copied out of the report looks the same on its own.
std::string svg_open(const char* cls, double width, double height, const std::string& label) {
  return std::string("<svg class=\"") + cls + "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + coord(width) +
         " " + coord(height) + "\" width=\"" + coord(width) + "\" height=\"" + coord(height) +
         "\" role=\"img\" aria-label=\"" + esc(label) + "\" font-family=\"" + kSvgFonts +
         "\" font-size=\"11\">\n<title>" + esc(label) + "</title>\n";
}

/// One line chart as an inline SVG: axes with ticks and labels, step on x, a legend.
std::string svg_chart(const std::string& title, const std::string& y_label, const std::vector<Series>& series) {
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const auto& s : series)
    for (const auto& [x, y] : s.points) {
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  const Ticks xt = make_ticks(x0, x1, 6, false), yt = make_ticks(y0, y1, 5, true);
  const auto px = [&](double x) { return kLeft + (x - xt.lo) / (xt.hi - xt.lo) * kPlotW; };
  const auto py = [&](double y) { return kTop + kPlotH - (y - yt.lo) / (yt.hi - yt.lo) * kPlotH; };
  const auto line = [](double xa, double xb, double ya, double yb) {
    return "<line x1=\"" + coord(xa) + "\" x2=\"" + coord(xb) + "\" y1=\"" + coord(ya) + "\" y2=\"" + coord(yb) +
           "\"/>";
  };
  const double bottom = kTop + kPlotH;

  std::string o = svg_open("chart", kChartW, kChartH, title);
  o += "<g class=\"grid\" stroke=\"#eef0f3\">";
  for (double v : yt.values) o += line(kLeft, kLeft + kPlotW, py(v), py(v));
  o += "</g>\n<g class=\"axis\" stroke=\"#9aa5b1\">" + line(kLeft, kLeft, kTop, bottom) +
       line(kLeft, kLeft + kPlotW, bottom, bottom);
  for (double v : yt.values) o += line(kLeft - 5, kLeft, py(v), py(v));
  for (double v : xt.values) o += line(px(v), px(v), bottom, bottom + 5);
  o += "</g>\n<g fill=\"#52606d\" text-anchor=\"end\">";
  for (double v : yt.values)
    o += "<text class=\"ytick\" x=\"" + coord(kLeft - 8) + "\" y=\"" + coord(py(v) + 4) + "\">" +
         esc(tick_label(v, yt.step)) + "</text>";
  o += "</g>\n<g fill=\"#52606d\" text-anchor=\"middle\">";
  for (double v : xt.values)
    o += "<text class=\"xtick\" x=\"" + coord(px(v)) + "\" y=\"" + coord(bottom + 18) + "\">" +
         esc(tick_label(v, xt.step)) + "</text>";
  o += "</g>\n<g fill=\"#3e4c59\" text-anchor=\"middle\" font-size=\"12\">";
  o += "<text class=\"xlabel\" x=\"" + coord(kLeft + kPlotW / 2) + "\" y=\"" + coord(kChartH - 6) + "\">step</text>";
  o += "<text class=\"ylabel\" transform=\"translate(16 " + coord(kTop + kPlotH / 2) + ") rotate(-90)\">" +
       esc(y_label) + "</text>";
  o += "</g>\n";
  for (const auto& s : series) {
    const auto pts = downsample(s.points, xt.lo, xt.hi, static_cast<int>(kPlotW));
    if (pts.size() > 1) {
      o += "<polyline class=\"line\" fill=\"none\" stroke-width=\"1.6\" stroke-linejoin=\"round\" stroke=\"" + s.color +
           "\" points=\"";
      for (std::size_t i = 0; i < pts.size(); ++i) {
        if (i) o += ' ';
        o += coord(px(pts[i].first)) + "," + coord(py(pts[i].second));
      }
      o += "\"/>\n";
    }
    if (s.points.size() <= 60) {  // few points (validations): each one marked, its value on hover
      o += "<g fill=\"" + s.color + "\">";
      for (const auto& [x, y] : s.points)
        o += "<circle cx=\"" + coord(px(x)) + "\" cy=\"" + coord(py(y)) + "\" r=\"3\"><title>" + esc(s.label) +
             " at step " + esc(tick_label(x, 1)) + ": " + esc(value_text(y)) + "</title></circle>";
      o += "</g>\n";
    }
  }
  // The legend, above the plot on the right.
  double lx = kLeft + kPlotW;
  std::string legend;
  for (auto it = series.rbegin(); it != series.rend(); ++it) {
    lx -= text_width(it->label, 12) + 30;
    legend += "<line x1=\"" + coord(lx) + "\" x2=\"" + coord(lx + 18) + "\" y1=\"20\" y2=\"20\" stroke=\"" + it->color +
              "\" stroke-width=\"3\"/><text class=\"legend\" x=\"" + coord(lx + 23) + "\" y=\"24\">" + esc(it->label) +
              "</text>";
  }
  o += "<g fill=\"#323f4b\" font-size=\"12\">" + legend + "</g>\n</svg>";
  return o;
}

// ---- attention heatmaps -----------------------------------------------------------------------

struct Heatmap {
  std::vector<std::vector<double>> cells;  // [target][source]
  std::vector<std::string> rows, cols;     // target tokens, source tokens
  std::size_t heads = 0;
};

/// Per layer the mean over heads of `probe["cross"]` ([layer][head][target][source]); empty when
/// the probe has no readable attention.
std::vector<Heatmap> probe_heatmaps(const nlohmann::json& probe, std::size_t max_tokens) {
  std::vector<Heatmap> out;
  if (!probe.is_object() || !probe.contains("cross") || !probe["cross"].is_array()) return out;
  const auto tokens = [&](const char* key) {
    std::vector<std::string> t;
    if (probe.contains(key) && probe[key].is_array())
      for (const auto& v : probe[key]) t.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    return t;
  };
  const auto source_tokens = tokens("source_tokens"), target_tokens = tokens("target_tokens");
  for (const auto& layer : probe["cross"]) {
    if (!layer.is_array() || layer.empty()) return {};
    std::size_t rows = std::numeric_limits<std::size_t>::max(), cols = rows;
    for (const auto& head : layer) {
      if (!head.is_array()) return {};
      rows = std::min(rows, head.size());
      for (const auto& row : head) {
        if (!row.is_array()) return {};
        cols = std::min(cols, row.size());
      }
    }
    rows = std::min(rows, max_tokens);
    cols = std::min(cols, max_tokens);
    if (rows == 0 || cols == 0) return {};
    Heatmap h;
    h.heads = layer.size();
    h.cells.assign(rows, std::vector<double>(cols, 0.0));
    for (const auto& head : layer)
      for (std::size_t q = 0; q < rows; ++q)
        for (std::size_t k = 0; k < cols; ++k) {
          const auto& w = head[q][k];
          if (!w.is_number()) return {};
          const double v = w.get<double>();
          h.cells[q][k] += std::isfinite(v) ? v / static_cast<double>(h.heads) : 0.0;
        }
    for (std::size_t q = 0; q < rows; ++q)
      h.rows.push_back(q < target_tokens.size() ? target_tokens[q] : "#" + std::to_string(q + 1));
    for (std::size_t k = 0; k < cols; ++k)
      h.cols.push_back(k < source_tokens.size() ? source_tokens[k] : "#" + std::to_string(k + 1));
    out.push_back(std::move(h));
  }
  return out;
}

/// A light-to-dark blue for a weight in [0, 1].
std::string heat_colour(double t) {
  t = std::clamp(t, 0.0, 1.0);
  static const double stops[3][3] = {{247, 251, 255}, {107, 174, 214}, {8, 48, 107}};
  const int seg = t < 0.5 ? 0 : 1;
  const double f = t < 0.5 ? t * 2 : (t - 0.5) * 2;
  int c[3];
  for (int i = 0; i < 3; ++i)
    c[i] = static_cast<int>(std::lround(stops[seg][i] + (stops[seg + 1][i] - stops[seg][i]) * f));
  return sfmt("#%02x%02x%02x", c[0], c[1], c[2]);
}

std::string svg_heatmap(const Heatmap& h, const std::string& label) {
  constexpr double font = 11, angle_sin = 0.766, angle_cos = 0.643;  // column labels at -50 degrees
  constexpr std::size_t label_chars = 16;
  const std::size_t rows = h.cells.size(), cols = h.cells.front().size();
  const double cell = std::clamp(std::floor(440.0 / static_cast<double>(std::max(rows, cols))), 8.0, 26.0);
  std::vector<std::string> row_labels, col_labels;
  double row_w = 0, col_w = 0, right = 8;
  for (const auto& t : h.rows) {
    row_labels.push_back(truncate_utf8(t, label_chars));
    row_w = std::max(row_w, text_width(row_labels.back(), font));
  }
  for (std::size_t k = 0; k < cols; ++k) {
    col_labels.push_back(truncate_utf8(h.cols[k], label_chars));
    const double w = text_width(col_labels.back(), font);
    col_w = std::max(col_w, w);
    right = std::max(right, w * angle_cos - static_cast<double>(cols - 1 - k) * cell - cell / 2 + 6);
  }
  const double left = row_w + 10, top = col_w * angle_sin + 12;
  const double width = left + cell * static_cast<double>(cols) + right,
               height = top + cell * static_cast<double>(rows) + 6;
  double max = 0;
  for (const auto& r : h.cells)
    for (double v : r) max = std::max(max, v);
  if (max <= 0) max = 1;

  std::string o = svg_open("heatmap", width, height, label);
  o += "<g fill=\"#323f4b\">";
  for (std::size_t k = 0; k < cols; ++k) {
    const double x = left + (static_cast<double>(k) + 0.5) * cell;
    o += "<text class=\"col\" transform=\"translate(" + coord(x) + " " + coord(top - 4) + ") rotate(-50)\">" +
         esc(col_labels[k]) + "</text>";
  }
  o += "</g>\n<g fill=\"#323f4b\" text-anchor=\"end\">";
  for (std::size_t q = 0; q < rows; ++q)
    o += "<text class=\"row\" x=\"" + coord(left - 5) + "\" y=\"" +
         coord(top + (static_cast<double>(q) + 0.5) * cell + 4) + "\">" + esc(row_labels[q]) + "</text>";
  o += "</g>\n<g stroke=\"#fff\" stroke-width=\"0.5\">\n";
  for (std::size_t q = 0; q < rows; ++q) {
    const double y = top + static_cast<double>(q) * cell;
    for (std::size_t k = 0; k < cols; ++k) {
      const double v = h.cells[q][k];
      o += "<rect class=\"cell\" x=\"" + coord(left + static_cast<double>(k) * cell) + "\" y=\"" + coord(y) +
           "\" width=\"" + coord(cell) + "\" height=\"" + coord(cell) + "\" fill=\"" + heat_colour(v / max) +
           "\"><title>" + esc(h.rows[q]) + " ← " + esc(h.cols[k]) + ": " + sfmt("%.4f", v) + "</title></rect>";
    }
    o += "\n";
  }
  o += "</g>\n<rect class=\"frame\" fill=\"none\" stroke=\"#9aa5b1\" stroke-width=\"0.8\" x=\"" + coord(left) +
       "\" y=\"" + coord(top) + "\" width=\"" + coord(cell * static_cast<double>(cols)) + "\" height=\"" +
       coord(cell * static_cast<double>(rows)) + "\"/>\n</svg>";
  return o;
}

// ---- page -------------------------------------------------------------------------------------

const char* const kStyle = R"css(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f6f7f9; color: #1f2933; line-height: 1.5;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans",
    "Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", sans-serif; font-size: 15px; }
main { max-width: 980px; margin: 0 auto; padding: 32px 28px 24px; background: #fff; min-height: 100vh;
  box-shadow: 0 0 0 1px #e4e7eb; }
h1 { font-size: 1.75em; margin: 0 0 4px; line-height: 1.25; overflow-wrap: anywhere; }
h2 { font-size: 1.25em; margin: 36px 0 12px; padding-bottom: 6px; border-bottom: 1px solid #e4e7eb; }
h3 { font-size: 1em; margin: 20px 0 8px; color: #3e4c59; }
nav { margin: 8px 0 0; font-size: .9em; }
nav a { color: #52606d; margin-right: 14px; text-decoration: none; }
nav a:hover { text-decoration: underline; }
.subtitle { color: #616e7c; margin: 0 0 16px; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: .8em; font-weight: 600;
  vertical-align: middle; background: #e4e7eb; color: #323f4b; }
.badge.finished { background: #dcfce7; color: #166534; } .badge.running { background: #dbeafe; color: #1e40af; }
.badge.failed { background: #fee2e2; color: #991b1b; } .badge.interrupted, .badge.stopped, .badge.early-stopped
  { background: #fef3c7; color: #92400e; }
.tag { display: inline-block; padding: 0 8px; margin: 0 4px 4px 0; border-radius: 4px; background: #eef2ff;
  color: #3730a3; font-size: .85em; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 18px; margin: 0; }
dl.facts dt { color: #616e7c; } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.note { color: #7b8794; font-style: italic; margin: 6px 0; }
.message { background: #fffbeb; border-left: 3px solid #f59e0b; padding: 6px 12px; margin: 12px 0; }
table { border-collapse: collapse; width: 100%; font-size: .92em; margin: 6px 0 12px; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid #e4e7eb; vertical-align: top;
  overflow-wrap: anywhere; }
th { background: #f5f7fa; font-weight: 600; color: #3e4c59; }
tbody tr:nth-child(even) { background: #fafbfc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.mono, code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Noto Sans Mono CJK SC", monospace; }
td.mono { font-size: .88em; }
pre { background: #f5f7fa; border: 1px solid #e4e7eb; border-radius: 6px; padding: 12px 14px; font-size: .85em;
  overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
.charts { display: grid; grid-template-columns: 1fr; gap: 8px; }  /* one a row: the SVG text stays at its size */
figure { margin: 0 0 12px; }
figcaption { font-weight: 600; color: #3e4c59; margin: 4px 0; font-size: .95em; }
svg { max-width: 100%; height: auto; }
.heatmaps { display: flex; flex-wrap: wrap; gap: 8px 28px; align-items: flex-start; }
.scale { display: inline-block; width: 120px; height: 10px; vertical-align: middle; border: 1px solid #cbd2d9;
  background: linear-gradient(to right, #f7fbff, #6baed6, #08306b); }
footer { margin-top: 40px; padding-top: 12px; border-top: 1px solid #e4e7eb; color: #7b8794; font-size: .85em; }
@media print { body { background: #fff; } main { box-shadow: none; max-width: none; } nav { display: none; } }
)css";

void note(std::string& o, const std::string& text) { o += "<p class=\"note\">" + esc(text) + "</p>\n"; }

void fact(std::string& o, const std::string& name, const std::string& html_value) {
  o += "<dt>" + esc(name) + "</dt><dd>" + html_value + "</dd>\n";
}

std::string or_dash(const std::string& s) { return s.empty() ? "—" : esc(s); }

void header_section(std::string& o, const RunInfo& run, bool test) {
  const bool lm = run.kind == RunKind::kLanguageModel;
  o += "<header>\n<h1>" + esc(run.name.empty() ? "Run " + std::to_string(run.id) : run.name) + "</h1>\n";
  o += "<p class=\"subtitle\">Run " + std::to_string(run.id) + " · " + (lm ? "language model" : "translation") +
       (run.direction.empty() ? "" : " · " + esc(run.direction)) + " · <span class=\"badge " +
       run_status_name(run.status) + "\">" + run_status_name(run.status) + "</span></p>\n";
  o += "<nav><a href=\"#summary\">Summary</a><a href=\"#curves\">Curves</a><a href=\"#samples\">Samples</a>"
       "<a href=\"#attention\">Attention</a>" +
       std::string(test ? "<a href=\"#test\">Test set</a>" : "") +
       "<a href=\"#configuration\">Configuration</a></nav>\n</header>\n";
  o += "<section id=\"run\">\n<h2>Run</h2>\n";
  if (!run.message.empty()) o += "<p class=\"message\">" + esc(run.message) + "</p>\n";
  o += "<dl class=\"facts\">\n";
  fact(o, "Status",
       std::string("<span class=\"badge ") + run_status_name(run.status) + "\">" + run_status_name(run.status) +
           "</span>");
  fact(o, "Kind", run_kind_name(run.kind));
  fact(o, "Direction", or_dash(run.direction));
  std::string corpus = run.corpus_path.empty() ? "—" : "<code>" + esc(base_name(run.corpus_path)) + "</code>";
  std::vector<std::string> corpus_facts;
  if (run.corpus_pairs > 0) corpus_facts.push_back(thousands(run.corpus_pairs) + (lm ? " lines" : " pairs"));
  if (run.corpus_bytes > 0) corpus_facts.push_back(bytes_text(run.corpus_bytes));
  if (!run.corpus_sha256.empty())
    corpus_facts.push_back("SHA-256 <code>" + esc(run.corpus_sha256.substr(0, 12)) + "</code>");
  for (std::size_t i = 0; i < corpus_facts.size(); ++i) corpus += (i == 0 ? " (" : ", ") + corpus_facts[i];
  if (!corpus_facts.empty()) corpus += ")";
  fact(o, "Corpus", corpus);
  if (!run.preset.empty()) fact(o, "Preset", esc(run.preset));
  fact(o, "Device", or_dash(run.device));
  fact(o, "Machine", or_dash(run.machine));
  fact(o, "Started", or_dash(run.started_at));
  std::string ended = or_dash(run.ended_at);
  if (const auto a = parse_iso(run.started_at), b = parse_iso(run.ended_at); a && b && *b >= *a)
    ended += " (" + duration_text(*b - *a) + ")";
  fact(o, "Ended", ended);
  fact(o, "Steps", thousands(run.steps));
  if (!lm || run.best_bleu) fact(o, "Best BLEU", run.best_bleu ? sfmt("%.2f", *run.best_bleu) : "—");
  std::string tags;
  for (const auto& t : run.tags) tags += "<span class=\"tag\">" + esc(t) + "</span>";
  fact(o, "Tags", tags.empty() ? "—" : tags);
  o += "</dl>\n</section>\n";
}

void summary_section(std::string& o, const std::vector<std::string>& names,
                     const std::map<std::string, std::vector<MetricPoint>>& metrics, bool lm) {
  o += "<section id=\"summary\">\n<h2>Summary</h2>\n";
  if (names.empty()) {
    note(o, "No metrics were recorded for this run.");
    o += "</section>\n";
    return;
  }
  o += "<table>\n<thead><tr><th>Metric</th><th class=\"num\">Final</th><th class=\"num\">at step</th>"
       "<th class=\"num\">Best</th><th class=\"num\">at step</th><th class=\"num\">Points</th></tr></thead>\n<tbody>\n";
  for (const auto& name : names) {
    const auto& pts = metrics.at(name);
    const MetricPoint* final_point = nullptr;
    const MetricPoint* best = nullptr;
    const Better better = better_of(name);
    for (const auto& p : pts) {
      if (!std::isfinite(p.value)) continue;
      final_point = &p;
      if (better != Better::None &&
          (!best || (better == Better::Higher ? p.value > best->value : p.value < best->value)))
        best = &p;
    }
    o += "<tr><td>" + esc(metric_label(name, lm)) + " <code>" + esc(name) + "</code></td>";
    o += "<td class=\"num\">" + (final_point ? esc(value_text(final_point->value)) : "—") + "</td>";
    o += "<td class=\"num\">" + (final_point ? thousands(final_point->step) : "—") + "</td>";
    o += "<td class=\"num\">" + (best ? esc(value_text(best->value)) : "—") + "</td>";
    o += "<td class=\"num\">" + (best ? thousands(best->step) : "—") + "</td>";
    o += "<td class=\"num\">" + thousands(static_cast<std::int64_t>(pts.size())) + "</td></tr>\n";
  }
  o += "</tbody>\n</table>\n</section>\n";
}

void curves_section(std::string& o, const std::vector<std::string>& names,
                    const std::map<std::string, std::vector<MetricPoint>>& metrics, bool lm) {
  o += "<section id=\"curves\">\n<h2>Curves</h2>\n";
  if (names.empty()) {
    note(o, "No metrics were recorded for this run.");
    o += "</section>\n";
    return;
  }
  const auto series_of = [&](const std::string& name, std::size_t colour) {
    Series s{metric_label(name, lm), kColors[colour % std::size(kColors)], {}};
    const auto it = metrics.find(name);
    if (it != metrics.end())
      for (const auto& p : it->second)
        if (std::isfinite(p.value)) s.points.emplace_back(static_cast<double>(p.step), p.value);
    return s;
  };
  struct Chart {
    std::string title, y_label;
    std::vector<std::string> metrics;
  };
  std::vector<Chart> charts = {{"Loss", "loss", {"train_loss", "dev_loss", "train_loss_estimate"}},
                               {"BLEU and chrF", "score", {"bleu", "chrf"}},
                               {"Learning rate", "learning rate", {"lr"}},
                               {"Throughput", "tokens/s", {"tokens_per_s"}}};
  std::set<std::string> charted = {"dev_ppl"};  // dev_ppl is exp(dev_loss): the loss chart shows it
  for (const auto& c : charts) charted.insert(c.metrics.begin(), c.metrics.end());
  for (const auto& n : names)
    if (!charted.count(n)) charts.push_back({n, n, {n}});

  std::string figures;
  std::vector<std::string> missing;
  for (const auto& c : charts) {
    std::vector<Series> series;
    for (std::size_t i = 0; i < c.metrics.size(); ++i) {
      auto s = series_of(c.metrics[i], i);
      if (!s.points.empty()) series.push_back(std::move(s));
    }
    if (series.empty()) {
      missing.push_back(c.title);
      continue;
    }
    figures += "<figure>\n<figcaption>" + esc(c.title) + "</figcaption>\n" + svg_chart(c.title, c.y_label, series) +
               "\n</figure>\n";
  }
  if (!figures.empty()) o += "<div class=\"charts\">\n" + figures + "</div>\n";
  if (!missing.empty()) {
    std::string list;
    for (std::size_t i = 0; i < missing.size(); ++i) list += (i ? ", " : "") + missing[i];
    note(o, "Not recorded: " + list + ".");
  }
  o += "</section>\n";
}

void samples_section(std::string& o, const std::vector<SampleRow>& samples, std::size_t max_rows) {
  o += "<section id=\"samples\">\n<h2>Sample translations</h2>\n";
  if (samples.empty()) {
    note(o, "No validation samples were recorded for this run.");
    o += "</section>\n";
    return;
  }
  std::map<std::int64_t, std::vector<const SampleRow*>> by_step;
  for (const auto& s : samples) by_step[s.step].push_back(&s);
  for (auto& [step, rows] : by_step)
    std::stable_sort(rows.begin(), rows.end(), [](auto a, auto b) { return a->index < b->index; });
  const auto& [last_step, last] = *by_step.rbegin();
  o += "<h3>Last validation (step " + thousands(last_step) + ")</h3>\n";
  o +=
      "<table>\n<thead><tr><th class=\"num\">#</th><th>Source</th><th>Reference</th><th>Hypothesis</th></tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < last.size() && i < max_rows; ++i)
    o += "<tr><td class=\"num\">" + std::to_string(last[i]->index + 1) + "</td><td dir=\"auto\">" +
         esc(last[i]->source) + "</td><td dir=\"auto\">" + esc(last[i]->reference) + "</td><td dir=\"auto\">" +
         esc(last[i]->hypothesis) + "</td></tr>\n";
  o += "</tbody>\n</table>\n";
  if (last.size() > max_rows)
    note(o, "Showing " + std::to_string(max_rows) + " of " + std::to_string(last.size()) + " samples.");

  if (by_step.size() < 2) {
    note(o, "One validation only: no earlier hypotheses to compare with.");
  } else {
    const auto& [first_step, first] = *by_step.begin();
    std::map<std::string, const SampleRow*> first_by_source;
    for (const auto* s : first) first_by_source.emplace(s->source, s);
    std::string rows;
    std::size_t n = 0;
    for (const auto* s : last) {
      const auto it = first_by_source.find(s->source);
      if (it == first_by_source.end() || n >= max_rows) continue;
      ++n;
      rows += "<tr><td dir=\"auto\">" + esc(s->source) + "</td><td dir=\"auto\">" + esc(s->reference) +
              "</td><td dir=\"auto\">" + esc(it->second->hypothesis) + "</td><td dir=\"auto\">" + esc(s->hypothesis) +
              "</td></tr>\n";
    }
    o += "<h3>First and last validation (steps " + thousands(first_step) + " and " + thousands(last_step) + ", " +
         std::to_string(by_step.size()) + " validations)</h3>\n";
    if (rows.empty()) {
      note(o, "The first validation's samples are other sentences than the last one's.");
    } else {
      o += "<table>\n<thead><tr><th>Source</th><th>Reference</th><th>Step " + thousands(first_step) + "</th><th>Step " +
           thousands(last_step) + "</th></tr></thead>\n<tbody>\n" + rows + "</tbody>\n</table>\n";
    }
  }
  o += "</section>\n";
}

void probe_block(std::string& o, const ProbeRow& p, const std::string& heading, std::size_t max_tokens) {
  o += "<h3>" + esc(heading) + " (step " + thousands(p.step) + ")</h3>\n";
  const auto text = [&](const char* key) {
    return p.probe.is_object() && p.probe.contains(key) && p.probe[key].is_string() ? p.probe[key].get<std::string>()
                                                                                    : std::string();
  };
  o += "<dl class=\"facts\">\n";
  fact(o, "Source", "<span dir=\"auto\">" + or_dash(text("source")) + "</span>");
  fact(o, "Translation", "<span dir=\"auto\">" + or_dash(text("text")) + "</span>");
  o += "</dl>\n";
  const auto maps = probe_heatmaps(p.probe, max_tokens);
  if (maps.empty()) {
    note(o, "This probe has no readable cross-attention.");
    return;
  }
  o += "<div class=\"heatmaps\">\n";
  for (std::size_t l = 0; l < maps.size(); ++l) {
    const auto caption = "Layer " + std::to_string(l + 1) + " · mean of " + std::to_string(maps[l].heads) +
                         (maps[l].heads == 1 ? " head" : " heads");
    o += "<figure>\n<figcaption>" + esc(caption) + "</figcaption>\n" +
         svg_heatmap(maps[l], heading + ", step " + std::to_string(p.step) + ", " + caption) + "\n</figure>\n";
  }
  o += "</div>\n";
}

void attention_section(std::string& o, const std::vector<ProbeRow>& probes, std::size_t max_tokens) {
  o += "<section id=\"attention\">\n<h2>Attention</h2>\n";
  if (probes.empty()) {
    note(o, "No probe sentence was recorded for this run.");
    o += "</section>\n";
    return;
  }
  o += "<p>Cross-attention of the probe sentence: target tokens as rows, source tokens as columns, per decoder layer "
       "the mean over heads. Colour from 0 <span class=\"scale\"></span> to the layer's highest weight.</p>\n";
  probe_block(o, probes.back(), "Last validation", max_tokens);
  if (probes.size() > 1 && probes.front().step != probes.back().step)
    probe_block(o, probes.front(), "First validation", max_tokens);
  o += "</section>\n";
}

void configuration_section(std::string& o, const RunInfo& run, const std::vector<CheckpointRow>& checkpoints) {
  o += "<section id=\"configuration\">\n<h2>Configuration</h2>\n";
  if (run.config.is_null() || (run.config.is_object() && run.config.empty()))
    note(o, "No configuration was recorded for this run.");
  else
    o += "<pre>" + esc(run.config.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)) + "</pre>\n";
  o += "<h3>Checkpoints</h3>\n";
  if (checkpoints.empty()) {
    note(o, "No checkpoints were recorded for this run.");
  } else {
    o += "<table>\n<thead><tr><th>Kind</th><th class=\"num\">Step</th><th class=\"num\">Size</th><th>SHA-256</th>"
         "<th>Path</th><th>Created</th></tr></thead>\n<tbody>\n";
    for (const auto& c : checkpoints)
      o += "<tr><td>" + or_dash(c.kind) + "</td><td class=\"num\">" + thousands(c.step) +
           "</td><td class=\"num\" title=\"" + thousands(c.bytes) + " bytes\">" + bytes_text(c.bytes) +
           "</td><td class=\"mono\">" + or_dash(c.sha256.substr(0, 12)) + "</td><td class=\"mono\">" + or_dash(c.path) +
           "</td><td>" + or_dash(c.created_at) + "</td></tr>\n";
    o += "</tbody>\n</table>\n";
  }
  o += "</section>\n";
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\0':
        out += "\xEF\xBF\xBD";
        break;  // U+FFFD: NUL is not allowed in HTML text
      default:
        out += c;
    }
  }
  return out;
}

std::string html_report(const RunStore& store, std::int64_t run_id, const ReportOptions& options) {
  const auto found = store.find_run(run_id);
  if (!found) throw StoreError("no run " + std::to_string(run_id) + " in " + store.path());
  const RunInfo& run = *found;
  const bool lm = run.kind == RunKind::kLanguageModel;

  const auto names = ordered_names(store.metric_names(run_id));
  std::map<std::string, std::vector<MetricPoint>> metrics;
  for (const auto& n : names) metrics[n] = store.metric(run_id, n);

  std::string o;
  o.reserve(64 * 1024);
  const std::string title = run.name.empty() ? "Run " + std::to_string(run.id) : run.name;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
       "<meta name=\"generator\" content=\"Transformer Studio\">\n<title>" +
       esc(title) + " · Transformer Studio report</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<main>\n";
  header_section(o, run, options.test_input && options.test_comparison);
  summary_section(o, names, metrics, lm);
  curves_section(o, names, metrics, lm);
  samples_section(o, store.samples(run_id), options.max_samples);
  attention_section(o, store.probes(run_id), std::max<std::size_t>(1, options.max_heatmap_tokens));
  if (options.test_input && options.test_comparison)
    o += html_test_section(*options.test_input, *options.test_comparison, options.max_test_sentences);
  configuration_section(o, run, store.checkpoints(run_id));
  const std::string version = options.version.empty() ? "" : " " + options.version;
  o += "<footer>Generated by Transformer Studio" + esc(version) + " on " +
       esc(options.generated_at.empty() ? now_iso_utc() : options.generated_at) +
       "</footer>\n</main>\n</body>\n</html>\n";
  return o;
}

}  // namespace ts
