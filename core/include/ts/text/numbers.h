// SPDX-License-Identifier: GPL-3.0-or-later
// Numbers as the logs, reports and recipe reasons write them. Header only: the run history (ts_store)
// uses it without linking the text library.
#pragma once

#include <cmath>
#include <string>
#include <type_traits>

namespace ts {

/// 1234567 -> "1,234,567", -1234 -> "-1,234"; a floating-point value is rounded to the nearest whole.
template <class Number>
std::string thousands(Number number) {
  static_assert(std::is_arithmetic_v<Number>, "thousands() writes numbers");
  long long n;
  if constexpr (std::is_floating_point_v<Number>)
    n = std::llround(number);
  else
    n = static_cast<long long>(number);
  // The digits of |n| without overflow for the most negative value.
  std::string digits = n < 0 ? std::to_string(0ULL - static_cast<unsigned long long>(n))
                             : std::to_string(static_cast<unsigned long long>(n));
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace ts
