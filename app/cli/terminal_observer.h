// SPDX-License-Identifier: GPL-3.0-or-later
// Renders training events in a terminal: a live progress bar on a TTY (redrawn at most ~10
// times a second), a line every few seconds otherwise (logs, CI), and validation blocks.
#pragma once

#include <chrono>
#include <cstdio>

#include "ts/train/session.h"

namespace ts::cli {

class TerminalObserver : public SessionObserver {
 public:
  explicit TerminalObserver(std::FILE* out = stderr);
  void on_start(const TrainingStart& start) override;
  void on_step(const TrainingProgress& p) override;
  void on_validation(const ValidationResult& v) override;
  void on_checkpoint(const CheckpointEvent& c) override;
  void on_log(const std::string& line) override;
  void on_finished(const TrainingSummary& s) override;

 private:
  void clear_line();
  std::FILE* out_;
  bool tty_;
  bool bar_shown_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

/// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace ts::cli
