// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/lm/text_data.h"

#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>
#include <cmath>
#include <fstream>

#include "lm_test_utils.h"
#include "sanitizer_skips.h"
#include "test_utils.h"
#include "ts/text/utf8.h"

namespace ts {
namespace {

std::string write_file(const test::TempDir& dir, const std::string& name, const std::string& bytes) {
  const auto path = dir.file(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string error_of(const std::string& path, const LmConfig& config) {
  try {
    load_lm_text(path, config);
  } catch (const LmDataError& e) {
    return e.what();
  }
  return "";
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(LmText, CharCodecKeepsCaseSpacesAndNewlinesAndRoundTrips) {
  const auto text =
      repeat("First Citizen:\nBefore we proceed any further, hear me speak.\n\nGr\u00fc\u00dfe, \u4e16\u754c!\n", 10);
  const auto data = prepare_lm_text(text, "speech.txt", test::small_gpt_config());
  EXPECT_TRUE(data.codec.vocab().contains("\n"));
  EXPECT_TRUE(data.codec.vocab().contains(" "));
  EXPECT_TRUE(data.codec.vocab().contains("F"));
  EXPECT_TRUE(data.codec.vocab().contains("f"));
  EXPECT_TRUE(data.codec.vocab().contains("\u00fc"));  // one token per code point, not per byte
  EXPECT_TRUE(data.codec.vocab().contains("\u4e16"));
  const auto all = at::cat({data.train, data.val});
  std::vector<std::int64_t> ids(all.data_ptr<std::int64_t>(), all.data_ptr<std::int64_t>() + all.numel());
  EXPECT_EQ(data.codec.decode(ids), text);
  EXPECT_EQ(data.chars, code_point_count(text));
  EXPECT_EQ(static_cast<std::size_t>(all.numel()), data.chars);
  // JSON round trip of the codec gives the same ids.
  const auto again = LmCodec::from_json(data.codec.to_json());
  EXPECT_EQ(again.encode(text), ids);
}

TEST(LmText, SplitIsContiguousNinetyTen) {
  const auto text = test::markov_text(1000);
  const auto data = prepare_lm_text(text, "m.txt", test::small_gpt_config());
  EXPECT_EQ(data.train.numel(), 900);
  EXPECT_EQ(data.val.numel(), 100);
  const auto ids = data.codec.encode(text);
  EXPECT_EQ(data.train[0].item<std::int64_t>(), ids[0]);
  EXPECT_EQ(data.val[0].item<std::int64_t>(), ids[900]);
  EXPECT_NE(data.summary().find("train 900 / val 100 tokens"), std::string::npos) << data.summary();
}

TEST(LmText, CrlfAndBomAreNotPartOfTheText) {
  const auto data = prepare_lm_text("\xEF\xBB\xBF" + repeat("ab\r\ncd\r\n", 40), "w.txt", test::small_gpt_config());
  EXPECT_FALSE(data.codec.vocab().contains("\r"));
  EXPECT_FALSE(data.codec.vocab().contains("\xEF\xBB\xBF"));
  EXPECT_EQ(data.chars, 40u * 6);
}

TEST(LmText, SampleBatchGivesWindowsShiftedByOneAndIsSeeded) {
  const auto data = prepare_lm_text(test::markov_text(500), "m.txt", test::small_gpt_config());
  auto g1 = at::make_generator<at::CPUGeneratorImpl>(5);
  auto g2 = at::make_generator<at::CPUGeneratorImpl>(5);
  const auto [x, y] = sample_batch(data.train, 4, 16, g1);
  const auto [x2, y2] = sample_batch(data.train, 4, 16, g2);
  EXPECT_EQ(x.sizes(), (at::IntArrayRef{4, 16}));
  EXPECT_EQ(x.scalar_type(), at::kLong);
  EXPECT_TRUE(at::equal(x.slice(1, 1), y.slice(1, 0, 15)));
  EXPECT_TRUE(at::equal(x, x2));
  EXPECT_TRUE(at::equal(y, y2));
}

TEST(LmText, BadInputsGiveClearMessagesNamingTheFile) {
  test::TempDir dir;
  const auto config = test::small_gpt_config();
  const auto empty = write_file(dir, "empty.txt", "");
  EXPECT_NE(error_of(empty, config).find("empty.txt: the file is empty"), std::string::npos) << error_of(empty, config);

  const auto binary = write_file(dir, "data.bin", std::string("abc\0def", 7) + repeat("x", 100));
  EXPECT_NE(error_of(binary, config).find("data.bin: looks like a binary file (NUL byte at byte offset 3)"),
            std::string::npos)
      << error_of(binary, config);

  const auto png = write_file(dir, "image.png", "\x89PNG\r\n\x1a\n" + repeat("x", 100));
  EXPECT_NE(error_of(png, config).find("image.png: looks like a PNG image"), std::string::npos)
      << error_of(png, config);

  const auto bad =
      write_file(dir, "latin1.txt", repeat("good line\n", 2) + "caf\xE9 au lait\n" + repeat("more text\n", 20));
  const auto message = error_of(bad, config);
  EXPECT_NE(message.find("latin1.txt: invalid UTF-8 on line 3, byte 4"), std::string::npos) << message;

  const auto small = write_file(dir, "small.txt", "To be or not to be\n");
  const auto small_message = error_of(small, config);
  EXPECT_NE(small_message.find("small.txt: too small for block_size 16"), std::string::npos) << small_message;

  const auto missing = dir.file("missing.txt");
  EXPECT_NE(error_of(missing, config).find("missing.txt: cannot open"), std::string::npos);
}

TEST(LmText, SentencePieceCodecRoundTripsLinesWithNewlineTokens) {
  TS_SKIP_SENTENCEPIECE_IN_SANITIZER_BUILDS();
  auto config = test::small_gpt_config();
  config.tokenizer = LmTokenizer::kBpe;
  config.vocab_size = 60;
  const auto text = repeat("the cat sat on the mat\nthe dog sat on the log\n", 30);
  const auto data = prepare_lm_text(text, "bpe.txt", config);
  EXPECT_EQ(data.codec.kind(), LmTokenizer::kBpe);
  EXPECT_TRUE(data.codec.vocab().contains("\n"));
  EXPECT_LT(data.train.numel() + data.val.numel(), static_cast<std::int64_t>(text.size()));  // pieces, not characters
  const auto ids = data.codec.encode(text);
  EXPECT_EQ(data.codec.decode(ids), text);
  EXPECT_EQ(LmCodec::from_json(data.codec.to_json()).encode(text), ids);
}

TEST(LmText, BigramCrossEntropyOfATextWithItselfIsTheConditionalEntropy) {
  // "abab...": b always follows a and a follows b, so H(next | previous) = 0.
  const auto ab = at::tensor(std::vector<std::int64_t>{4, 5, 4, 5, 4, 5, 4, 5});
  EXPECT_NEAR(bigram_cross_entropy(ab, ab, 6, 0.0), 0.0, 1e-12);
  // After a: b or c equally often -> log 2 nats for those transitions.
  const auto abc = at::tensor(std::vector<std::int64_t>{4, 5, 4, 6, 4, 5, 4, 6, 4});
  EXPECT_NEAR(bigram_cross_entropy(abc, abc, 7, 0.0), std::log(2.0) / 2, 1e-9);
}

}  // namespace
}  // namespace ts
