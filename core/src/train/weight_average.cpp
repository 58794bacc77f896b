// SPDX-License-Identifier: GPL-3.0-or-later
// Weight averaging (see ts/train/weight_average.h).
#include "ts/train/weight_average.h"

#include <algorithm>
#include <stdexcept>

namespace ts {

WeightAverage::WeightAverage(double rate, const std::vector<at::Tensor>& start) : rate_(rate) {
  at::NoGradGuard no_grad;
  for (const auto& p : start) average_.push_back(p.detach().to(at::kFloat).clone());
}

double WeightAverage::weight(std::int64_t t) const {
  return std::max(rate_, 9.0 / (10.0 + static_cast<double>(std::max<std::int64_t>(t, 0))));
}

void WeightAverage::update(const std::vector<at::Tensor>& parameters, std::int64_t t) {
  if (parameters.size() != average_.size()) throw std::logic_error("weight average: parameter count changed");
  at::NoGradGuard no_grad;
  const double w = weight(t);
  for (std::size_t i = 0; i < average_.size(); ++i) {
    const auto p = parameters[i].detach();
    average_[i].lerp_(p.scalar_type() == at::kFloat ? p : p.to(at::kFloat), w);
  }
}

void WeightAverage::swap_with(const std::vector<at::Tensor>& parameters) {
  if (parameters.size() != average_.size()) throw std::logic_error("weight average: parameter count changed");
  at::NoGradGuard no_grad;
  for (std::size_t i = 0; i < average_.size(); ++i) {
    auto p = parameters[i].detach();
    const auto held = p.clone();
    p.copy_(average_[i]);
    average_[i].copy_(held);
  }
}

}  // namespace ts
