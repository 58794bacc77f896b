// SPDX-License-Identifier: GPL-3.0-or-later
// One bf16 value in the low 16 bits of a word and back, as the CPU's vcvtneps2bf16 rounds: to nearest
// even, a NaN stays a (quiet) NaN. The packed weights for translating (packed_linear.cpp) and the bf16
// products for training (ts/model/bf16_products.h) use them for what their vector passes leave.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ts {

inline float bf16_to_float(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (std::isnan(f)) return static_cast<std::uint16_t>((bits >> 16) | 0x40);  // stays a (quiet) NaN
  bits += 0x7FFF + ((bits >> 16) & 1);                                        // round to nearest even
  return static_cast<std::uint16_t>(bits >> 16);
}

}  // namespace ts
