// SPDX-License-Identifier: GPL-3.0-or-later
// Tests for corpus BLEU and its tokenisers. Expected values are sacreBLEU's published test vectors
// (sacrebleu test/test_bleu.py) or were computed offline with the project's independent reference
// scorer, /work/shared/bench/bleu.py (tok13a / tokzh / corpus_bleu), as noted at each constant.
#include "ts/metrics/bleu.h"

#include "metrics/metrics_fixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ts {

namespace {

using metrics_fixture::kHyps;
using metrics_fixture::kRefs;

TEST(Bleu, SacrebleuReadmeExample13a) {
  const BleuScore s = corpus_bleu(kHyps, kRefs);
  EXPECT_NEAR(s.score, 48.530827, 1e-6);  // published
  EXPECT_EQ(s.counts, (std::vector<long>{14, 7, 5, 3}));
  EXPECT_EQ(s.totals, (std::vector<long>{17, 14, 11, 8}));
  EXPECT_EQ(s.sys_len, 17);
  EXPECT_EQ(s.ref_len, 18);
  EXPECT_NEAR(s.bp, std::exp(1.0 - 18.0 / 17.0), 1e-12);
  EXPECT_NEAR(s.ratio, 17.0 / 18.0, 1e-12);
  ASSERT_EQ(s.precisions.size(), 4u);
  EXPECT_NEAR(s.precisions[0], 100.0 * 14 / 17, 1e-9);
  EXPECT_NEAR(s.precisions[3], 100.0 * 3 / 8, 1e-9);
  EXPECT_EQ(s.tokenize, "13a");
  EXPECT_EQ(s.to_string(), "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
}

TEST(Bleu, SacrebleuReadmeExampleTokenizeNone) {
  const BleuScore s = corpus_bleu(kHyps, kRefs, "none");
  EXPECT_NEAR(s.score, 49.1919566, 1e-6);  // published
  EXPECT_EQ(s.counts, (std::vector<long>{10, 6, 4, 2}));
  EXPECT_EQ(s.totals, (std::vector<long>{14, 11, 8, 5}));
  EXPECT_EQ(s.to_string(), "BLEU = 49.19 71.4/54.5/50.0/40.0 (BP = 0.931 ratio = 0.933 hyp_len = 14 ref_len = 15)");
}

TEST(Bleu, SacrebleuEmptyHypothesesScoreZero) {
  const BleuScore s = corpus_bleu({"", "", ""}, kRefs);
  EXPECT_EQ(s.score, 0.0);  // published
  EXPECT_EQ(s.sys_len, 0);
  EXPECT_EQ(s.ref_len, 17);  // the shortest reference of each sentence
  EXPECT_EQ(s.bp, 0.0);
  EXPECT_EQ(s.precisions, (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(s.totals, (std::vector<long>{0, 0, 0, 0}));
}

TEST(Bleu, SacrebleuStatisticsVector) {
  // test_bleu.py: test_case_statistics gives the counts; the exp-smoothed score is bleu.py's.
  const BleuScore s = corpus_bleu({"am I am a character sequence"}, {{"I am a symbol string sequence a a"}});
  EXPECT_EQ(s.counts, (std::vector<long>{4, 2, 1, 0}));
  EXPECT_EQ(s.totals, (std::vector<long>{6, 5, 4, 3}));
  EXPECT_NEAR(s.score, 23.263472697663296, 1e-9);
}

TEST(Bleu, SingleReferenceStream) {
  EXPECT_NEAR(corpus_bleu(kHyps, {kRefs[0]}).score, 45.06750632106114, 1e-9);           // bleu.py
  EXPECT_NEAR(corpus_bleu(kHyps, {kRefs[0]}, "none").score, 44.428088917702794, 1e-9);  // bleu.py
}

TEST(Bleu, IdenticalHypothesisScoresHundred) {
  const BleuScore s = corpus_bleu(kRefs[1], {kRefs[1]});
  EXPECT_NEAR(s.score, 100.0, 1e-9);
  EXPECT_EQ(s.bp, 1.0);
  EXPECT_EQ(s.counts, s.totals);
}

TEST(Bleu, ClosestReferenceLengthTiesGoToShorter) {
  EXPECT_EQ(corpus_bleu({"a b c d e"}, {{"a b c d"}, {"a b c d e f"}}).ref_len, 4);
  EXPECT_EQ(corpus_bleu({"a b c d e"}, {{"a b c d e f"}, {"a b c d"}}).ref_len, 4);
  EXPECT_EQ(corpus_bleu({"a b c d e"}, {{"a b c"}, {"a b c d e f"}}).ref_len, 6);
}

TEST(Bleu, ClipsCountsByTheBestReference) {
  const BleuScore s = corpus_bleu({"the the the the"}, {{"the cat"}, {"the the dog"}});
  EXPECT_EQ(s.counts, (std::vector<long>{2, 1, 0, 0}));
  EXPECT_EQ(s.totals, (std::vector<long>{4, 3, 2, 1}));
  EXPECT_EQ(s.ref_len, 3);
  EXPECT_NEAR(s.score, 31.947155212313625, 1e-9);  // bleu.py
}

TEST(Bleu, EmptyReferencesAreLeftOut) {
  // Kept, the empty reference would tie with the 8-token one and win as the shorter (BP = 1).
  const double expected = 100 * std::exp(-1.0);  // all n-grams match, BP = exp(1 - 8/4)
  EXPECT_NEAR(corpus_bleu({"a b c d"}, {{"a b c d e f g h"}, {""}}).score, expected, 1e-9);
  EXPECT_NEAR(corpus_bleu({"a b c d"}, {{""}, {"a b c d e f g h"}}).score, expected, 1e-9);
  // A sentence whose references are all empty still counts its hypothesis.
  const BleuScore s = corpus_bleu({"a b", "c"}, {{"a b", ""}});
  EXPECT_EQ(s.sys_len, 3);
  EXPECT_EQ(s.ref_len, 2);
}

TEST(Bleu, ThrowsWhenAStreamHasTheWrongLength) {
  EXPECT_THROW(corpus_bleu(kHyps, {kRefs[0], {"only one"}}), std::invalid_argument);
  EXPECT_THROW(corpus_bleu({"a"}, {{"a", "b"}}), std::invalid_argument);
  EXPECT_THROW(corpus_bleu(kHyps, {}), std::invalid_argument);
}

TEST(Bleu, UnknownTokenizerNamesTheValidOnes) {
  for (const auto& call : {+[] { corpus_bleu(kHyps, kRefs, "intl"); }, +[] { tokenize_for_bleu("x", "13A"); }}) {
    try {
      call();
      ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      for (const char* name : {"13a", "zh", "char", "none"}) {
        EXPECT_NE(message.find(name), std::string::npos) << message;
      }
    }
  }
}

TEST(Bleu, ZhAndCharTokenizerScores) {
  // bleu.py corpus_bleu(tok=tokzh) / sacreBLEU's char tokenizer.
  const std::vector<std::string> hyps = {"我喜欢NLP和Python 3.5！", "他说：“你好，world.”", "今天天气很好。"};
  const std::vector<std::string> refs = {"我很喜欢NLP和Python 3.5。", "他说：“你好，世界。”", "今天的天气很好。"};
  EXPECT_NEAR(corpus_bleu(hyps, {refs}, "zh").score, 61.24451483868129, 1e-9);
  EXPECT_NEAR(corpus_bleu(hyps, {refs}, "char").score, 69.79888278752347, 1e-9);
  EXPECT_EQ(corpus_bleu(hyps, {refs}, "13a").score, 0.0);               // whole clauses as tokens: no 4-grams
  EXPECT_NEAR(corpus_bleu(kHyps, kRefs, "zh").score, 48.530827, 1e-6);  // no CJK: same as 13a
  EXPECT_NEAR(corpus_bleu(kHyps, kRefs, "char").score, 72.61064153440596, 1e-9);
}

TEST(Bleu, RandomCorpusMatchesReferenceScorer) {
  // 300 perturbed sentence pairs (metrics_fixture); constants from bleu.py on the same corpus
  // (regenerated in Python with the same generator); "none"/"char" from sacreBLEU's definitions.
  std::vector<std::string> hyps, refs, other;
  metrics_fixture::random_corpus(300, hyps, refs, other);
  ASSERT_EQ(hyps[1], "Grüß (see) but?");  // the generator still produces the same corpus
  EXPECT_EQ(refs[2], "don't Straße today 1,000 a-b $5 was $5 (see) the 10% .");
  EXPECT_NEAR(corpus_bleu(hyps, {refs}).score, 68.33686023599674, 1e-9);
  EXPECT_NEAR(corpus_bleu(hyps, {refs, other}).score, 70.10443898805158, 1e-9);
  EXPECT_NEAR(corpus_bleu(hyps, {refs, other}, "zh").score, 70.17783073262015, 1e-9);
  EXPECT_NEAR(corpus_bleu(hyps, {refs}, "none").score, 60.10953228664011, 1e-9);
  EXPECT_NEAR(corpus_bleu(hyps, {refs}, "char").score, 79.9398603980454, 1e-9);
}

TEST(Bleu, LongSentenceWithThousandsOfDistinctTokens) {
  // 3000 distinct tokens: too many for the direct n-gram table, so the sorted path runs.
  std::string hyp, ref;
  for (int i = 0; i < 3000; ++i) hyp += (i ? " t" : "t") + std::to_string(i * 7 % 3001);
  for (int i = 0; i < 2990; ++i) ref += (i ? " t" : "t") + std::to_string((i * 7 + 14) % 3001);
  const BleuScore s = corpus_bleu({hyp}, {{ref}});
  EXPECT_EQ(s.counts, (std::vector<long>{2990, 2989, 2988, 2987}));
  EXPECT_EQ(s.totals, (std::vector<long>{3000, 2999, 2998, 2997}));
  EXPECT_NEAR(s.score, 99.66649987018164, 1e-9);  // bleu.py
}

TEST(Bleu, ScoresTenThousandPairs) {
  // How fast is a benchmark's question (docs/benchmarks.md), not a test's: the CPU time is only recorded.
  std::vector<std::string> hyps, refs, other;
  metrics_fixture::random_corpus(10000, hyps, refs, other);
  const std::clock_t start = std::clock();
  const BleuScore s = corpus_bleu(hyps, {refs});
  const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  EXPECT_GT(s.score, 50.0);
  RecordProperty("cpu_seconds", std::to_string(seconds));
}

TEST(Bleu, PythonWhitespaceMatchesStrIsspace) {
  // Every code point for which Python's str.isspace() is true (what sacreBLEU's split() uses).
  const std::vector<char32_t> spaces = {0x9,    0xa,    0xb,    0xc,    0xd,    0x1c,   0x1d,   0x1e,   0x1f,   0x20,
                                        0x85,   0xa0,   0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006,
                                        0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000};
  std::size_t found = 0;
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    const bool expected = std::find(spaces.begin(), spaces.end(), cp) != spaces.end();
    ASSERT_EQ(detail::is_python_space(cp), expected) << std::hex << static_cast<std::uint32_t>(cp);
    found += expected;
  }
  EXPECT_EQ(found, spaces.size());
}

// Expected outputs below are bleu.py's tok13a on the same strings.
TEST(Tokenize13a, PeriodsAndCommasStayInsideNumbers) {
  EXPECT_EQ(tokenize_for_bleu("It costs 3.5 dollars, or 1,000 cents.", "13a"),
            "It costs 3.5 dollars , or 1,000 cents .");
  EXPECT_EQ(tokenize_for_bleu("e.g. U.S.A. 1. .5 ,5 x,y 3.14.15", "13a"),
            "e . g . U . S . A . 1 . . 5 , 5 x , y 3.14.15");
  EXPECT_EQ(tokenize_for_bleu("a.b,c", "13a"), "a . b , c");
  EXPECT_EQ(tokenize_for_bleu("...", "13a"), ". . .");
}

TEST(Tokenize13a, DashesSplitOnlyAfterDigits) {
  EXPECT_EQ(tokenize_for_bleu("a-b 5-3 x-9 9-x -5 5-", "13a"), "a-b 5 - 3 x-9 9 - x -5 5 -");
}

TEST(Tokenize13a, QuotesAndHtmlEntities) {
  EXPECT_EQ(tokenize_for_bleu("He said \"hi\" & left...", "13a"), "He said \" hi \" & left . . .");
  EXPECT_EQ(tokenize_for_bleu("Tom &amp; Jerry &quot;TM&quot; &lt;b&gt; &amp;lt;", "13a"),
            "Tom & Jerry \" TM \" < b > <");
  EXPECT_EQ(tokenize_for_bleu("No&amp;yes", "13a"), "No & yes");
  EXPECT_EQ(tokenize_for_bleu("It wasn't me.", "13a"), "It wasn't me .");
}

TEST(Tokenize13a, SymbolsLineBreaksAndWhitespace) {
  EXPECT_EQ(tokenize_for_bleu("co-op (see) [1] {x} a/b $5 10% @home #tag ^_^ back\\slash `tick` ~ |", "13a"),
            "co-op ( see ) [ 1 ] { x } a / b $ 5 10 % @ home # tag ^ _ ^ back \\ slash ` tick ` ~ |");
  EXPECT_EQ(tokenize_for_bleu("line one-\nline two\nthree <skipped> four", "13a"), "line oneline two three four");
  EXPECT_EQ(tokenize_for_bleu("  spaced\tout\u00a0text\u3000end  ", "13a"), "spaced out text end");
  EXPECT_EQ(tokenize_for_bleu("Grüß Gott, naïve café.", "13a"), "Grüß Gott , naïve café .");
  EXPECT_EQ(tokenize_for_bleu("", "13a"), "");
}

TEST(BleuTokenizeZh, SpacesOutCjkThenApplies13a) {
  // bleu.py's tokzh.
  EXPECT_EQ(tokenize_for_bleu("我喜欢NLP和Python 3.5！", "zh"), "我 喜 欢 NLP 和 Python 3.5 ！");
  EXPECT_EQ(tokenize_for_bleu("他说：“你好，world.”", "zh"), "他 说 ： “ 你 好 ， world . ”");
  EXPECT_EQ(tokenize_for_bleu("ＡＢＣ１２３", "zh"), "Ａ Ｂ Ｃ １ ２ ３");
  EXPECT_EQ(tokenize_for_bleu("カタカナ and ひらがな, 한국어.", "zh"), "カ タ カ ナ and ひ ら が な , 한국어 .");
  EXPECT_EQ(tokenize_for_bleu("  前后空格  ", "zh"), "前 后 空 格");
}

TEST(BleuTokenizeCharAndNone, SplitCodePointsOrWhitespace) {
  EXPECT_EQ(tokenize_for_bleu(" Grüß 你好!\t", "char"), "G r ü ß 你 好 !");
  EXPECT_EQ(tokenize_for_bleu("  It wasn't\u3000me.  ", "none"), "It wasn't me.");
}

}  // namespace

}  // namespace ts
