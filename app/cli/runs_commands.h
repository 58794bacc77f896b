// SPDX-License-Identifier: GPL-3.0-or-later
// `transformer-studio-cli runs ...`: list, show, compare, export, report, delete, rename and tag recorded runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ts::cli {

struct RunsArgs {
  std::string db;
  std::vector<std::int64_t> ids;  // compare
  std::int64_t id = 0;            // the other commands
  std::string name, format = "csv", tag, out;
  bool yes = false, remove = false;
  bool test = false;                       // report: translate the run's test split
  std::vector<std::int64_t> compare_with;  // report: other runs compared on it
  int threads = 0;                         // report --test: CPU threads (0 = all cores)
};

/// Adds the `runs` command tree to `app`; `dispatch` runs whichever subcommand was chosen.
class RunsCommands {
 public:
  explicit RunsCommands(CLI::App& app);
  bool chosen() const;
  int dispatch();

 private:
  RunsArgs args_;
  CLI::App* runs_ = nullptr;
  CLI::App *list_ = nullptr, *show_ = nullptr, *compare_ = nullptr, *export_ = nullptr, *delete_ = nullptr,
           *rename_ = nullptr, *tag_ = nullptr, *check_ = nullptr, *report_ = nullptr;
};

}  // namespace ts::cli
