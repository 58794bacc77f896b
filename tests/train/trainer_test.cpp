// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/train/trainer.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "test_utils.h"
#include "ts/decode/translator.h"
#include "ts/model/batch.h"
#include "ts/model/bf16_products.h"
#include "ts/train/checkpoint.h"
#include "ts/train/loss.h"
#include "ts/train/optimizer.h"
#include "ts/train/thread_shards.h"

namespace ts {
namespace {

using RecordingObserver = test::RecordingObserver;

TEST(Trainer, TinyModelOverfitsAHandfulOfPairsToExactTranslations) {
  auto config = test::tiny_config();
  config.train.max_steps = 300;
  auto data = test::tiny_data(config);
  test::TempDir dir;
  RecordingObserver observer;
  Trainer trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr}, &observer);
  const auto summary = trainer.run();
  EXPECT_EQ(summary.status, RunStatus::kFinished);
  ASSERT_EQ(observer.losses.size(), 300u);
  EXPECT_LT(observer.losses.back(), 0.05);
  EXPECT_LT(observer.losses.back(), observer.losses.front() / 20);
  Translator translator(trainer.model(), data.pipeline);
  for (const auto& pair : data.text.train) EXPECT_EQ(translator.translate(pair.src, {}).text, pair.tgt);
}

TEST(Trainer, ResumeContinuesTheSameLossTrajectory) {
  auto config = test::tiny_config();
  config.model.dropout = 0.1;  // the RNG state must be restored too
  config.train.batch_sentences = 3;
  auto data = test::tiny_data(config);
  test::TempDir straight_dir, split_dir;

  config.train.max_steps = 12;
  RecordingObserver straight;
  Trainer(config, data, {straight_dir.str(), "tiny-deu.txt", "", nullptr}, &straight).run();

  config.train.max_steps = 5;
  RecordingObserver first;
  Trainer(config, data, {split_dir.str(), "tiny-deu.txt", "", nullptr}, &first).run();
  config.train.max_steps = 12;
  RecordingObserver second;
  const auto summary =
      Trainer(config, data, {split_dir.str(), "tiny-deu.txt", split_dir.file("last.ckpt"), nullptr}, &second).run();
  EXPECT_EQ(summary.steps, 12);

  ASSERT_EQ(straight.losses.size(), 12u);
  ASSERT_EQ(first.losses.size(), 5u);
  ASSERT_EQ(second.losses.size(), 7u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_DOUBLE_EQ(first.losses[i], straight.losses[i]) << "step " << i + 1;
  for (std::size_t i = 0; i < 7; ++i) EXPECT_NEAR(second.losses[i], straight.losses[i + 5], 1e-6) << "step " << i + 6;
}

// On a CPU with two threads each thread runs forward and backward on half of every batch
// (train.shard_batch): the steps are the whole batch's up to float rounding, and a run with
// dropout repeats exactly, whichever thread reaches LibTorch's generator first.
TEST(Trainer, ThreadSharesTrainLikeTheWholeBatchAndRepeatExactly) {
  auto config = test::tiny_config();
  config.train.threads = 2;
  config.train.batch_sentences = 4;
  config.train.max_steps = 15;
  config.model.dropout = 0;
  auto data = test::tiny_data(config);
  auto run = [&](bool shard) {
    config.train.shard_batch = shard;
    test::TempDir dir;
    RecordingObserver observer;
    Trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr}, &observer).run();
    const bool logged = std::any_of(observer.logs.begin(), observer.logs.end(), [](const std::string& line) {
      return line.find("each of the 2 threads runs forward and backward on its own share") != std::string::npos;
    });
    EXPECT_EQ(logged, shard && shares_run_on_threads());
    return observer.losses;
  };
  const auto whole = run(false);
  const auto shared = run(true);
  ASSERT_EQ(whole.size(), 15u);
  ASSERT_EQ(shared.size(), 15u);
  for (std::size_t i = 0; i < whole.size(); ++i) EXPECT_NEAR(shared[i], whole[i], 1e-4 * whole[i]) << "step " << i + 1;

  config.model.dropout = 0.3;
  const auto first = run(true);
  const auto second = run(true);
  ASSERT_EQ(first.size(), 15u);
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_DOUBLE_EQ(first[i], second[i]) << "step " << i + 1;
  EXPECT_NE(first, shared);  // the dropout did drop
}

