// SPDX-License-Identifier: GPL-3.0-or-later
// `transformer-studio-cli export` and `upgrade-checkpoint`: models leaving the app, and old
// checkpoints brought forward.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace ts::cli {

/// Adds export and upgrade-checkpoint to `app`; `dispatch` runs whichever was chosen.
class ModelCommands {
 public:
  explicit ModelCommands(CLI::App& app);
  bool chosen() const;
  int dispatch();

 private:
  std::string checkpoint_, out_, format_ = "folder";
  CLI::App *export_ = nullptr, *upgrade_ = nullptr;
};

}  // namespace ts::cli
