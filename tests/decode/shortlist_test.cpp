// SPDX-License-Identifier: GPL-3.0-or-later
// The lexical shortlist's table: what it keeps, how a sentence's list is made, and its file.
#include "ts/decode/shortlist.h"

#include <gtest/gtest.h>

#include <fstream>

#include "test_utils.h"
#include "ts/text/vocab.h"

namespace ts {
namespace {

constexpr std::int64_t kEos = Vocab::kEos;

// Source 5 always comes with target 7, source 6 with target 8; target 9 is the most frequent.
std::vector<Example> toy_pairs() {
  return {{{5, kEos}, {7, 9, kEos}},
          {{5, 6, kEos}, {7, 8, 9, kEos}},
          {{6, kEos}, {8, 9, 9, kEos}},
          {{6, 10, kEos}, {8, 9, 11, kEos}},
          {{5, 10, kEos}, {9, 7, 11, kEos}}};
}

TEST(Shortlist, EachSourceTokenKeepsTheTargetsMostAssociatedWithIt) {
  const auto list = LexicalShortlist::build(toy_pairs(), 12, 12, {1, 2});
  EXPECT_EQ(list.frequent(), std::vector<std::int64_t>{9});  // 6 occurrences
  // Dice: 7 with 5 is 2*3/(3+3) = 1, far above 9's 2*3/(3+5).
  EXPECT_EQ(list.candidates(5), (std::vector<std::int64_t>{7, 9}));
  EXPECT_EQ(list.candidates(6), (std::vector<std::int64_t>{8, 9}));
  EXPECT_EQ(list.candidates(10), (std::vector<std::int64_t>{11, 9}));
  EXPECT_TRUE(list.candidates(4).empty());   // never seen
  EXPECT_TRUE(list.candidates(99).empty());  // outside the table
  for (std::int64_t s = 0; s < 12; ++s)
    for (auto t : list.candidates(s)) EXPECT_TRUE(t != Vocab::kPad && t != Vocab::kBos && t != kEos) << s;
}

TEST(Shortlist, ASentencesListIsTheFrequentTokensItsWordsCandidatesAndEndOfSentence) {
  const auto list = LexicalShortlist::build(toy_pairs(), 12, 12, {1, 1});
  EXPECT_EQ(list.targets({5, kEos}), (std::vector<std::int64_t>{kEos, 7, 9}));
  EXPECT_EQ(list.targets({6, 5, 5, kEos}), (std::vector<std::int64_t>{kEos, 7, 8, 9}));
  EXPECT_EQ(list.targets({42, -1, kEos}), (std::vector<std::int64_t>{kEos, 9}));  // unknown ids add nothing
  const auto none = LexicalShortlist::build(toy_pairs(), 12, 12, {0, 0});
  EXPECT_EQ(none.targets({5, 6, kEos}), std::vector<std::int64_t>{kEos});
}

TEST(Shortlist, BadPairsAndOptionsAreRefused) {
  EXPECT_THROW(LexicalShortlist::build(toy_pairs(), 12, 10, {}), std::invalid_argument);  // target 11 >= 10
  EXPECT_THROW(LexicalShortlist::build(toy_pairs(), 6, 12, {}), std::invalid_argument);   // source 6 >= 6
  EXPECT_THROW(LexicalShortlist::build(toy_pairs(), 12, 12, {-1, 5}), std::invalid_argument);
}

TEST(Shortlist, TheFileReadsBackAndRefusesAnotherModelOrGarbageNamingItself) {
  const test::TempDir dir;
  const auto path = dir.str() + "/shortlist.safetensors";
  const auto list = LexicalShortlist::build(toy_pairs(), 12, 12, {2, 3});
  list.save(path);
  const auto back = LexicalShortlist::load(path, 12, 12);
  EXPECT_EQ(back.frequent(), list.frequent());
  for (std::int64_t s = 0; s < 12; ++s) EXPECT_EQ(back.candidates(s), list.candidates(s)) << s;
  EXPECT_EQ(back.options().per_source, 3);
  try {
    LexicalShortlist::load(path, 12, 13);
    ADD_FAILURE() << "another model's vocabulary was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("another model"), std::string::npos) << e.what();
  }
  std::ofstream(path, std::ios::trunc) << "not a shortlist";
  try {
    LexicalShortlist::load(path, 12, 12);
    ADD_FAILURE() << "garbage was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW(LexicalShortlist::load(dir.str() + "/missing.safetensors", 12, 12), std::runtime_error);
}

TEST(Shortlist, LivesBesideTheCheckpoint) {
  const test::TempDir dir;
  EXPECT_EQ(shortlist_file(dir.str() + "/best.ckpt"), dir.str() + "/shortlist.safetensors");
  EXPECT_EQ(shortlist_file(dir.str()), dir.str() + "/shortlist.safetensors");
}

}  // namespace
}  // namespace ts