TEST(Trainer, BatchSharesAreTheThreadsOnACpuInFp32AndInBf16OnDotProducts) {
  const at::Device cpu(at::kCPU);
  EXPECT_EQ(batch_shares(true, cpu, Precision::kFp32, 4), 4);
  EXPECT_EQ(batch_shares(true, cpu, Precision::kFp32, 1), 1);
  EXPECT_EQ(batch_shares(false, cpu, Precision::kFp32, 4), 1);
  // bf16: shares on AVX-512 BF16's dot products (bf16_linear); oneDNN under autocast cannot (trainer.cpp)
  EXPECT_EQ(batch_shares(true, cpu, Precision::kBf16, 4), bf16_products_preferred() ? 4 : 1);
  EXPECT_EQ(uses_bf16_products(cpu, Precision::kBf16, 4), bf16_products_preferred());
  EXPECT_FALSE(uses_bf16_products(cpu, Precision::kFp32, 4));
  EXPECT_FALSE(uses_bf16_products(at::Device(at::kCUDA, 0), Precision::kBf16, 4));
  EXPECT_EQ(batch_shares(true, at::Device(at::kCUDA, 0), Precision::kFp32, 4), 1);
}

// Every training pair's index, and a tiny model for `data` in training mode, seeded.
std::vector<std::size_t> all_rows(const PreparedData& data) {
  std::vector<std::size_t> rows(data.train.size());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  return rows;
}

Transformer training_model(const ExperimentConfig& config, const PreparedData& data, std::uint64_t seed) {
  at::manual_seed(seed);
  auto model = build_model(config.model, static_cast<std::int64_t>(data.pipeline.src_vocab->size()),
                           static_cast<std::int64_t>(data.pipeline.tgt_vocab->size()), Vocab::kPad,
                           config.model.share_embeddings);
  model->train();
  return model;
}

// Shares of a batch on two threads give the gradients the whole batch gives (dropout off, fp32: only
// the order of the sums differs), and a second batch adds to them, as gradient accumulation needs.
TEST(Trainer, SharedBatchGradientsEqualTheWholeBatchsAndAccumulate) {
  auto config = test::tiny_config();
  config.model.dropout = 0;
  const auto data = test::tiny_data(config);
  ASSERT_GE(data.train.size(), 4u);
  const auto rows = all_rows(data);
  const at::Device cpu(at::kCPU);
  configure_threads(2);
  auto model = training_model(config, data, 3);
  const auto parameters = model->parameters();
  const auto gradients = [&](int shares, int batches) {
    clear_gradients(parameters);
    double loss = 0;
    for (int b = 0; b < batches; ++b)
      loss +=
          forward_backward_batch(model, data.train, rows, cpu, Precision::kFp32, 0.1, 100.0, 1.0, shares, parameters);
    std::vector<at::Tensor> out;
    for (const auto& p : parameters) out.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());
    return std::make_pair(loss, out);
  };
  const auto [whole_loss, whole] = gradients(1, 1);
  const auto [shared_loss, shared] = gradients(2, 1);
  const auto [twice_loss, twice] = gradients(2, 2);
  EXPECT_NEAR(shared_loss, whole_loss, 1e-5 * whole_loss);
  EXPECT_NEAR(twice_loss, 2 * whole_loss, 2e-5 * whole_loss);
  ASSERT_EQ(whole.size(), shared.size());
  int compared = 0;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    ASSERT_EQ(whole[i].defined(), shared[i].defined()) << i;
    if (!whole[i].defined()) continue;
    EXPECT_TRUE(at::allclose(shared[i], whole[i], 1e-4, 1e-6)) << "parameter " << i;
    EXPECT_TRUE(at::allclose(twice[i], whole[i] * 2, 1e-4, 1e-6)) << "parameter " << i;
    ++compared;
  }
  EXPECT_GT(compared, 10);
}

