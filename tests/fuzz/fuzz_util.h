// SPDX-License-Identifier: GPL-3.0-or-later
// Shared helpers for the libFuzzer targets in tests/fuzz (see tests/fuzz/CMakeLists.txt).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace ts::fuzz {

/// A broken invariant is a crash for libFuzzer: print what failed and abort, so the input is saved.
#define TS_FUZZ_CHECK(condition, what)                                                      \
  do {                                                                                      \
    if (!(condition)) ::ts::fuzz::invariant_failed(#condition, (what), __FILE__, __LINE__); \
  } while (0)

[[noreturn]] inline void invariant_failed(const char* condition, const std::string& what, const char* file, int line) {
  std::fprintf(stderr, "\n%s:%d: invariant broken: %s\n  %s\n", file, line, condition, what.c_str());
  std::abort();
}

/// Printable form of bytes for messages (non-ASCII and control bytes as \xNN).
inline std::string escaped(std::string_view s, std::size_t limit = 200) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02X", c);
      out += buffer;
    }
  }
  if (s.size() > limit) out += "...";
  return out;
}

/// Splits the input into a selector byte (options) and the rest.
struct Input {
  std::uint8_t selector = 0;
  std::string_view rest;
  Input(const std::uint8_t* data, std::size_t size) {
    if (size > 0) {
      selector = data[0];
      rest = std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1);
    }
  }
};

}  // namespace ts::fuzz
