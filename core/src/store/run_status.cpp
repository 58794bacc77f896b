// SPDX-License-Identifier: GPL-3.0-or-later
// Names of the run statuses and kinds (see ts/store/run_status.h).
#include "ts/store/run_status.h"

#include <ostream>

namespace ts {

const char* run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::kRunning:
      return "running";
    case RunStatus::kFinished:
      return "finished";
    case RunStatus::kStopped:
      return "stopped";
    case RunStatus::kEarlyStopped:
      return "early-stopped";
    case RunStatus::kFailed:
      return "failed";
    case RunStatus::kInterrupted:
      return "interrupted";
    case RunStatus::kUnknown:
      break;
  }
  return "unknown";
}

std::optional<RunStatus> parse_run_status(const std::string& name) {
  for (auto status : {RunStatus::kRunning, RunStatus::kFinished, RunStatus::kStopped, RunStatus::kEarlyStopped,
                      RunStatus::kFailed, RunStatus::kInterrupted})
    if (name == run_status_name(status)) return status;
  return std::nullopt;
}

bool is_end_status(RunStatus status) {
  return status == RunStatus::kFinished || status == RunStatus::kStopped || status == RunStatus::kEarlyStopped ||
         status == RunStatus::kFailed;
}

std::ostream& operator<<(std::ostream& out, RunStatus status) { return out << run_status_name(status); }

const char* run_kind_name(RunKind kind) {
  switch (kind) {
    case RunKind::kTranslation:
      return "translation";
    case RunKind::kLanguageModel:
      return "language-model";
    case RunKind::kUnknown:
      break;
  }
  return "unknown";
}

std::optional<RunKind> parse_run_kind(const std::string& name) {
  for (auto kind : {RunKind::kTranslation, RunKind::kLanguageModel})
    if (name == run_kind_name(kind)) return kind;
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& out, RunKind kind) { return out << run_kind_name(kind); }

}  // namespace ts