// The training loss projects only the rows of real target tokens; the loss and every gradient equal
// those of the whole padded batch's logits, where the padded rows count for nothing.
TEST(Trainer, LossOnRealTargetRowsEqualsTheWholePaddedBatchs) {
  auto config = test::tiny_config();
  config.model.dropout = 0;
  const auto data = test::tiny_data(config);
  const auto rows = all_rows(data);
  const at::Device cpu(at::kCPU);
  const auto batch = make_batch(data.train, rows, cpu);
  const auto real = batch.tgt_out.ne(Vocab::kPad).sum().item<std::int64_t>();
  ASSERT_LT(real, batch.tgt_out.numel()) << "the fixture's batch must hold padded target rows";
  auto model = training_model(config, data, 4);
  const auto parameters = model->parameters();
  const double denominator = static_cast<double>(real);

  clear_gradients(parameters);
  const double ours = forward_backward_batch(model, data.train, rows, cpu, Precision::kFp32, 0.1, denominator, 1.0,
                                             /*shares=*/1, parameters);
  std::vector<at::Tensor> our_grads;
  for (const auto& p : parameters) our_grads.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());

  clear_gradients(parameters);
  const auto logits = model->forward(batch.src, batch.tgt_in);  // every row, padded ones too
  const auto whole =
      smoothed_cross_entropy_sum(logits.reshape({-1, logits.size(-1)}), batch.tgt_out.reshape({-1}), Vocab::kPad, 0.1) /
      denominator;
  whole.backward();
  EXPECT_NEAR(ours, whole.item<double>(), 1e-5 * std::abs(ours));
  int compared = 0;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    ASSERT_EQ(our_grads[i].defined(), parameters[i].grad().defined()) << i;
    if (!our_grads[i].defined()) continue;
    EXPECT_TRUE(at::allclose(our_grads[i], parameters[i].grad(), 1e-4, 1e-6)) << "parameter " << i;
    ++compared;
  }
  EXPECT_GT(compared, 10);
}

// The run directory holds the split it trained on: anyone can check that no dev or test source
// (here, German sentences with several English translations) occurs in training.
TEST(Trainer, WritesItsSplitWithAlternateTranslationsKeptTogether) {
  auto corpus = test::tiny_corpus();
  for (const char* english : {"I can see the dog.", "I'm looking at the dog.", "I see that dog."})
    corpus.pairs.push_back({english, "Ich sehe den Hund."});
  corpus.pairs.push_back({"Do you see the cat?", "Siehst du die Katze?"});
  corpus.pairs.push_back({"Can you see the cat?", "Siehst du die Katze?"});
  auto config = test::tiny_config(/*dev=*/3, /*test=*/3);
  config.train.max_steps = 2;
  test::TempDir dir;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {  // some seeds put the repeated sources into dev or test
    config.data.split_seed = seed;
    auto data = prepare_data(corpus, parse_direction("de-en", corpus), config.data);
    const auto out = dir.file("run" + std::to_string(seed));
    Trainer(config, data, {out, "tiny-deu.txt", "", nullptr}).run();
    std::ifstream in(out + "/split.json");
    ASSERT_TRUE(in) << "no split.json in " << out;
    const auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j.at("method"), "grouped");
    EXPECT_EQ(j.at("seed"), seed);
    EXPECT_EQ(j.at("direction"), "de-en");
    EXPECT_EQ(j.at("pairs"), corpus.pairs.size());
    EXPECT_EQ(j.at("sources"), corpus.pairs.size() - 4);  // 4 Hund pairs are one source, 2 Katze pairs another
    EXPECT_EQ(j.at("corpus_sha256"), "");                 // no such file: nothing to hash
    EXPECT_EQ(j.at("train"), data.text.train.size());
    std::set<std::string> train_sources;
    for (const auto& p : data.text.train) train_sources.insert(p.src);
    for (const char* part : {"dev", "test"}) {
      ASSERT_EQ(j.at(part).size(), 3u) << part;
      for (const auto& pair : j.at(part)) EXPECT_EQ(train_sources.count(pair.at(0).get<std::string>()), 0u) << pair;
    }
    EXPECT_EQ(j.at("test")[0][0], data.text.test[0].src);
    EXPECT_EQ(j.at("test")[0][1], data.text.test[0].tgt);
  }
}

