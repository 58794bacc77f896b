// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/decode/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>

#include "test_utils.h"
#include "ts/decode/shortlist.h"
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
  beam.mode = DecodeMode::kBeam;
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
  beam.mode = DecodeMode::kBeam;
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
  sample.mode = DecodeMode::kSample;
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
  for (const std::string mode : {"greedy", "beam", "sample"}) {
    DecodeConfig c;
    c.mode = parse_decode_mode(mode);
    const auto t = translator_->translate(data_->text.train[2].src, c, /*record_attention=*/true);
    const auto S = static_cast<std::int64_t>(t.source_tokens.size());
    const auto T = static_cast<std::int64_t>(t.best.token_log_probs.size());
    ASSERT_EQ(t.best.attention.cross.size(), 1u) << mode;
    EXPECT_EQ(t.best.attention.cross[0].sizes(), (at::IntArrayRef{1, 2, T, S})) << mode;
    EXPECT_EQ(t.best.attention.decoder_self[0].sizes(), (at::IntArrayRef{1, 2, T, T})) << mode;
    EXPECT_EQ(t.best.attention.encoder_self[0].sizes(), (at::IntArrayRef{1, 2, S, S})) << mode;
    EXPECT_TRUE(at::allclose(t.best.attention.cross[0].sum(-1), at::ones({1, 2, T}), 1e-5, 1e-5));
    EXPECT_TRUE(at::allclose(t.best.attention.decoder_self[0].sum(-1), at::ones({1, 2, T}), 1e-5, 1e-5));
    EXPECT_TRUE(at::allclose(t.best.attention.encoder_self[0].sum(-1), at::ones({1, 2, S}), 1e-5, 1e-5));
    // Incremental decoding keeps the causal mask: nothing above the diagonal.
    EXPECT_EQ(t.best.attention.decoder_self[0].triu(1).abs().sum().item<float>(), 0.0F) << mode;
    const auto json = t.attention_json();
    EXPECT_EQ(json["cross"][0][1].size(), static_cast<std::size_t>(T));
    EXPECT_EQ(json["source_tokens"].size(), static_cast<std::size_t>(S));
  }
}

// Beam search moves hypotheses between rows at every step; the attention it returns for each n-best
// output must be that output's own, i.e. what a teacher-forced full pass over it records.
TEST_F(Search, BeamAttentionOfEveryNBestEqualsAFullPassOverIt) {
  auto& model = translator_->model();
  DecodeConfig c;
  c.weights = DecodeWeights::kFloat32;  // the full pass below runs on the model's own fp32 weights
  c.mode = DecodeMode::kBeam;
  c.beam = 4;
  c.nbest = 4;
  for (std::size_t s = 0; s < 3; ++s) {
    const auto src = translator_->pipeline().encode_source(data_->text.train[s].src);
    const auto nbest = beam_search(model, src, c, /*record_attention=*/true);
    ASSERT_GE(nbest.size(), 2u);
    for (const auto& h : nbest) {
      std::vector<std::int64_t> tgt_in{Vocab::kBos};
      tgt_in.insert(tgt_in.end(), h.ids.begin(), h.ids.end());
      tgt_in.resize(h.token_log_probs.size());  // one decoder step per scored token
      torch::NoGradGuard no_grad;
      model->eval();
      model->set_record_attention(true);
      model->forward(at::tensor(src, at::kLong).unsqueeze(0), at::tensor(tgt_in, at::kLong).unsqueeze(0));
      const auto full = model->recorded_attention();
      model->set_record_attention(false);
      ASSERT_EQ(full.cross.size(), h.attention.cross.size());
      for (std::size_t l = 0; l < full.cross.size(); ++l) {
        EXPECT_TRUE(test::tensors_near(h.attention.cross[l], full.cross[l], 1e-5))
            << "sentence " << s << " layer " << l;
        EXPECT_TRUE(test::tensors_near(h.attention.decoder_self[l], full.decoder_self[l], 1e-5)) << "sentence " << s;
      }
    }
  }
}

