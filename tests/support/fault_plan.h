// SPDX-License-Identifier: GPL-3.0-or-later
// The fault plan of the reliability tests: TS_FAULT="name:N" (or "name:N:action") makes the N-th call
// of fault point `name` in this process act: kill (the default: SIGKILL at exactly that place, as in
// a power cut), fail or busy (see ts/store/fault.h). Test programs only: the CLI built for the fault
// tests (transformer-studio-cli-faults) installs it before running the CLI.
#pragma once

#include <string>

namespace ts::test {

/// What a plan "name:N[:action]" does at the `seen`-th call of point `point`: the action ("kill",
/// "fail", "busy") at the planned call of the planned point, "" otherwise; "" for a malformed plan.
std::string planned_fault_action(const std::string& plan, const std::string& point, long long seen);

/// Installs a fault hook following TS_FAULT when it is set (counting each point's calls in this
/// process); does nothing when it is unset or empty.
void install_fault_plan_from_environment();

}  // namespace ts::test
