// SPDX-License-Identifier: GPL-3.0-or-later
// What both trainers do alike between steps (see ts/train/loop.h).
#include "ts/train/loop.h"

#include <chrono>
#include <thread>

#include <fmt/format.h>


namespace ts {

double smooth_loss(double previous, double loss, bool first_step) {
  return first_step ? loss : kLossSmoothing * previous + (1 - kLossSmoothing) * loss;
}

double hold_while_paused(const std::atomic<bool>* pause, const std::atomic<bool>* stop, std::int64_t step,
                         const std::function<void()>& idle, const std::function<void(const std::string&)>& log,
                         const std::function<double()>& clock) {
  const auto stopped = [stop] { return stop && stop->load(); };
  if (!pause || !pause->load() || stopped()) return 0;
  log(fmt::format("paused at step {}", step));
  const double t0 = clock();
  while (pause->load() && !stopped()) {
    if (idle) idle();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double paused = clock() - t0;
  log(fmt::format("resumed after {:.1f} s", paused));
  return paused;
}

LoopEnd stopped_by_request() { return {"stopped", "stopped by request"}; }

LoopEnd reached_max_steps(std::int64_t max_steps) { return {"finished", fmt::format("reached max_steps {}", max_steps)}; }

LoopEnd reached_max_minutes(double max_minutes) {
  return {"finished", fmt::format("reached max_minutes {}", max_minutes)};
}

LoopEnd nonfinite_loss(double loss, std::int64_t step, int skipped_in_a_row) {
  return {"failed", fmt::format("non-finite loss ({}) at step {}{}: stopped; the last good checkpoint is kept (try a "
                                "lower learning rate or more warmup)",
                                loss, step, skipped_in_a_row > 0 ? fmt::format(" ({} in a row)", skipped_in_a_row) : "")};
}

}  // namespace ts
