// SPDX-License-Identifier: GPL-3.0-or-later
// Sentences one per line from a stream, a chunk at a time, and the progress line of translating
// them: what `transformer-studio-cli translate` and transformer-studio-translate share. Header-only.
#pragma once

#include <cerrno>
#include <cstring>
#include <fstream>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ts/text/files.h"

namespace ts {

/// Opens `path`, a file of sentences to translate, into `file`; throws std::invalid_argument naming it
/// when it is not a regular file (a FIFO, a directory) or cannot be read.
inline void open_sentences_file(const std::string& path, std::ifstream& file) {
  if (const auto kind = special_file_kind(path); !kind.empty())
    throw std::invalid_argument(path + ": cannot be translated: it is " + kind);
  file.open(path);
  if (!file) throw std::invalid_argument(path + ": cannot be read: " + std::strerror(errno));
}

/// Reads up to `n` lines (a Windows line end removed) into `lines`; false at the end of the input
/// with none read.
inline bool read_line_chunk(std::istream& in, std::size_t n, std::vector<std::string>& lines) {
  lines.clear();
  std::string line;
  while (lines.size() < n && std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  return !lines.empty();
}

/// "\r120 of 1000 sentences (12%), 850 sentences/s": a progress line that overwrites itself.
inline std::string sentences_progress(std::size_t done, std::size_t total, double seconds) {
  return fmt::format("\r{} of {} sentences ({:.0f}%), {:.0f} sentences/s", done, total,
                     total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0,
                     seconds > 0 ? static_cast<double>(done) / seconds : 0.0);
}

}  // namespace ts
