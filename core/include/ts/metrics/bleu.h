// Corpus BLEU and chrF computed the sacreBLEU way (13a / zh / char / none tokenisation,
// exp smoothing; chrF with character order 6, word order 0, beta 2).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ts {

/// sacreBLEU tokenisers: "13a" (default), "zh" (CJK characters split, then 13a), "char"
/// (every code point a token, spaces dropped), "none" (split on whitespace).
std::string tokenize_for_bleu(std::string_view line, const std::string& tokenize);

struct BleuScore {
  double score = 0;                 // 0..100
  std::vector<double> precisions;   // 4 n-gram precisions in percent
  std::vector<long> counts, totals; // matched / total n-grams per order
  double bp = 1;                    // brevity penalty
  double ratio = 0;                 // hyp_len / ref_len
  long sys_len = 0, ref_len = 0;
  std::string tokenize;
  /// "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)"
  std::string to_string() const;
};

/// Corpus BLEU of `hypotheses` against one or more reference streams (each stream has one
/// reference per hypothesis; throws std::invalid_argument when lengths differ).
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& reference_streams,
                      const std::string& tokenize = "13a");

struct ChrfScore {
  double score = 0;  // 0..100
  int char_order = 6, word_order = 0;
  double beta = 2;
  std::string to_string() const;  // "chrF2 = 59.73"
};

/// Corpus chrF (sacreBLEU's CHRF defaults: whitespace removed, statistics summed over the corpus,
/// best-matching reference per sentence when several streams are given).
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& reference_streams,
                      int char_order = 6, int word_order = 0, double beta = 2.0);

}  // namespace ts
