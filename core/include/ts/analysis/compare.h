// SPDX-License-Identifier: GPL-3.0-or-later
// Comparing translation systems the way MT researchers do: corpus BLEU and chrF with 95% intervals
// and p-values by paired bootstrap resampling (Koehn 2004, as sacreBLEU's --paired-bs does it:
// each sentence's statistics are computed once and resampled, never the text), and compare-mt's
// analyses (Neubig et al. 2019): word accuracy by the word's frequency in the training data,
// sentence buckets, the n-grams one system matches more often than another, and the sentences where
// two systems differ most. Plain text in, plain structs out: no LibTorch, no Qt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ts {

struct CompareInput {
  std::vector<std::string> references;            // one per test sentence
  std::vector<std::string> sources;               // optional, for the examples
  std::vector<std::string> names;                 // one per system; the first is the baseline
  std::vector<std::vector<std::string>> systems;  // [system][sentence]
  /// Target side of the training data (optional): word frequencies for the word-accuracy buckets.
  /// Without it the references' own frequencies are used, and the result says so.
  std::vector<std::string> training_targets;
  std::string tokenize = "13a";  // sacreBLEU tokenisation of the target language ("zh" for Chinese)
  /// Optional, per system: each output's mean token log-probability under the model that wrote it
  /// (its confidence); an empty list for a system without them (text files).
  std::vector<std::vector<double>> confidences;
  /// How the test pairs were held out (describe_split), when they come from a run's split.
  std::string split;
};

struct CompareOptions {
  int resamples = 1000;        // paired bootstrap resamples (0 = no intervals and no p-values)
  std::uint64_t seed = 12345;  // sacreBLEU's default seed
  int ngram_order = 4;         // longest n-gram in the n-gram difference analysis
  int ngrams = 10;             // n-grams listed each way
  int examples = 10;           // sentences listed each way
};

/// A corpus score with its bootstrap distribution's mean and 95% interval (the 2.5th and 97.5th
/// percentiles, sacreBLEU's estimate_ci; `half_width` is its "± x").
struct ScoreEstimate {
  double score = 0;
  double mean = 0, low = 0, high = 0, half_width = 0;
};

struct SystemResult {
  std::string name;
  ScoreEstimate bleu, chrf;
  /// Against the first system: the share of resamples whose mean-centred absolute difference is at
  /// least the real one (+1 smoothing). 1 for the first system itself and for identical output.
  double p_bleu = 1, p_chrf = 1;
  double mean_sentence_score = 0;  // of the sentence metric below
};

/// Does the model know when it is wrong? One system's sentence confidences (mean token
/// log-probability) against its sentence scores.
struct ConfidenceResult {
  bool available = false;     // the system came with confidences
  std::size_t sentences = 0;  // those with a finite confidence (the others are left out)
  double mean = 0;            // mean confidence
  double pearson = 0;         // linear correlation of confidence and sentence score
  double spearman = 0;        // rank correlation (ties share their mean rank)
  /// Sentence indices, least confident first (ties in test-set order); non-finite confidences first.
  std::vector<std::size_t> least_confident;
  /// The sentences cut into fifths by confidence, least confident fifth first: the mean
  /// confidence and the mean sentence score of each fifth, and how many sentences it holds.
  std::vector<double> fifth_confidence, fifth_score;
  std::vector<long> fifth_count;
};

/// Rows of one analysis: a label per bucket, and per system a value and how many items it holds.
struct BucketTable {
  std::string title;  // "Word accuracy (F-measure) by frequency in the training data"
  std::string value;  // what the values are: "F-measure", "BLEU", "chrF", "sentences"
  std::vector<std::string> labels;
  std::vector<std::vector<double>> values;  // [bucket][system]
  std::vector<std::vector<long>> counts;    // [bucket][system]: words, sentences
};

struct NgramDifference {
  std::string ngram;
  long matches_a = 0, matches_b = 0;  // times matched in the references over the test set
  double score = 0.5;                 // (a + 1) / (a + b + 2): compare-mt's smoothed share of system A
};

