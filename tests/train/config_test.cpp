// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/train/config.h"

#include <gtest/gtest.h>

#include <fstream>

#include "test_utils.h"
#include "ts/model/fp16_products.h"
#include "ts/text/corpus.h"
#include "ts/text/utf8.h"

namespace ts {
namespace {

TEST(Config, EveryPresetIsValidAndRoundTripsThroughJson) {
  for (const auto& name : preset_names()) {
    auto c = preset(name);
    EXPECT_TRUE(c.problems().empty()) << name;
    EXPECT_FALSE(preset_description(name).empty()) << name;
    auto again = ExperimentConfig::from_json(c.to_json());
    EXPECT_EQ(again.to_json(), c.to_json()) << name;
  }
}

TEST(Config, PresetsCarryTheSeedTutorialsSettings) {
  auto a = preset("annotated");
  EXPECT_EQ(a.model.encoder_layers, 6);
  EXPECT_EQ(a.model.d_model, 256);
  EXPECT_EQ(a.model.d_ff, 1024);
  EXPECT_EQ(a.model.heads, 8);
  EXPECT_EQ(a.train.schedule, LrSchedule::kNoam);
  EXPECT_EQ(a.train.batch_sentences, 64);
  auto n = preset("nanogpt-deu");
  EXPECT_EQ(n.model.d_model, 600);
  EXPECT_EQ(n.model.heads, 6);
  EXPECT_EQ(n.model.positions, Positions::kLearned);
  EXPECT_EQ(n.data.max_vocab, 15000);
  auto s = preset("scratch-bpe");
  EXPECT_TRUE(s.model.pre_norm);
  EXPECT_TRUE(s.model.tie_output);
  EXPECT_EQ(s.data.src_tokenizer.kind, TokenizerKind::kBpe);
  EXPECT_EQ(s.data.src_tokenizer.vocab_size, 1000);
  EXPECT_THROW(preset("huge"), ConfigError);
}

TEST(Config, UnknownKeysAndWrongTypesNameTheKey) {
  auto j = preset("tiny").to_json();
  j["train"]["learning_rate"] = 0.1;
  try {
    ExperimentConfig::from_json(j);
    FAIL() << "unknown key accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train.learning_rate"), std::string::npos);
  }
  j = preset("tiny").to_json();
  j["model"]["heads"] = "four";
  try {
    ExperimentConfig::from_json(j);
    FAIL() << "wrong type accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.heads"), std::string::npos);
  }
}

