// SPDX-License-Identifier: GPL-3.0-or-later
// Numbers as the logs, reports and recipe reasons write them.
#include "ts/text/numbers.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>

namespace ts {
namespace {

TEST(Thousands, GroupsDigitsInThreesForEveryNumberType) {
  EXPECT_EQ(thousands(0), "0");
  EXPECT_EQ(thousands(999), "999");
  EXPECT_EQ(thousands(1000), "1,000");
  EXPECT_EQ(thousands(std::size_t{169813}), "169,813");
  EXPECT_EQ(thousands(std::int64_t{-1234567}), "-1,234,567");
  EXPECT_EQ(thousands(3895.4), "3,895");  // rounded, not cut
  EXPECT_EQ(thousands(3895.5), "3,896");
  EXPECT_EQ(thousands(-999.6), "-1,000");
  EXPECT_EQ(thousands(std::numeric_limits<long long>::min()), "-9,223,372,036,854,775,808");
}

}  // namespace
}  // namespace ts
