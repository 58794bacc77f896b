// SPDX-License-Identifier: GPL-3.0-or-later
// Comparing systems (ts/analysis/compare.h) against answers worked out by hand: the bootstrap's
// p-value and interval on fixed vectors, resampled statistics against scoring the resampled text,
// word accuracy per frequency bucket and the n-gram and sentence differences on tiny test sets,
// a system compared with itself (p = 1, no differences), and confidence against sentence score
// (correlations and fifths worked out by hand).
#include "ts/analysis/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ts/metrics/bleu.h"

namespace ts {
namespace {

TEST(PairedBootstrap, PValueOfFixedResamplesWorkedOutByHand) {
  // d = |system - baseline| per resample = {1, 3, 0, 1}, mean 1.25, centred {-0.25, 1.75, -1.25,
  // -0.25}; the real difference |12.5 - 11| = 1.5 is reached once: p = (1 + 1) / (4 + 1).
  EXPECT_DOUBLE_EQ(paired_bootstrap_p_value(11, 12.5, {10, 12, 11, 13}, {11, 15, 11, 14}), 0.4);
  // No resample reaches it: p = 1 / 5.
  EXPECT_DOUBLE_EQ(paired_bootstrap_p_value(11, 15, {10, 12, 11, 13}, {11, 15, 11, 14}), 0.2);
  // Identical systems: every centred difference (0) ties the real one (0).
  EXPECT_DOUBLE_EQ(paired_bootstrap_p_value(20, 20, {18, 21, 22}, {18, 21, 22}), 1.0);
  EXPECT_THROW(paired_bootstrap_p_value(1, 2, {1, 2}, {1}), std::invalid_argument);
}

TEST(PairedBootstrap, IntervalIsTheTwoAndAHalfPercentilesOfTheResamples) {
  std::vector<double> r;
  for (int v = 40; v >= 1; --v) r.push_back(v);  // 40 values, unsorted
  const auto e = estimate_from_resamples(25, r);
  EXPECT_DOUBLE_EQ(e.score, 25);
  EXPECT_DOUBLE_EQ(e.mean, 20.5);
  EXPECT_DOUBLE_EQ(e.low, 2);    // sorted[40 / 40]
  EXPECT_DOUBLE_EQ(e.high, 39);  // sorted[40 - 1 - 1]
  EXPECT_DOUBLE_EQ(e.half_width, 18.5);
}

TEST(PairedBootstrap, DrawsAreSeededAndWithinTheTestSet) {
  const auto a = bootstrap_indices(7, 50, 3), b = bootstrap_indices(7, 50, 3), c = bootstrap_indices(7, 50, 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  ASSERT_EQ(a.size(), 50u);
  for (const auto& draw : a) {
    ASSERT_EQ(draw.size(), 7u);
    for (const auto i : draw) EXPECT_LT(i, 7u);
  }
}

const std::vector<std::string> kRefs = {"The cat sat on the mat.", "He reads a book.", "It is raining today.",
                                        "We went home early.", "Tom is here."};
const std::vector<std::string> kHyps = {"The cat sits on the mat.", "He is reading a book.", "It rains today.",
                                        "We went home early.", "Tom was here."};

TEST(SentenceStatistics, ResampledStatisticsScoreLikeTheResampledText) {
  const std::vector<std::vector<std::string>> refs{kRefs};
  const auto bleu = sentence_bleu_stats(kHyps, refs);
  const auto chrf = sentence_chrf_stats(kHyps, refs);
  ASSERT_EQ(bleu.size(), kRefs.size());
  for (const auto& draw : bootstrap_indices(kRefs.size(), 5, 9)) {
    std::vector<std::string> h, r;
    BleuStats sum;
    std::vector<long> chrf_sum(chrf.front().size(), 0);
    for (const auto i : draw) {
      h.push_back(kHyps[i]);
      r.push_back(kRefs[i]);
      sum += bleu[i];
      for (std::size_t k = 0; k < chrf_sum.size(); ++k) chrf_sum[k] += chrf[i][k];
    }
    EXPECT_NEAR(bleu_from_stats(sum).score, corpus_bleu(h, {r}).score, 1e-9);
    EXPECT_NEAR(chrf_from_stats(chrf_sum), corpus_chrf(h, {r}).score, 1e-9);
  }
}

TEST(SentenceStatistics, EffectiveOrderGivesAShortExactSentenceFullMarks) {
  const auto stats = sentence_bleu_stats({"Tom won."}, {{"Tom won."}});  // 3 tokens: no 4-grams
  EXPECT_DOUBLE_EQ(bleu_from_stats(stats[0], "13a", true).score, 100.0);
  EXPECT_DOUBLE_EQ(bleu_from_stats(stats[0], "13a", false).score, 0.0);  // corpus BLEU's rule
}

TEST(WordAccuracy, BucketsCountedByHand) {
  // Frequencies: "the" 11 -> [10,100), "cat" 1, "dog" 2, "sat" and "a" 0.
  const std::vector<std::string> train = {"the the the the the the the the the the the", "cat", "dog dog"};
  const auto t = word_accuracy_by_frequency({"the cat sat", "the dog"}, {{"the cat", "a dog"}}, train, "13a");
  ASSERT_EQ(t.labels.size(), 9u);
  // Bucket 0: "sat" missed (reference 1), "a" inserted (output 1): P = R = 0.
  EXPECT_DOUBLE_EQ(t.values[0][0], 0.0);
  EXPECT_EQ(t.counts[0][0], 1);
  // "cat" and "dog" each matched once: F = 1.
  EXPECT_DOUBLE_EQ(t.values[1][0], 1.0);
  EXPECT_DOUBLE_EQ(t.values[2][0], 1.0);
  // "the": matched 1 of 2 in the references, 1 of 1 in the output: P = 1, R = 1/2, F = 2/3.
  EXPECT_EQ(t.labels[6], "[10,100)");
  EXPECT_NEAR(t.values[6][0], 2.0 / 3.0, 1e-12);
  EXPECT_EQ(t.counts[6][0], 2);
  EXPECT_EQ(t.counts[8][0], 0);
}

CompareInput two_systems(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  CompareInput in;
  in.references = kRefs;
  in.names = {"A", "B"};
  in.systems = {a, b};
  return in;
}

TEST(CompareSystems, ASystemAgainstItselfHasPOneAndNoDifferences) {
  const auto c = compare_systems(two_systems(kHyps, kHyps));
  ASSERT_EQ(c.systems.size(), 2u);
  EXPECT_DOUBLE_EQ(c.systems[1].p_bleu, 1.0);
  EXPECT_DOUBLE_EQ(c.systems[1].p_chrf, 1.0);
  EXPECT_DOUBLE_EQ(c.systems[0].bleu.score, c.systems[1].bleu.score);
  ASSERT_EQ(c.pairs.size(), 1u);
  EXPECT_TRUE(c.pairs[0].a_better.empty());
  EXPECT_TRUE(c.pairs[0].b_better.empty());
  EXPECT_TRUE(c.pairs[0].a_better_sentences.empty());
  EXPECT_TRUE(c.pairs[0].b_better_sentences.empty());
  EXPECT_EQ(c.pairs[0].identical, kRefs.size());
  EXPECT_EQ(c.resamples, 1000);
  // The corpus score is the plain corpus BLEU, inside its interval.
  EXPECT_NEAR(c.systems[0].bleu.score, corpus_bleu(kHyps, {kRefs}).score, 1e-9);
  EXPECT_LE(c.systems[0].bleu.low, c.systems[0].bleu.high);
}

TEST(CompareSystems, NgramsAndSentencesEachSystemGetsRight) {
  CompareInput in;
  in.references = {"a b", "c d"};
  in.names = {"A", "B"};
  in.systems = {{"a b", "c d"}, {"a c", "c d"}};
  CompareOptions o;
  o.ngram_order = 2;
  const auto c = compare_systems(in, o);
  const auto& p = c.pairs.at(0);
  // Reference n-grams of sentence 1: "a", "b", "a b". A matches all, B only "a": "b" and "a b"
  // go to A with (1 + 1) / (1 + 0 + 2) = 2/3; "a", "c", "d", "c d" are matched alike and left out.
  ASSERT_EQ(p.a_better.size(), 2u);
  EXPECT_EQ(p.a_better[0].ngram, "a b");
  EXPECT_EQ(p.a_better[1].ngram, "b");
  EXPECT_NEAR(p.a_better[0].score, 2.0 / 3.0, 1e-12);
  EXPECT_EQ(p.a_better[0].matches_a, 1);
  EXPECT_EQ(p.a_better[0].matches_b, 0);
  EXPECT_TRUE(p.b_better.empty());
  ASSERT_EQ(p.a_better_sentences.size(), 1u);
  EXPECT_EQ(p.a_better_sentences[0].index, 0u);
  EXPECT_TRUE(p.b_better_sentences.empty());
  EXPECT_EQ(p.identical, 1u);
  // Length difference: both outputs as long as their references.
  EXPECT_EQ(c.by_length_difference.counts[5][1], 2);
}

TEST(CompareSystems, ABetterSystemIsSignificantOnAFairSizedTestSet) {
  // 200 sentences: B repeats the reference, A drops its last word.
  CompareInput in;
  in.names = {"A", "B"};
  in.systems.resize(2);
  for (int i = 0; i < 200; ++i) {
    const std::string ref = "sentence number " + std::to_string(i) + " has five words";
    in.references.push_back(ref);
    in.systems[0].push_back("sentence number " + std::to_string(i) + " has five");
    in.systems[1].push_back(ref);
  }
  const auto c = compare_systems(in);
  EXPECT_GT(c.systems[1].bleu.score, c.systems[0].bleu.score);
  EXPECT_LT(c.systems[1].p_bleu, 0.01);
  EXPECT_LT(c.systems[1].p_chrf, 0.01);
  // Character-level targets are bucketed by chrF.
  in.tokenize = "char";
  EXPECT_EQ(compare_systems(in).sentence_metric, "chrF");
}

TEST(CompareSystems, MismatchedInputNamesWhatDoesNotFit) {
  auto in = two_systems(kHyps, {"only one line"});
  try {
    compare_systems(in);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("B has 1 lines but the references have 5"), std::string::npos) << e.what();
  }
  in = two_systems(kHyps, kHyps);
  in.tokenize = "klingon";
  EXPECT_THROW(compare_systems(in), std::invalid_argument);
  EXPECT_THROW(compare_systems(CompareInput{}), std::invalid_argument);
  CompareInput empty;
  empty.names = {"A"};
  empty.systems = {{}};
  EXPECT_THROW(compare_systems(empty), std::invalid_argument);  // no sentences: nothing to compare
}

TEST(Confidence, CorrelationsWorkedOutByHand) {
  // x = 1..5, y = {2, 4, 5, 4, 5}: centred x {-2, -1, 0, 1, 2}, y {-2, 0, 1, 0, 1};
  // Sxy = 6, Sxx = 10, Syy = 6, r = 6 / sqrt(60).
  const std::vector<double> x{1, 2, 3, 4, 5}, y{2, 4, 5, 4, 5};
  EXPECT_NEAR(pearson_correlation(x, y), 6.0 / std::sqrt(60.0), 1e-12);
  // Ranks of y: 2 -> 1, the two 4s share 2.5, the two 5s share 4.5.
  EXPECT_EQ(average_ranks(y), (std::vector<double>{1, 2.5, 4.5, 2.5, 4.5}));
  EXPECT_EQ(average_ranks({10, 20, 20, 5}), (std::vector<double>{2, 3.5, 3.5, 1}));
  // Against ranks 1..5: centred {-2, -0.5, 1.5, -0.5, 1.5}, Sxy = 7, Sxx = 10, Syy = 9.
  EXPECT_NEAR(spearman_correlation(x, y), 7.0 / std::sqrt(90.0), 1e-12);
  // A constant series correlates with nothing; fewer than two values neither.
  EXPECT_EQ(pearson_correlation(x, {3, 3, 3, 3, 3}), 0.0);
  EXPECT_EQ(pearson_correlation({1}, {2}), 0.0);
  // Perfectly reversed order.
  EXPECT_NEAR(spearman_correlation(x, {50, 40, 30, 20, 10}), -1.0, 1e-12);
}

TEST(Confidence, LeastConfidentFirstAndFifthsCountedByHand) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> confidence{-0.5, -2.0, nan, -1.0, -0.1, -3.0};
  const std::vector<double> scores{50, 10, 0, 30, 80, 5};
  const auto r = analyse_confidence(confidence, scores);
  EXPECT_TRUE(r.available);
  EXPECT_EQ(r.sentences, 5u);  // the NaN is left out of the figures
  EXPECT_NEAR(r.mean, -6.6 / 5, 1e-12);
  // The non-finite one first, then by confidence.
  EXPECT_EQ(r.least_confident, (std::vector<std::size_t>{2, 5, 1, 3, 0, 4}));
  // Five finite sentences: one per fifth, in confidence order.
  EXPECT_EQ(r.fifth_count, (std::vector<long>{1, 1, 1, 1, 1}));
  EXPECT_EQ(r.fifth_score, (std::vector<double>{5, 10, 30, 50, 80}));
  EXPECT_EQ(r.fifth_confidence, (std::vector<double>{-3, -2, -1, -0.5, -0.1}));
  EXPECT_NEAR(r.spearman, 1.0, 1e-12);  // the more confident, the better every time
  // Pearson by hand: centred confidences {0.82, -0.68, 0.32, 1.22, -1.68}, scores {15, -25, -5, 45, -30}:
  // Sxy = 133, Sxx = 5.548, Syy = 3800.
  EXPECT_NEAR(r.pearson, 133.0 / std::sqrt(5.548 * 3800.0), 1e-9);
}

TEST(Confidence, CompareSystemsAnalysesTheSystemsThatHaveConfidences) {
  auto in = two_systems(kHyps, kHyps);
  in.confidences = {{}, {-0.1, -0.2, -0.3, -0.4, -0.5}};
  const auto c = compare_systems(in);
  ASSERT_EQ(c.confidence.size(), 2u);
  EXPECT_FALSE(c.confidence[0].available);
  EXPECT_TRUE(c.confidence[1].available);
  EXPECT_EQ(c.confidence[1].least_confident.front(), 4u);
  // The fifths table: one sentence each for B, none for A; B's values are its sentence scores.
  ASSERT_EQ(c.by_confidence.labels.size(), 5u);
  for (std::size_t f = 0; f < 5; ++f) {
    EXPECT_EQ(c.by_confidence.counts[f][0], 0);
    EXPECT_EQ(c.by_confidence.counts[f][1], 1);
    EXPECT_DOUBLE_EQ(c.by_confidence.values[f][1], c.sentence_scores[1][4 - f]);
  }
  in.confidences = {{}, {-0.1}};
  try {
    compare_systems(in);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("B has 1 confidences but the references have 5"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ts
