// SPDX-License-Identifier: GPL-3.0-or-later
// The desktop OpenMP setting: set once, never over a person's own.
#include "ts/host/openmp_policy.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace {

// Clears the three variables for a test and puts back what the environment had.
class OpenMpPolicy : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "TS_OPENMP_POLICY_SET"}) {
      const char* value = std::getenv(name);
      saved_[name] = value ? std::optional<std::string>(value) : std::nullopt;
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  }
  static std::string value_of(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "(unset)";
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
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