TEST(Trainer, SaveLoadTranslateGivesIdenticalOutput) {
  auto config = test::tiny_config();
  config.train.max_steps = 40;
  auto data = test::tiny_data(config);
  test::TempDir dir;
  Trainer trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr});
  const auto summary = trainer.run();
  ASSERT_FALSE(summary.last_checkpoint.empty());
  Translator live(trainer.model(), data.pipeline);
  auto loaded = load_translator(summary.last_checkpoint, at::Device(at::kCPU));
  DecodeConfig beam;
  beam.mode = DecodeMode::kBeam;
  beam.beam = 3;
  beam.nbest = 3;
  for (const auto& pair : data.text.train) {
    for (const auto& decode : {DecodeConfig{}, beam}) {
      const auto a = live.translate(pair.src, decode), b = loaded.translate(pair.src, decode);
      EXPECT_EQ(a.text, b.text);
      ASSERT_EQ(a.nbest.size(), b.nbest.size());
      for (std::size_t i = 0; i < a.nbest.size(); ++i) EXPECT_NEAR(a.nbest[i].score, b.nbest[i].score, 1e-5);
    }
  }
}

TEST(Trainer, ValidatesWithMetricsSamplesAndKeepsTheBestCheckpoint) {
  auto config = test::tiny_config(/*dev=*/2, /*test=*/1);
  config.train.max_steps = 30;
  config.train.validate_every = 10;
  config.train.keep_last = 1;
  auto data = test::tiny_data(config);
  test::TempDir dir;
  RecordingObserver observer;
  Trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr}, &observer).run();
  ASSERT_EQ(observer.validations.size(), 3u);
  for (const auto& v : observer.validations) {
    EXPECT_EQ(v.sentences, 2u);
    EXPECT_EQ(v.samples.size(), 2u);
    EXPECT_GT(v.loss, 0.0);
    EXPECT_GE(v.bleu, 0.0);
    EXPECT_LE(v.bleu, 100.0);
  }
  EXPECT_TRUE(observer.validations.front().improved);
  EXPECT_TRUE(observer.validations.front().probe.is_null()) << "no probe sentence was set";
  EXPECT_TRUE(std::filesystem::exists(dir.file("best.ckpt")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("last.ckpt")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("step-30.ckpt")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("step-20.ckpt")));  // keep_last = 1
  for (const auto& entry : std::filesystem::directory_iterator(dir.str()))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << "temp file left: " << entry.path();
}

TEST(Trainer, WithoutDevPairsTheBestCheckpointFollowsTheLatestWeights) {
  auto config = test::tiny_config(/*dev=*/0, /*test=*/0);
  config.train.max_steps = 30;
  config.train.validate_every = 10;
  config.train.patience = 1;  // must not stop a run that has nothing to compare
  auto data = test::tiny_data(config);
  test::TempDir dir;
  RecordingObserver observer;
  const auto summary = Trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr}, &observer).run();
  EXPECT_EQ(summary.status, RunStatus::kFinished);
  ASSERT_EQ(observer.validations.size(), 3u);
  std::vector<std::int64_t> best_steps;
  for (const auto& c : observer.checkpoints)
    if (c.kind == CheckpointKind::kBest) best_steps.push_back(c.step);
  EXPECT_EQ(best_steps, (std::vector<std::int64_t>{10, 20, 30}));
}

