// SPDX-License-Identifier: GPL-3.0-or-later
// How a run stands or ended: one closed set for the trainers' summaries, the training loop, the run
// history and the app. Its names ("early-stopped") are used only at the edges: the database, the
// recovery file, the CLI's and the app's text.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace ts {

enum class RunStatus {
  kRunning,       // being trained now
  kFinished,      // reached its step, epoch or time limit
  kStopped,       // stopped on request (a checkpoint was saved)
  kEarlyStopped,  // the dev metric stopped improving (train.patience)
  kFailed,        // ended with an error (the message says which)
  kInterrupted,   // its process died without closing it (killed or crashed)
  kUnknown,       // a name this version does not know (a database written by a newer one)
};

/// "running", "finished", "stopped", "early-stopped", "failed", "interrupted" ("unknown").
const char* run_status_name(RunStatus status);
/// The inverse of run_status_name; nullopt for any other text ("unknown" included).
std::optional<RunStatus> parse_run_status(const std::string& name);
/// How a run can end: finished, stopped, early-stopped or failed.
bool is_end_status(RunStatus status);
/// Prints the name (test failure messages, logs).
std::ostream& operator<<(std::ostream& out, RunStatus status);

}  // namespace ts
