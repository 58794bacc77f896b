// SPDX-License-Identifier: GPL-3.0-or-later
// The fused Adam/AdamW step against LibTorch's own.
#include "ts/train/optimizer.h"
#include "ts/model/torch_compat.h"

#include <gtest/gtest.h>
#include <ATen/Parallel.h>

#include <cmath>

#include <torch/types.h>  // before clip_grad.h, which uses torch:: names it does not include
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/version.h>

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
void expect_same_trajectory(const Options& options, const char* name,
                            bool (*step_with)(torch::optim::Optimizer&) = &fused_adam_step) {
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
    ASSERT_TRUE(step_with(fused)) << name;
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

// LibTorch's multi-tensor kernel is what a GPU gets (LibTorch 2.0 and later); its CPU kernel (2.4 and
// later) lets the same path be checked here, on scripts/check-libtorch2.sh's LibTorch 2.6.
TEST(FusedAdam, LibTorchsMultiTensorKernelFollowsItsAdamAndAdamWStepForStep) {
  if (!detail::aten_fused_adam_available(c10::DeviceType::CPU))
    GTEST_SKIP() << "LibTorch " << TORCH_VERSION << " has no at::_fused_adam_ for CPU tensors (2.4 and later have)";
  expect_same_trajectory<torch::optim::Adam>(torch::optim::AdamOptions(1e-2).betas({0.9, 0.98}).eps(1e-9), "adam",
                                             &detail::aten_fused_adam_step);
  expect_same_trajectory<torch::optim::Adam>(torch::optim::AdamOptions(1e-2).weight_decay(0.1), "adam with L2",
                                             &detail::aten_fused_adam_step);
  expect_same_trajectory<torch::optim::AdamW>(
      torch::optim::AdamWOptions(1e-2).betas({0.9, 0.98}).eps(1e-9).weight_decay(0.01), "adamw",
      &detail::aten_fused_adam_step);
}

TEST(FusedAdam, TheVectorPassGivesTheLoopsBits) {
  // Adam (an L2 term) and AdamW (decoupled decay), every length around the 16-element blocks, with
  // gradients of very different sizes, zeros and a subnormal; unclipped and clipped (grad_scale).
  for (const bool decoupled : {false, true})
    for (const float grad_scale : {1.0f, 0.37f}) {
      detail::AdamConstants c;
      c.grad_scale = grad_scale;
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

// Clipping inside the step gives the bits of LibTorch's clip_grad_norm_ followed by the fused step
// (which the tests above hold to LibTorch's own step), over steps that alternate between gradients far
// above the limit (clipped) and below it (kept): a factor left out, or applied where it should not be,
// changes the trajectory. The gradients keep their values.
template <class Opt, class Options>
void expect_clipped_trajectory(const Options& options, const char* name) {
  const double limit = 1.0;
  auto ours = make_params(5), theirs = make_params(5), unclipped = make_params(5);
  Opt fused(ours, options), reference(theirs, options), plain(unclipped, options);
  for (int step = 1; step <= 6; ++step) {
    for (auto* params : {&ours, &theirs, &unclipped}) set_grads(*params, step);
    const auto given = ours[0].grad().clone();
    ASSERT_TRUE(clipped_fused_adam_step(fused, limit)) << name;
    EXPECT_TRUE(at::equal(ours[0].grad(), given)) << name << ": the gradients are left as they were";
    torch::nn::utils::clip_grad_norm_(theirs, limit);
    ASSERT_TRUE(fused_adam_step(reference));
    ASSERT_TRUE(fused_adam_step(plain));
    for (std::size_t i = 0; i < ours.size(); ++i)
      ASSERT_TRUE(at::equal(ours[i], theirs[i])) << name << " step " << step << " param " << i << " max diff "
                                                 << (ours[i] - theirs[i]).abs().max().item<double>();
  }
  EXPECT_FALSE(at::allclose(ours[2], unclipped[2], 1e-5, 1e-6)) << name << ": clipping changed the trajectory";
}

TEST(ClippedFusedAdam, EqualsLibTorchsClipGradNormThenItsStep) {
  expect_clipped_trajectory<torch::optim::Adam>(torch::optim::AdamOptions(1e-2).betas({0.9, 0.98}).eps(1e-9), "adam");
  expect_clipped_trajectory<torch::optim::Adam>(torch::optim::AdamOptions(1e-2).weight_decay(0.1), "adam with L2");
  expect_clipped_trajectory<torch::optim::AdamW>(
      torch::optim::AdamWOptions(1e-2).betas({0.9, 0.98}).eps(1e-9).weight_decay(0.01), "adamw");
}

TEST(ClippedFusedAdam, WhereTheStepIsNotOursItClipsInPlaceForTheCallersStep) {
  auto params = make_params(3);
  set_grads(params, 1);  // far above the limit
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(0.1));
  EXPECT_FALSE(clipped_fused_adam_step(sgd, 1.0));
  double norm = 0;
  for (const auto& p : params) norm += p.grad().pow(2).sum().item<double>();
  EXPECT_NEAR(std::sqrt(norm), 1.0, 1e-4);

  set_grads(params, 1);
  const auto given = params[0].grad().clone();
  torch::optim::Adam adam(params, torch::optim::AdamOptions(0.1));
  ASSERT_TRUE(clipped_fused_adam_step(adam, 0.0));  // no limit: a plain step
  EXPECT_TRUE(at::equal(params[0].grad(), given));
}

// The on-device clipping (a GPU's, LibTorch 2.1 and later; checked here on CPU tensors) against
// LibTorch's clip_grad_norm_: gradients above the limit are scaled down to it, those below are kept.
TEST(ClipGradientNorm, OnTheDeviceItScalesAsLibTorchsClipGradNorm) {
  for (const double scale : {10.0, 1e-3}) {
    auto ours = make_params(7), theirs = make_params(7);
    for (auto* params : {&ours, &theirs}) {
      at::manual_seed(99);
      for (auto& p : *params) p.mutable_grad() = at::randn_like(p) * scale;
    }
    ours[1].mutable_grad().reset();  // a parameter without a gradient is left out of the norm
    theirs[1].mutable_grad().reset();
    const auto before = ours[0].grad().clone();
    const double limit = 1.0;
    torch::nn::utils::clip_grad_norm_(theirs, limit);
    if (!detail::clip_gradient_norm_on_device(ours, limit)) {
      clip_gradient_norm(ours, limit);  // LibTorch 1.13: the public function is LibTorch's on a CPU
      EXPECT_FALSE(TS_TORCH_AT_LEAST(2, 1)) << "LibTorch 2.1 and later have the on-device path";
    }
    for (std::size_t i = 0; i < ours.size(); ++i) {
      if (!theirs[i].grad().defined()) {
        EXPECT_FALSE(ours[i].grad().defined());
        continue;
      }
      EXPECT_TRUE(at::allclose(ours[i].grad(), theirs[i].grad(), 1e-5, 1e-7)) << "scale " << scale << " param " << i;
    }
    double norm = 0;
    for (const auto& p : ours)
      if (p.grad().defined()) norm += p.grad().pow(2).sum().item<double>();
    if (scale > 1)
      EXPECT_NEAR(std::sqrt(norm), limit, 1e-4);
    else
      EXPECT_TRUE(at::equal(ours[0].grad(), before)) << "below the limit the gradients are kept";
  }
}

// The shares' gradients of a step add up into the parameters' gradients: the first share's tensor
// becomes the sum where nothing else holds it; a share without a gradient for a parameter adds
// nothing; a gradient the parameter already had is added to; a storage that holds two parameters'
// gradients (views of one tensor) is copied, not written into.
TEST(ShareGradients, AddUpIntoTheParametersGradients) {
  auto params = make_params(11);
  at::manual_seed(12);
  const auto a0 = at::randn_like(params[0]), a1 = at::randn_like(params[0]);
  const auto b1 = at::randn_like(params[1]);
  const auto c0 = at::randn_like(params[2]), c1 = at::randn_like(params[2]);
  const auto earlier = at::randn_like(params[2]);
  params[2].mutable_grad() = earlier.clone();
  std::vector<std::vector<at::Tensor>> grads(2);
  grads[0] = {a0.clone(), at::Tensor(), c0.clone()};
  grads[1] = {a1.clone(), b1.clone(), c1.clone()};
  const void* first_share = grads[0][0].data_ptr();
  add_share_gradients(grads, params);
  EXPECT_TRUE(at::equal(params[0].grad(), a0 + a1));
  EXPECT_EQ(params[0].grad().data_ptr(), first_share) << "the first share's tensor holds the sum";
  EXPECT_TRUE(at::equal(params[1].grad(), b1)) << "only share 1 had a gradient";
  EXPECT_TRUE(at::equal(params[2].grad(), earlier + (c0 + c1)));

  // A view of a storage that also holds another parameter's gradient is copied before adding.
  auto views = make_params(13);
  const auto shared = at::randn({2, 17});
  std::vector<std::vector<at::Tensor>> two(2);
  two[0] = {at::Tensor(), shared[0], shared[1]};
  two[1] = {at::Tensor(), at::ones({17}), at::Tensor()};
  std::vector<at::Tensor> ps{views[0], views[1], at::randn({17}).requires_grad_(true)};
  const auto untouched = shared.clone();
  add_share_gradients(two, ps);
  EXPECT_TRUE(at::equal(shared, untouched)) << "the shared storage is not written into";
  EXPECT_TRUE(at::equal(ps[1].grad(), untouched[0] + 1));
  EXPECT_TRUE(at::equal(ps[2].grad(), untouched[1]));
  EXPECT_FALSE(ps[0].grad().defined());
}

// The squared norm that comes with the shares' sum: every parameter's final gradient counts (the sum
// of two shares, a share alone, a gradient added to, one no share touched), it is the squares' sum
// whatever the threads, and the sums are the same bits as without it.
TEST(ShareGradients, GiveTheSquaredNormOfTheSummedGradients) {
  at::manual_seed(31);
  const std::vector<std::int64_t> sizes{40000, 7, 33, 5};
  std::vector<at::Tensor> plain, normed;
  for (const auto n : sizes) {
    plain.push_back(at::randn({n}).requires_grad_(true));
    normed.push_back(plain.back().detach().clone().requires_grad_(true));
  }
  const auto kept = at::randn({5});
  plain[3].mutable_grad() = kept.clone();  // no share has a gradient for it: it keeps this one
  normed[3].mutable_grad() = kept.clone();
  const auto earlier = at::randn({33});
  plain[2].mutable_grad() = earlier.clone();  // added to
  normed[2].mutable_grad() = earlier.clone();
  std::vector<std::vector<at::Tensor>> shares(3, std::vector<at::Tensor>(4));
  for (std::size_t k = 0; k < 3; ++k)
    for (std::size_t p = 0; p < 3; ++p)
      if (!(p == 1 && k != 1)) shares[k][p] = at::randn({sizes[p]}) * 10;  // parameter 1: share 1 alone
  auto copy = [](const std::vector<std::vector<at::Tensor>>& g) {
    std::vector<std::vector<at::Tensor>> out(g.size());
    for (std::size_t k = 0; k < g.size(); ++k)
      for (const auto& t : g[k]) out[k].push_back(t.defined() ? t.clone() : t);
    return out;
  };
  auto first = copy(shares), second = copy(shares);
  add_share_gradients(first, plain);
  const int threads_before = at::get_num_threads();
  for (const int threads : {1, 2}) {
    at::set_num_threads(threads);
    for (std::size_t p = 0; p < normed.size(); ++p)
      normed[p].mutable_grad() = p == 2 ? earlier.clone() : p == 3 ? kept.clone() : at::Tensor();
    auto grads = copy(second);
    double squares = -1;
    add_share_gradients(grads, normed, &squares);
    double expected = 0;
    for (std::size_t p = 0; p < normed.size(); ++p) {
      EXPECT_TRUE(at::equal(normed[p].grad(), plain[p].grad())) << "parameter " << p << ", " << threads << " threads";
      expected += normed[p].grad().to(at::kDouble).pow(2).sum().item<double>();
    }
    EXPECT_NEAR(squares, expected, expected * 1e-6) << threads << " threads";
    static double with_one_thread = 0;
    if (threads == 1)
      with_one_thread = squares;
    else
      EXPECT_EQ(squares, with_one_thread) << "the same sum whatever the threads";
  }
  at::set_num_threads(threads_before);
}

// Clipping with the squared norm handed over: the factor LibTorch's clip_grad_norm_ would use (up
// to the norm's rounding), so the trajectory follows clip_grad_norm_ then the step closely, and the
// gradients keep their values.
TEST(ClippedFusedAdam, WithTheSquaredNormHandedOverFollowsClipGradNorm) {
  const double limit = 1.0;
  auto ours = make_params(5), theirs = make_params(5);
  torch::optim::Adam fused(ours, torch::optim::AdamOptions(1e-2)), reference(theirs, torch::optim::AdamOptions(1e-2));
  for (int step = 1; step <= 6; ++step) {
    set_grads(ours, step);
    set_grads(theirs, step);
    double squares = 0;
    for (const auto& p : ours) squares += p.grad().to(at::kDouble).pow(2).sum().item<double>();
    const auto given = ours[0].grad().clone();
    ASSERT_TRUE(clipped_fused_adam_step(fused, limit, squares));
    EXPECT_TRUE(at::equal(ours[0].grad(), given));
    torch::nn::utils::clip_grad_norm_(theirs, limit);
    ASSERT_TRUE(fused_adam_step(reference));
    for (std::size_t i = 0; i < ours.size(); ++i)
      EXPECT_TRUE(at::allclose(ours[i], theirs[i], 1e-5, 1e-6)) << "step " << step << " param " << i;
  }
  // A squared norm far below the limit's square: no clipping, the plain step's bits.
  auto unclipped = make_params(6), plain = make_params(6);
  torch::optim::Adam a(unclipped, torch::optim::AdamOptions(1e-2)), b(plain, torch::optim::AdamOptions(1e-2));
  set_grads(unclipped, 1);
  set_grads(plain, 1);
  ASSERT_TRUE(clipped_fused_adam_step(a, 1e9, 1.0));
  ASSERT_TRUE(fused_adam_step(b));
  for (std::size_t i = 0; i < unclipped.size(); ++i) EXPECT_TRUE(at::equal(unclipped[i], plain[i]));
}

}  // namespace
}  // namespace ts
