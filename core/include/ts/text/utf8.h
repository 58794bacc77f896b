// SPDX-License-Identifier: GPL-3.0-or-later
// UTF-8 helpers: validation, code point iteration and classification.
// Small and dependency-free so every text module (corpus, tokenizers, metrics) shares one definition.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

/// True when `s` is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view s);

/// Decodes the code point starting at `pos` and advances `pos` past it.
/// Invalid bytes decode as U+FFFD and advance by one byte, so a loop always terminates.
char32_t next_code_point(std::string_view s, std::size_t& pos);

/// Appends the UTF-8 encoding of `cp` to `out`.
void append_utf8(std::string& out, char32_t cp);

/// The whole string as code points (invalid bytes become U+FFFD).
std::u32string to_u32(std::string_view s);
/// Code points back to UTF-8.
std::string to_utf8(std::u32string_view s);

/// One UTF-8 string per code point, in order.
std::vector<std::string> split_code_points(std::string_view s);

/// Number of code points in `s`.
std::size_t code_point_count(std::string_view s);

/// True for CJK ideographs, CJK punctuation, kana and full-width forms
/// (the ranges sacreBLEU's `zh` tokenizer separates character by character).
bool is_cjk(char32_t cp);

/// Unicode whitespace (ASCII whitespace, NBSP, U+2000..U+200A, U+3000, ...).
bool is_space(char32_t cp);

}  // namespace ts