TEST_F(Search, BeamTreeIsConsistentWithTheNBest) {
  DecodeConfig c;
  c.mode = DecodeMode::kBeam;
  c.beam = 4;
  c.nbest = 4;
  std::size_t pruned = 0;
  for (const auto& pair : data_->text.train) {
    const auto t = translator_->translate(pair.src, c);
    const auto& nodes = t.beam_tree.nodes;
    ASSERT_FALSE(nodes.empty());
    EXPECT_EQ(nodes[0].state, BeamNodeState::kRoot);
    EXPECT_EQ(nodes[0].parent, -1);
    for (std::size_t i = 1; i < nodes.size(); ++i) {
      const auto& n = nodes[i];
      ASSERT_GE(n.parent, 0);
      ASSERT_LT(n.parent, static_cast<std::int64_t>(i)) << "parents come before children";
      const auto& p = nodes[static_cast<std::size_t>(n.parent)];
      EXPECT_EQ(n.step, p.step + 1);
      EXPECT_NE(p.state, BeamNodeState::kPruned) << "nothing grows from a cut candidate";
      EXPECT_NEAR(n.log_prob, p.log_prob + n.token_log_prob, 1e-3) << "cumulative log-probability";
      EXPECT_EQ(n.text, translator_->pipeline().tgt_vocab->token(n.token));
      pruned += n.state == BeamNodeState::kPruned;
    }
    // At most `beam` candidates survive each step.
    std::map<std::int64_t, int> kept_per_step;
    for (const auto& n : nodes)
      if (n.state == BeamNodeState::kKept) ++kept_per_step[n.step];
    for (const auto& [step, count] : kept_per_step) EXPECT_LE(count, c.beam) << "step " << step;
    // Every n-best entry is a root-to-leaf path whose tokens and scores are the hypothesis's.
    ASSERT_EQ(t.nbest.size(), static_cast<std::size_t>(std::count_if(nodes.begin(), nodes.end(),
                                                                     [](const BeamNode& n) { return n.rank >= 0; })));
    for (int rank = 0; rank < static_cast<int>(t.nbest.size()); ++rank) {
      const auto path = t.beam_tree.path(rank);
      ASSERT_GE(path.size(), 2u);
      EXPECT_EQ(path.front(), 0);
      const auto& leaf = nodes[static_cast<std::size_t>(path.back())];
      EXPECT_EQ(leaf.state, BeamNodeState::kFinished);
      EXPECT_NEAR(leaf.log_prob, t.nbest[rank].log_prob, 1e-3);
      EXPECT_NEAR(leaf.score, t.nbest[rank].score, 1e-3);
      std::vector<std::int64_t> ids;
      for (std::size_t k = 1; k < path.size(); ++k) ids.push_back(nodes[static_cast<std::size_t>(path[k])].token);
      if (!ids.empty() && ids.back() == Vocab::kEos) ids.pop_back();
      EXPECT_EQ(translator_->pipeline().decode_target(ids), t.nbest[rank].text) << "rank " << rank;
    }
    EXPECT_EQ(t.beam_tree.path(0).back(), t.best.node);
    const auto json = t.beam_tree_json();
    EXPECT_EQ(json["nodes"].size(), nodes.size());
    EXPECT_EQ(json["best_path"].get<std::vector<std::int64_t>>(), t.beam_tree.path(0));
  }
  // Each step scores 2 * beam candidates but keeps at most `beam`: some are cut and recorded.
  EXPECT_GT(pruned, 0u);
  // Greedy decoding has no tree.
  EXPECT_TRUE(translator_->translate(data_->text.train[0].src, {}).beam_tree_json().is_null());
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

// Sentences of several lengths (words of the tiny corpus, some repeated, one unknown), so batches
// are padded and their sentences finish at different steps.
std::vector<std::string> mixed_sentences() {
  return {"Ich sehe den Hund.",
          "Der Hund schläft.",
          "Ich habe eine Katze und du siehst das Haus.",
          "Haus.",
          "Wir sehen den Hund und die Katze schläft und er sieht das Haus.",
          "Sie hat ein Haus.",
          "Zebra",
          "Du siehst die Katze.",
          "Die Katze schläft.",
          "Er sieht das Haus. Ich sehe den Hund."};
}

TEST_F(Search, BeamBatchMatchesOneByOneForEveryWeightFormat) {
  std::vector<std::vector<std::int64_t>> sources;
  for (const auto& text : mixed_sentences()) sources.push_back(translator_->encode(text));
  for (const char* weights : {"fp32", "bf16", "int8", "libtorch"}) {
    for (int beam : {2, 4, 5}) {
      DecodeConfig config;
      config.mode = DecodeMode::kBeam;
      config.beam = beam;
      config.nbest = std::min(beam, 3);
      config.weights = parse_decode_weights(weights);
      const auto batched = beam_search_batched(translator_->model(), sources, config);
      ASSERT_EQ(batched.size(), sources.size());
      for (std::size_t i = 0; i < sources.size(); ++i) {
        const auto alone = beam_search(translator_->model(), sources[i], config);
        ASSERT_EQ(batched[i].size(), alone.size()) << weights << " beam " << beam << " sentence " << i;
        for (std::size_t k = 0; k < alone.size(); ++k) {
          EXPECT_EQ(batched[i][k].ids, alone[k].ids)
              << weights << " beam " << beam << " sentence " << i << " rank " << k;
          EXPECT_NEAR(batched[i][k].score, alone[k].score, 1e-4) << weights << " beam " << beam << " sentence " << i;
          EXPECT_EQ(batched[i][k].finished, alone[k].finished);
        }
      }
    }
  }
}

TEST_F(Search, TranslateAllEqualsTranslatingOneAtATimeInInputOrder) {
  const auto sentences = mixed_sentences();
  for (const char* mode : {"greedy", "beam"}) {
    DecodeConfig config;
    config.mode = parse_decode_mode(mode);
    config.beam = 4;
    config.weights = DecodeWeights::kBFloat16;
    std::vector<std::size_t> progress;
    std::vector<double> confidences;
    // Batches of 3: several length-sorted batches whose outputs must come back in input order.
    const auto all = translator_->translate_all(sentences, config, 3, &confidences,
                                                [&](std::size_t done) { progress.push_back(done); });
    ASSERT_EQ(all.size(), sentences.size());
    for (std::size_t i = 0; i < sentences.size(); ++i) {
      const auto alone = translator_->translate(sentences[i], config);
      EXPECT_EQ(all[i], alone.text) << mode << " sentence " << i;
      EXPECT_NEAR(confidences[i], mean_token_log_prob(alone.best), 1e-4) << mode << " sentence " << i;
    }
    // Once per batch, one call at a time, counting up to all ten: the batches (3, 3, 3 and 1
    // sentences) may finish in any order when threads share them out.
    std::multiset<std::size_t> steps;
    for (std::size_t k = 0; k < progress.size(); ++k) steps.insert(progress[k] - (k ? progress[k - 1] : 0));
    EXPECT_EQ(steps, (std::multiset<std::size_t>{1, 3, 3, 3})) << mode;
    ASSERT_FALSE(progress.empty());
    EXPECT_EQ(progress.back(), sentences.size()) << mode;
  }
}

// Sets LibTorch's threads for a scope.
class Threads {
 public:
  explicit Threads(int n) : before_(at::get_num_threads()) { at::set_num_threads(n); }
  ~Threads() { at::set_num_threads(before_); }

 private:
  int before_;
};

// Two threads share out batches of one sentence each (the packed kernels, every weight format they
// have): each sentence's best hypothesis is what decoding it alone gives, and it lands at its index.
TEST_F(Search, BatchesSharedAmongThreadsEqualOneAtATime) {
  const Threads two(2);
  translator_->model()->train(true);  // as a trainer's model: decode_batches puts it in eval mode for itself
  std::vector<std::vector<std::int64_t>> sources;
  for (const auto& text : mixed_sentences()) sources.push_back(translator_->encode(text));
  for (const auto& text : mixed_sentences()) sources.push_back(translator_->encode(text + " " + text));
  for (const char* weights : {"fp32", "bf16", "int8"})
    for (const char* mode : {"greedy", "beam"}) {
      DecodeConfig config;
      config.mode = parse_decode_mode(mode);
      config.beam = 3;
      config.weights = parse_decode_weights(weights);
      std::size_t calls = 0, last = 0;
      bool increasing = true;
      const auto all = decode_batches(translator_->model(), sources, config, 1, [&](std::size_t done) {
        increasing = increasing && done == last + 1;
        last = done;
        ++calls;
      });
      ASSERT_EQ(all.size(), sources.size());
      EXPECT_EQ(calls, sources.size()) << weights << " " << mode;
      EXPECT_TRUE(increasing) << weights << " " << mode;
      for (std::size_t i = 0; i < sources.size(); ++i) {
        const auto alone = search(translator_->model(), sources[i], config);
        ASSERT_FALSE(alone.empty());
        EXPECT_EQ(all[i].ids, alone.front().ids) << weights << " " << mode << " sentence " << i;
        EXPECT_NEAR(all[i].log_prob, alone.front().log_prob, 1e-4) << weights << " " << mode << " sentence " << i;
      }
    }
  EXPECT_TRUE(translator_->model()->is_training()) << "the model's own mode comes back";
}

// With a lexical shortlist each sentence's output uses only its own list, decodes alike alone and in
// batches shared among threads (every weight format, greedy and beam), and a list of every token
// changes nothing on LibTorch's operations.
TEST_F(Search, ShortlistedDecodingStaysInEachSentencesListAndEqualsOneAtATime) {
  const Threads two(2);
  auto& model = translator_->model();
  const auto V = model->tgt_vocab_size();
  const auto list = std::make_shared<const LexicalShortlist>(
      LexicalShortlist::build(data_->train, model->src_vocab_size(), V, {3, 4}));
  model->set_shortlist(list);
  std::vector<std::vector<std::int64_t>> sources;
  for (const auto& text : mixed_sentences()) sources.push_back(translator_->encode(text));
  std::size_t restricted = 0;
  for (const char* weights : {"fp32", "bf16", "int8", "libtorch"})
    for (const char* mode : {"greedy", "beam"}) {
      DecodeConfig config;
      config.mode = parse_decode_mode(mode);
      config.beam = 3;
      config.weights = parse_decode_weights(weights);
      config.shortlist = true;
      const auto all = decode_batches(model, sources, config, 3);
      for (std::size_t i = 0; i < sources.size(); ++i) {
        const auto alone = search(model, sources[i], config);
        ASSERT_FALSE(alone.empty());
        EXPECT_EQ(all[i].ids, alone.front().ids) << weights << " " << mode << " sentence " << i;
        EXPECT_NEAR(all[i].log_prob, alone.front().log_prob, 1e-4) << weights << " " << mode << " sentence " << i;
        const auto allowed = list->targets(sources[i]);
        restricted += allowed.size() < static_cast<std::size_t>(V) - 3 ? 1 : 0;
        for (auto id : all[i].ids)
          EXPECT_TRUE(std::binary_search(allowed.begin(), allowed.end(), id))
              << weights << " " << mode << " sentence " << i << " token " << id;
      }
    }
  EXPECT_GT(restricted, 0U) << "the lists must leave tokens out for this test to mean anything";
  // Greedy decoding takes the best token of each step; when every token it took without a shortlist
  // is in the sentence's list (here: every target token of the training pairs), the list changes
  // nothing.
  model->set_shortlist(std::make_shared<const LexicalShortlist>(
      LexicalShortlist::build(data_->train, model->src_vocab_size(), V, {static_cast<int>(V), 0})));
  std::size_t compared = 0;
  for (const char* weights : {"libtorch", "bf16"}) {
    DecodeConfig config;
    config.weights = parse_decode_weights(weights);
    const auto without = decode_batches(model, sources, config, 3);
    config.shortlist = true;
    const auto with = decode_batches(model, sources, config, 3);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const auto allowed = model->shortlist()->targets(sources[i]);
      if (!std::all_of(without[i].ids.begin(), without[i].ids.end(),
                       [&](auto id) { return std::binary_search(allowed.begin(), allowed.end(), id); }))
        continue;
      ++compared;
      EXPECT_EQ(with[i].ids, without[i].ids) << weights << " sentence " << i;
    }
  }
  EXPECT_GT(compared, 0U);
  model->set_shortlist(nullptr);
}

