// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/host/process.h"

#include <gtest/gtest.h>

#include <fstream>

namespace ts {
namespace {

TEST(Process, ReadsTheStartTimeAfterACommandNameWithSpacesAndParentheses) {
  // Fields 3..21, then starttime (22) = 4242, then more.
  const std::string line =
      "1234 (a (weird) name) S 1 1234 1234 0 -1 4194304 100 0 0 0 5 3 0 0 20 0 2 0 4242 123456 789 "
      "18446744073709551615";
  const auto ticks = parse_proc_stat_start_ticks(line);
  ASSERT_TRUE(ticks.has_value());
  EXPECT_EQ(*ticks, 4242u);
}

TEST(Process, AMalformedLineHasNoStartTime) {
  EXPECT_FALSE(parse_proc_stat_start_ticks("").has_value());
  EXPECT_FALSE(parse_proc_stat_start_ticks("1234 no parenthesis S 1 2 3").has_value());
  EXPECT_FALSE(parse_proc_stat_start_ticks("1234 (short) S 1 2 3").has_value());
  EXPECT_FALSE(parse_proc_stat_start_ticks("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12ab 0").has_value());
}

TEST(Process, ThisProcessIsOlderThanZeroAndYoungerThanTheMachine) {
  const double age = process_age_seconds();
  EXPECT_GT(age, 0.0);
  std::ifstream uptime("/proc/uptime");
  double up = 0;
  ASSERT_TRUE(uptime >> up);
  EXPECT_LE(age, up + 0.02);
}

}  // namespace
}  // namespace ts
