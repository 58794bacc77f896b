// SPDX-License-Identifier: GPL-3.0-or-later
// How a run stands or ended, and what kind of model it trains: closed sets for the trainers' summaries,
// the training loop, the run history and the app. Their names ("early-stopped", "language-model") are
// used only at the edges: the database, the recovery file, the CLI's and the app's text.
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

/// What a run trains: a translation model, or a language model (lm-train, the language-model window).
enum class RunKind {
  kTranslation,
  kLanguageModel,
  kUnknown,  // a name this version does not know (a database written by a newer one)
};
/// "translation", "language-model" ("unknown").
const char* run_kind_name(RunKind kind);
/// The inverse of run_kind_name; nullopt for any other text ("unknown" included).
std::optional<RunKind> parse_run_kind(const std::string& name);
/// Prints the name (test failure messages, logs).
std::ostream& operator<<(std::ostream& out, RunKind kind);

}  // namespace ts