TEST(DecodeBatches, ACallerNamingNoBatchGetsItsDevicesDefault) {
  DecodeConfig greedy, beam4, beam5, beam64;
  greedy.mode = DecodeMode::kGreedy;
  beam4.mode = beam5.mode = beam64.mode = DecodeMode::kBeam;
  beam4.beam = 4;
  beam5.beam = 5;
  beam64.beam = 64;
  // On a CPU, 32 hypothesis rows a step: the sentences a batch holds shrink with the beam.
  EXPECT_EQ(default_decode_batch(at::Device(at::kCPU), greedy), 32u);
  EXPECT_EQ(default_decode_batch(at::Device(at::kCPU), beam4), 8u);
  EXPECT_EQ(default_decode_batch(at::Device(at::kCPU), beam5), 6u);
  EXPECT_EQ(default_decode_batch(at::Device(at::kCPU), beam64), 1u);  // never none
  EXPECT_EQ(cpu_decode_batch(beam4), 8u);
  beam4.beam = 0;  // a beam search of width 0 searches one hypothesis
  EXPECT_EQ(cpu_decode_batch(beam4), 32u);
  // On a GPU 512 whatever the search.
  EXPECT_EQ(default_decode_batch(at::Device(at::kCUDA, 0), greedy), 512u);  // a device named, none needed
  EXPECT_EQ(default_decode_batch(at::Device(at::kCUDA, 0), beam5), 512u);
}

// An exception from the progress callback (a stop) ends the decoding on every thread and comes out.
TEST_F(Search, AStopFromProgressEndsBatchesOnEveryThread) {
  const Threads two(2);
  translator_->model()->train(true);
  std::vector<std::vector<std::int64_t>> sources;
  for (int k = 0; k < 8; ++k)
    for (const auto& text : mixed_sentences()) sources.push_back(translator_->encode(text));
  DecodeConfig config;
  config.weights = DecodeWeights::kBFloat16;
  std::atomic<std::size_t> calls{0};
  EXPECT_THROW(decode_batches(translator_->model(), sources, config, 2,
                              [&](std::size_t) {
                                ++calls;
                                throw std::runtime_error("stopped");
                              }),
               std::runtime_error);
  // Each thread may finish the batch it holds, none starts another.
  EXPECT_LE(calls.load(), 2U);
  EXPECT_TRUE(translator_->model()->is_training());
}

}  // namespace
}  // namespace ts
