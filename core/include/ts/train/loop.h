// SPDX-License-Identifier: GPL-3.0-or-later
// The one training loop of the translation trainer (ts/train/trainer.h) and the language-model
// trainer (ts/lm/lm_trainer.h): run_training_loop() holds while paused, asks whether a limit ends
// the run, steps, applies the non-finite-loss policy, reports, validates when due and finishes,
// turning an exception into a failed run. What differs between the two kinds of model (batches,
// accumulation, clipping, the learning rate, data-parallel reduction, validation, checkpoints,
// weight averaging) sits behind the small LoopBody interface. One copy, so that a run of either
// kind pauses, ends and reports a non-finite loss in the same words.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ts/store/run_status.h"

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
  RunStatus status = RunStatus::kFinished;
  std::string message;
};
LoopEnd stopped_by_request();
LoopEnd reached_max_steps(std::int64_t max_steps);
LoopEnd reached_max_minutes(double max_minutes);
/// A loss that is NaN or infinite at `step`: the run fails, its last good checkpoint kept.
/// `skipped_in_a_row` > 0: it came after that many skipped updates (train.on_nonfinite = "skip").
LoopEnd nonfinite_loss(double loss, std::int64_t step, int skipped_in_a_row = 0);

/// What a NaN or infinite loss does: end the run as failed before the update, or skip the update
/// (weights, moments and step count stay; the batch is used up) until kMaxNonFiniteInARow in a row.
/// Named "stop" and "skip" in the configuration (train.on_nonfinite).
enum class NonFinitePolicy { Fail, Skip };
inline constexpr int kMaxNonFiniteInARow = 20;
/// "stop" (Fail) or "skip".
const char* non_finite_policy_name(NonFinitePolicy policy);
/// The inverse of non_finite_policy_name; throws std::invalid_argument naming the accepted values.
NonFinitePolicy parse_non_finite_policy(const std::string& name);

/// One optimizer step's loss (mean per target token) and the target tokens it trained on.
struct StepLoss {
  double loss = 0;
  std::int64_t tokens = 0;
};

/// The model-specific half of a training run, driven by run_training_loop(). Each call comes on
/// the training thread, in the order the loop documents.
class LoopBody {
 public:
  virtual ~LoopBody() = default;
  /// Before the first step, inside the loop's error handling (data-parallel ranks agree here).
  virtual void begin() {}
  /// The steps done so far (for the pause and non-finite-loss messages).
  virtual std::int64_t step() const = 0;
  /// Why the run ends before the next step (stop flag, step, time, budget or epoch limit), or nothing.
  virtual std::optional<LoopEnd> limit_reached() = 0;
  /// Forward and backward for one optimizer step, accumulation and data-parallel reduction included.
  virtual StepLoss forward_backward() = 0;
  /// After a finite loss: clipping, the learning rate and the optimizer update, the step counted.
  /// False when the update was skipped (fp16 gradients overflowed).
  virtual bool update() = 0;
  /// After an update: progress to the observer; `seconds` the step took from forward_backward on.
  virtual void stepped(const StepLoss& loss, double seconds) = 0;
  /// Validation and checkpoints when they are due; an end when validation ends the run (early stop).
  virtual std::optional<LoopEnd> validate_if_due() = 0;
  /// Between steps and about every 20 ms while paused (the desktop app copies weights here).
  virtual void between_steps() {}
  /// The seconds just spent paused (a trainer that counts only training time moves its clock on).
  virtual void paused_for(double /*seconds*/) {}
  /// After the loop ends for `end`, still inside the error handling: the final validation or the
  /// last checkpoint.
  virtual void finish(const LoopEnd& /*end*/) {}
  virtual void log(const std::string& line) = 0;
};

/// The flags and the policy run_training_loop() applies.
struct LoopControls {
  const std::atomic<bool>* pause = nullptr;  // while set, the loop holds between steps
  const std::atomic<bool>* stop = nullptr;   // ends a pause at once; the body's limit_reached() ends the run
  NonFinitePolicy on_nonfinite = NonFinitePolicy::Fail;
  std::function<double()> clock;  // seconds; the steady clock when empty
};

/// Runs `body` to its end: per step, hold while paused, limit_reached(), forward_backward(), the
/// non-finite policy, update(), stepped(), validate_if_due(), between_steps(); then finish(). Never
/// throws: an exception from the body (finish() included) ends the run as "failed" with its message.
LoopEnd run_training_loop(LoopBody& body, const LoopControls& controls);

}  // namespace ts
