// SPDX-License-Identifier: GPL-3.0-or-later
// EvalModeGuard: eval mode for a scope, the previous mode back afterwards, also after an exception.
#include "ts/model/mode_guard.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

namespace ts {
namespace {

TEST(EvalModeGuard, RestoresTrainingModeAfterTheScopeAndAfterAnException) {
  torch::nn::Linear model(4, 4);
  auto dropout = model->register_module("dropout", torch::nn::Dropout(0.5));
  ASSERT_TRUE(model->is_training());
  {
    const EvalModeGuard eval(*model);
    EXPECT_FALSE(model->is_training());
    EXPECT_FALSE(dropout->is_training());  // children too
  }
  EXPECT_TRUE(model->is_training());
  EXPECT_TRUE(dropout->is_training());
  try {
    const EvalModeGuard eval(*model);
    throw std::runtime_error("validation failed");
  } catch (const std::runtime_error&) {}
  EXPECT_TRUE(model->is_training());

  model->eval();  // a model in eval mode stays in it
  { const EvalModeGuard eval(*model); }
  EXPECT_FALSE(model->is_training());
}

}  // namespace
}  // namespace ts
