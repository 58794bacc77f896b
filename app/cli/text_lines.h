// SPDX-License-Identifier: GPL-3.0-or-later
// Hypothesis, reference and source files of `score` and `compare`: one sentence per line.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts::cli {

/// The lines of `path`, a Windows line end (CR) removed; throws std::runtime_error naming the file.
inline std::vector<std::string> read_text_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

}  // namespace ts::cli
