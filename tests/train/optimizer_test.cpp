// SPDX-License-Identifier: GPL-3.0-or-later
// The fused Adam/AdamW step against LibTorch's own.
#include "ts/train/optimizer.h"

#include <gtest/gtest.h>

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

namespace ts {
namespace {

std::vector<at::Tensor> make_params(std::uint64_t seed) {
  at::manual_seed(seed);
  // Sizes on both sides of the parallel grain, and an odd one.
  return {at::randn({300, 257}).requires_grad_(true), at::randn({17}).requires_grad_(true),
          at::randn({40000}).requires_grad_(true)};
}

void set_grads(std::vector<at::Tensor>& params, int step) {
  at::manual_seed(1000 + step);
  for (auto& p : params) p.mutable_grad() = at::randn_like(p) * (step % 2 ? 1.0 : 1e-3);
}

template <class Opt, class Options>
void expect_same_trajectory(const Options& options, const char* name) {
  auto ours = make_params(5), theirs = make_params(5);
  Opt fused(ours, options), reference(theirs, options);
  for (int step = 1; step <= 6; ++step) {
    set_grads(ours, step);
    set_grads(theirs, step);
    if (step == 4) {  // a learning-rate change between steps, as the schedule does
      for (auto* opt :
           {static_cast<torch::optim::Optimizer*>(&fused), static_cast<torch::optim::Optimizer*>(&reference)})
        for (auto& g : opt->param_groups()) g.options().set_lr(options.get_lr() * 0.5);
    }
    ASSERT_TRUE(fused_adam_step(fused)) << name;
    reference.step();
    for (std::size_t i = 0; i < ours.size(); ++i)
      ASSERT_TRUE(at::allclose(ours[i], theirs[i], 1e-5, 1e-6))
          << name << " step " << step << " param " << i << " max diff "
          << (ours[i] - theirs[i]).abs().max().item<double>();
  }
  // The state lives in the optimizer's own objects: LibTorch's step continues from it.
  set_grads(ours, 7);
  set_grads(theirs, 7);
  fused.step();
  reference.step();
  for (std::size_t i = 0; i < ours.size(); ++i) EXPECT_TRUE(at::allclose(ours[i], theirs[i], 1e-5, 1e-6)) << name;
}

TEST(FusedAdam, FollowsLibTorchsAdamStepForStep) {
  expect_same_trajectory<torch::optim::Adam>(torch::optim::AdamOptions(1e-2).betas({0.9, 0.98}).eps(1e-9), "adam");
  expect_same_trajectory<torch::optim::Adam>(
      torch::optim::AdamOptions(1e-2).betas({0.9, 0.999}).eps(1e-8).weight_decay(0.1), "adam with L2");
}

TEST(FusedAdam, FollowsLibTorchsAdamWStepForStep) {
  expect_same_trajectory<torch::optim::AdamW>(
      torch::optim::AdamWOptions(1e-2).betas({0.9, 0.98}).eps(1e-9).weight_decay(0.01), "adamw");
}

TEST(FusedAdam, TheVectorPassGivesTheLoopsBits) {
  // Adam (an L2 term) and AdamW (decoupled decay), every length around the 16-element blocks, with
  // gradients of very different sizes, zeros and a subnormal.
  for (const bool decoupled : {false, true}) {
    detail::AdamConstants c;
    c.beta1 = 0.9f;
    c.one_minus_beta1 = 0.1f;
    c.beta2 = 0.98f;
    c.one_minus_beta2 = 0.02f;
    c.step_size = 3e-4f;
    c.sqrt_bias2 = 0.37f;
    c.eps = 1e-9f;
    c.l2 = decoupled ? 0.0f : 0.01f;
    c.shrink = decoupled ? 0.99999f : 1.0f;
    for (const std::int64_t n : {1, 15, 16, 17, 33, 1000}) {
      at::manual_seed(n);
      const auto w = at::randn({n}), g = at::randn({n}) * at::exp(at::randn({n}) * 5);
      const auto m = at::randn({n}) * 1e-2, v = at::rand({n}) * 1e-3;
      g[0] = 0.0f;
      if (n > 2) g[1] = 1e-40f;
      auto w1 = w.clone(), m1 = m.clone(), v1 = v.clone(), w2 = w.clone(), m2 = m.clone(), v2 = v.clone();
      detail::adam_update(w1.data_ptr<float>(), g.data_ptr<float>(), m1.data_ptr<float>(), v1.data_ptr<float>(), 0, n,
                          c, /*vectorised=*/true);
      detail::adam_update(w2.data_ptr<float>(), g.data_ptr<float>(), m2.data_ptr<float>(), v2.data_ptr<float>(), 0, n,
                          c, /*vectorised=*/false);
      EXPECT_TRUE(at::equal(w1.view(at::kInt), w2.view(at::kInt))) << "n " << n << (decoupled ? " AdamW" : " Adam");
      EXPECT_TRUE(at::equal(m1.view(at::kInt), m2.view(at::kInt))) << "n " << n;
      EXPECT_TRUE(at::equal(v1.view(at::kInt), v2.view(at::kInt))) << "n " << n;
      EXPECT_FALSE(at::equal(w1, w)) << "n " << n;  // it did step
    }
  }
}

TEST(FusedAdam, SkipsParametersWithoutGradientsAndDeclinesWhatItCannotDo) {
  auto params = make_params(3);
  torch::optim::Adam adam(params, torch::optim::AdamOptions(0.1));
  const auto before = params[1].detach().clone();
  params[0].mutable_grad() = at::ones_like(params[0]);
  params[2].mutable_grad() = at::ones_like(params[2]);
  ASSERT_TRUE(fused_adam_step(adam));
  EXPECT_TRUE(at::equal(params[1], before));  // no gradient: untouched, and no state created
  EXPECT_EQ(adam.state().size(), 2u);

  torch::optim::SGD sgd(params, torch::optim::SGDOptions(0.1));
  EXPECT_FALSE(fused_adam_step(sgd));
  torch::optim::Adam ams(params, torch::optim::AdamOptions(0.1).amsgrad(true));
  EXPECT_FALSE(fused_adam_step(ams));
  auto doubles = std::vector<at::Tensor>{at::randn({4}, at::kDouble).requires_grad_(true)};
  doubles[0].mutable_grad() = at::ones_like(doubles[0]);
  torch::optim::Adam on_doubles(doubles, torch::optim::AdamOptions(0.1));
  const auto unchanged = doubles[0].detach().clone();
  EXPECT_FALSE(fused_adam_step(on_doubles));
  EXPECT_TRUE(at::equal(doubles[0], unchanged));
}

}  // namespace
}  // namespace ts
