// Fault injection for the reliability tests (docs/reliability.md, tests/cli/fault_test.sh).
//
// Named points in the code call fault_point("name"). When the environment variable TS_FAULT is
// "name:N" (or "name:N:action"), the N-th call of that point in this process acts:
//   kill    (default) raise SIGKILL: the process dies at exactly that place, as in a power cut;
//   fail    fault_point returns true: the caller behaves as if the operation failed (a checkpoint
//           write fails with ENOSPC, "no space left on device"; a loss becomes NaN).
// Points: "checkpoint.write" (each block written to a checkpoint file), "store.commit" (a run-history
// transaction, after its statements and before COMMIT), "validation" (each dev batch evaluated),
// "loss" (each training step's loss). Without TS_FAULT a point costs one relaxed atomic load.
#pragma once

namespace ts {

bool fault_point(const char* name);

}  // namespace ts
