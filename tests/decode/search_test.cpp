#include "ts/decode/search.h"

#include <gtest/gtest.h>

#include "test_utils.h"
#include "ts/decode/translator.h"
#include "ts/train/batcher.h"
#include "ts/train/trainer.h"

namespace ts {
namespace {

// One partly trained tiny model shared by the tests (its outputs are not yet all certain).
class Search : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto config = test::tiny_config();
    config.train.max_steps = 25;
    data_ = new PreparedData(test::tiny_data(config));
    dir_ = new test::TempDir;
    Trainer trainer(config, *data_, {dir_->str(), "tiny-deu.txt", "", nullptr});
    trainer.run();
    translator_ = new Translator(trainer.model(), data_->pipeline);
  }
  static void TearDownTestSuite() {
    delete translator_;
    delete dir_;
    delete data_;
  }
  static PreparedData* data_;
  static test::TempDir* dir_;
  static Translator* translator_;
};
PreparedData* Search::data_ = nullptr;
test::TempDir* Search::dir_ = nullptr;
Translator* Search::translator_ = nullptr;

TEST_F(Search, BeamOfWidthOneEqualsGreedy) {
  DecodeConfig greedy, beam;
  beam.mode = "beam";
  beam.beam = 1;
  beam.length_penalty = 0;
  for (const auto& pair : data_->text.train) {
    const auto g = translator_->translate(pair.src, greedy), b = translator_->translate(pair.src, beam);
    EXPECT_EQ(g.best.ids, b.best.ids) << pair.src;
    EXPECT_NEAR(g.best.log_prob, b.best.log_prob, 1e-4);
  }
}

TEST_F(Search, BeamReturnsSortedDistinctNBest) {
  DecodeConfig beam;
  beam.mode = "beam";
  beam.beam = 4;
  beam.nbest = 4;
  const auto t = translator_->translate(data_->text.train[0].src, beam);
  ASSERT_EQ(t.nbest.size(), 4u);
  for (std::size_t i = 1; i < t.nbest.size(); ++i) EXPECT_GE(t.nbest[i - 1].score, t.nbest[i].score);
  auto src = data_->pipeline.encode_source(data_->text.train[0].src);
  auto hyps = beam_search(translator_->model(), src, beam);
  for (std::size_t i = 0; i < hyps.size(); ++i)
    for (std::size_t j = i + 1; j < hyps.size(); ++j) EXPECT_NE(hyps[i].ids, hyps[j].ids);
  // Beam search finds a sequence at least as likely as greedy.
  EXPECT_GE(hyps.front().log_prob + 1e-4, translator_->translate(data_->text.train[0].src, {}).best.log_prob - 1e-3);
}

TEST_F(Search, SamplingIsSeededAndTopKOneIsGreedy) {
  DecodeConfig sample;
  sample.mode = "sample";
  sample.temperature = 1.5;
  sample.nbest = 3;
  sample.seed = 11;
  const auto& src = data_->text.train[1].src;
  const auto a = translator_->translate(src, sample), b = translator_->translate(src, sample);
  ASSERT_EQ(a.nbest.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(a.nbest[i].text, b.nbest[i].text);
  sample.top_k = 1;
  sample.nbest = 1;
  for (const auto& pair : data_->text.train)
    EXPECT_EQ(translator_->translate(pair.src, sample).text, translator_->translate(pair.src, {}).text);
}

TEST_F(Search, AttentionIsReturnedPerLayerAndHeadWithRowsSummingToOne) {
  for (const std::string mode : {"greedy", "beam"}) {
    DecodeConfig c;
    c.mode = mode;
    const auto t = translator_->translate(data_->text.train[2].src, c, /*record_attention=*/true);
    const auto S = static_cast<std::int64_t>(t.source_tokens.size());
    const auto T = static_cast<std::int64_t>(t.best.token_log_probs.size());
    ASSERT_EQ(t.best.attention.cross.size(), 1u) << mode;
    EXPECT_EQ(t.best.attention.cross[0].sizes(), (at::IntArrayRef{1, 2, T, S})) << mode;
    EXPECT_EQ(t.best.attention.decoder_self[0].sizes(), (at::IntArrayRef{1, 2, T, T})) << mode;
    EXPECT_EQ(t.best.attention.encoder_self[0].sizes(), (at::IntArrayRef{1, 2, S, S})) << mode;
    EXPECT_TRUE(at::allclose(t.best.attention.cross[0].sum(-1), at::ones({1, 2, T}), 1e-5, 1e-5));
    EXPECT_TRUE(at::allclose(t.best.attention.decoder_self[0].sum(-1), at::ones({1, 2, T}), 1e-5, 1e-5));
    const auto json = t.attention_json();
    EXPECT_EQ(json["cross"][0][1].size(), static_cast<std::size_t>(T));
    EXPECT_EQ(json["source_tokens"].size(), static_cast<std::size_t>(S));
  }
}

TEST_F(Search, GreedyBatchMatchesOneByOne) {
  std::vector<std::size_t> indices;
  std::vector<Example> examples;
  for (const auto& pair : data_->text.train) examples.push_back(data_->pipeline.encode(pair));
  for (std::size_t i = 0; i < examples.size(); ++i) indices.push_back(i);
  auto batch = make_batch(examples, indices, at::Device(at::kCPU));
  const auto batched = greedy_search(translator_->model(), batch.src, {});
  for (std::size_t i = 0; i < examples.size(); ++i)
    EXPECT_EQ(batched[i].ids, translator_->translate(data_->text.train[i].src, {}).best.ids);
}

}  // namespace
}  // namespace ts
