// SPDX-License-Identifier: GPL-3.0-or-later
// The training session: the pipeline the CLI and the app share, its typed events, its run directory
// and its place in the run history.
#include "ts/train/session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <vector>

#include "lm/lm_test_utils.h"
#include "test_utils.h"
#include "ts/lm/lm_session.h"
#include "ts/lm/lm_trainer.h"
#include "ts/store/run_store.h"
#include "ts/train/data.h"
#include "ts/train/trainer.h"

namespace ts {
namespace {

// Keeps every event in the order it came, as words ("phase preparing the data", "start", ...).
struct EventLog : SessionObserver {
  std::vector<std::string> events, logs;
  std::int64_t run_id = 0, start_step = -1;
  TrainingSummary summary;
  void on_phase(SessionPhase p) override { events.push_back(std::string("phase ") + phase_words(p)); }
  void on_run_recorded(std::int64_t id) override {
    run_id = id;
    events.push_back("recorded");
  }
  void on_start(const TrainingStart& s) override {
    start_step = s.start_step;
    events.push_back("start");
  }
  void on_log(const std::string& line) override { logs.push_back(line); }
  void on_finished(const TrainingSummary& s) override {
    summary = s;
    events.push_back(std::string("finished ") + run_status_name(s.status));
  }
  bool logged(const std::string& part) const {
    for (const auto& l : logs)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }
};

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

SessionRequest tiny_request(const Corpus& corpus, const test::TempDir& dir, int steps) {
  SessionRequest r;
  r.corpus = &corpus;
  r.direction = parse_direction("de-en", corpus);
  r.config = test::tiny_config(2, 2);
  r.config.train.max_steps = steps;
  r.out_dir = dir.file("run");
  r.history_db = dir.file("runs.db");
  return r;
}

TEST(TrainingSession, RunsEveryPhaseInOrderRecordsTheRunAndWritesItsDirectory) {
  const auto corpus = test::tiny_corpus();
  test::TempDir dir;
  EventLog log;
  auto request = tiny_request(corpus, dir, 3);
  TrainingSession session(request, &log);
  const auto summary = session.run();
  EXPECT_EQ(summary.status, RunStatus::kFinished);
  EXPECT_EQ(summary.steps, 3);
  const std::vector<std::string> expected{
      "phase preparing the data", "phase opening the run history", "recorded", "phase training", "start",
      "finished finished"};
  EXPECT_EQ(log.events, expected);
  EXPECT_EQ(log.start_step, 0);
  ASSERT_FALSE(log.logs.empty());
  EXPECT_EQ(log.logs.front(), "tiny-deu.txt: 8 pairs (English/German)") << "the corpus is described first";
  EXPECT_TRUE(log.logged("run directory: " + request.out_dir));
  EXPECT_EQ(read_json(request.out_dir + "/config.json"), request.config.to_json());
  EXPECT_TRUE(std::filesystem::exists(request.out_dir + "/split.json"));
  ASSERT_NE(session.trainer(), nullptr);
  EXPECT_GT(session.trainer()->model()->parameters().size(), 0u);

  RunStore store(request.history_db);
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].id, log.run_id);
  EXPECT_EQ(runs[0].status, RunStatus::kFinished);
  EXPECT_EQ(runs[0].steps, 3);
  EXPECT_EQ(runs[0].out_dir, request.out_dir);
}

