// SPDX-License-Identifier: GPL-3.0-or-later
// Documentation generated from the command-line definition itself, so it cannot drift:
// `completion bash` (a bash completion script) and `man` (a roff man page), plus the defaults of
// every option shown in --help.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace ts::cli {

/// Appends "[default: X]" to the help of every option of `app` and its subcommands whose bound
/// value has a meaningful default (sentinels such as -1 or "", described in words, are left out).
void document_defaults(CLI::App& app);

/// A bash completion script for `program`: subcommands (nested), options per subcommand, file
/// names after options that take a path.
std::string bash_completion(const CLI::App& app, const std::string& program);

/// A man page (section 1) listing every subcommand and option with its description and default.
std::string man_page(const CLI::App& app, const std::string& program, const std::string& version);

/// Adds `completion` and `man` to `app`.
class HelpCommands {
 public:
  explicit HelpCommands(CLI::App& app);
  bool chosen() const;
  int dispatch();

 private:
  CLI::App& app_;
  std::string shell_ = "bash";
  CLI::App *completion_ = nullptr, *man_ = nullptr;
};

}  // namespace ts::cli
