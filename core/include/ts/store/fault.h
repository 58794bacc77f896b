// SPDX-License-Identifier: GPL-3.0-or-later
// Fault points for the reliability tests (docs/reliability.md, tests/cli/fault_test.sh): a seam the
// product never uses. Named places in the code call fault_point("name"); with no hook installed (the
// installed programs never install one) a point is one relaxed atomic load and does nothing. A test
// build installs a hook that decides what the N-th call of a point does: the CLI built for the fault
// tests (transformer-studio-cli-faults, tests/support/fault_plan.h) reads its plan from TS_FAULT.
//
// Actions a hook returns: "" (nothing), "fail" (fault_point returns true: the caller behaves as if the
// operation failed: a checkpoint write fails with ENOSPC, a loss becomes NaN), "busy" (store.finish
// only: see below); a hook that kills the process (SIGKILL, as in a power cut) never returns.
// Points: "checkpoint.write" (each block written to a checkpoint file), "store.commit" (a run-history
// transaction, after its statements and before COMMIT), "validation" (each dev batch evaluated),
// "loss" (each training step's loss), "store.finish" (the run recorder about to store the end of a
// run: another connection takes the database's write lock; with "busy" it lets go once the recorder
// has said it waits, with "fail" only after the recorder has given up and written its recovery file).
#pragma once

#include <string>

namespace ts {

/// Decides what a fault point does when it is reached: "", "fail" or "busy"; it may also end the
/// process. Called from any thread; it must be thread-safe.
using FaultHook = std::string (*)(const char* name);
/// Installs `hook` for the whole process (nullptr removes it). Only test programs call this.
void install_fault_hook(FaultHook hook);

/// True when the installed hook answers a non-empty action for this point.
bool fault_point(const char* name);
/// The installed hook's action for this point ("fail", "busy"), or "" (no hook, or nothing to do).
std::string fault_action(const char* name);

}  // namespace ts
