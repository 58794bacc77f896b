// SPDX-License-Identifier: GPL-3.0-or-later
// Picking the probe sentence (see ts/text/probe_sentence.h).
#include "ts/text/probe_sentence.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>

#include "ts/text/utf8.h"

namespace ts {
namespace {

// Letters and digits: ASCII alphanumerics and every non-ASCII code point that is not CJK,
// whitespace or general punctuation (Arabic, Cyrillic, accented Latin...).
bool is_word_character(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  if (c >= 0x2000 && c <= 0x206F) return false;  // general punctuation
  return !is_space(c);
}

// `text` with leading and trailing whitespace removed and inner runs collapsed to one space.
std::string collapse_spaces(std::string_view text) {
  std::string out;
  bool pending_space = false;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto start = pos;
    const char32_t c = next_code_point(text, pos);
    if (is_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out.append(text.substr(start, pos - start));
  }
  return out;
}

}  // namespace

double probe_word_length(std::string_view text) {
  double words = 0;
  int cjk = 0;
  bool other = false, in_chunk = false;
  const auto end_chunk = [&] {
    if (in_chunk) words += cjk > 0 ? cjk * 2.0 / 3.0 + (other ? 1 : 0) : 1;
    cjk = 0;
    other = in_chunk = false;
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    const char32_t c = next_code_point(text, pos);
    if (is_space(c)) {
      end_chunk();
      continue;
    }
    in_chunk = true;
    if (is_cjk(c))
      ++cjk;
    else if (is_word_character(c))
      other = true;
  }
  end_chunk();
  return words;
}

std::string pick_probe_sentence(const std::vector<SentencePair>& pool) {
  std::tuple<double, double, std::size_t> best{std::numeric_limits<double>::max(), 0, 0};
  std::string chosen;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    auto text = collapse_spaces(pool[i].src);
    if (text.empty()) continue;
    const double w = probe_word_length(text);
    const double outside = w < 6 ? 6 - w : (w > 12 ? w - 12 : 0);
    const std::tuple<double, double, std::size_t> key{outside, std::abs(w - 9), i};
    if (key < best) {
      best = key;
      chosen = std::move(text);
    }
  }
  return chosen;
}

}  // namespace ts