TEST(TrainingSession, PicksAProbeSentenceFromTheDevSplitWhenAskedAndNoneIsSet) {
  const auto corpus = test::tiny_corpus();
  test::TempDir dir;
  EventLog log;
  auto request = tiny_request(corpus, dir, 2);
  request.record = false;
  request.pick_probe = true;
  TrainingSession session(request, &log);
  const auto summary = session.run();
  ASSERT_EQ(summary.status, RunStatus::kFinished) << summary.message;
  const auto probe = session.config().train.probe;
  ASSERT_FALSE(probe.empty());
  // A source sentence of the dev split the trainer held out, written into config.json and logged.
  const auto split = split_corpus(corpus, request.direction, request.config.data);
  bool in_dev = false;
  for (const auto& p : split.dev) in_dev = in_dev || p.src == probe;
  EXPECT_TRUE(in_dev) << probe;
  EXPECT_EQ(read_json(request.out_dir + "/config.json").at("train").at("probe"), probe);
  EXPECT_TRUE(log.logged("probe sentence: \"" + probe + "\", picked from the dev split"));
  // The validation translated it and recorded its attention.
  ASSERT_TRUE(summary.validated);
  EXPECT_FALSE(summary.last_validation.probe.is_null());

  // One the person set is kept; without pick_probe nothing is picked.
  test::TempDir dir2, dir3;
  auto own = tiny_request(corpus, dir2, 1);
  own.record = false;
  own.pick_probe = true;
  own.config.train.probe = "Ich habe einen Hund.";
  TrainingSession kept(own, nullptr);
  kept.run();
  EXPECT_EQ(kept.config().train.probe, "Ich habe einen Hund.");
  auto none = tiny_request(corpus, dir3, 1);
  none.record = false;
  TrainingSession plain(none, nullptr);
  plain.run();
  EXPECT_TRUE(plain.config().train.probe.empty());
}

TEST(TrainingSession, ResumesFromItsCheckpointAndContinuesTheSameRunInTheHistory) {
  const auto corpus = test::tiny_corpus();
  test::TempDir dir;
  {
    EventLog first;
    TrainingSession(tiny_request(corpus, dir, 2), &first).run();
  }
  auto request = tiny_request(corpus, dir, 5);
  request.resume_checkpoint = request.out_dir + "/last.ckpt";
  EventLog second;
  TrainingSession session(request, &second);
  const auto summary = session.run();
  EXPECT_EQ(summary.steps, 5);
  EXPECT_EQ(second.start_step, 2);
  EXPECT_EQ(session.start_step(), 2);
  RunStore store(request.history_db);
  ASSERT_EQ(store.list_runs().size(), 1u) << "a resume continues the run it resumes";
  EXPECT_EQ(store.list_runs()[0].steps, 5);
}

TEST(TrainingSession, UsesAFitMadeForTheSameInputsAndKeepsThePersonsSettings) {
  const auto corpus = test::tiny_corpus();
  test::TempDir dir;
  auto request = tiny_request(corpus, dir, 2);
  request.config = preset("auto");
  request.config.train.budget_minutes = 1;
  request.config.train.threads = 1;
  request.record = false;
  // A fit that timed the machine for these very inputs: the session must not fit (nor time) again.
  auto fit = std::make_shared<AutoFit>(fit_auto(corpus, request.direction, request.config, /*measure=*/false));
  ASSERT_TRUE(fit->ok()) << fit->error;
  fit->measured = true;
  fit->machine = "the machine of this test";
  fit->reasons = {"a reason only this fit gives"};
  fit->config.model.d_model = 16;  // small, and not what a new fit would choose
  fit->config.model.d_ff = 32;
  fit->config.model.heads = 2;
  fit->budget_target_tokens = 500000;
  fit->estimated_passes = 12.3;
  request.fitted = fit;
  request.fit_recipe = true;
  request.recipe_note = "how to choose otherwise";
  request.keep_own_settings = [](const AutoFit& f) {
    ExperimentConfig c = f.config;
    c.train.max_steps = 2;  // the person's own setting
    c.data.dev = 2;
    c.data.test = 2;
    return c;
  };
  EventLog log;
  TrainingSession session(request, &log);
  const auto summary = session.run();
  EXPECT_EQ(summary.steps, 2);
  EXPECT_EQ(log.events.front(), "phase fitting the recipe to this machine");
  EXPECT_TRUE(log.logged("recipe auto, fitted for 1 min on the machine of this test (how to choose otherwise):"));
  EXPECT_TRUE(log.logged("  a reason only this fit gives"));
  // The passes counted again over the encoded training pairs (target tokens with the end of sentence).
  const std::regex passes_line(R"(passes: the ([0-9,]+) training pairs encode to ([0-9,]+) target tokens .* the 0\.5 )"
                               R"(million .* are about ([0-9.]+) passes \(it estimated 12\.3 from characters)");
  std::smatch m;
  const auto line = std::find_if(log.logs.begin(), log.logs.end(),
                                 [&](const std::string& l) { return std::regex_search(l, m, passes_line); });
  ASSERT_NE(line, log.logs.end());
  const auto number = [](std::string text) {
    text.erase(std::remove(text.begin(), text.end(), ','), text.end());
    return std::stod(text);
  };
  const double pairs = number(m[1]), tokens = number(m[2]);
  EXPECT_GT(tokens, pairs);  // at least one token and the end of sentence a pair
  EXPECT_NEAR(number(m[3]), 500000 / tokens, 0.05);
  EXPECT_EQ(session.config().model.d_model, 16);
  EXPECT_EQ(session.config().train.max_steps, 2);
  EXPECT_EQ(read_json(request.out_dir + "/config.json"), session.config().to_json());
}

