// SPDX-License-Identifier: GPL-3.0-or-later
// Eval mode for a scope: the module's training mode comes back when the scope ends, also when it
// ends by an exception (a validation that throws must not leave a model training without dropout,
// or a snapshot translating with it).
#pragma once

#include <torch/nn/module.h>

namespace ts {

class EvalModeGuard {
 public:
  /// Puts `module` (a holder's `*model` or `module.ptr()`) into eval mode until destruction.
  /// A module already in eval mode is only read, never written: guards on several threads may share
  /// one model that an outer scope put into eval mode (batched translation on worker threads).
  explicit EvalModeGuard(torch::nn::Module& module) : module_(module), was_training_(module.is_training()) {
    if (was_training_) module_.eval();
  }
  ~EvalModeGuard() {
    if (was_training_) module_.train(true);
  }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  torch::nn::Module& module_;
  bool was_training_;
};

}  // namespace ts
