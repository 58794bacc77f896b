// SPDX-License-Identifier: GPL-3.0-or-later
// Base64 encoding and decoding (see ts/text/base64.h).
#include "ts/text/base64.h"

#include <array>
#include <stdexcept>

namespace ts {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Reverse lookup: 0..63 for alphabet characters, -1 otherwise.
constexpr std::array<signed char, 256> make_decode_table() {
  std::array<signed char, 256> table{};
  for (auto& v : table) v = -1;
  for (int i = 0; i < 64; ++i) table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<signed char>(i);
  return table;
}
constexpr auto kDecode = make_decode_table();
}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const auto b0 = static_cast<unsigned char>(bytes[i]);
    const auto b1 = static_cast<unsigned char>(bytes[i + 1]);
    const auto b2 = static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[b0 >> 2];
    out += kAlphabet[((b0 & 0x03) << 4) | (b1 >> 4)];
    out += kAlphabet[((b1 & 0x0F) << 2) | (b2 >> 6)];
    out += kAlphabet[b2 & 0x3F];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    const auto b0 = static_cast<unsigned char>(bytes[i]);
    const auto b1 = rest > 1 ? static_cast<unsigned char>(bytes[i + 1]) : 0u;
    out += kAlphabet[b0 >> 2];
    out += kAlphabet[((b0 & 0x03) << 4) | (b1 >> 4)];
    out += rest > 1 ? kAlphabet[(b1 & 0x0F) << 2] : '=';
    out += '=';
  }
  return out;
}

std::string base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) throw std::invalid_argument("base64: length is not a multiple of 4");
  std::size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  unsigned int buffer = 0;
  int bits = 0;
  for (std::size_t i = 0; i < text.size() - padding; ++i) {
    const int v = kDecode[static_cast<unsigned char>(text[i])];
    if (v < 0) throw std::invalid_argument("base64: invalid character at offset " + std::to_string(i));
    buffer = (buffer << 6) | static_cast<unsigned int>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  // Leftover bits must be zero, as the encoder writes them.
  if ((buffer & ((1u << bits) - 1)) != 0) throw std::invalid_argument("base64: non-canonical padding");
  return out;
}

}  // namespace ts