TEST(Trainer, LearnedPositionsLeaveOutHeldOutPairsLongerThanTheTableAndKeepTextAligned) {
  // nanogpt-deu's case: data.max_len filters training pairs only, so a dev pair longer than the
  // learned table (model.max_positions) used to fail validation ("exceeds the model's maximum").
  auto config = test::tiny_config(/*dev=*/3, /*test=*/2);
  config.data.max_len = 8;
  config.model.positions = Positions::kLearned;
  config.model.max_positions = 10;
  config.train.max_steps = 10;
  config.train.validate_every = 10;
  auto data = test::tiny_data(config);
  const SentencePair long_pair{"Ich sehe den Hund und die Katze und das Haus und den Hund und die Katze.",
                               "I see the dog and the cat and the house and the dog and the cat."};
  data.text.dev.insert(data.text.dev.begin() + 1, long_pair);
  data.dev.insert(data.dev.begin() + 1, data.pipeline.encode(long_pair));
  ASSERT_GT(data.dev[1].src.size(), 10u);
  data.text.test.push_back(long_pair);
  data.test.push_back(data.pipeline.encode(long_pair));
  test::TempDir dir;
  RecordingObserver observer;
  Trainer trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr}, &observer);
  const auto summary = trainer.run();
  EXPECT_EQ(summary.status, RunStatus::kFinished);
  ASSERT_EQ(observer.validations.size(), 1u);
  EXPECT_EQ(observer.validations[0].sentences, 3u);
  EXPECT_GT(observer.validations[0].loss, 0.0);
  const auto& kept = trainer.data();
  ASSERT_EQ(kept.dev.size(), 3u);
  ASSERT_EQ(kept.text.dev.size(), 3u);
  ASSERT_EQ(kept.test.size(), 2u);
  for (std::size_t i = 0; i < kept.dev.size(); ++i) {
    EXPECT_NE(kept.text.dev[i].src, long_pair.src);
    EXPECT_EQ(data.pipeline.encode(kept.text.dev[i]).src, kept.dev[i].src) << "dev pair " << i << " misaligned";
  }
  EXPECT_TRUE(std::any_of(observer.logs.begin(), observer.logs.end(), [](const std::string& line) {
    return line.find("1 dev and 1 test pairs longer than the model's 10 learned positions") != std::string::npos;
  }));

  // Sinusoidal positions reach any length: nothing is left out.
  config.model.positions = Positions::kSinusoidal;
  Trainer sinusoidal(config, data, {dir.str() + "/sin", "tiny-deu.txt", "", nullptr});
  EXPECT_EQ(sinusoidal.data().dev.size(), 4u);
}

TEST(Trainer, CapturesTheProbeSentencesCrossAttentionAtEveryValidation) {
  auto config = test::tiny_config(/*dev=*/2, /*test=*/0);
  config.model.decoder_layers = 2;
  config.train.max_steps = 30;
  config.train.validate_every = 10;
  auto data = test::tiny_data(config);
  config.train.probe = data.text.train[0].src;
  test::TempDir dir;
  RecordingObserver observer;
  Trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr}, &observer).run();
  ASSERT_EQ(observer.validations.size(), 3u);
  for (const auto& v : observer.validations) {
    const auto& p = v.probe;
    ASSERT_TRUE(p.is_object()) << "step " << v.step;
    EXPECT_EQ(p["source"], config.train.probe);
    const auto S = p["source_tokens"].size();
    const auto T = p["target_tokens"].size();
    EXPECT_EQ(S, data.pipeline.encode_source(config.train.probe).size());
    ASSERT_EQ(p["cross"].size(), 2u);  // one entry per decoder layer
    for (const auto& layer : p["cross"]) {
      ASSERT_EQ(layer.size(), static_cast<std::size_t>(config.model.heads));
      for (const auto& head : layer) {
        ASSERT_GE(head.size(), T > 0 ? T - 1 : 0);  // a row per generated token (EOS included when produced)
        for (const auto& row : head) {
          ASSERT_EQ(row.size(), S);
          double sum = 0;
          for (const auto& w : row) sum += w.get<double>();
          EXPECT_NEAR(sum, 1.0, S * 1e-4);  // rounded to 4 decimals
        }
      }
    }
  }
  // The model changes between validations, and so do its attention weights.
  EXPECT_NE(observer.validations.front().probe["cross"], observer.validations.back().probe["cross"]);
}

TEST(Trainer, EarlyStoppingEndsARunThatNoLongerImproves) {
  auto config = test::tiny_config(/*dev=*/2);
  config.train.lr = 1e-12;  // the model cannot change, so the second validation cannot improve
  config.train.max_steps = 1000;
  config.train.validate_every = 5;
  config.train.patience = 1;
  auto data = test::tiny_data(config);
  test::TempDir dir;
  RecordingObserver observer;
  const auto summary = Trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr}, &observer).run();
  EXPECT_EQ(summary.status, RunStatus::kEarlyStopped);
  EXPECT_EQ(summary.steps, 10);
  ASSERT_EQ(observer.validations.size(), 2u);
  EXPECT_TRUE(observer.validations[0].improved);
  EXPECT_FALSE(observer.validations[1].improved);
}

