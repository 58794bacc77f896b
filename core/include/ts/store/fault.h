// SPDX-License-Identifier: GPL-3.0-or-later
// Fault injection for the reliability tests (docs/reliability.md, tests/cli/fault_test.sh).
//
// Named points in the code call fault_point("name"). When the environment variable TS_FAULT is
// "name:N" (or "name:N:action"), the N-th call of that point in this process acts:
//   kill    (default) raise SIGKILL: the process dies at exactly that place, as in a power cut;
//   fail    fault_point returns true: the caller behaves as if the operation failed (a checkpoint
//           write fails with ENOSPC, "no space left on device"; a loss becomes NaN);
//   busy    (store.finish only) fault_action returns "busy": see below.
// Points: "checkpoint.write" (each block written to a checkpoint file), "store.commit" (a run-history
// transaction, after its statements and before COMMIT), "validation" (each dev batch evaluated),
// "loss" (each training step's loss), "store.finish" (the run recorder about to store the end of a
// run: another connection takes the database's write lock; with "busy" it lets go once the recorder
// has said it waits, with "fail" only after the recorder has given up and written its recovery
// file). Without TS_FAULT a point costs one relaxed atomic load.
#pragma once

#include <string>

namespace ts {

/// True when the point is hit with a non-kill action.
bool fault_point(const char* name);
/// The action when the point is hit ("fail", "busy"; a kill never returns), otherwise "".
std::string fault_action(const char* name);

}  // namespace ts
