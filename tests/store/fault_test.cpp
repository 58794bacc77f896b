// SPDX-License-Identifier: GPL-3.0-or-later
// Fault points: nothing without a hook (what the installed programs run), the installed hook's answer
// with one, and the TS_FAULT plan the fault tests install.
#include "ts/store/fault.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/fault_plan.h"

namespace ts {
namespace {

std::vector<std::string> g_asked;

std::string fail_checkpoint_writes(const char* name) {
  g_asked.emplace_back(name);
  return std::string(name) == "checkpoint.write" ? "fail" : "";
}

TEST(FaultPoint, DoesNothingWithoutAHookAndFollowsAnInstalledOne) {
  EXPECT_FALSE(fault_point("checkpoint.write"));  // no hook: the product's case
  EXPECT_EQ(fault_action("store.finish"), "");
  install_fault_hook(&fail_checkpoint_writes);
  EXPECT_TRUE(fault_point("checkpoint.write"));
  EXPECT_FALSE(fault_point("loss"));
  EXPECT_EQ(fault_action("checkpoint.write"), "fail");
  EXPECT_EQ(g_asked, (std::vector<std::string>{"checkpoint.write", "loss", "checkpoint.write"}));
  install_fault_hook(nullptr);
  EXPECT_FALSE(fault_point("checkpoint.write"));
  EXPECT_EQ(g_asked.size(), 3u);  // removed: not asked again
}

TEST(FaultPlan, ActsAtThePlannedCallOfThePlannedPointOnly) {
  EXPECT_EQ(test::planned_fault_action("loss:12:fail", "loss", 12), "fail");
  EXPECT_EQ(test::planned_fault_action("loss:12:fail", "loss", 11), "");
  EXPECT_EQ(test::planned_fault_action("loss:12:fail", "loss", 13), "");
  EXPECT_EQ(test::planned_fault_action("loss:12:fail", "validation", 12), "");
  EXPECT_EQ(test::planned_fault_action("store.commit:2", "store.commit", 2), "kill");  // the default action
  EXPECT_EQ(test::planned_fault_action("store.finish:1:busy", "store.finish", 1), "busy");
  EXPECT_EQ(test::planned_fault_action("store", "store.commit", 1), "");  // malformed plans do nothing
  EXPECT_EQ(test::planned_fault_action("loss:0:fail", "loss", 0), "");
  EXPECT_EQ(test::planned_fault_action("loss:x:fail", "loss", 1), "");
  EXPECT_EQ(test::planned_fault_action("", "loss", 1), "");
}

}  // namespace
}  // namespace ts
