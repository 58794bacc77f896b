// SPDX-License-Identifier: GPL-3.0-or-later
// Vocab tests: specials, building with min_freq/max_size, deterministic order, encode/decode, JSON.
#include "ts/text/vocab.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace ts {
namespace {

using Sentences = std::vector<std::vector<std::string>>;

const Sentences kSentences = {
    {"der", "hund", "bellt", "."},
    {"die", "katze", "schläft", "."},
    {"der", "hund", "schläft", "."},
    {"ein", "vogel", "singt"},
};

TEST(Vocab, StartsWithSpecials) {
  const Vocab vocab;
  ASSERT_EQ(vocab.size(), 4u);
  EXPECT_EQ(vocab.token(Vocab::kPad), "<pad>");
  EXPECT_EQ(vocab.token(Vocab::kUnk), "<unk>");
  EXPECT_EQ(vocab.token(Vocab::kBos), "<s>");
  EXPECT_EQ(vocab.token(Vocab::kEos), "</s>");
  EXPECT_EQ(vocab.id("</s>"), Vocab::kEos);
}

TEST(Vocab, BuildOrdersByFrequencyThenFirstAppearance) {
  const Vocab vocab = Vocab::build(kSentences);
  // "." x3; "der", "hund", "schläft" x2 (first seen in that order); then singletons by first
  // appearance.
  const std::vector<std::string> expected = {"<pad>",   "<unk>", "<s>", "</s>",  ".",   "der",   "hund",
                                             "schläft", "bellt", "die", "katze", "ein", "vogel", "singt"};
  ASSERT_EQ(vocab.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(vocab.token(static_cast<std::int64_t>(i)), expected[i]);
  EXPECT_EQ(Vocab::build(kSentences), vocab);  // deterministic
}

TEST(Vocab, BuildHonoursMinFreqAndMaxSize) {
  const Vocab frequent = Vocab::build(kSentences, 2);
  EXPECT_EQ(frequent.size(), 8u);
  EXPECT_TRUE(frequent.contains("schläft"));
  EXPECT_FALSE(frequent.contains("bellt"));

  const Vocab capped = Vocab::build(kSentences, 1, 6);  // max_size counts the specials
  EXPECT_EQ(capped.size(), 6u);
  EXPECT_EQ(capped.token(4), ".");
  EXPECT_EQ(capped.token(5), "der");
  EXPECT_FALSE(capped.contains("hund"));

  EXPECT_EQ(Vocab::build(kSentences, 1, 2).size(), 4u);  // never drops specials
  EXPECT_EQ(Vocab::build({}, 1).size(), 4u);
}

TEST(Vocab, SpecialTokensInDataAreNotDuplicated) {
  const Vocab vocab = Vocab::build({{"<unk>", "a", "</s>", "a"}});
  EXPECT_EQ(vocab.size(), 5u);
  EXPECT_EQ(vocab.id("<unk>"), Vocab::kUnk);
  EXPECT_EQ(vocab.id("a"), 4);
}

TEST(Vocab, EncodeMapsUnknownTokensToUnk) {
  const Vocab vocab = Vocab::build(kSentences);
  EXPECT_EQ(vocab.encode({"der", "elefant", "."}),
            (std::vector<std::int64_t>{vocab.id("der"), Vocab::kUnk, vocab.id(".")}));
  EXPECT_EQ(vocab.id("elefant"), Vocab::kUnk);
  EXPECT_FALSE(vocab.contains("elefant"));
  EXPECT_EQ(vocab.token(-1), "<unk>");
  EXPECT_EQ(vocab.token(1000), "<unk>");
}

TEST(Vocab, DecodeStopsAtEosAndSkipsPadAndBos) {
  const Vocab vocab = Vocab::build(kSentences);
  const auto der = vocab.id("der");
  const auto hund = vocab.id("hund");
  EXPECT_EQ(vocab.decode({Vocab::kBos, der, Vocab::kPad, hund, Vocab::kUnk, Vocab::kEos, der, Vocab::kPad}),
            (std::vector<std::string>{"der", "hund", "<unk>"}));
  EXPECT_TRUE(vocab.decode({Vocab::kEos, der}).empty());
  EXPECT_EQ(vocab.decode(vocab.encode({"die", "katze"})), (std::vector<std::string>{"die", "katze"}));
}

TEST(Vocab, JsonRoundTrip) {
  const Vocab vocab = Vocab::build(kSentences);
  const auto json = vocab.to_json();
  ASSERT_TRUE(json.at("tokens").is_array());
  EXPECT_EQ(json["tokens"].size(), vocab.size());
  const Vocab back = Vocab::from_json(nlohmann::json::parse(json.dump()));
  EXPECT_EQ(back, vocab);
  EXPECT_EQ(back.id("schläft"), vocab.id("schläft"));
}

TEST(Vocab, FromJsonRejectsBrokenVocabularies) {
  using nlohmann::json;
  EXPECT_THROW(Vocab::from_json(json::array()), std::invalid_argument);
  EXPECT_THROW(Vocab::from_json({{"words", json::array()}}), std::invalid_argument);
  EXPECT_THROW(Vocab::from_json({{"tokens", {"<pad>", "<unk>", "<s>"}}}), std::invalid_argument);
  EXPECT_THROW(Vocab::from_json({{"tokens", {"<unk>", "<pad>", "<s>", "</s>"}}}), std::invalid_argument);
  EXPECT_THROW(Vocab::from_json({{"tokens", {"<pad>", "<unk>", "<s>", "</s>", "a", "a"}}}), std::invalid_argument);
  EXPECT_THROW(Vocab::from_json({{"tokens", {"<pad>", "<unk>", "<s>", "</s>", 7}}}), std::invalid_argument);
  EXPECT_THROW(Vocab::from_json({{"tokens", {"<pad>", "<unk>", "<s>", "</s>", ""}}}), std::invalid_argument);
  EXPECT_EQ(Vocab::from_json({{"tokens", {"<pad>", "<unk>", "<s>", "</s>", "a"}}}).id("a"), 4);
}

}  // namespace
}  // namespace ts
