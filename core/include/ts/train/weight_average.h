// SPDX-License-Identifier: GPL-3.0-or-later
// Weight averaging: an exponential moving average of the parameters, kept in fp32 beside them
// (Marian's --exponential-smoothing). After update t the average moves towards the weights by
//   w(t) = max(rate, 9 / (10 + t)),   average <- average + w(t) * (weights - average),
// so it follows the weights closely early on (when they change fast) and then averages over the
// last ~t/9 updates until w reaches `rate`. Validation, best.ckpt, eval and translation use it.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

namespace ts {

class WeightAverage {
 public:
  /// Starts the average at `start`: the parameters, or a saved average of them (copied, fp32,
  /// on their devices).
  WeightAverage(double rate, const std::vector<at::Tensor>& start);

  /// The weight of update `t` (1-based): max(rate, 9 / (10 + t)).
  double weight(std::int64_t t) const;
  /// Moves the average towards `parameters` after update `t`.
  void update(const std::vector<at::Tensor>& parameters, std::int64_t t);
  /// Exchanges the contents of `parameters` and the average (call twice to restore): the model
  /// then holds the averaged weights for validation or saving.
  void swap_with(const std::vector<at::Tensor>& parameters);
  const std::vector<at::Tensor>& average() const { return average_; }

 private:
  double rate_;
  std::vector<at::Tensor> average_;
};

}  // namespace ts
