// SPDX-License-Identifier: GPL-3.0-or-later
// Attention statistics for the attention explorer (see ts/analysis/attention_stats.h).
#include "ts/analysis/attention_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ts {
namespace {

double clean(double v) { return std::isfinite(v) && v > 0 ? v : 0.0; }

double cell(const AttentionMatrix& m, std::size_t r, std::size_t c) {
  return r < m.size() && c < m[r].size() ? clean(m[r][c]) : 0.0;
}

// Keys row r may attend to: all of them, or 0..r under the causal mask.
std::size_t visible_keys(std::size_t r, std::size_t columns, bool causal) {
  return causal ? std::min(r + 1, columns) : columns;
}

double row_sum(const AttentionMatrix& m, std::size_t r, std::size_t keys) {
  double s = 0;
  for (std::size_t c = 0; c < keys; ++c) s += cell(m, r, c);
  return s;
}

double entropy_of_row(const AttentionMatrix& m, std::size_t r, std::size_t keys, double sum) {
  if (sum <= 0) return 0;
  double h = 0;
  for (std::size_t c = 0; c < keys; ++c) {
    const double p = cell(m, r, c) / sum;
    if (p > 0) h -= p * std::log(p);
  }
  return std::max(0.0, h);
}

double entropy_of_probs(const std::vector<double>& p) {
  double h = 0;
  for (double v : p)
    if (v > 0) h -= v * std::log(v);
  return std::max(0.0, h);
}

std::string percent(double x) {
  return std::to_string(static_cast<long>(std::lround(std::clamp(x, 0.0, 1.0) * 100))) + "%";
}

std::string fixed2(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

struct Mean {
  double sum = 0;
  int n = 0;
  void add(double v) { sum += v, ++n; }
  double value() const { return n > 0 ? sum / n : 0.0; }
};

}  // namespace

std::string attention_pattern_name(AttentionPattern pattern) {
  switch (pattern) {
    case AttentionPattern::Diagonal:
      return "same token (diagonal)";
    case AttentionPattern::PreviousToken:
      return "previous token";
    case AttentionPattern::NextToken:
      return "next token";
    case AttentionPattern::FirstToken:
      return "first token";
    case AttentionPattern::EndOfSentence:
      return "end of sentence (</s>)";
    case AttentionPattern::Broad:
      return "broad";
    case AttentionPattern::Alignment:
      return "alignment";
    case AttentionPattern::Reordering:
      return "reordering";
    case AttentionPattern::Mixed:
      return "mixed";
    case AttentionPattern::Undetermined:
      return "too few tokens";
  }
  return "?";
}

std::string attention_pattern_short_name(AttentionPattern pattern) {
  switch (pattern) {
    case AttentionPattern::Diagonal:
      return "diag";
    case AttentionPattern::PreviousToken:
      return "prev";
    case AttentionPattern::NextToken:
      return "next";
    case AttentionPattern::FirstToken:
      return "first";
    case AttentionPattern::EndOfSentence:
      return "eos";
    case AttentionPattern::Broad:
      return "broad";
    case AttentionPattern::Alignment:
      return "align";
    case AttentionPattern::Reordering:
      return "reord";
    case AttentionPattern::Mixed:
      return "mixed";
    case AttentionPattern::Undetermined:
      return "n/a";
  }
  return "?";
}

std::size_t attention_columns(const AttentionMatrix& m) {
  std::size_t columns = 0;
  for (const auto& row : m) columns = std::max(columns, row.size());
  return columns;
}

AttentionMatrix average_heads(const std::vector<AttentionMatrix>& heads) {
  if (heads.empty()) return {};
  std::size_t rows = 0, columns = 0;
  for (const auto& h : heads) {
    rows = std::max(rows, h.size());
    columns = std::max(columns, attention_columns(h));
  }
  AttentionMatrix out(rows, std::vector<double>(columns, 0.0));
  const double w = 1.0 / static_cast<double>(heads.size());
  for (const auto& h : heads)
    for (std::size_t r = 0; r < h.size(); ++r)
      for (std::size_t c = 0; c < h[r].size(); ++c) out[r][c] += w * clean(h[r][c]);
  return out;
}

std::vector<double> row_entropies(const AttentionMatrix& m, bool causal) {
  const std::size_t columns = attention_columns(m);
  std::vector<double> out(m.size(), 0.0);
  for (std::size_t r = 0; r < m.size(); ++r) {
    const std::size_t keys = visible_keys(r, columns, causal);
    out[r] = entropy_of_row(m, r, keys, row_sum(m, r, keys));
  }
  return out;
}

std::vector<double> normalized_row_entropies(const AttentionMatrix& m, bool causal) {
  const std::size_t columns = attention_columns(m);
  auto out = row_entropies(m, causal);
  for (std::size_t r = 0; r < out.size(); ++r) {
    const std::size_t keys = visible_keys(r, columns, causal);
    out[r] = keys < 2 ? 0.0 : std::min(1.0, out[r] / std::log(static_cast<double>(keys)));
  }
  return out;
}

double mean_entropy(const AttentionMatrix& m, bool causal) {
  const std::size_t columns = attention_columns(m);
  Mean mean;
  for (std::size_t r = 0; r < m.size(); ++r) {
    const std::size_t keys = visible_keys(r, columns, causal);
    const double sum = row_sum(m, r, keys);
    if (sum > 0) mean.add(entropy_of_row(m, r, keys, sum));
  }
  return mean.value();
}

double mean_normalized_entropy(const AttentionMatrix& m, bool causal) {
  const std::size_t columns = attention_columns(m);
  Mean mean;
  for (std::size_t r = 0; r < m.size(); ++r) {
    const std::size_t keys = visible_keys(r, columns, causal);
    const double sum = row_sum(m, r, keys);
    if (keys >= 2 && sum > 0)
      mean.add(std::min(1.0, entropy_of_row(m, r, keys, sum) / std::log(static_cast<double>(keys))));
  }
  return mean.value();
}

HeadSummary summarize_head(const AttentionMatrix& m, AttentionKind kind, const AttentionSummaryOptions& options) {
  const bool causal = kind == AttentionKind::DecoderSelf;
  const std::size_t columns = attention_columns(m);
  HeadSummary s;
  s.mean_entropy = mean_entropy(m, causal);
  s.normalized_entropy = mean_normalized_entropy(m, causal);
  if (kind == AttentionKind::Cross) s.monotonicity = 1;

  // The judged rows: those that could attend to two keys or more and attend to something. A
  // causal row 0 sees only "<s>" and says nothing about the head.
  struct Row {
    std::size_t index;
    std::vector<double> p;  // renormalised over the visible keys
  };
  std::vector<Row> rows;
  for (std::size_t r = 0; r < m.size(); ++r) {
    const std::size_t keys = visible_keys(r, columns, causal);
    const double sum = row_sum(m, r, keys);
    if (keys < 2 || sum <= 0) continue;
    Row row{r, std::vector<double>(keys)};
    for (std::size_t c = 0; c < keys; ++c) row.p[c] = cell(m, r, c) / sum;
    rows.push_back(std::move(row));
  }
  if (rows.empty()) {
    s.description = attention_pattern_name(AttentionPattern::Undetermined);
    s.caption = attention_pattern_short_name(AttentionPattern::Undetermined);
    return s;
  }

  Mean peak;
  for (const auto& row : rows) peak.add(*std::max_element(row.p.begin(), row.p.end()));
  s.peakedness = peak.value();
  double broad = 0;
  {
    Mean mean;
    for (const auto& row : rows) mean.add(entropy_of_probs(row.p) / std::log(static_cast<double>(row.p.size())));
    broad = std::min(1.0, mean.value());
  }

  if (kind == AttentionKind::Cross) {
    // The aligned source position of each row: its peak outside "</s>" (the last key), where heads
    // park attention they do not need, except for the last row, the target "</s>" itself.
    const std::size_t last_key = columns - 1;
    const std::size_t last_row = m.size() - 1;
    Mean align, eos;
    std::vector<std::size_t> aligned;
    for (const auto& row : rows) {
      const std::size_t end = row.index == last_row ? row.p.size() : std::min(row.p.size(), last_key);
      const auto best = std::max_element(row.p.begin(), row.p.begin() + static_cast<std::ptrdiff_t>(end));
      align.add(*best);
      aligned.push_back(static_cast<std::size_t>(best - row.p.begin()));
      eos.add(last_key < row.p.size() ? row.p[last_key] : 0.0);
    }
    int forward = 0;
    for (std::size_t i = 1; i < aligned.size(); ++i) forward += aligned[i] >= aligned[i - 1] ? 1 : 0;
    s.monotonicity = aligned.size() < 2 ? 1.0 : forward / static_cast<double>(aligned.size() - 1);
    const auto peaked =
        s.monotonicity >= options.monotone_share ? AttentionPattern::Alignment : AttentionPattern::Reordering;
    s.candidates = {
        {peaked, align.value()}, {AttentionPattern::EndOfSentence, eos.value()}, {AttentionPattern::Broad, broad}};
  } else {
    Mean diag, prev, next, first, eos;
    for (const auto& row : rows) {
      const std::size_t r = row.index, keys = row.p.size();
      if (r < keys) diag.add(row.p[r]);
      if (r >= 1 && r - 1 < keys) prev.add(row.p[r - 1]);
      if (!causal && r + 1 < keys) next.add(row.p[r + 1]);
      first.add(row.p[0]);
      if (!causal) eos.add(row.p[keys - 1]);
    }
    s.candidates = {{AttentionPattern::Diagonal, diag.value()}, {AttentionPattern::PreviousToken, prev.value()}};
    if (!causal) s.candidates.push_back({AttentionPattern::NextToken, next.value()});
    s.candidates.push_back({AttentionPattern::FirstToken, first.value()});
    if (!causal) s.candidates.push_back({AttentionPattern::EndOfSentence, eos.value()});
    s.candidates.push_back({AttentionPattern::Broad, broad});
  }

  // The strongest qualifying candidate; earlier ones win ties. "broad" measures spread, not
  // weight, so it has its own (higher) bar.
  const std::pair<AttentionPattern, double>* chosen = nullptr;
  const std::pair<AttentionPattern, double>* strongest = nullptr;
  for (const auto& c : s.candidates) {
    const bool is_broad = c.first == AttentionPattern::Broad;
    if (!is_broad && (!strongest || c.second > strongest->second)) strongest = &c;
    if (c.second < (is_broad ? options.broad_entropy : options.min_strength)) continue;
    if (!chosen || c.second > chosen->second) chosen = &c;
  }
  if (chosen) {
    s.pattern = chosen->first;
    s.strength = chosen->second;
    if (s.pattern == AttentionPattern::Broad) {
      s.description = "broad (normalised entropy " + fixed2(s.strength) + ")";
    } else if (s.pattern == AttentionPattern::Alignment || s.pattern == AttentionPattern::Reordering) {
      s.description = attention_pattern_name(s.pattern) + " (" + percent(s.strength) + ", monotone " +
                      percent(s.monotonicity) + ")";
    } else {
      s.description = attention_pattern_name(s.pattern) + " (" + percent(s.strength) + ")";
    }
    s.caption = attention_pattern_short_name(s.pattern) + " " + percent(s.strength);
  } else {
    s.pattern = AttentionPattern::Mixed;
    s.strength = strongest ? strongest->second : 0.0;
    s.description = "mixed";
    if (strongest)
      s.description += " (best: " + attention_pattern_name(strongest->first) + " " + percent(strongest->second) + ")";
    s.caption = "mixed";
  }
  return s;
}

}  // namespace ts