// A run saved before grouped splits (its data section has no "split") keeps the split it was trained
// and tested with; a configuration file without the key gets the preset's grouped split.
TEST(Config, SavedConfigsWithoutASplitKeepTheShuffledPairsSplit) {
  auto c = preset("tiny");
  EXPECT_EQ(c.data.split, SplitMethod::kGroupedBySource);
  auto j = c.to_json();
  EXPECT_EQ(j["data"]["split"], "grouped");
  EXPECT_EQ(ExperimentConfig::from_saved_json(j).data.split, SplitMethod::kGroupedBySource);
  j["data"].erase("split");
  EXPECT_EQ(ExperimentConfig::from_saved_json(j).data.split, SplitMethod::kShuffledPairs);
  EXPECT_EQ(ExperimentConfig::from_json(j).data.split, SplitMethod::kGroupedBySource);
  c.set("data.split=pairs");
  EXPECT_EQ(c.data.split, SplitMethod::kShuffledPairs);
  EXPECT_EQ(c.to_json()["data"]["split"], "pairs");
  j["data"]["split"] = "random";
  try {
    ExperimentConfig::from_json(j);
    FAIL() << "unknown split accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("data.split: unknown split \"random\" (use grouped or pairs)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Config, SetOverridesNestedValuesStrictly) {
  auto c = preset("annotated");
  c.set("train.lr=0.5");
  c.set("model.pre_norm=false");
  c.set("data.src_tokenizer.kind=bpe");
  c.set("train.device=cpu");
  EXPECT_DOUBLE_EQ(c.train.lr, 0.5);
  EXPECT_FALSE(c.model.pre_norm);
  EXPECT_EQ(c.data.src_tokenizer.kind, TokenizerKind::kBpe);
  EXPECT_EQ(c.train.device, DeviceChoice::kCpu);
  EXPECT_EQ(c.preset, "annotated");
  EXPECT_THROW(c.set("train.nope=1"), ConfigError);
  EXPECT_THROW(c.set("model.heads=many"), ConfigError);
  EXPECT_THROW(c.set("lr=1"), ConfigError);
}

TEST(Config, ProblemsListInvalidCombinations) {
  auto c = preset("annotated");
  c.model.heads = 7;
  c.model.share_embeddings = true;
  c.train.device = DeviceChoice::kCpu;
  c.train.precision = Precision::kFp16;  // fp16 needs a GPU, or a CPU with AVX-512 FP16
  const auto problems = c.problems();
  EXPECT_EQ(problems.size(), fp16_products_available() ? 2u : 3u);
  EXPECT_THROW(c.validate(), ConfigError);
}

TEST(Config, LearnedPositionsMustCoverTheLongestPair) {
  auto c = preset("nanogpt-deu");  // block of 20 tokens plus BOS/EOS: 22 positions
  EXPECT_TRUE(c.problems().empty());
  c.data.max_len = 21;
  ASSERT_EQ(c.problems().size(), 1u);
  EXPECT_NE(c.problems()[0].find("model.max_positions"), std::string::npos);
  EXPECT_NE(c.problems()[0].find("data.max_len"), std::string::npos);
  c.model.positions = Positions::kSinusoidal;  // the sinusoidal table is computed for any length
  EXPECT_TRUE(c.problems().empty());
}

TEST(Config, LoadsFilesAndNamesThemInErrors) {
  test::TempDir dir;
  EXPECT_THROW(load_config_file(dir.file("missing.json")), ConfigError);
  { std::ofstream(dir.file("bad.json")) << "{ not json"; }
  try {
    load_config_file(dir.file("bad.json"));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos);
  }
  { std::ofstream(dir.file("ok.json")) << R"({"preset": "annotated", "model": {"heads": 4}})"; }
  auto c = load_config_file(dir.file("ok.json"));
  EXPECT_EQ(c.model.heads, 4);
  EXPECT_EQ(c.model.d_model, 256);  // the rest comes from the preset
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// Every preset prepares its data on a small Chinese-English fixture shaped like cmn.txt (1,500
// distinct characters, more than scratch-bpe's 1,000 shared pieces), in both directions: none stops. The
// vocabulary of scratch-bpe is raised to what the characters need, and the log says so (issue 21).
TEST(Config, EveryPresetPreparesAChineseCorpus) {
  std::string text;
  for (int i = 0; i < 3000; ++i) {  // presets hold out up to 1,000 dev and 1,000 test pairs
    std::string zh;
    for (int k = 0; k < 10; ++k) append_utf8(zh, static_cast<char32_t>(0x4E00 + (i * 13 + k * 61) % 1500));
    text += "We have " + std::to_string(i) + " small cats.\t" + zh + "。\tattribution column of fixture line " +
            std::to_string(i + 1) + "\n";
  }
  const auto corpus = parse_corpus(text, "cmn.txt");
  ASSERT_EQ(corpus.pairs.size(), 3000u);
  for (const auto& name : preset_names()) {
    auto config = preset(name);
    for (const std::string direction : {"en-zh", "zh-en"}) {
      std::vector<std::string> log;
      EXPECT_NO_THROW(prepare_data(corpus, parse_direction(direction, corpus), config.data, nullptr,
                                   [&](const std::string& line) { log.push_back(line); }))
          << name << " " << direction;
      if (name == "scratch-bpe") {
        bool said = false;
        for (const auto& line : log) said = said || line.find("is smaller than the") != std::string::npos;
        EXPECT_TRUE(said) << name << " " << direction << ": the raised vocabulary is not in the log";
      }
    }
  }
}

}  // namespace
}  // namespace ts
