// SPDX-License-Identifier: GPL-3.0-or-later
// The decode section's closed sets: each enum value has one name, the name reads back as the same
// value, an unknown name is refused naming the accepted ones, and a configuration file keeps them.
#include "ts/decode/decode_config.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "ts/train/config.h"

namespace ts {
namespace {

TEST(DecodeConfig, EveryModeAndWeightsReadsBackFromItsName) {
  for (auto mode : {DecodeMode::kGreedy, DecodeMode::kBeam, DecodeMode::kSample})
    EXPECT_EQ(parse_decode_mode(decode_mode_name(mode)), mode) << decode_mode_name(mode);
  for (auto weights :
       {DecodeWeights::kFloat32, DecodeWeights::kBFloat16, DecodeWeights::kInt8, DecodeWeights::kLibTorch})
    EXPECT_EQ(parse_decode_weights(decode_weights_name(weights)), weights) << decode_weights_name(weights);
  try {
    parse_decode_mode("Beam");
    FAIL() << "a name in the wrong case was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("greedy, beam or sample"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_decode_weights("fp16"), std::invalid_argument);
}

TEST(DecodeConfig, AConfigurationFileKeepsTheNames) {
  ExperimentConfig c;
  c.decode.mode = DecodeMode::kSample;
  c.decode.weights = DecodeWeights::kInt8;
  const auto j = c.to_json();
  EXPECT_EQ(j["decode"]["mode"], "sample");
  EXPECT_EQ(j["decode"]["weights"], "int8");
  const auto back = ExperimentConfig::from_json(j);
  EXPECT_EQ(back.decode.mode, DecodeMode::kSample);
  EXPECT_EQ(back.decode.weights, DecodeWeights::kInt8);
  auto bad = j;
  bad["decode"]["weights"] = "fp64";
  try {
    ExperimentConfig::from_json(bad);
    FAIL() << "unknown weights were accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("decode.weights \"fp64\" is not one of fp32, bf16, int8, libtorch"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ts
