// SPDX-License-Identifier: GPL-3.0-or-later
// The desktop OpenMP setting: set once, never over a person's own.
#include "ts/host/openmp_policy.h"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace {

// Clears the three variables for a test and puts back what the environment had.
class OpenMpPolicy : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kNames) {
      if (const char* value = std::getenv(name)) saved_[index(name)] = value, had_[index(name)] = true;
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (const char* name : kNames) {
      if (had_[index(name)])
        ::setenv(name, saved_[index(name)].c_str(), 1);
      else
        ::unsetenv(name);
    }
  }
  static std::string value_of(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "(unset)";
  }

 private:
  static constexpr const char* kNames[] = {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "TS_OPENMP_POLICY_SET"};
  static int index(const char* name) {
    for (int i = 0; i < 3; ++i)
      if (std::string(kNames[i]) == name) return i;
    return 0;
  }
  std::string saved_[3];
  bool had_[3] = {false, false, false};
};

TEST_F(OpenMpPolicy, SetsABoundedSpinOnceAndSaysSo) {
  EXPECT_TRUE(ts::set_desktop_openmp_policy());
  EXPECT_EQ(value_of("GOMP_SPINCOUNT"), ts::kDesktopSpinCount);
  EXPECT_EQ(value_of("TS_OPENMP_POLICY_SET"), "1");
  // The app started by the front (or the app after its own restart) finds it set and starts no more.
  EXPECT_FALSE(ts::set_desktop_openmp_policy());
  EXPECT_EQ(value_of("GOMP_SPINCOUNT"), ts::kDesktopSpinCount);
}

TEST_F(OpenMpPolicy, APersonsOwnSettingIsKept) {
  ::setenv("OMP_WAIT_POLICY", "active", 1);
  EXPECT_FALSE(ts::set_desktop_openmp_policy());
  EXPECT_EQ(value_of("GOMP_SPINCOUNT"), "(unset)");
  EXPECT_EQ(value_of("OMP_WAIT_POLICY"), "active");
  ::unsetenv("OMP_WAIT_POLICY");
  ::setenv("GOMP_SPINCOUNT", "infinite", 1);
  EXPECT_FALSE(ts::set_desktop_openmp_policy());
  EXPECT_EQ(value_of("GOMP_SPINCOUNT"), "infinite");
  EXPECT_EQ(value_of("TS_OPENMP_POLICY_SET"), "(unset)");
}

}  // namespace
