// SPDX-License-Identifier: GPL-3.0-or-later
// Learning-rate schedules: Noam (warmup then inverse square root), constant, linear and cosine.
#pragma once

#include <cstdint>

#include "ts/train/config.h"

namespace ts {

/// Learning rate for optimizer step `step` (1-based). `total_steps` (0 = unknown) drives the
/// linear and cosine decays; with it unknown they hold the peak after warmup.
/// noam:     lr * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
/// constant: linear warmup to lr (if warmup > 0), then lr
/// linear:   warmup, then linear decay to 0 at total_steps
/// cosine:   warmup, then cosine decay to 10% of lr at total_steps
double learning_rate(const TrainConfig& config, std::int64_t step, std::int64_t total_steps, int d_model);

/// With a time budget (train.budget_minutes): `step` counts from the start of the budget's
/// schedule (1-based); `warmup_end` is the fraction of the budget spent when the warmup ended
/// (read it at step == warmup), `spent` the fraction spent now (0..1).
/// linear:   warmup over train.warmup steps, then lr * (1 - progress), zero at the deadline
/// cosine:   warmup, then lr * (1 + cos(pi * progress)) / 2, zero at the deadline
/// where progress = (spent - warmup_end) / (1 - warmup_end). Noam and constant ignore the budget.
double budgeted_learning_rate(const TrainConfig& config, std::int64_t step, double warmup_end, double spent,
                              int d_model);

}  // namespace ts
