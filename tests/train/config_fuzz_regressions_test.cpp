// SPDX-License-Identifier: GPL-3.0-or-later
// Regression tests for what fuzzing the configuration layer found (tests/fuzz/fuzz_config.cpp,
// docs/reliability.md). Each test failed before its fix.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <string>

#include "ts/model/fp16_products.h"
#include "ts/train/config.h"

namespace ts {
namespace {

using nlohmann::json;

std::string config_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// Fuzz input tests/fuzz/corpus/config/regress-int-wraps: set("data.max_len=666666666666666663")
// was accepted and stored 440576679 (get<int>() wraps silently).
TEST(ConfigFuzzRegressions, IntegersOutsideIntAreRefusedNotWrapped) {
  ExperimentConfig c;
  const auto message = config_error([&] { c.set("data.max_len=666666666666666663"); });
  EXPECT_NE(message.find("data.max_len"), std::string::npos) << message;
  EXPECT_NE(message.find("666666666666666663"), std::string::npos) << message;
  EXPECT_EQ(c.data.max_len, ExperimentConfig{}.data.max_len);  // unchanged

  EXPECT_THROW(ExperimentConfig::from_json(json{{"model", {{"d_model", 4294967552LL}}}}), ConfigError);  // was 256
  EXPECT_THROW(ExperimentConfig::from_json(json{{"train", {{"warmup", -2147483649LL}}}}), ConfigError);
  // The int limits themselves are still accepted (validation judges them).
  EXPECT_EQ(ExperimentConfig::from_json(json{{"model", {{"d_model", INT_MAX}}}}).model.d_model, INT_MAX);
  EXPECT_EQ(ExperimentConfig::from_json(json{{"train", {{"warmup", INT_MIN}}}}).train.warmup, INT_MIN);
}

// Unsigned seeds above INT64_MAX were refused as "negative" (read through a signed integer).
TEST(ConfigFuzzRegressions, FullRangeUnsignedSeedsAreAccepted) {
  const auto c =
      ExperimentConfig::from_json(json{{"train", {{"seed", UINT64_MAX}}}, {"data", {{"split_seed", 1ULL << 63}}}});
  EXPECT_EQ(c.train.seed, UINT64_MAX);
  EXPECT_EQ(c.data.split_seed, 1ULL << 63);
  EXPECT_THROW(ExperimentConfig::from_json(json{{"train", {{"seed", -1}}}}), ConfigError);
}

// Fuzz input regress-lm-set-invalid-utf8 (LmConfig) and the same path here: a bare word that is not
// UTF-8 was kept as a JSON string, after which every to_json().dump() (checkpoints, run history)
// threw nlohmann's type_error; as a wrongly typed value, building the error message threw it.
TEST(ConfigFuzzRegressions, SetRefusesBytesThatAreNotUtf8) {
  ExperimentConfig c;
  EXPECT_NE(config_error([&] { c.set("train.probe=\xff\xfe"); }).find("not valid UTF-8"), std::string::npos);
  EXPECT_EQ(c.train.probe, "");
  EXPECT_NO_THROW((void)c.to_json().dump());
  EXPECT_THROW(c.set("model.d_model=\x80"), ConfigError);  // was nlohmann type_error 316
  c.set("train.probe=Grüß Gott");                          // valid UTF-8 is fine
  EXPECT_EQ(c.train.probe, "Grüß Gott");
}

// JSON built in code can hold such strings too (the parser refuses them): refused by name.
TEST(ConfigFuzzRegressions, FromJsonRefusesStringsThatAreNotUtf8) {
  const auto message = config_error([] { (void)ExperimentConfig::from_json(json{{"train", {{"probe", "a\xc3"}}}}); });
  EXPECT_NE(message.find("train.probe"), std::string::npos) << message;
  EXPECT_THROW(ExperimentConfig::from_json(json{{"model", {{"heads", "\xff"}}}}), ConfigError);  // was type_error
  EXPECT_THROW(TokenizerConfig::from_json(json{{"lowercase", "\xff"}}), std::invalid_argument);
}

// Fuzz input regress-problem-with-nul: a value with a NUL byte in a problem cut validate()'s
// message (what() is a C string) and hid every problem listed after it. Every closed set is an enum
// now, refused by name when it is set, the name quoted so the NUL cannot cut the message short; and
// validate() still lists each problem.
TEST(ConfigFuzzRegressions, ValidateListsProblemsAfterAValueWithNul) {
  ExperimentConfig c;
  const auto device = config_error([&] { c.set(std::string("train.device=c\x06\0pu", 18)); });
  EXPECT_NE(device.find("train.device \"c\\u0006\\u0000pu\" is not one of auto, cpu, cuda"), std::string::npos)
      << device;
  const auto precision = config_error([&] { c.set("train.precision=nope"); });
  EXPECT_NE(precision.find("train.precision \"nope\" is not one of fp32, bf16, fp16, auto"), std::string::npos)
      << precision;
  EXPECT_EQ(c.train.device, DeviceChoice::kAuto);  // a refused value changes nothing
  c.set("train.device=cpu");
  c.set("train.precision=fp16");
  c.set("train.label_smoothing=1");
  const auto message = config_error([&] { c.validate(); });
  if (!fp16_products_available()) {  // a CPU with AVX-512 FP16 trains fp16 (ts/model/fp16_products.h)
    EXPECT_NE(message.find("train.precision fp16 needs a CUDA GPU"), std::string::npos) << message;
  }
  EXPECT_NE(message.find("train.label_smoothing must be in [0, 1)"), std::string::npos) << message;
  // A closed set held as an enum refuses an unknown name when it is set, with the same words (the
  // NUL quoted, so it cannot cut the message short).
  const auto positions = config_error([&] { c.set(std::string("model.positions=l\x06\0earned", 25)); });
  EXPECT_NE(positions.find("model.positions \"l\\u0006\\u0000earned\" is not one of sinusoidal, learned"),
            std::string::npos)
      << positions;
  const auto optimizer = config_error([&] { c.set("train.optimizer=nope"); });
  EXPECT_NE(optimizer.find("train.optimizer \"nope\" is not one of adam, adamw"), std::string::npos) << optimizer;
  const auto best = config_error([&] { c.set("train.best_metric=nope"); });
  EXPECT_NE(best.find("train.best_metric \"nope\" is not one of bleu, loss"), std::string::npos) << best;
  const auto refused = config_error([&] { c.set("decode.mode=nope"); });
  EXPECT_NE(refused.find("decode.mode \"nope\" is not one of greedy, beam, sample"), std::string::npos) << refused;
  const auto schedule = config_error([&] { c.set("train.schedule=nope"); });
  EXPECT_NE(schedule.find("train.schedule \"nope\" is not one of noam, constant, linear, cosine"), std::string::npos)
      << schedule;
}

// Seed regress-max-len-overflow: data.max_len + 2 overflowed an int (UBSan: signed integer
// overflow); in a release build it wrapped negative and the too-small learned table passed.
TEST(ConfigFuzzRegressions, LearnedPositionsCheckDoesNotOverflow) {
  ExperimentConfig c;
  c.model.positions = Positions::kLearned;
  c.model.max_positions = 8;
  c.data.max_len = INT_MAX;
  bool found = false;
  for (const auto& p : c.problems()) found = found || p.find("(2147483649)") != std::string::npos;
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace ts