TEST(TrainingSession, ARunDirectoryThatCannotBeWrittenStopsItBeforeTrainingAndNamesThePath) {
  const auto corpus = test::tiny_corpus();
  test::TempDir dir;
  const auto blocker = dir.write("not-a-directory", "a file where the run directory should go");
  auto request = tiny_request(corpus, dir, 2);
  request.out_dir = blocker + "/run";
  EventLog log;
  TrainingSession session(request, &log);
  const auto message = test::message_of<std::runtime_error>([&] { session.run(); });
  EXPECT_NE(message.find(blocker), std::string::npos) << message;
  EXPECT_EQ(session.trainer(), nullptr);
  EXPECT_TRUE(std::find(log.events.begin(), log.events.end(), "phase training") == log.events.end());
}

TEST(TrainingSession, AResumedRunIsNotFittedAgain) {
  const auto corpus = test::tiny_corpus();
  test::TempDir dir;
  auto request = tiny_request(corpus, dir, 2);
  request.resume_checkpoint = dir.file("last.ckpt");
  request.fit_recipe = true;
  TrainingSession session(request, nullptr);
  EXPECT_NE(test::message_of<std::invalid_argument>([&] { session.run(); }).find("keeps its recipe"),
            std::string::npos);
}

TEST(LmTrainingSession, TrainsRecordsAndResumesWithTheCheckpointsText) {
  test::TempDir dir;
  const auto text = dir.write("markov.txt", test::markov_text(4000));
  LmSessionRequest request;
  request.text_path = text;
  request.config = test::small_gpt_config();
  request.config.max_steps = 3;
  request.out_dir = dir.file("lm");
  request.history_db = dir.file("runs.db");
  {
    EventLog log;
    LmTrainingSession session(request, &log);
    EXPECT_EQ(session.run().steps, 3);
    const std::vector<std::string> expected{
        "phase preparing the data", "phase opening the run history", "recorded", "phase training", "start",
        "finished finished"};
    EXPECT_EQ(log.events, expected);
    EXPECT_TRUE(log.logged("reading " + text));
    EXPECT_EQ(read_json(request.out_dir + "/config.json"), request.config.to_json());
  }
  request.text_path.clear();  // the checkpoint's
  request.resume_checkpoint = request.out_dir + "/last.ckpt";
  request.config.max_steps = 5;
  EventLog log;
  LmTrainingSession session(request, &log);
  EXPECT_EQ(session.run().steps, 5);
  EXPECT_EQ(log.start_step, 3);
  EXPECT_EQ(session.text_path(), text);
  RunStore store(request.history_db);
  ASSERT_EQ(store.list_runs().size(), 1u);
  EXPECT_EQ(store.list_runs()[0].kind, RunKind::kLanguageModel);

  std::filesystem::remove(text);  // moved away: a resume without a text says where it looked
  LmTrainingSession gone(request, nullptr);
  const auto message = test::message_of<std::invalid_argument>([&] { gone.run(); });
  EXPECT_NE(message.find(text + ": the run's text file is gone"), std::string::npos) << message;
}

}  // namespace
}  // namespace ts
