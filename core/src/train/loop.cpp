// SPDX-License-Identifier: GPL-3.0-or-later
// What both trainers do alike between steps (see ts/train/loop.h).
#include "ts/train/loop.h"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "ts/model/errors.h"

namespace ts {

const char* non_finite_policy_name(NonFinitePolicy policy) { return policy == NonFinitePolicy::Skip ? "skip" : "stop"; }

NonFinitePolicy parse_non_finite_policy(const std::string& name) {
  for (auto policy : {NonFinitePolicy::Fail, NonFinitePolicy::Skip})
    if (name == non_finite_policy_name(policy)) return policy;
  throw std::invalid_argument("unknown policy for a non-finite loss \"" + name + "\" (expected stop or skip)");
}

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

LoopEnd stopped_by_request() { return {RunStatus::kStopped, "stopped by request"}; }

LoopEnd reached_max_steps(std::int64_t max_steps) {
  return {RunStatus::kFinished, fmt::format("reached max_steps {}", max_steps)};
}

LoopEnd reached_max_minutes(double max_minutes) {
  return {RunStatus::kFinished, fmt::format("reached max_minutes {}", max_minutes)};
}

LoopEnd nonfinite_loss(double loss, std::int64_t step, int skipped_in_a_row) {
  return {RunStatus::kFailed,
          fmt::format("non-finite loss ({}) at step {}{}: stopped; the last good checkpoint is kept (try a "
                      "lower learning rate or more warmup)",
                      loss, step, skipped_in_a_row > 0 ? fmt::format(" ({} in a row)", skipped_in_a_row) : "")};
}

LoopEnd run_training_loop(LoopBody& body, const LoopControls& controls) {
  std::function<double()> clock = controls.clock;
  if (!clock)
    clock = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  const auto log = [&body](const std::string& line) { body.log(line); };
  LoopEnd end;
  try {
    body.begin();
    int nonfinite_in_a_row = 0;
    while (true) {
      body.paused_for(hold_while_paused(
          controls.pause, controls.stop, body.step(), [&body] { body.between_steps(); }, log, clock));
      if (auto limit = body.limit_reached()) {
        end = *limit;
        break;
      }
      const double started = clock();
      const StepLoss loss = body.forward_backward();
      if (!std::isfinite(loss.loss)) {
        const bool skip = controls.on_nonfinite == NonFinitePolicy::Skip;
        if (skip && ++nonfinite_in_a_row < kMaxNonFiniteInARow) {
          body.log(fmt::format("non-finite loss ({}) at step {}: update skipped ({} in a row)", loss.loss,
                               body.step() + 1, nonfinite_in_a_row));
          continue;
        }
        end = nonfinite_loss(loss.loss, body.step() + 1, skip ? nonfinite_in_a_row : 0);
        break;
      }
      nonfinite_in_a_row = 0;
      if (!body.update()) continue;
      body.stepped(loss, clock() - started);
      if (auto early = body.validate_if_due()) {
        end = *early;
        break;
      }
      body.between_steps();
    }
    body.finish(end);
  } catch (const std::exception& e) {
    end = {RunStatus::kFailed, error_message(e)};
  }
  return end;
}

}  // namespace ts
