// SPDX-License-Identifier: GPL-3.0-or-later
// The report's "Test set" section: a comparison of systems on a run's held-out pairs (see
// ts/store/html_report.h). Tables only, with a bar drawn in each bucket cell by an inline style.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "ts/store/html_report.h"

namespace ts {
namespace {

std::string esc(std::string_view s) { return html_escape(s); }

std::string num(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string interval(const ScoreEstimate& e, int resamples) {
  if (resamples == 0) return num(e.score, 2);
  return num(e.score, 2) + " <span class=\"note\">(" + num(e.low, 2) + "–" + num(e.high, 2) + ")</span>";
}

std::string p_value(double p) { return p < 0.001 ? "&lt; 0.001" : num(p, 3); }

// A cell with its value and a bar as long as value / top.
std::string bar_cell(const std::string& text, double value, double top) {
  const double w = top > 0 ? std::clamp(value / top, 0.0, 1.0) * 80 : 0;
  return "<td class=\"num\">" + text +
         " <span style=\"display:inline-block;height:9px;vertical-align:middle;width:" + num(w, 0) +
         "px;background:#6baed6\"></span></td>";
}

void bucket_table(std::string& o, const BucketTable& t, const std::vector<std::string>& names, bool counts_are_values,
                  const std::vector<bool>& shown) {
  o += "<h3>" + esc(t.title) + "</h3>\n<table>\n<thead><tr><th>Bucket</th>";
  for (std::size_t s = 0; s < names.size(); ++s)
    if (shown[s]) o += "<th class=\"num\">" + esc(names[s]) + "</th>";
  o += "</tr></thead>\n<tbody>\n";
  double top = 0;
  for (const auto& row : t.values)
    for (double v : row) top = std::max(top, v);
  for (std::size_t b = 0; b < t.labels.size(); ++b) {
    o += "<tr><td>" + esc(t.labels[b]) + "</td>";
    for (std::size_t s = 0; s < names.size(); ++s) {
      if (!shown[s]) continue;
      const long n = t.counts[b][s];
      if (counts_are_values)
        o += bar_cell(std::to_string(n), static_cast<double>(n), top);
      else if (n == 0)
        o += "<td class=\"num\">—</td>";
      else
        o += bar_cell(num(t.values[b][s], t.value == "F-measure" ? 3 : 1) + " <span class=\"note\">(" +
                          std::to_string(n) + ")</span>",
                      t.values[b][s], top);
    }
    o += "</tr>\n";
  }
  o += "</tbody>\n</table>\n";
}

// Rows of sentences: index, source, reference, the listed outputs and figures.
struct SentenceColumn {
  std::string title;
  std::function<std::string(std::size_t)> cell;
  bool numeric = false;
};

void sentence_table(std::string& o, const std::vector<std::size_t>& rows, const CompareInput& in,
                    const std::vector<SentenceColumn>& columns) {
  o += "<table>\n<thead><tr><th class=\"num\">#</th>";
  if (!in.sources.empty()) o += "<th>Source</th>";
  o += "<th>Reference</th>";
  for (const auto& c : columns) o += std::string(c.numeric ? "<th class=\"num\">" : "<th>") + esc(c.title) + "</th>";
  o += "</tr></thead>\n<tbody>\n";
  for (const auto i : rows) {
    o += "<tr><td class=\"num\">" + std::to_string(i + 1) + "</td>";
    if (!in.sources.empty()) o += "<td>" + esc(in.sources[i]) + "</td>";
    o += "<td>" + esc(in.references[i]) + "</td>";
    for (const auto& c : columns) o += std::string(c.numeric ? "<td class=\"num\">" : "<td>") + c.cell(i) + "</td>";
    o += "</tr>\n";
  }
  o += "</tbody>\n</table>\n";
}

}  // namespace

std::string html_test_section(const CompareInput& in, const Comparison& c, std::size_t max_sentences) {
  std::string o = "<section id=\"test\">\n<h2>Test set</h2>\n";
  const auto& names = in.names;
  const std::size_t k = c.systems.size();
  o += "<p class=\"note\">" + std::to_string(c.sentences) +
       " held-out pairs, each model translating with its own decoding "
       "settings; scored with sacreBLEU's tokenisation <code>" +
       esc(in.tokenize) + "</code>. " + (in.split.empty() ? std::string() : "Split: " + esc(in.split) + ". ") +
       (c.resamples > 0
            ? "95% intervals and p-values against " + esc(names.front()) + " by paired bootstrap resampling (" +
                  std::to_string(c.resamples) + " resamples, Koehn 2004)."
            : std::string("No resampling.")) +
       "</p>\n";
  bool any_confidence = false;
  for (const auto& r : c.confidence) any_confidence = any_confidence || r.available;
  o += "<table>\n<thead><tr><th>System</th><th class=\"num\">BLEU</th><th class=\"num\">chrF</th>";
  if (k > 1) o += "<th class=\"num\">p (BLEU)</th><th class=\"num\">p (chrF)</th>";
  o += "<th class=\"num\">mean sentence " + esc(c.sentence_metric) + "</th>";
  if (any_confidence) o += "<th class=\"num\">confidence vs score: r / ρ</th>";
  o += "</tr></thead>\n<tbody>\n";
  for (std::size_t s = 0; s < k; ++s) {
    const auto& r = c.systems[s];
    o += "<tr><td>" + esc(r.name) + "</td><td class=\"num\">" + interval(r.bleu, c.resamples) +
         "</td><td class=\"num\">" + interval(r.chrf, c.resamples) + "</td>";
    if (k > 1)
      o += s == 0 || c.resamples == 0
               ? std::string("<td class=\"num\">—</td><td class=\"num\">—</td>")
               : "<td class=\"num\">" + p_value(r.p_bleu) + "</td><td class=\"num\">" + p_value(r.p_chrf) + "</td>";
    o += "<td class=\"num\">" + num(r.mean_sentence_score, 1) + "</td>";
    if (any_confidence) {
      const auto& conf = c.confidence[s];
      o += conf.available ? "<td class=\"num\">" + num(conf.pearson, 2) + " / " + num(conf.spearman, 2) + "</td>"
                          : std::string("<td class=\"num\">—</td>");
    }
    o += "</tr>\n";
  }
  o += "</tbody>\n</table>\n";

  const std::vector<bool> every(k, true);
  bucket_table(o, c.word_accuracy, names, false, every);
  bucket_table(o, c.by_reference_length, names, false, every);
  bucket_table(o, c.by_sentence_score, names, true, every);
  bucket_table(o, c.by_length_difference, names, true, every);

  // Confidence: does each model know when it is wrong?
  if (any_confidence) {
    std::vector<bool> with(k);
    for (std::size_t s = 0; s < k; ++s) with[s] = c.confidence[s].available;
    o += "<h3>Confidence</h3>\n<p class=\"note\">Each output's mean token log-probability under its model, against its "
         "sentence " +
         esc(c.sentence_metric) +
         ": r is Pearson's correlation, ρ Spearman's. A model that knows when it "
         "is wrong scores its least confident fifth lowest.</p>\n";
    bucket_table(o, c.by_confidence, names, false, with);
    for (std::size_t s = 0; s < k; ++s) {
      const auto& conf = c.confidence[s];
      if (!conf.available || s >= in.confidences.size() || in.confidences[s].empty()) continue;
      const std::vector<std::size_t> rows(
          conf.least_confident.begin(),
          conf.least_confident.begin() + std::min(max_sentences, conf.least_confident.size()));
      o += "<h3>Least confident outputs of " + esc(names[s]) + "</h3>\n";
      sentence_table(
          o, rows, in,
          {{"Output", [&, s](std::size_t i) { return esc(in.systems[s][i]); }, false},
           {"log p", [&, s](std::size_t i) { return num(in.confidences[s][i], 3); }, true},
           {"s" + c.sentence_metric, [&, s](std::size_t i) { return num(c.sentence_scores[s][i], 1); }, true}});
    }
  }

  // The first system's worst sentences (the held-out browser's order).
  std::vector<std::size_t> worst(c.sentences);
  for (std::size_t i = 0; i < worst.size(); ++i) worst[i] = i;
  std::stable_sort(worst.begin(), worst.end(),
                   [&](std::size_t a, std::size_t b) { return c.sentence_scores[0][a] < c.sentence_scores[0][b]; });
  worst.resize(std::min(max_sentences, worst.size()));
  o += "<h3>Lowest sentence " + esc(c.sentence_metric) + " of " + esc(names.front()) + "</h3>\n";
  sentence_table(o, worst, in,
                 {{"Output", [&](std::size_t i) { return esc(in.systems[0][i]); }, false},
                  {"s" + c.sentence_metric, [&](std::size_t i) { return num(c.sentence_scores[0][i], 1); }, true}});

  for (const auto& p : c.pairs) {
    const auto &a = names[p.a], &b = names[p.b];
    o += "<h3>" + esc(b) + " against " + esc(a) + "</h3>\n<p class=\"note\">" + std::to_string(p.identical) + " of " +
         std::to_string(c.sentences) + " outputs identical.</p>\n";
    o += "<table>\n<thead><tr><th>n-grams " + esc(a) + " matches more often</th><th class=\"num\">" + esc(a) + " / " +
         esc(b) + "</th><th>n-grams " + esc(b) + " matches more often</th><th class=\"num\">" + esc(a) + " / " +
         esc(b) + "</th></tr></thead>\n<tbody>\n";
    for (std::size_t r = 0; r < std::max(p.a_better.size(), p.b_better.size()); ++r) {
      o += "<tr>";
      for (const auto* list : {&p.a_better, &p.b_better}) {
        if (r < list->size())
          o += "<td class=\"mono\">" + esc((*list)[r].ngram) + "</td><td class=\"num\">" +
               std::to_string((*list)[r].matches_a) + " / " + std::to_string((*list)[r].matches_b) + "</td>";
        else
          o += "<td></td><td></td>";
      }
      o += "</tr>\n";
    }
    o += "</tbody>\n</table>\n";
    for (const auto* list : {&p.b_better_sentences, &p.a_better_sentences}) {
      if (list->empty()) continue;
      std::vector<std::size_t> rows;
      for (const auto& d : *list) rows.push_back(d.index);
      if (rows.size() > max_sentences) rows.resize(max_sentences);
      o += "<h4>Where " + esc(list == &p.b_better_sentences ? b : a) + " scores higher</h4>\n";
      sentence_table(o, rows, in,
                     {{a, [&, pa = p.a](std::size_t i) { return esc(in.systems[pa][i]); }, false},
                      {b, [&, pb = p.b](std::size_t i) { return esc(in.systems[pb][i]); }, false},
                      {"s" + c.sentence_metric,
                       [&, pa = p.a, pb = p.b](std::size_t i) {
                         return num(c.sentence_scores[pa][i], 1) + " / " + num(c.sentence_scores[pb][i], 1);
                       },
                       true}});
    }
  }
  o += "</section>\n";
  return o;
}

}  // namespace ts
