// SPDX-License-Identifier: GPL-3.0-or-later
// Corpus chrF / chrF++ computed the sacreBLEU (2.x) way: character n-grams with whitespace
// removed, optional word n-grams, per-sentence best reference, statistics summed over the corpus,
// then precision and recall averaged over the effective orders before the F-beta score.
#include "ts/metrics/bleu.h"

#include "ts/text/utf8.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

namespace ts {
namespace {

using detail::NgramTable;

// Python's string.punctuation, which sacreBLEU's chrF++ splits off words.
bool is_ascii_punctuation(char c) {
  return std::string_view("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~").find(c) != std::string_view::npos;
}

// sacreBLEU's CHRF._compute_f_score without eps smoothing (its default): precision and recall
// are averaged over the orders where both hypothesis and reference have n-grams.
double chrf_f_score(const std::vector<long>& stats, double beta) {
  const double factor = beta * beta;
  double avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (std::size_t i = 0; i + 2 < stats.size(); i += 3) {
    const long n_hyp = stats[i], n_ref = stats[i + 1], n_match = stats[i + 2];
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += static_cast<double>(n_match) / static_cast<double>(n_hyp);
      avg_rec += static_cast<double>(n_match) / static_cast<double>(n_ref);
      ++effective_order;
    }
  }
  if (effective_order == 0) return 0.0;
  avg_prec /= effective_order;
  avg_rec /= effective_order;
  if (avg_prec + avg_rec == 0.0) return 0.0;
  double score = (1 + factor) * avg_prec * avg_rec;
  score /= factor * avg_prec + avg_rec;
  return 100 * score;
}

// sacreBLEU's CHRF._remove_punctuation: one ASCII punctuation mark is split off the end of a
// word, or else off its start.
void split_words(std::string_view text, std::vector<std::string_view>& words) {
  std::vector<std::string_view> pieces;
  detail::split_python_whitespace(text, pieces);
  words.clear();
  for (const auto w : pieces) {
    if (code_point_count(w) == 1) {
      words.push_back(w);
    } else if (is_ascii_punctuation(w.back())) {
      words.push_back(w.substr(0, w.size() - 1));
      words.push_back(w.substr(w.size() - 1));
    } else if (is_ascii_punctuation(w.front())) {
      words.push_back(w.substr(0, 1));
      words.push_back(w.substr(1));
    } else {
      words.push_back(w);
    }
  }
}

// Per-sentence dense ids for code points: a direct table for the BMP, a map beyond it.
class CodePointIds {
 public:
  void clear() {
    for (const auto cp : used_) bmp_[cp] = kNone;
    used_.clear();
    others_.clear();
    size_ = 0;
  }
  std::uint32_t id(char32_t cp) {
    if (cp >= 0x10000) {
      const auto inserted = others_.try_emplace(cp, size_);
      if (inserted.second) ++size_;
      return inserted.first->second;
    }
    if (bmp_.empty()) bmp_.assign(0x10000, kNone);
    std::uint32_t& slot = bmp_[cp];
    if (slot == kNone) {
      slot = size_++;
      used_.push_back(cp);
    }
    return slot;
  }
  std::uint32_t size() const { return size_; }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  std::vector<std::uint32_t> bmp_;
  std::vector<char32_t> used_;
  std::unordered_map<char32_t, std::uint32_t> others_;
  std::uint32_t size_ = 0;
};

// Per-sentence statistics; keeps its buffers between sentences.
class ChrfAccumulator {
 public:
  ChrfAccumulator(int char_order, int word_order, double beta)
      : totals(3 * static_cast<std::size_t>(char_order + word_order), 0),
        char_order_(char_order),
        word_order_(word_order),
        beta_(beta) {}
  void add(const std::string& hyp, const std::vector<const std::string*>& refs);

  std::vector<long> totals;  // [hyp, ref, match] per order: characters first, then words

 private:
  void fill_chars(const std::vector<const std::string*>& texts);
  void fill_words(const std::vector<const std::string*>& texts);
  void count_orders(NgramTable& table, int orders, std::size_t first_slot);

