// SPDX-License-Identifier: GPL-3.0-or-later
// The `auto` recipe fitted for a session and refitted keeping a person's edits.
#include "ts/train/auto_fit.h"

#include <gtest/gtest.h>

#include "test_utils.h"

namespace ts {
namespace {

ExperimentConfig inputs(double budget) {
  auto c = preset("auto");
  c.train.budget_minutes = budget;
  c.train.threads = 1;
  return c;
}

TEST(AutoFit, ARunWithoutABudgetIsSizedAsForTwentyMinutesAndKeepsNoBudget) {
  const auto corpus = test::tiny_corpus();
  const auto direction = parse_direction("de-en", corpus);
  const auto unbounded = fit_auto(corpus, direction, inputs(0));
  const auto twenty = fit_auto(corpus, direction, inputs(kFitMinutesWithoutBudget));
  ASSERT_TRUE(unbounded.ok()) << unbounded.error;
  ASSERT_TRUE(twenty.ok()) << twenty.error;
  EXPECT_EQ(unbounded.config.train.budget_minutes, 0);
  EXPECT_EQ(unbounded.config.model.d_model, twenty.config.model.d_model);
  EXPECT_EQ(unbounded.config.model.encoder_layers, twenty.config.model.encoder_layers);
  EXPECT_NE(unbounded.reasons.back().find("No time budget"), std::string::npos) << unbounded.reasons.back();
  EXPECT_EQ(unbounded.key, auto_fit_key(corpus, direction, inputs(0)));
  EXPECT_NE(unbounded.key, twenty.key);
  auto whole_batch = inputs(0);
  whole_batch.train.shard_batch = false;  // another measured speed, so another fit
  EXPECT_NE(unbounded.key, auto_fit_key(corpus, direction, whole_batch));
}

TEST(AutoFit, AGivenSpeedSizesTheRecipeWithoutTimingTheMachine) {
  const auto corpus = test::tiny_corpus();
  const auto direction = parse_direction("de-en", corpus);
  const auto slow = fit_auto(corpus, direction, inputs(20), /*measure=*/true, /*given_speed=*/300);
  const auto fast = fit_auto(corpus, direction, inputs(20), /*measure=*/true, /*given_speed=*/60000);
  ASSERT_TRUE(slow.ok()) << slow.error;
  ASSERT_TRUE(fast.ok()) << fast.error;
  EXPECT_TRUE(slow.measured);
  // Sized by the speed given, not by a timing: the faster machine gets the larger model...
  EXPECT_LT(slow.config.model.d_model, fast.config.model.d_model);
  EXPECT_GT(fast.budget_target_tokens, 10 * slow.budget_target_tokens);
  // ...and the reasons say where the speed came from.
  bool named = false;
  for (const auto& reason : slow.reasons)
    named = named ||
            reason.find("given with --machine-speed: the reference model's 300 target tokens/s") != std::string::npos;
  EXPECT_TRUE(named);
  // The same speed gives the same recipe, run after run.
  const auto again = fit_auto(corpus, direction, inputs(20), true, 300);
  EXPECT_EQ(again.config.to_json(), slow.config.to_json());
}

TEST(AutoFit, ARefitKeepsThePersonsEditsAndTakesEverythingElseFromTheNewFit) {
  const auto corpus = test::tiny_corpus();
  const auto direction = parse_direction("de-en", corpus);
  const auto first = fit_auto(corpus, direction, inputs(5));
  auto edited = first.config;
  edited.train.lr = 0.00123;  // the person's own value
  auto later = fit_auto(corpus, direction, inputs(60)).config;
  later.model.dropout = 0.25;  // what the new fit chose
  const auto refit = refit_auto(edited, later, &first.config);
  EXPECT_EQ(refit.train.lr, 0.00123);
  EXPECT_EQ(refit.model.dropout, 0.25);
  EXPECT_EQ(refit.train.budget_minutes, 5) << "the fit's inputs stay the person's";
  EXPECT_EQ(refit.preset, "auto");
  EXPECT_TRUE(is_plain_auto(inputs(5)));
  EXPECT_FALSE(is_plain_auto(edited));
}

}  // namespace
}  // namespace ts
