// SPDX-License-Identifier: GPL-3.0-or-later
// The translator file and the LibTorch-free translator on it: a trained tiny model exported, read
// back and decoded without LibTorch gives what transformer-studio-cli's decode_batches gives, greedy
// and beam, in every weight format; damaged files are refused by name.
#include "ts/infer/translator_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>

#include "test_utils.h"
#include "tiny_run.h"
#include "ts/decode/shortlist.h"
#include "ts/decode/translator.h"
#include "ts/infer/batch_search.h"
#include "ts/train/batcher.h"
#include "ts/train/checkpoint.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

class TranslatorFileTest : public test::TinyRunSuite {};

std::vector<std::string> sentences() {
  return {"Ich sehe den Hund.",
          "Der Hund schläft.",
          "Ich habe eine Katze und du siehst das Haus.",
          "Haus.",
          "Wir sehen den Hund und die Katze schläft und er sieht das Haus.",
          "Zebra",
          "Du siehst die Katze.",
          "Er sieht das Haus. Ich sehe den Hund."};
}

TEST_F(TranslatorFileTest, DecodesWithoutLibTorchAsDecodeBatchesDoesForEveryFormatAndMode) {
  ASSERT_TRUE(fs::exists(checkpoint()));
  auto loaded = load_checkpoint(checkpoint(), at::kCPU);
  export_translator(loaded, checkpoint());
  const auto path = translator_file_for(checkpoint());
  ASSERT_EQ(path, checkpoint() + ".translator");
  const auto file = read_translator_file(path);
  EXPECT_TRUE(file.made_from == CheckpointStamp::of(checkpoint()));
  EXPECT_EQ(file.shape.tgt_vocab, loaded.model->tgt_vocab_size());

  // The file's pipeline encodes as the checkpoint's does.
  const auto pipeline = TextPipeline::from_json(file.pipeline);
  std::vector<std::vector<std::int64_t>> sources;
  for (const auto& text : sentences()) {
    sources.push_back(fit_to_positions(pipeline.encode_source(text), loaded.model->max_length()));
    EXPECT_EQ(sources.back(), loaded.pipeline.encode_source(text)) << text;
  }
  const std::pair<WeightFormat, DecodeWeights> formats[] = {{WeightFormat::kFloat32, DecodeWeights::kFloat32},
                                                            {WeightFormat::kBFloat16, DecodeWeights::kBFloat16},
                                                            {WeightFormat::kInt8, DecodeWeights::kInt8}};
  for (const auto& [format, weights] : formats) {
    const PackedModel model(file.shape, file.lookup(), format);
    for (const auto mode : {DecodeMode::kGreedy, DecodeMode::kBeam}) {
      DecodeConfig config;
      config.mode = mode;
      config.beam = 4;
      config.weights = weights;
      // Batches of 3 (packed for fp32 too: up to 16 rows), on 2 threads here.
      const auto expected = decode_batches(loaded.model, sources, config, 3);
      const auto got = decode_packed(model, sources, config, 3, 2);
      ASSERT_EQ(got.size(), expected.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].ids, expected[i].ids)
            << decode_mode_name(mode) << " " << weight_format_name(format) << " " << i;
        EXPECT_EQ(got[i].token_log_probs, expected[i].token_log_probs) << i;
        EXPECT_EQ(got[i].finished, expected[i].finished) << i;
      }
    }
  }
}