  int char_order_, word_order_;
  double beta_;
  NgramTable chars_, words_;
  CodePointIds char_ids_;
  std::unordered_map<std::string_view, std::uint32_t> word_ids_;
  std::vector<std::string_view> pieces_;
  std::vector<const std::string*> texts_;   // hypothesis, then references
  std::vector<std::vector<long>> per_ref_;  // statistics against each reference
};

void ChrfAccumulator::fill_chars(const std::vector<const std::string*>& texts) {
  char_ids_.clear();
  chars_.ids.resize(texts.size());
  for (std::size_t t = 0; t < texts.size(); ++t) {
    const std::string_view s = *texts[t];
    auto& ids = chars_.ids[t];
    ids.clear();
    std::size_t pos = 0;
    while (pos < s.size()) {
      const auto byte = static_cast<unsigned char>(s[pos]);
      const char32_t cp = byte < 0x80 ? (++pos, char32_t{byte}) : next_code_point(s, pos);
      if (detail::is_python_space(cp)) continue;  // ''.join(line.split())
      ids.push_back(char_ids_.id(cp));
    }
  }
  chars_.start(char_ids_.size());
}

void ChrfAccumulator::fill_words(const std::vector<const std::string*>& texts) {
  word_ids_.clear();
  words_.ids.resize(texts.size());
  for (std::size_t t = 0; t < texts.size(); ++t) {
    split_words(*texts[t], pieces_);
    auto& ids = words_.ids[t];
    ids.clear();
    for (const auto w : pieces_) {
      const auto next_id = static_cast<std::uint32_t>(word_ids_.size());
      ids.push_back(word_ids_.try_emplace(w, next_id).first->second);
    }
  }
  words_.start(static_cast<std::uint32_t>(word_ids_.size()));
}

// Fills [hyp, ref, match] for orders 1..orders of `table` (already at order 1) into every
// reference's statistics, starting at slot `first_slot`.
void ChrfAccumulator::count_orders(NgramTable& table, int orders, std::size_t first_slot) {
  for (int n = 1; n <= orders; ++n) {
    if (n > 1) table.advance();
    const long n_hyp = static_cast<long>(table.grams[0].size());
    for (std::size_t r = 1; r < table.grams.size(); ++r) {
      auto& stats = per_ref_[r - 1];
      const std::size_t slot = first_slot + 3 * static_cast<std::size_t>(n - 1);
      const long n_ref = static_cast<long>(table.grams[r].size());
      stats[slot] = n_ref > 0 ? n_hyp : 0;  // sacreBLEU: no hits counted without ref n-grams
      stats[slot + 1] = n_ref;
      stats[slot + 2] = table.matches(0, r);
    }
  }
}

void ChrfAccumulator::add(const std::string& hyp, const std::vector<const std::string*>& refs) {
  texts_.assign(1, &hyp);
  texts_.insert(texts_.end(), refs.begin(), refs.end());
  per_ref_.resize(refs.size());
  for (auto& stats : per_ref_) stats.assign(totals.size(), 0);
  if (char_order_ > 0) {
    fill_chars(texts_);
    count_orders(chars_, char_order_, 0);
  }
  if (word_order_ > 0) {
    fill_words(texts_);
    count_orders(words_, word_order_, 3 * static_cast<std::size_t>(char_order_));
  }
  // The reference with the best sentence-level F-score wins (the first one on ties).
  const std::vector<long>* best = nullptr;
  double best_f = -1.0;
  for (const auto& stats : per_ref_) {
    const double f = chrf_f_score(stats, beta_);
    if (f > best_f) {
      best_f = f;
      best = &stats;
    }
  }
  for (std::size_t i = 0; best && i < totals.size(); ++i) totals[i] += (*best)[i];
}

void check_orders(int char_order, int word_order) {
  if (char_order < 0 || word_order < 0) {
    throw std::invalid_argument(
        fmt::format("chrF orders must be >= 0 (char_order {}, word_order {})", char_order, word_order));
  }
}

}  // namespace

ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& reference_streams, int char_order, int word_order,
                      double beta) {
  check_orders(char_order, word_order);
  ChrfAccumulator acc(char_order, word_order, beta);
  detail::for_each_sentence(
      hypotheses, reference_streams,
      [&](const std::string& hyp, const std::vector<const std::string*>& refs) { acc.add(hyp, refs); });
  ChrfScore s;
  s.score = chrf_f_score(acc.totals, beta);
  s.char_order = char_order;
  s.word_order = word_order;
  s.beta = beta;
  return s;
}

std::vector<std::vector<long>> sentence_chrf_stats(const std::vector<std::string>& hypotheses,
                                                   const std::vector<std::vector<std::string>>& reference_streams,
                                                   int char_order, int word_order, double beta) {
  check_orders(char_order, word_order);
  ChrfAccumulator acc(char_order, word_order, beta);
  std::vector<std::vector<long>> out;
  out.reserve(hypotheses.size());
  detail::for_each_sentence(hypotheses, reference_streams,
                            [&](const std::string& hyp, const std::vector<const std::string*>& refs) {
                              std::fill(acc.totals.begin(), acc.totals.end(), 0L);
                              acc.add(hyp, refs);
                              out.push_back(acc.totals);
                            });
  return out;
}

double chrf_from_stats(const std::vector<long>& stats, double beta) { return chrf_f_score(stats, beta); }

std::string ChrfScore::to_string() const {
  // sacreBLEU's name: f'chrF{beta}' plus one '+' per word order ("chrF2++" for chrF++).
  const bool whole = std::floor(beta) == beta && std::fabs(beta) < 1e15;
  const std::string beta_text = whole ? fmt::format("{}", static_cast<long long>(beta)) : fmt::format("{}", beta);
  return fmt::format("chrF{}{} = {:.2f}", beta_text,
                     std::string(static_cast<std::size_t>(std::max(word_order, 0)), '+'), score);
}

}  // namespace ts