TEST(Trainer, StopFlagEndsTheRunWithACheckpoint) {
  auto config = test::tiny_config();
  config.train.max_steps = 1000;
  auto data = test::tiny_data(config);
  test::TempDir dir;
  std::atomic<bool> stop{false};
  struct StopAfter : TrainingObserver {
    std::atomic<bool>* flag;
    void on_step(const TrainingProgress& p) override {
      if (p.step == 7) flag->store(true);
    }
  } observer;
  observer.flag = &stop;
  const auto summary = Trainer(config, data, {dir.str(), "tiny-deu.txt", "", &stop}, &observer).run();
  EXPECT_EQ(summary.status, RunStatus::kStopped);
  EXPECT_EQ(summary.steps, 7);
  ASSERT_TRUE(std::filesystem::exists(dir.file("last.ckpt")));
  EXPECT_EQ(read_checkpoint_meta(dir.file("last.ckpt")).position.step, 7);
}

TEST(Trainer, PauseHoldsTrainingBetweenStepsAndResumesWhereItWas) {
  auto config = test::tiny_config();
  config.train.max_steps = 12;
  auto data = test::tiny_data(config);
  test::TempDir dir;
  std::atomic<bool> pause{false};
  struct PauseAt : TrainingObserver {
    std::atomic<bool>* flag;
    std::vector<std::int64_t> steps;
    std::vector<std::string> logs;
    void on_step(const TrainingProgress& p) override {
      steps.push_back(p.step);
      if (p.step == 5) flag->store(true);
    }
    void on_log(const std::string& line) override { logs.push_back(line); }
  } observer;
  observer.flag = &pause;
  TrainerOptions options{dir.str(), "tiny-deu.txt", "", nullptr, &pause};
  int calls_while_paused = 0;
  std::int64_t step_seen_while_paused = -1;
  options.between_steps = [&](Trainer& t) {
    if (!pause.load()) return;
    ++calls_while_paused;
    step_seen_while_paused = static_cast<std::int64_t>(observer.steps.size());
    if (calls_while_paused == 5) pause.store(false);  // "Resume" after a few polls
  };
  const auto summary = Trainer(config, data, options, &observer).run();
  EXPECT_EQ(summary.status, RunStatus::kFinished);
  EXPECT_EQ(summary.steps, 12);
  EXPECT_GE(calls_while_paused, 5);
  EXPECT_EQ(step_seen_while_paused, 5);  // no step ran while paused
  ASSERT_EQ(observer.steps.size(), 12u);
  for (std::size_t i = 0; i < observer.steps.size(); ++i)
    EXPECT_EQ(observer.steps[i], static_cast<std::int64_t>(i) + 1);
  const auto has = [&](const std::string& prefix) {
    return std::any_of(observer.logs.begin(), observer.logs.end(),
                       [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
  };
  EXPECT_TRUE(has("paused at step 5"));
  EXPECT_TRUE(has("resumed after"));
}

TEST(Trainer, StopWhilePausedEndsTheRun) {
  auto config = test::tiny_config();
  config.train.max_steps = 100;
  auto data = test::tiny_data(config);
  test::TempDir dir;
  std::atomic<bool> pause{true}, stop{false};
  TrainerOptions options{dir.str(), "tiny-deu.txt", "", &stop, &pause};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop.store(true);
  });
  // Paused before the first step: no step runs, the run stops and there is nothing to save.
  const auto summary = Trainer(config, data, options).run();
  stopper.join();
  EXPECT_EQ(summary.status, RunStatus::kStopped);
  EXPECT_EQ(summary.steps, 0);
}

TEST(Trainer, BetweenStepsCanSnapshotTheModelForAnotherThread) {
  auto config = test::tiny_config();
  config.train.max_steps = 30;
  auto data = test::tiny_data(config);
  test::TempDir dir;
  TrainerOptions options{dir.str(), "tiny-deu.txt", "", nullptr};
  Transformer snapshot{nullptr};
  int calls = 0;
  options.between_steps = [&](Trainer& t) {
    if (++calls == 10) snapshot = copy_model(t.model(), at::Device(at::kCPU));
  };
  Trainer trainer(config, data, options);
  trainer.run();
  EXPECT_EQ(calls, 30);
  ASSERT_TRUE(snapshot);
  // The snapshot kept step-10 weights while training went on to step 30.
  auto a = snapshot->named_parameters(), b = trainer.model()->named_parameters();
  double diff = 0;
  for (const auto& item : a) diff += (item.value() - b[item.key()]).abs().sum().item<double>();
  EXPECT_GT(diff, 0.0);
  EXPECT_FALSE(snapshot->is_training());
}

