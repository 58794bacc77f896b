// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/text/utf8.h"

#include <gtest/gtest.h>

namespace ts {
namespace {

TEST(Utf8, ValidatesWellFormedText) {
  EXPECT_TRUE(is_valid_utf8("Grüß Gott! 你好。"));
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_FALSE(is_valid_utf8("\xC3"));              // truncated
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("ab\xFF"));
}

TEST(Utf8, SplitsCodePointsAndRoundTrips) {
  const std::string s = "Aß你😀";
  const auto parts = split_code_points(s);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[1], "ß");
  EXPECT_EQ(parts[2], "你");
  EXPECT_EQ(parts[3], "😀");
  EXPECT_EQ(code_point_count(s), 4u);
  EXPECT_EQ(to_utf8(to_u32(s)), s);
}

TEST(Utf8, InvalidBytesBecomeReplacementCharacters) {
  const auto parts = split_code_points("a\xFFz");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1], "\xEF\xBF\xBD");
}

TEST(Utf8, ClassifiesCjkAndSpaces) {
  EXPECT_TRUE(is_cjk(U'你'));
  EXPECT_TRUE(is_cjk(U'。'));
  EXPECT_FALSE(is_cjk(U'a'));
  EXPECT_TRUE(is_space(U'\u3000'));
  EXPECT_TRUE(is_space(U'\t'));
  EXPECT_FALSE(is_space(U'x'));
}

}  // namespace
}  // namespace ts