// With a lexical shortlist beside the checkpoint, the file carries it: the same tables, the stamp of
// its file, and decoding with it on the packed model gives what decode_batches gives with it.
TEST_F(TranslatorFileTest, CarriesTheRunsShortlistAndDecodesWithItAsDecodeBatchesDoes) {
  auto loaded = load_checkpoint(checkpoint(), at::kCPU);
  auto config = test::tiny_config();
  const auto data = test::tiny_data(config);
  const auto V = loaded.model->tgt_vocab_size();
  const auto built = LexicalShortlist::build(data.train, loaded.model->src_vocab_size(), V, {3, 4});
  const auto list_path = shortlist_file(checkpoint());
  built.save(list_path);
  export_translator(loaded, checkpoint());
  const auto file = read_translator_file(translator_file_for(checkpoint()));
  fs::remove(list_path);  // the other tests export without one
  ASSERT_TRUE(file.shortlist);
  EXPECT_EQ(file.shortlist->frequent(), built.frequent());
  EXPECT_EQ(file.shortlist->candidate_table(), built.candidate_table());
  EXPECT_EQ(file.shortlist->options().per_source, 4);
  EXPECT_GT(file.shortlist_made_from.size, 0U);
  EXPECT_EQ(file.tensors.count("shortlist.candidates"), 0U);  // the model's weights alone

  const auto pipeline = TextPipeline::from_json(file.pipeline);
  std::vector<std::vector<std::int64_t>> sources;
  for (const auto& text : sentences())
    sources.push_back(fit_to_positions(pipeline.encode_source(text), loaded.model->max_length()));
  loaded.model->set_shortlist(std::make_shared<const LexicalShortlist>(built));
  const PackedModel model(file.shape, file.lookup(), WeightFormat::kFloat32);
  const ShortlistOf of = [&](const std::vector<std::int64_t>& source) { return file.shortlist->targets(source); };
  for (const auto mode : {DecodeMode::kGreedy, DecodeMode::kBeam}) {
    DecodeConfig decode;
    decode.mode = mode;
    decode.beam = 3;
    decode.weights = DecodeWeights::kFloat32;
    decode.shortlist = true;
    const auto expected = decode_batches(loaded.model, sources, decode, 3);
    const auto got = decode_packed(model, sources, decode, 3, 2, {}, of);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].ids, expected[i].ids) << decode_mode_name(mode) << " " << i;
      const auto allowed = file.shortlist->targets(sources[i]);
      for (auto id : got[i].ids)  // the list did restrict the output
        EXPECT_TRUE(std::binary_search(allowed.begin(), allowed.end(), id)) << id;
    }
  }

  // A shortlist made for other vocabularies than the model's is refused, naming the file.
  const auto other = LexicalShortlist::from_tables(file.shape.src_vocab + 1, file.shape.tgt_vocab, {1, 1}, {},
                                                   std::vector<std::int64_t>(file.shape.src_vocab + 1, -1));
  const auto odd = (fs::path(dir_->str()) / "odd.translator").string();
  write_translator_file(odd, file.shape, file.pipeline, file.decode, file.made_from, file.tensors, &other, {});
  try {
    read_translator_file(odd);
    ADD_FAILURE() << "a shortlist for other vocabularies was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(odd), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("other vocabularies"), std::string::npos) << e.what();
  }

  // Tables that do not fit their vocabularies are refused, saying what is wrong.
  EXPECT_THROW(LexicalShortlist::from_tables(4, 5, {1, 1}, {2}, {0, 1, 2}), std::invalid_argument);  // 3 of 4 rows
  EXPECT_THROW(LexicalShortlist::from_tables(2, 5, {1, 1}, {2}, {0, 5}), std::invalid_argument);     // id 5 of 5
  EXPECT_THROW(LexicalShortlist::from_tables(2, 5, {1, 1}, {2, 3}, {0, 1}), std::invalid_argument);  // 2 frequent
  EXPECT_NO_THROW(LexicalShortlist::from_tables(2, 5, {1, 1}, {2}, {0, -1}));
}

TEST_F(TranslatorFileTest, DamagedFilesAreRefusedByName) {
  auto loaded = load_checkpoint(checkpoint(), at::kCPU);
  export_translator(loaded, checkpoint());
  const auto path = translator_file_for(checkpoint());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto refused = [](const std::string& damaged, const std::string& what) {
    try {
      read_translator_file(damaged);
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(damaged), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << damaged << " was read";
  };
  const auto damaged = (fs::path(dir_->str()) / "damaged.translator").string();
  auto write = [&](const std::string& content) {
    std::ofstream out(damaged, std::ios::binary | std::ios::trunc);
    out << content;
  };
  write("not a translator file at all");
  refused(damaged, "is not a translator file");
  write(bytes.substr(0, bytes.size() / 2));  // the tensors cut off
  refused(damaged, "cut short");
  write(bytes.substr(0, 40));  // inside the header
  refused(damaged, "cut short");
  auto broken = bytes;
  broken[20] = '}';  // the JSON header no longer parses
  write(broken);
  refused(damaged, "does not parse");
  auto flipped = bytes;
  flipped[bytes.size() - 1000] = static_cast<char>(flipped[bytes.size() - 1000] ^ 0x10);  // one bit of a weight
  write(flipped);
  refused(damaged, "do not match their checksum");
  refused((fs::path(dir_->str()) / "absent.translator").string(), "cannot be read");
}

TEST(TranslatorFile, StampsTellAFileRewrittenSince) {
  test::TempDir dir;
  const auto path = (fs::path(dir.str()) / "x.ckpt").string();
  std::ofstream(path) << "one";
  const auto first = CheckpointStamp::of(path);
  EXPECT_GT(first.size, 0U);
  std::ofstream(path) << "three";
  EXPECT_FALSE(first == CheckpointStamp::of(path));
  EXPECT_EQ(CheckpointStamp::of((fs::path(dir.str()) / "absent").string()).size, 0U);
}

}  // namespace
}  // namespace ts
