// SPDX-License-Identifier: GPL-3.0-or-later
// What this build runs with, for `--version` and the desktop app's About dialog: the program's
// version and git commit, LibTorch's version, the devices (the CPU with its bf16 support, each CUDA
// GPU) and the default thread count.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ts {

/// The project version and the git commit it was configured from ("unknown" outside a checkout).
std::string version_string();
/// Rows of (what, value): "LibTorch", "CPU", "CUDA", "threads".
std::vector<std::pair<std::string, std::string>> environment_report();
/// "transformer-studio-cli 0.1.0 (commit 2ac6dc3a1b2c)" and the report, one "what: value" per line.
std::string version_text(const std::string& program);

}  // namespace ts