TEST(Trainer, NonFiniteLossStopsTheRunAndSaysWhy) {
  auto config = test::tiny_config();
  config.train.max_steps = 50;
  config.train.lr = 1e30;
  config.train.clip_norm = 0;
  auto data = test::tiny_data(config);
  test::TempDir dir;
  const auto summary = Trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr}).run();
  EXPECT_EQ(summary.status, RunStatus::kFailed);
  EXPECT_NE(summary.message.find("non-finite loss"), std::string::npos);
  EXPECT_LT(summary.steps, 50);
}

TEST(Trainer, NonFiniteLossesAreSkippedWhenConfiguredUntilTwentyInARow) {
  auto config = test::tiny_config();
  config.train.max_steps = 100;
  config.train.lr = 1e30;  // diverges within a few steps, then every loss is NaN
  config.train.clip_norm = 0;
  config.train.on_nonfinite = NonFinitePolicy::Skip;
  auto data = test::tiny_data(config);
  test::TempDir dir;
  RecordingObserver observer;
  const auto summary = Trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr}, &observer).run();
  EXPECT_EQ(summary.status, RunStatus::kFailed);
  EXPECT_NE(summary.message.find("(20 in a row): stopped"), std::string::npos) << summary.message;
  const auto skipped = std::count_if(observer.logs.begin(), observer.logs.end(), [](const std::string& l) {
    return l.find("update skipped") != std::string::npos;
  });
  EXPECT_EQ(skipped, 19);
  // Only the two names exist; another is refused where the configuration is read, naming the key.
  auto j = config.to_json();
  EXPECT_EQ(j["train"]["on_nonfinite"], "skip");
  j["train"]["on_nonfinite"] = "sometimes";
  try {
    ExperimentConfig::from_json(j);
    ADD_FAILURE() << "\"sometimes\" was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train.on_nonfinite \"sometimes\" is not one of stop, skip"),
              std::string::npos)
        << e.what();
  }
}

TEST(Checkpoint, RefusesMissingForeignAndTruncatedFiles) {
  test::TempDir dir;
  EXPECT_THROW(read_checkpoint_meta(dir.file("nope.ckpt")), CheckpointError);
  { std::ofstream(dir.file("foreign.ckpt")) << "hello, not a checkpoint"; }
  EXPECT_THROW(read_checkpoint_meta(dir.file("foreign.ckpt")), CheckpointError);
  auto config = test::tiny_config();
  config.train.max_steps = 2;
  auto data = test::tiny_data(config);
  const auto summary = Trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr}).run();
  const auto size = std::filesystem::file_size(summary.last_checkpoint);
  std::filesystem::copy_file(summary.last_checkpoint, dir.file("cut.ckpt"));
  std::filesystem::resize_file(dir.file("cut.ckpt"), size / 2);
  EXPECT_THROW(load_checkpoint(dir.file("cut.ckpt"), at::Device(at::kCPU)), CheckpointError);
  // One flipped byte in the payload: refused by its SHA-256 before LibTorch parses anything.
  std::filesystem::copy_file(summary.last_checkpoint, dir.file("flip.ckpt"));
  {
    std::fstream f(dir.file("flip.ckpt"), std::ios::in | std::ios::out | std::ios::binary);
    const auto middle = static_cast<std::streamoff>(size / 2);
    f.seekg(middle);
    const char original = static_cast<char>(f.get());
    f.seekp(middle);
    f.put(static_cast<char>(~original));
  }
  try {
    load_checkpoint(dir.file("flip.ckpt"), at::Device(at::kCPU));
    FAIL() << "corrupted checkpoint accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("SHA-256"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(load_checkpoint(summary.last_checkpoint, at::Device(at::kCPU)));
}

}  // namespace
}  // namespace ts
