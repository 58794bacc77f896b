// SPDX-License-Identifier: GPL-3.0-or-later
// UTF-8 helpers (see ts/text/utf8.h).
#include "ts/text/utf8.h"

namespace ts {

namespace {
constexpr char32_t kReplacement = 0xFFFD;

// Length of the sequence introduced by lead byte `b`, or 0 when `b` cannot start one.
int sequence_length(unsigned char b) {
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return 2;
  if (b >= 0xE0 && b <= 0xEF) return 3;
  if (b >= 0xF0 && b <= 0xF4) return 4;
  return 0;
}

// Decodes one sequence at `pos`; returns its length or 0 when it is malformed.
int decode_at(std::string_view s, std::size_t pos, char32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[pos]);
  const int len = sequence_length(b0);
  if (len == 0 || pos + static_cast<std::size_t>(len) > s.size()) return 0;
  if (len == 1) {
    cp = b0;
    return 1;
  }
  char32_t value = b0 & (0x7F >> len);
  for (int i = 1; i < len; ++i) {
    const auto b = static_cast<unsigned char>(s[pos + i]);
    if ((b & 0xC0) != 0x80) return 0;
    value = (value << 6) | (b & 0x3F);
  }
  // Reject overlong forms, surrogates and values past U+10FFFF.
  if ((len == 3 && value < 0x800) || (len == 4 && (value < 0x10000 || value > 0x10FFFF)) ||
      (value >= 0xD800 && value <= 0xDFFF)) {
    return 0;
  }
  cp = value;
  return len;
}
}  // namespace

bool is_valid_utf8(std::string_view s) {
  std::size_t pos = 0;
  while (pos < s.size()) {
    char32_t cp = 0;
    const int len = decode_at(s, pos, cp);
    if (len == 0) return false;
    pos += static_cast<std::size_t>(len);
  }
  return true;
}

char32_t next_code_point(std::string_view s, std::size_t& pos) {
  char32_t cp = 0;
  const int len = decode_at(s, pos, cp);
  if (len == 0) {
    ++pos;
    return kReplacement;
  }
  pos += static_cast<std::size_t>(len);
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = kReplacement;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::u32string to_u32(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  std::size_t pos = 0;
  while (pos < s.size()) out += next_code_point(s, pos);
  return out;
}

std::string to_utf8(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t cp : s) append_utf8(out, cp);
  return out;
}

std::vector<std::string> split_code_points(std::string_view s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < s.size()) {
    const std::size_t start = pos;
    const char32_t cp = next_code_point(s, pos);
    if (cp == kReplacement && pos - start == 1 && static_cast<unsigned char>(s[start]) >= 0x80) {
      out.emplace_back("\xEF\xBF\xBD");  // an invalid byte stands as U+FFFD
    } else {
      out.emplace_back(s.substr(start, pos - start));
    }
  }
  return out;
}

std::size_t code_point_count(std::string_view s) {
  std::size_t n = 0;
  std::size_t pos = 0;
  while (pos < s.size()) {
    next_code_point(s, pos);
    ++n;
  }
  return n;
}

bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F) || (c >= 0x3000 && c <= 0x303F) ||
         (c >= 0xFF00 && c <= 0xFFEF) || (c >= 0x3040 && c <= 0x30FF);
}

bool is_space(char32_t c) {
  return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

}  // namespace ts