struct SentenceDifference {
  std::size_t index = 0;  // into the test set
  double score_a = 0, score_b = 0;
};

/// System `b` against system `a` (the first system against each other one).
struct PairComparison {
  std::size_t a = 0, b = 0;
  std::vector<NgramDifference> a_better, b_better;  // n-grams each matches more often
  std::vector<SentenceDifference> a_better_sentences, b_better_sentences;
  std::size_t identical = 0;  // sentences where the two outputs are the same text
};

struct Comparison {
  std::size_t sentences = 0;
  int resamples = 0;
  std::string sentence_metric;  // "BLEU" (sentence BLEU, effective order) or "chrF" (a "zh" or "char" target)
  std::vector<SystemResult> systems;
  BucketTable word_accuracy, by_sentence_score, by_reference_length, by_length_difference;
  std::vector<PairComparison> pairs;
  std::vector<std::vector<double>> sentence_scores;  // [system][sentence]
  std::vector<ConfidenceResult> confidence;          // [system]; available = false without confidences
  /// Mean sentence score by confidence fifth (least confident first), per system with confidences
  /// (the others have 0 sentences in every bucket).
  BucketTable by_confidence;
};

/// Throws std::invalid_argument naming what does not fit: no system, a system, its confidences or the
/// sources with another number of lines than the references, an unknown tokenisation, a negative count.
Comparison compare_systems(const CompareInput& input, const CompareOptions& options = {});

/// Word accuracy (compare-mt): per word type, sentence by sentence, matches = min(count in the
/// output, count in the reference); precision = matches / output words, recall = matches /
/// reference words, F = 2PR / (P + R), summed within each bucket of the word's frequency in
/// `frequency_text` (tokenised as the references). Buckets: 0, 1, 2, 3, 4, [5,10), [10,100),
/// [100,1000), >= 1000. Exposed for tests; compare_systems calls it.
BucketTable word_accuracy_by_frequency(const std::vector<std::string>& references,
                                       const std::vector<std::vector<std::string>>& systems,
                                       const std::vector<std::string>& frequency_text, const std::string& tokenize);

/// Pearson's correlation of two equally long series; 0 when either is constant or they hold fewer
/// than two values.
double pearson_correlation(const std::vector<double>& x, const std::vector<double>& y);
/// The ranks of `v` from 1 (the smallest), tied values sharing the mean of their ranks.
std::vector<double> average_ranks(const std::vector<double>& v);
/// Spearman's rank correlation: Pearson's over average_ranks of each series.
double spearman_correlation(const std::vector<double>& x, const std::vector<double>& y);
/// A system's confidence against its sentence scores (sentences with a non-finite confidence are
/// left out of the figures and listed first in least_confident). Exposed for tests.
ConfidenceResult analyse_confidence(const std::vector<double>& confidences, const std::vector<double>& sentence_scores);

/// The resamples: `resamples` lists of `sentences` indices drawn with replacement from a seeded
/// generator (the same for every system: the test is paired).
std::vector<std::vector<std::size_t>> bootstrap_indices(std::size_t sentences, int resamples, std::uint64_t seed);

/// A score's estimate from its resampled values (`resampled` is sorted in place): the mean, and
/// the 95% interval between the values at n/40 and n - n/40 - 1 of the sorted list.
ScoreEstimate estimate_from_resamples(double score, std::vector<double>& resampled);

/// The p-value of `system` against `baseline` from their scores on the same resamples and on the
/// test set: with d_r = |system_r - baseline_r| and D = |system - baseline|, the share
/// (c + 1) / (n + 1) of resamples with d_r - mean(d) >= D (sacreBLEU's statistic; counting ties
/// makes a system against itself p = 1).
double paired_bootstrap_p_value(double baseline, double system, const std::vector<double>& baseline_resampled,
                                const std::vector<double>& system_resampled);

}  // namespace ts
