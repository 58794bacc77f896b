// SPDX-License-Identifier: GPL-3.0-or-later
// Transformer Studio's licence and the main third-party components linked into it, with theirs: the
// one list behind the CLI's `--version` and the desktop app's About dialog. Header-only and free of
// Qt and LibTorch, so both programs use it without a build change. README.md ("Licence") and
// packaging/copyright (the .deb's /usr/share/doc/transformer-studio/copyright) name the same
// components by hand; tests/cli/package_test.sh checks the copyright file names each one the CLI lists.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ts {

/// SPDX identifier of the project's own licence (the text is COPYING at the top of the source tree).
/// GPL because the desktop app links QCustomPlot (GPL-3.0-or-later).
inline constexpr std::string_view kProjectLicence = "GPL-3.0-or-later";

/// The program a list is for: the components differ (Qt and QCustomPlot are the desktop app's only).
enum class Program { cli, desktop };

struct ThirdPartyComponent {
  std::string_view name;
  std::string_view licence;  ///< SPDX licence expression, or "public domain"
  bool in_cli;               ///< linked into transformer-studio-cli
  bool in_desktop;           ///< linked into transformer-studio (the desktop app)
};

/// Build- and run-time components only: GoogleTest (BSD-3-Clause) is used by the tests, never shipped.
inline constexpr ThirdPartyComponent kThirdPartyComponents[] = {
    {"Qt 6", "LGPL-3.0-only OR GPL-2.0-only OR GPL-3.0-only", false, true},
    {"QCustomPlot", "GPL-3.0-or-later", false, true},
    {"LibTorch", "BSD-3-Clause", true, true},
    {"SentencePiece", "Apache-2.0", true, true},
    {"SQLite", "public domain", true, true},
    {"SQLiteCpp", "MIT", true, true},
    {"CLI11", "BSD-3-Clause", true, false},
    {"nlohmann-json", "MIT", true, true},
    {"fmt", "MIT", true, true},
    {"ICU", "Unicode-DFS-2016", true, true},
    {"OpenCC", "Apache-2.0", true, true},
    {"OpenSSL 3", "Apache-2.0", true, true},
    {"ONNX", "Apache-2.0", true, true},  // export --format onnx (ts/onnx), when built with libonnx-dev
    {"Protocol Buffers", "BSD-3-Clause", true, true},
};

/// The components linked into `program`, in the order above.
inline std::vector<ThirdPartyComponent> third_party_components(Program program) {
  std::vector<ThirdPartyComponent> out;
  for (const auto& c : kThirdPartyComponents)
    if (program == Program::cli ? c.in_cli : c.in_desktop) out.push_back(c);
  return out;
}

/// Plain text for `--version`, each line ending in '\n':
///   Licence: GPL-3.0-or-later <https://www.gnu.org/licenses/gpl-3.0.html>
///   This is free software: you are free to change and redistribute it.
///   There is NO WARRANTY, to the extent permitted by law.
///   Third-party components:
///     LibTorch: BSD-3-Clause
///     ...
inline std::string licence_text(Program program) {
  std::string text = "Licence: ";
  text += kProjectLicence;
  text +=
      " <https://www.gnu.org/licenses/gpl-3.0.html>\n"
      "This is free software: you are free to change and redistribute it.\n"
      "There is NO WARRANTY, to the extent permitted by law.\n"
      "Third-party components:\n";
  for (const auto& c : third_party_components(program)) {
    text += "  ";
    text += c.name;
    text += ": ";
    text += c.licence;
    text += '\n';
  }
  return text;
}

}  // namespace ts
