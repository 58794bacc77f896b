// SPDX-License-Identifier: GPL-3.0-or-later
// Tests for corpus chrF / chrF++. Expected values are sacreBLEU's published test vectors
// (sacrebleu test/test_chrf.py) or were computed offline in Python: bleu.py's corpus_chrf
// (/work/shared/bench/bleu.py) for single references, and a line-by-line restatement of
// sacreBLEU 2.x's CHRF (multi-reference, word n-grams, hypothesis n-grams not counted for an
// order where the reference has none) where bleu.py has no equivalent.
#include "ts/metrics/bleu.h"

#include "metrics/metrics_fixture.h"

#include "ts/text/utf8.h"

#include <gtest/gtest.h>

#include <ctime>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts {

namespace {

using metrics_fixture::kHyps;
using metrics_fixture::kRefs;

double chrf(const std::vector<std::string>& hyps, const std::vector<std::string>& refs, double beta = 2.0) {
  return corpus_chrf(hyps, {refs}, 6, 0, beta).score;
}

TEST(Chrf, SacrebleuReadmeExample) {
  const ChrfScore two = corpus_chrf(kHyps, kRefs);
  EXPECT_NEAR(two.score, 59.72751782684763, 1e-9);  // sacreBLEU-2.x restatement
  EXPECT_EQ(two.to_string(), "chrF2 = 59.73");
  EXPECT_EQ(two.char_order, 6);
  EXPECT_EQ(two.word_order, 0);
  EXPECT_EQ(two.beta, 2.0);
  EXPECT_NEAR(chrf(kHyps, kRefs[0]), 50.0430636065823, 1e-9);  // bleu.py corpus_chrf
}

TEST(Chrf, WordOrderTwoIsChrfPlusPlus) {
  const ChrfScore s = corpus_chrf(kHyps, kRefs, 6, 2);
  EXPECT_NEAR(s.score, 59.15310444399262, 1e-9);
  EXPECT_EQ(s.to_string(), "chrF2++ = 59.15");
  EXPECT_NEAR(corpus_chrf(kHyps, {kRefs[0]}, 6, 2).score, 51.7309698503746, 1e-9);
  // Punctuation is split off word ends, then off word starts: "(hi)" -> "(hi" ")".
  EXPECT_NEAR(corpus_chrf({"(hi) there, world!"}, {{"(hi) there world !"}}, 6, 2).score, 78.34738738098332, 1e-9);
}

TEST(Chrf, SacrebleuEffectiveOrderVectors) {
  // test_chrf.py: test_cases_effective_order (beta 3, eps_smoothing=False, the default).
  EXPECT_NEAR(chrf({"a"}, {"a"}, 3), 100.0, 1e-4);
  EXPECT_NEAR(chrf({""}, {"reference"}, 3), 0.0, 1e-4);
  EXPECT_NEAR(chrf({"a b c"}, {"a b c"}, 3), 100.0, 1e-4);
  EXPECT_NEAR(chrf({"a b c"}, {"abc"}, 3), 100.0, 1e-4);
  EXPECT_NEAR(chrf({""}, {"c"}, 3), 0.0, 1e-4);
  EXPECT_NEAR(chrf({"a", "b"}, {"a", "c"}, 3), 50.0, 1e-4);
  EXPECT_NEAR(chrf({"aa"}, {"ab"}, 3), 25.0, 1e-4);
}

TEST(Chrf, IdenticalIsHundredAndEmptyIsZero) {
  EXPECT_NEAR(chrf(kRefs[1], kRefs[1]), 100.0, 1e-9);
  EXPECT_EQ(chrf({"", "", ""}, kRefs[0]), 0.0);
  EXPECT_EQ(chrf({"xyz"}, {"abc"}), 0.0);
}

TEST(Chrf, AllWhitespaceIsRemoved) {
  EXPECT_NEAR(chrf({"a\tb\u00a0c\u3000d\x1c"
                    "e"},
                   {"abcde"}),
              100.0, 1e-9);
  EXPECT_NEAR(chrf({" Die  Katze "}, {"DieKatze"}), 100.0, 1e-9);
}

TEST(Chrf, ShortReferenceDropsHypothesisCountsLikeSacrebleu) {
  // "Ja" has no n-grams above order 2, so sacreBLEU does not count those of "Jawohl" either.
  // (bleu.py counts them and gets 63.55866241188273.)
  EXPECT_NEAR(chrf({"The weather is lovely today.", "Jawohl"}, {"The weather is nice today.", "Ja"}), 64.61568812947976,
              1e-9);
}

TEST(Chrf, PicksTheBestReferencePerSentence) {
  EXPECT_NEAR(corpus_chrf({"the cat sat"}, {{"a dog stood"}, {"the cat sat"}}).score, 100.0, 1e-9);
  const std::vector<std::string> hyp = {"the cat sat on the mat"};
  EXPECT_NEAR(chrf(hyp, {"the cat sat"}), 79.73855444246794, 1e-9);
  EXPECT_NEAR(chrf(hyp, {"a cat sat on a mat"}), 55.11170308673565, 1e-9);
  EXPECT_NEAR(corpus_chrf(hyp, {{"the cat sat"}, {"a cat sat on a mat"}}).score, 79.73855444246794, 1e-9);
  EXPECT_NEAR(corpus_chrf(hyp, {{"a cat sat on a mat"}, {"the cat sat"}}).score, 79.73855444246794, 1e-9);
}

TEST(Chrf, EmptyReferencesAreLeftOut) {
  // Kept, the empty reference of "xyz" would win the tie at F = 0 and hide its hypothesis
  // n-grams (the score would be 100).
  EXPECT_NEAR(corpus_chrf({"abc", "xyz"}, {{"abc", ""}, {"abc", "abd"}}).score, 50.0, 1e-9);
  EXPECT_NEAR(corpus_chrf(kHyps, {kRefs[0], {"The dog had bit the man.", "", ""}}).score,
              corpus_chrf(kHyps, {kRefs[0], {"The dog had bit the man.", kRefs[0][1], kRefs[0][2]}}).score, 1e-12);
}

TEST(Chrf, ThrowsOnBadArguments) {
  EXPECT_THROW(corpus_chrf(kHyps, {kRefs[0], {"one"}}), std::invalid_argument);
  EXPECT_THROW(corpus_chrf(kHyps, {}), std::invalid_argument);
  EXPECT_THROW(corpus_chrf(kHyps, kRefs, -1, 0), std::invalid_argument);
  EXPECT_THROW(corpus_chrf(kHyps, kRefs, 6, -2), std::invalid_argument);
}

TEST(Chrf, ZhSentences) {
  const std::vector<std::string> hyps = {"我喜欢NLP和Python 3.5！", "他说：“你好，world.”", "今天天气很好。"};
  const std::vector<std::string> refs = {"我很喜欢NLP和Python 3.5。", "他说：“你好，世界。”", "今天的天气很好。"};
  EXPECT_NEAR(chrf(hyps, refs), 66.85840093395804, 1e-9);  // bleu.py
}

TEST(Chrf, RandomCorpusMatchesReferenceScorer) {
  // The 300-pair corpus of bleu_test.cpp, regenerated in Python. No reference there is shorter
  // than 6 characters, so bleu.py's corpus_chrf and sacreBLEU agree on the single-stream value.
  std::vector<std::string> hyps, refs, other;
  metrics_fixture::random_corpus(300, hyps, refs, other);
  EXPECT_NEAR(chrf(hyps, refs), 76.28991839298295, 1e-9);  // bleu.py
  EXPECT_NEAR(corpus_chrf(hyps, {refs, other}).score, 76.68144660157901, 1e-9);
  EXPECT_NEAR(corpus_chrf(hyps, {refs, other}, 6, 2).score, 77.42017960228603, 1e-9);
  const ChrfScore custom = corpus_chrf(hyps, {refs}, 4, 1, 1.0);
  EXPECT_NEAR(custom.score, 83.03909301097873, 1e-9);
  EXPECT_EQ(custom.to_string(), "chrF1+ = 83.04");
  const ChrfScore half = corpus_chrf(hyps, {refs}, 6, 0, 0.5);
  EXPECT_NEAR(half.score, 78.34691577879592, 1e-9);
  EXPECT_EQ(half.to_string(), "chrF0.5 = 78.35");
}

TEST(Chrf, LongSentenceWithThousandsOfDistinctCharacters) {
  // 2600 distinct characters: too many for the direct n-gram table, so the sorted path runs.
  std::u32string hyp, ref;
  for (int i = 0; i < 3000; ++i) hyp += static_cast<char32_t>(0x4E00 + i * 7 % 2600);
  for (int i = 0; i < 2900; ++i) ref += static_cast<char32_t>(0x4E00 + (i * 7 + 21) % 2600);
  std::string hyp8, ref8;
  for (const char32_t c : hyp) append_utf8(hyp8, c);
  for (const char32_t c : ref) append_utf8(ref8, c);
  EXPECT_NEAR(chrf({hyp8}, {ref8}), 99.31448134806085, 1e-9);  // bleu.py
}

TEST(Chrf, ScoresTenThousandPairs) {
  // How fast is a benchmark's question (docs/benchmarks.md), not a test's: the CPU time is only recorded.
  std::vector<std::string> hyps, refs, other;
  metrics_fixture::random_corpus(10000, hyps, refs, other);
  const std::clock_t start = std::clock();
  const double score = chrf(hyps, refs);
  const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  EXPECT_GT(score, 50.0);
  RecordProperty("cpu_seconds", std::to_string(seconds));
}

}  // namespace
}  // namespace ts
