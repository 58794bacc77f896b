// SPDX-License-Identifier: GPL-3.0-or-later
// What the translation trainer and the language-model trainer do alike between steps: hold while
// paused, smooth the loss for display, say why a run ends. One copy, so that a run of either kind
// pauses, ends and reports a non-finite loss in the same words.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace ts {

/// The weight of the previous value in the displayed (smoothed) training loss.
inline constexpr double kLossSmoothing = 0.98;
/// The smoothed loss after `loss`; the first step of a session starts it.
double smooth_loss(double previous, double loss, bool first_step);

/// Holds the calling (training) thread while `pause` is set and `stop` is not, calling `idle` about
/// every 20 ms (where a snapshot may be taken) and logging "paused at step N" / "resumed after X s".
/// Returns the seconds spent paused on `clock` (0 when not paused). Null flags never pause.
double hold_while_paused(const std::atomic<bool>* pause, const std::atomic<bool>* stop, std::int64_t step,
                         const std::function<void()>& idle, const std::function<void(const std::string&)>& log,
                         const std::function<double()>& clock);

/// How a run ends, in the words every kind of run uses (TrainingSummary::status and ::message).
struct LoopEnd {
  std::string status, message;
};
LoopEnd stopped_by_request();
LoopEnd reached_max_steps(std::int64_t max_steps);
LoopEnd reached_max_minutes(double max_minutes);
/// A loss that is NaN or infinite at `step`: the run fails, its last good checkpoint kept.
/// `skipped_in_a_row` > 0: it came after that many skipped updates (train.on_nonfinite = "skip").
LoopEnd nonfinite_loss(double loss, std::int64_t step, int skipped_in_a_row = 0);

}  // namespace ts
