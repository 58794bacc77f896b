// SPDX-License-Identifier: GPL-3.0-or-later
// Learning-rate schedules (see ts/train/schedule.h).
#include "ts/train/schedule.h"

#include <algorithm>
#include <cmath>

namespace ts {

double learning_rate(const TrainConfig& c, std::int64_t step, std::int64_t total_steps, int d_model) {
  const double s = static_cast<double>(std::max<std::int64_t>(step, 1));
  const double warmup = std::max(c.warmup, 0);
  if (c.schedule == LrSchedule::kNoam)
    return c.lr * std::pow(d_model, -0.5) * std::min(std::pow(s, -0.5), s * std::pow(std::max(warmup, 1.0), -1.5));
  if (warmup > 0 && s < warmup) return c.lr * s / warmup;
  if (c.schedule == LrSchedule::kConstant || total_steps <= 0) return c.lr;
  const double span = std::max(1.0, static_cast<double>(total_steps) - warmup);
  const double progress = std::clamp((s - warmup) / span, 0.0, 1.0);
  if (c.schedule == LrSchedule::kLinear) return c.lr * (1.0 - progress);
  const double floor = 0.1 * c.lr;  // cosine
  return floor + (c.lr - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

double budgeted_learning_rate(const TrainConfig& c, std::int64_t step, double warmup_end, double spent, int d_model) {
  if (c.schedule == LrSchedule::kNoam || c.schedule == LrSchedule::kConstant) return learning_rate(c, step, 0, d_model);
  const double s = static_cast<double>(std::max<std::int64_t>(step, 1));
  if (c.warmup > 0 && s < c.warmup) return c.lr * s / c.warmup;
  const double start = std::clamp(warmup_end, 0.0, 0.99);
  const double progress = std::clamp((spent - start) / (1.0 - start), 0.0, 1.0);
  if (c.schedule == LrSchedule::kLinear) return c.lr * (1.0 - progress);
  return c.lr * 0.5 * (1.0 + std::cos(M_PI * progress));
}

}  // namespace ts
