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

}  // namespace ts
