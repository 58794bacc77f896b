// SPDX-License-Identifier: GPL-3.0-or-later
// Corpus BLEU and chrF computed the sacreBLEU way (13a / zh / char / none tokenisation,
// exp smoothing; chrF with character order 6, word order 0, beta 2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

/// sacreBLEU tokenisers: "13a" (default), "zh" (CJK characters split, then 13a), "char"
/// (every code point a token, spaces dropped), "none" (split on whitespace).
/// The result is the tokens joined by single spaces. Throws std::invalid_argument for any other
/// name (the message lists the valid ones). "zh" follows the project's reference scorer
/// (shared/bench/bleu.py): the CJK ranges of ts::is_cjk, then the full 13a tokenizer.
std::string tokenize_for_bleu(std::string_view line, const std::string& tokenize);

struct BleuScore {
  double score = 0;                  // 0..100
  std::vector<double> precisions;    // 4 n-gram precisions in percent
  std::vector<long> counts, totals;  // matched / total n-grams per order
  double bp = 1;                     // brevity penalty
  double ratio = 0;                  // hyp_len / ref_len
  long sys_len = 0, ref_len = 0;
  std::string tokenize;
  /// "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)"
  std::string to_string() const;
};

/// Corpus BLEU of `hypotheses` against one or more reference streams (each stream has one
/// reference per hypothesis; throws std::invalid_argument when lengths differ or there is no
/// stream). As in sacreBLEU, lines are right-stripped before tokenising and empty references are
/// left out of their sentence (one whose references are all empty is scored against "").
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& reference_streams,
                      const std::string& tokenize = "13a");

/// BLEU's sufficient statistics, of one sentence or (added up) of a corpus: matched and total
/// n-grams per order and the two lengths. Resampling these, computed once per sentence, is how
/// sacreBLEU's paired bootstrap scores each resample without tokenising the text again.
struct BleuStats {
  static constexpr int kOrders = 4;
  long sys_len = 0, ref_len = 0;
  long counts[kOrders] = {}, totals[kOrders] = {};
  BleuStats& operator+=(const BleuStats& other);
};

/// The statistics of each sentence, as corpus_bleu counts them (the same checks and references).
std::vector<BleuStats> sentence_bleu_stats(const std::vector<std::string>& hypotheses,
                                           const std::vector<std::vector<std::string>>& reference_streams,
                                           const std::string& tokenize = "13a");

/// BLEU from (summed) statistics: corpus_bleu's result for the sentences they add up. With
/// `effective_order` (sacreBLEU's sentence_bleu) only the orders the hypothesis has n-grams of are
/// averaged, so a three-word sentence can score above zero.
BleuScore bleu_from_stats(const BleuStats& stats, const std::string& tokenize = "13a", bool effective_order = false);

struct ChrfScore {
  double score = 0;  // 0..100
  int char_order = 6, word_order = 0;
  double beta = 2;
  std::string to_string() const;  // "chrF2 = 59.73"
};

/// Corpus chrF (sacreBLEU's CHRF defaults: whitespace removed, statistics summed over the corpus,
/// best-matching reference per sentence when several streams are given). word_order > 0 adds word
/// n-grams (2 = chrF++). Like sacreBLEU 2.x, a hypothesis's n-grams of an order are not counted
/// when its reference has none of that order, and empty references are left out as for BLEU.
/// Throws std::invalid_argument on a stream length mismatch, no stream, or a negative order.
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& reference_streams, int char_order = 6,
                      int word_order = 0, double beta = 2.0);

/// chrF's statistics of each sentence against its best-matching reference: [hypothesis n-grams,
/// reference n-grams, matches] for each character order, then each word order (the totals
/// corpus_chrf adds up). chrf_from_stats scores their sum.
std::vector<std::vector<long>> sentence_chrf_stats(const std::vector<std::string>& hypotheses,
                                                   const std::vector<std::vector<std::string>>& reference_streams,
                                                   int char_order = 6, int word_order = 0, double beta = 2.0);
/// chrF (0..100) of summed statistics.
double chrf_from_stats(const std::vector<long>& stats, double beta = 2.0);

namespace detail {
// Internals shared by bleu.cpp and chrf.cpp; not part of the public API.

/// Python's str.isspace(), i.e. what sacreBLEU's str.split()/strip() treat as whitespace.
bool is_python_space(char32_t cp);

/// Appends the pieces of `s` between runs of Python whitespace to `out` (str.split()).
void split_python_whitespace(std::string_view s, std::vector<std::string_view>& out);

/// Dense ids for the n-grams of a few texts (one hypothesis, then its references) so that
/// counting n-grams is array indexing: fill `ids` (every id below the alphabet size), call
/// start() for order 1, then advance() for each further order. At every order, equal n-grams
/// (across all texts) share one id in `grams`, and every id is below `distinct`.
class NgramTable {
 public:
  std::vector<std::vector<std::uint32_t>> ids;    // units of each text
  std::vector<std::vector<std::uint32_t>> grams;  // id of the n-gram starting at each position
  std::uint32_t distinct = 0;
  int order = 0;

  void start(std::uint32_t alphabet);
  void advance();
  /// Sum over n-grams of min(count in text a, count in text b).
  long matches(std::size_t a, std::size_t b);
  /// BLEU clipping: sum over the n-grams of text 0 of min(its count, highest count in any
  /// other text).
  long clipped_by_max_reference();

 private:
  void renumber_direct(std::uint64_t space);
  void renumber_sorted();
  void grow_scratch();

  std::uint32_t alphabet_ = 1;
  std::vector<std::uint32_t> slot_;  // pair key -> new id during renumbering (kept all-empty)
  std::vector<std::uint64_t> touched_;
  std::vector<std::uint32_t> count_a_, count_b_, max_b_;  // scratch counts (kept all-zero)
};

/// Throws std::invalid_argument unless there is a stream and each has one line per hypothesis.
void check_reference_streams(std::size_t hypotheses, const std::vector<std::vector<std::string>>& streams);

/// The references of sentence `i`: like sacreBLEU, empty ones are left out (a sentence whose
/// references are all empty keeps one empty reference).
void gather_references(const std::vector<std::vector<std::string>>& streams, std::size_t i,
                       std::vector<const std::string*>& refs);

/// Checks the streams, then calls add(hypothesis, its references) for each sentence in order: the
/// loop every corpus and per-sentence score shares.
template <class Add>
void for_each_sentence(const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& streams,
                       Add&& add) {
  check_reference_streams(hypotheses.size(), streams);
  std::vector<const std::string*> refs;
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    gather_references(streams, i, refs);
    add(hypotheses[i], refs);
  }
}

}  // namespace detail
}  // namespace ts
