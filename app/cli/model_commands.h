// SPDX-License-Identifier: GPL-3.0-or-later
// `transformer-studio-cli export`, `upgrade-checkpoint` and `shortlist`: models leaving the app,
// old checkpoints brought forward, and a run's lexical shortlist made.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace ts::cli {

/// Adds export, upgrade-checkpoint and shortlist to `app`; `dispatch` runs whichever was chosen.
class ModelCommands {
 public:
  explicit ModelCommands(CLI::App& app);
  bool chosen() const;
  int dispatch();

 private:
  int shortlist_command();

  std::string checkpoint_, out_, format_ = "folder";
  int frequent_ = 100, per_source_ = 50;
  CLI::App *export_ = nullptr, *upgrade_ = nullptr, *shortlist_ = nullptr;
};

}  // namespace ts::cli
