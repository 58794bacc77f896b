// SPDX-License-Identifier: GPL-3.0-or-later
// Shared helpers for the language-model tests.
#pragma once

#include <string>

#include <ATen/ATen.h>
#include <torch/nn/init.h>

#include "ts/lm/gpt.h"

namespace ts::test {

/// A small GPT: 2 layers, 2 heads, 32 dimensions, block 16, no dropout, one thread.
inline LmConfig small_gpt_config() {
  auto c = lm_preset("shakespeare-char");
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 32;
  c.block_size = 16;
  c.batch_size = 8;
  c.eval_iters = 4;
  c.eval_interval = 50;
  c.threads = 1;
  c.device = DeviceChoice::kCpu;
  return c;
}

/// Re-draws every weight from N(0, 0.3) so that logits differ clearly between tokens (GPT-2's
/// N(0, 0.02) makes an untrained model's logits nearly tied, and argmax fragile).
inline void spread_weights(LanguageModel& model) {
  torch::NoGradGuard no_grad;
  at::manual_seed(7);
  for (auto& p : model->parameters()) torch::nn::init::normal_(p, 0.0, 0.3);
}

/// A deterministic text whose characters follow a first-order Markov chain over `alphabet`.
inline std::string markov_text(std::size_t length, std::uint64_t seed = 11) {
  const std::string alphabet = "abcde \n";
  std::string text;
  std::uint64_t state = seed;
  std::size_t prev = 0;
  for (std::size_t i = 0; i < length; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto r = (state >> 33) % 100;
    // Each character strongly prefers its successor in the alphabet, else any character.
    const std::size_t next =
        r < 60 ? (prev + 1) % alphabet.size() : static_cast<std::size_t>((state >> 40) % alphabet.size());
    text += alphabet[next];
    prev = next;
  }
  return text;
}

}  // namespace ts::test
