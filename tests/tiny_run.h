// SPDX-License-Identifier: GPL-3.0-or-later
// A tiny model partly trained (25 steps) once per test suite into a temporary run folder: the base of
// fixtures that need a real checkpoint on disk.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_utils.h"
#include "ts/train/trainer.h"

namespace ts::test {

class TinyRunSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto config = tiny_config();
    config.train.max_steps = 25;
    const auto data = tiny_data(config);
    dir_ = new TempDir;
    Trainer trainer(config, data, {dir_->str(), "tiny-deu.txt", "", nullptr});
    trainer.run();
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string run_dir() { return dir_->str(); }
  static std::string checkpoint() { return (std::filesystem::path(dir_->str()) / "last.ckpt").string(); }
  inline static TempDir* dir_ = nullptr;
};

}  // namespace ts::test
