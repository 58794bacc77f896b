// SPDX-License-Identifier: GPL-3.0-or-later
// `transformer-studio-cli lm-train` and `lm-generate`: character-level (or SentencePiece) language
// models, the nanoGPT tutorial's bigram baseline and small GPT.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ts::cli {

struct LmArgs {
  // lm-train
  std::string text, preset = "shakespeare-char", out = "runs/lm", db, resume, device, name;
  bool no_history = false;
  double history_wait = 120;  // see the train command's --history-wait
  std::vector<std::string> sets;
  std::int64_t max_steps = -1;
  int threads = -1;
  double max_minutes = -1;
  // lm-generate
  std::string checkpoint, prompt;
  std::int64_t length = 200;
  double temperature = 1.0, top_p = 1.0;
  int top_k = 0;
  std::uint64_t seed = 0;
};

/// Adds lm-train and lm-generate to `app`; `dispatch` runs whichever was chosen.
class LmCommands {
 public:
  explicit LmCommands(CLI::App& app);
  bool chosen() const;
  int dispatch();

 private:
  int train();
  int generate();
  LmArgs args_;
  CLI::App *train_ = nullptr, *generate_ = nullptr;
};

}  // namespace ts::cli
