// SPDX-License-Identifier: GPL-3.0-or-later
// The probe sentence picked when none is set: medium length, the same every time, CJK counted by
// characters, blank sources passed over.
#include "ts/text/probe_sentence.h"

#include <gtest/gtest.h>

namespace ts {
namespace {

TEST(ProbeSentence, WordLengthCountsWordsAndCjkCharactersAsTwoThirds) {
  EXPECT_EQ(probe_word_length(""), 0);
  EXPECT_EQ(probe_word_length("  Tom is  here. "), 3);
  EXPECT_EQ(probe_word_length("هذا كتاب جميل."), 3);
  EXPECT_DOUBLE_EQ(probe_word_length("我很高兴见到你"), 7 * 2.0 / 3.0);  // 7 characters, no spaces
  EXPECT_DOUBLE_EQ(probe_word_length("我有iPhone"), 2 * 2.0 / 3.0 + 1);  // CJK and a Latin word in one chunk
}

TEST(ProbeSentence, PicksTheSourceClosestToNineWordsWithinSixToTwelve) {
  const std::vector<SentencePair> pool{
      {"Go.", "Geh."},
      {"This sentence has exactly seven words here.", "x"},
      {"One two three four five six seven eight nine.", "y"},
      {"One two three four five six seven eight nine ten eleven twelve thirteen.", "z"}};
  EXPECT_EQ(pick_probe_sentence(pool), "One two three four five six seven eight nine.");
  // Ties go to the first; whitespace is collapsed.
  const std::vector<SentencePair> ties{{"  a   b c d e f g h i  ", ""}, {"j k l m n o p q r", ""}};
  EXPECT_EQ(pick_probe_sentence(ties), "a b c d e f g h i");
  // Only short sentences: the longest of them (closest to six words).
  const std::vector<SentencePair> short_ones{{"Run!", ""}, {"I see a dog.", ""}, {"Hi.", ""}};
  EXPECT_EQ(pick_probe_sentence(short_ones), "I see a dog.");
}

TEST(ProbeSentence, BlankSourcesAreNeverPicked) {
  EXPECT_EQ(pick_probe_sentence({}), "");
  EXPECT_EQ(pick_probe_sentence({{"   ", "x"}, {"\t", "y"}}), "");
  EXPECT_EQ(pick_probe_sentence({{" ", "x"}, {"Hello.", "y"}}), "Hello.");
}

}  // namespace
}  // namespace ts
