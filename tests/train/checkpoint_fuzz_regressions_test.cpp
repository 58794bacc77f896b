// SPDX-License-Identifier: GPL-3.0-or-later
// Regression tests for the checkpoint loader's verification layer (tests/fuzz/fuzz_checkpoint.cpp,
// docs/reliability.md). Each test failed before its fix.
#include <gtest/gtest.h>

#include <string>

#include "test_utils.h"
#include "ts/train/checkpoint.h"

namespace ts {
namespace {

using nlohmann::json;

json valid_position() {
  return {{"step", 1},        {"epoch", 0},        {"batch_in_epoch", 0}, {"tokens_seen", 0}, {"elapsed_seconds", 0.5},
          {"best_metric", 0}, {"has_best", false}, {"bad_validations", 0}};
}

// A checkpoint with an intact envelope (header, size, SHA-256) whose metadata is `meta`.
std::string write_with_meta(const test::TempDir& dir, const json& meta) {
  const std::string path = dir.file("hostile.ckpt");
  write_checkpoint_file(path, meta, {});
  return path;
}

std::string meta_error(const std::string& path) {
  try {
    (void)read_checkpoint_meta(path);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

// Seed tests/fuzz/corpus/checkpoint/regress-position-float-overflow: "step": 1e300 reached
// get<std::int64_t>() on a double (UBSan: 1e+300 is outside the range of representable values);
// a correct checksum says the file is intact, not that its metadata is sane.
TEST(CheckpointFuzzRegressions, PositionWithHugeFloatIsRefused) {
  test::TempDir dir;
  auto position = valid_position();
  position["step"] = 1e300;
  const json meta = {{"format", 1}, {"config", json::object()}, {"position", position}, {"pipeline", json::object()}};
  const auto message = meta_error(write_with_meta(dir, meta));
  EXPECT_NE(message.find("position.step: expected an integer"), std::string::npos) << message;
  EXPECT_NE(message.find("hostile.ckpt"), std::string::npos) << message;
}

// 1.5 steps was silently read as 1.
TEST(CheckpointFuzzRegressions, FractionalCountsAndWrongTypesAreRefused) {
  auto position = valid_position();
  position["tokens_seen"] = 1.5;
  EXPECT_THROW(TrainingPosition::from_json(position), std::invalid_argument);
  position = valid_position();
  position["has_best"] = 0;
  EXPECT_THROW(TrainingPosition::from_json(position), std::invalid_argument);
  position = valid_position();
  position["epoch"] = 18446744073709551615ULL;  // above INT64_MAX
  EXPECT_THROW(TrainingPosition::from_json(position), std::invalid_argument);
  EXPECT_THROW(TrainingPosition::from_json(json::array()), std::invalid_argument);
  // A position written by to_json still reads back.
  TrainingPosition p;
  p.step = 12;
  p.best_metric = 3.25;
  p.has_best = true;
  const auto back = TrainingPosition::from_json(p.to_json());
  EXPECT_EQ(back.step, 12);
  EXPECT_EQ(back.best_metric, 3.25);
  EXPECT_TRUE(back.has_best);
}

TEST(CheckpointFuzzRegressions, FormatMustBeAnInteger) {
  test::TempDir dir;
  const json meta = {
      {"format", 1e300}, {"config", json::object()}, {"position", valid_position()}, {"pipeline", json::object()}};
  EXPECT_NE(meta_error(write_with_meta(dir, meta)).find("format is not an integer"), std::string::npos);
}

}  // namespace
}  // namespace ts
