// SPDX-License-Identifier: GPL-3.0-or-later
// Mixed precision: autocast scopes, and bf16 training tracking fp32 training on a tiny model.
#include "ts/model/bf16_products.h"
#include "ts/model/fp16_products.h"
#include "ts/model/precision.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include "test_utils.h"
#include "ts/model/torch_compat.h"
#include "ts/train/trainer.h"

namespace ts {
namespace {

using LossObserver = test::RecordingObserver;

std::vector<double> train_losses(Precision precision, DeviceChoice device, int steps,
                                 Transformer* weights_out = nullptr, int threads = 0, bool shard_batch = true) {
  auto config = test::tiny_config();
  if (threads > 0) config.train.threads = threads;
  config.train.shard_batch = shard_batch;
  config.train.max_steps = steps;
  config.train.precision = precision;
  config.train.device = device;
  config.train.batch_sentences = 4;
  config.model.dropout = 0.1;  // exercised in both precisions
  auto data = test::tiny_data(config);
  test::TempDir dir;
  LossObserver observer;
  Trainer trainer(config, data, {dir.str(), "tiny-deu.txt", "", nullptr}, &observer);
  const auto summary = trainer.run();
  EXPECT_EQ(summary.status, RunStatus::kFinished) << summary.message;
  if (weights_out) *weights_out = trainer.model();
  return observer.losses;
}

// A low-precision loss curve against fp32's: the first step sees the same weights and batch, so
// only rounding differs; the curves stay together (mean of 10-step windows within 5%, plus an
// absolute floor for the small losses at the end), and the low-precision run actually learns.
void expect_tracks(const std::vector<double>& low, const std::vector<double>& fp32, const std::string& what) {
  ASSERT_EQ(low.size(), fp32.size()) << what;
  ASSERT_FALSE(low.empty()) << what;
  EXPECT_NEAR(low[0], fp32[0], 0.01 * fp32[0]) << what;
  for (std::size_t w = 0; w + 10 <= low.size(); w += 10) {
    double a = 0, b = 0;
    for (std::size_t i = w; i < w + 10; ++i) a += fp32[i] / 10, b += low[i] / 10;
    EXPECT_NEAR(b, a, 0.05 * a + 0.02) << what << ", steps " << w + 1 << "-" << w + 10;
  }
  EXPECT_LT(low.back(), 0.7 * low.front()) << what;
}

TEST(Precision, AutocastScopeRunsProductsInBf16AndRestoresTheState) {
  const auto x = at::randn({3, 8});
  const auto w = at::randn({5, 8});
  ASSERT_FALSE(torch_compat::autocast_enabled(at::kCPU));
  const auto reference = x.matmul(w.t());
  {
    AutocastScope scope(Precision::kBf16, at::Device(at::kCPU));
    EXPECT_TRUE(torch_compat::autocast_enabled(at::kCPU));
    EXPECT_EQ(at::linear(x, w).scalar_type(), at::kBFloat16);
    {
      AutocastScope inner(Precision::kBf16, at::Device(at::kCPU));  // nesting keeps it on
      EXPECT_EQ(at::linear(x, w).scalar_type(), at::kBFloat16);
    }
    EXPECT_TRUE(torch_compat::autocast_enabled(at::kCPU));
    // The product itself agrees with fp32 to bf16's ~3 significant digits.
    EXPECT_TRUE(at::allclose(at::linear(x, w).to(at::kFloat), reference, 0.05, 0.1));
  }
  EXPECT_FALSE(torch_compat::autocast_enabled(at::kCPU));
  EXPECT_EQ(at::linear(x, w).scalar_type(), at::kFloat);
  {
    AutocastScope none(Precision::kFp32, at::Device(at::kCPU));
    EXPECT_FALSE(torch_compat::autocast_enabled(at::kCPU));
    EXPECT_EQ(at::linear(x, w).scalar_type(), at::kFloat);
  }
}

TEST(Precision, Bf16TrainingTracksFp32OnATinyModel) {
  const int steps = 150;
  Transformer bf16_model{nullptr};
  const auto fp32 = train_losses(Precision::kFp32, DeviceChoice::kCpu, steps);
  const auto bf16 = train_losses(Precision::kBf16, DeviceChoice::kCpu, steps, &bf16_model);
  ASSERT_EQ(fp32.size(), static_cast<std::size_t>(steps));
  ASSERT_EQ(bf16.size(), static_cast<std::size_t>(steps));
  expect_tracks(bf16, fp32, "bf16");
  // Master weights stay fp32: autocast only lowers the products.
  for (const auto& p : bf16_model->parameters()) EXPECT_EQ(p.scalar_type(), at::kFloat);
  EXPECT_FALSE(torch_compat::autocast_enabled(at::kCPU));
}

// The path a CPU with bf16 emulated takes (and, before 2026-11-29, one with AMX): the whole batch under
// bf16 autocast on LibTorch's own kernels (oneDNN's), on LibTorch's threads, here forced on whatever
// this CPU is. The GPU machine's LibTorch 2.11 with AMX died inside the test above when it took this path.
TEST(Precision, Bf16UnderAutocastOnTheWholeBatchTracksFp32) {
  const int steps = 150;
  // fp32 as one share too: shares draw their dropout masks from their own seeds.
  const auto fp32 = train_losses(Precision::kFp32, DeviceChoice::kCpu, steps, nullptr, 2, false);
  Bf16ProductsPreferenceScope autocast_path(false);
  EXPECT_EQ(batch_shares(true, at::Device(at::kCPU), Precision::kBf16, 2), 1);  // one share: LibTorch's threads
  EXPECT_FALSE(uses_bf16_products(at::Device(at::kCPU), Precision::kBf16, 1));
  Transformer bf16_model{nullptr};
  const auto bf16 = train_losses(Precision::kBf16, DeviceChoice::kCpu, steps, &bf16_model, 2, false);
  expect_tracks(bf16, fp32, "bf16 under autocast");
  for (const auto& p : bf16_model->parameters()) EXPECT_EQ(p.scalar_type(), at::kFloat);
  EXPECT_FALSE(torch_compat::autocast_enabled(at::kCPU));
}

// Two threads in bf16: on a CPU with AVX-512 BF16 and no AMX each thread trains its share of the
// batch on bf16_linear (elsewhere the whole batch runs under autocast); either way the run tracks
// fp32 and repeats exactly, dropout included.
TEST(Precision, Bf16OnTwoThreadsTracksFp32AndRepeatsExactly) {
  const int steps = 150;
  const auto fp32 = train_losses(Precision::kFp32, DeviceChoice::kCpu, steps, nullptr, 2);
  const auto first = train_losses(Precision::kBf16, DeviceChoice::kCpu, steps, nullptr, 2);
  const auto second = train_losses(Precision::kBf16, DeviceChoice::kCpu, steps, nullptr, 2);
  expect_tracks(first, fp32, "bf16, 2 threads");
  ASSERT_EQ(second.size(), first.size());
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_DOUBLE_EQ(first[i], second[i]) << "step " << i + 1;
  EXPECT_FALSE(torch_compat::autocast_enabled(at::kCPU));
}

// fp16 on a CPU with AVX-512 FP16: every linear layer's products are fp16_linear's, on each thread's share
// of the batch (two threads) and on LibTorch's threads (one share); no loss scaling, fp32 weights.
// On a CPU with AVX-512 FP16 (an Intel Xeon model 207: fp16 multiply-adds at twice fp32's flops, bf16
// dot products at half), auto trains fp16 where its products are at least 1.2 times as fast as fp32's,
// and of bf16 and fp16 the faster where both are.
TEST(Precision, OnACpuAutoTrainsFp16WhereItsProductsAreTheFastest) {
  const auto timings = [](double fp32_ms, double bf16_ms, double fp16_ms) {
    CpuPrecisionTimings t;
    t.fp32 = fp32_ms / 1000;
    t.bf16 = bf16_ms / 1000;
    t.fp16 = fp16_ms / 1000;
    t.dot_products = true;
    return t;
  };
  EXPECT_EQ(choose_cpu_precision(timings(9.5, 12.4, 6.3)), Precision::kFp16);   // the Intel Xeon's
  EXPECT_EQ(choose_cpu_precision(timings(10.0, 5.0, 6.0)), Precision::kBf16);   // both pay: bf16 is faster
  EXPECT_EQ(choose_cpu_precision(timings(10.0, 6.0, 5.0)), Precision::kFp16);   // both pay: fp16 is faster
  EXPECT_EQ(choose_cpu_precision(timings(10.0, 12.0, 9.0)), Precision::kFp32);  // 1.1 times: not worth it
  EXPECT_EQ(choose_cpu_precision(timings(10.0, 12.0, 0.0)), Precision::kFp32);  // fp16 not run (no AVX-512 FP16)
  EXPECT_TRUE(fp16_products_pay(timings(9.5, 12.4, 6.3)));
  EXPECT_FALSE(fp16_products_pay(timings(0.0, 12.4, 6.3)));  // nothing to compare with
  const auto line = describe_cpu_precision(timings(9.5, 12.4, 6.3));
  EXPECT_EQ(line.rfind("precision auto: fp16 on this CPU's AVX-512 FP16 multiply-adds (", 0), 0u) << line;
  EXPECT_NE(line.find("bf16 on this CPU's AVX-512 BF16 dot products 12.4 ms, fp16 on its AVX-512 FP16 multiply-adds "
                      "6.3 ms"),
            std::string::npos)
      << line;
  const auto asked = describe_cpu_precision_request(Precision::kBf16, timings(9.5, 12.4, 6.3));
  EXPECT_EQ(asked.rfind("precision bf16, as asked, though precision auto would train fp16 on this CPU (", 0), 0u)
      << asked;
  EXPECT_TRUE(describe_cpu_precision_request(Precision::kFp16, timings(9.5, 12.4, 6.3)).empty());  // they agree
  EXPECT_EQ(describe_cpu_precision_request(Precision::kFp16, timings(9.5, 12.4, 9.0))
                .rfind("precision fp16, as asked, though precision auto would train fp32", 0),
            0u);
}

TEST(Precision, Fp16OnACpuWithAvx512Fp16TracksFp32AndRepeatsExactly) {
  if (!fp16_products_available()) GTEST_SKIP() << "this CPU has no AVX-512 FP16 multiply-adds";
  const int steps = 150;
  EXPECT_EQ(batch_shares(true, at::Device(at::kCPU), Precision::kFp16, 2), 2);
  EXPECT_TRUE(uses_fp16_products(at::Device(at::kCPU), Precision::kFp16));
  EXPECT_FALSE(uses_fp16_products(at::Device(at::kCPU), Precision::kBf16));
  EXPECT_FALSE(uses_fp16_products(at::Device(at::kCUDA, 0), Precision::kFp16));
  const auto fp32 = train_losses(Precision::kFp32, DeviceChoice::kCpu, steps, nullptr, 2);
  Transformer fp16_model{nullptr};
  const auto first = train_losses(Precision::kFp16, DeviceChoice::kCpu, steps, &fp16_model, 2);
  const auto second = train_losses(Precision::kFp16, DeviceChoice::kCpu, steps, nullptr, 2);
  expect_tracks(first, fp32, "fp16, 2 threads");
  ASSERT_EQ(second.size(), first.size());
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_DOUBLE_EQ(first[i], second[i]) << "step " << i + 1;
  bool differs = false;  // the products really were fp16's: not one loss equal to fp32's after the first steps
  for (std::size_t i = 10; i < first.size(); ++i) differs = differs || first[i] != fp32[i];
  EXPECT_TRUE(differs);
  for (const auto& p : fp16_model->parameters()) EXPECT_EQ(p.scalar_type(), at::kFloat);
  // One share on LibTorch's two threads: fp16_matmul splits its columns over them.
  const auto fp32_one = train_losses(Precision::kFp32, DeviceChoice::kCpu, steps, nullptr, 2, false);
  const auto one_share = train_losses(Precision::kFp16, DeviceChoice::kCpu, steps, nullptr, 2, false);
  expect_tracks(one_share, fp32_one, "fp16, one share");
  EXPECT_FALSE(torch_compat::autocast_enabled(at::kCPU));
}

TEST(Precision, Fp16OnACpuWithoutAvx512Fp16IsRefusedWithAClearMessage) {
  auto config = test::tiny_config();
  config.train.precision = Precision::kFp16;
  config.train.device = DeviceChoice::kCpu;
  const auto problems = config.problems();
  if (fp16_products_available()) {
    // fp16 trains on this CPU's own multiply-adds (fp16_linear), never under autocast.
    EXPECT_TRUE(problems.empty()) << problems[0];
    EXPECT_NO_THROW(check_precision(Precision::kFp16, at::Device(at::kCPU)));
    EXPECT_NO_THROW(config.validate());
  } else {
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("train.precision fp16 needs a CUDA GPU or a CPU with AVX-512 FP16"), std::string::npos)
        << problems[0];
    EXPECT_THROW(check_precision(Precision::kFp16, at::Device(at::kCPU)), std::invalid_argument);
    EXPECT_THROW(config.validate(), ConfigError);
  }
  EXPECT_THROW({ AutocastScope scope(Precision::kFp16, at::Device(at::kCPU)); }, std::invalid_argument);
  EXPECT_THROW(check_precision(Precision::kAuto, at::Device(at::kCPU)), std::invalid_argument);  // resolve first
  EXPECT_THROW({ AutocastScope scope(Precision::kAuto, at::Device(at::kCPU)); }, std::invalid_argument);
  EXPECT_NO_THROW(check_precision(Precision::kBf16, at::Device(at::kCPU)));
  EXPECT_THROW(config.set("train.precision=half"), ConfigError);  // not a precision at all
  EXPECT_THROW(parse_precision("int4"), std::invalid_argument);
}

// What `precision auto` picks on a GPU, from timings shaped like the GPU generations it meets.
TEST(Precision, AutoOnAGpuPicksTheFastestLowPrecisionThatIsReallyFaster) {
  const auto pick = [](double fp32, double bf16, double fp16) {
    PrecisionTimings t;
    t.fp32 = fp32, t.bf16 = bf16, t.fp16 = fp16, t.n = 2048;
    return std::string(precision_name(choose_gpu_precision(t)));
  };
  EXPECT_EQ(pick(1.0, 0.10, 0.10), "bf16");   // Ampere, Hopper: both native, bf16 needs no loss scaling
  EXPECT_EQ(pick(1.0, 0.105, 0.10), "bf16");  // within 10% of fp16
  EXPECT_EQ(pick(1.0, 0.50, 0.10), "fp16");   // bf16 faster than fp32 but far behind fp16
  EXPECT_EQ(pick(1.0, 0.95, 0.20), "fp16");   // Volta, Turing: bf16 emulated, fp16 tensor cores
  EXPECT_EQ(pick(1.0, 0.0, 0.20), "fp16");    // no bf16 kernel at all
  EXPECT_EQ(pick(1.0, 0.90, 0.85), "fp32");   // neither is 1.3x faster: not worth the rounding
  EXPECT_EQ(pick(1.0, 0.0, 0.0), "fp32");
  EXPECT_EQ(pick(0.0, 0.1, 0.1), "fp32");   // nothing to compare with: the safe choice
  EXPECT_EQ(pick(1.0, 0.76, 0.0), "bf16");  // 1.32x faster
  EXPECT_EQ(pick(1.0, 0.78, 0.0), "fp32");  // 1.28x: short of the bar
  PrecisionTimings t;
  t.fp32 = 0.004, t.bf16 = 0.0005, t.fp16 = 0, t.n = 2048;
  const auto line = describe_gpu_precision(t);
  EXPECT_NE(line.find("precision auto: bf16 autocast"), std::string::npos) << line;
  EXPECT_NE(line.find("2048×2048"), std::string::npos) << line;
  EXPECT_NE(line.find("fp32 4.00 ms, bf16 0.50 ms, fp16 failed"), std::string::npos) << line;
}

TEST(Precision, TheProductTimingRunsOnTheCpuAndAutoSaysWhatItChose) {
  const auto t = time_precisions(at::Device(at::kCPU), 48, 2);
  EXPECT_EQ(t.n, 48);
  EXPECT_GT(t.fp32, 0.0);
  EXPECT_GT(t.bf16, 0.0);  // LibTorch multiplies bf16 on any CPU (emulated where it must)
  EXPECT_GE(t.fp16, 0.0);  // 0 where this LibTorch has no CPU half product

  std::string why = "stale";
  EXPECT_EQ(resolve_precision(Precision::kFp32, at::Device(at::kCPU), &why), Precision::kFp32);
  // Asked for: trained as asked; the log speaks only where auto would train another precision on this CPU.
  const bool timed_here = cpu_has_native_bf16() || fp16_products_available();
  EXPECT_EQ(why, timed_here ? describe_cpu_precision_request(Precision::kFp32, cpu_precision_timings()) : std::string())
      << why;
  const auto chosen = resolve_precision(Precision::kAuto, at::Device(at::kCPU), &why);
  EXPECT_EQ(chosen, timed_here ? choose_cpu_precision(cpu_precision_timings()) : Precision::kFp32);
  EXPECT_EQ(why.rfind(std::string("precision auto: ") + precision_name(chosen), 0), 0u) << why;
}

// Native bf16 is not always the faster precision: AVX-512 BF16's dot products ran at about twice fp32's
// speed on an AMD EPYC and at 0.7 times on an Intel Xeon model 207 without AMX. Auto trains bf16 only
// where its products are at least 1.2 times as fast as fp32's.
TEST(Precision, OnACpuAutoTrainsBf16OnlyWhereItsProductsAreFaster) {
  const auto timings = [](double fp32_ms, double bf16_ms) {
    CpuPrecisionTimings t;
    t.fp32 = fp32_ms / 1000;
    t.bf16 = bf16_ms / 1000;
    t.dot_products = true;
    return t;
  };
  EXPECT_EQ(choose_cpu_precision(timings(10.0, 5.0)), Precision::kBf16);   // AMD EPYC's twice
  EXPECT_EQ(choose_cpu_precision(timings(12.0, 10.0)), Precision::kBf16);  // 1.2 times, just
  EXPECT_EQ(choose_cpu_precision(timings(11.0, 10.0)), Precision::kFp32);  // 1.1 times: not worth bf16
  EXPECT_EQ(choose_cpu_precision(timings(9.5, 12.4)), Precision::kFp32);   // the Intel Xeon's 0.77
  EXPECT_EQ(choose_cpu_precision(timings(10.0, 0.0)), Precision::kFp32);   // bf16 failed
  EXPECT_EQ(choose_cpu_precision(timings(0.0, 5.0)), Precision::kFp32);    // nothing to compare with
  const auto line = describe_cpu_precision(timings(9.5, 12.4));
  EXPECT_EQ(line.rfind("precision auto: fp32 (", 0), 0u) << line;
  EXPECT_NE(line.find("fp32 9.5 ms, bf16 on this CPU's AVX-512 BF16 dot products 12.4 ms"), std::string::npos) << line;
  EXPECT_EQ(describe_cpu_precision(timings(10.0, 5.0)).rfind("precision auto: bf16 on this CPU's AVX-512 BF16", 0), 0u);
  // A precision asked for where auto would train the other: it trains, and the log says which is faster here.
  const auto asked = describe_cpu_precision_request(Precision::kBf16, timings(9.5, 12.4));
  EXPECT_EQ(asked.rfind("precision bf16, as asked, though precision auto would train fp32 on this CPU (", 0), 0u)
      << asked;
  EXPECT_NE(asked.find("fp32 9.5 ms, bf16 on this CPU's AVX-512 BF16 dot products 12.4 ms"), std::string::npos)
      << asked;
  EXPECT_EQ(describe_cpu_precision_request(Precision::kFp32, timings(10.0, 5.0))
                .rfind("precision fp32, as asked, though precision auto would train bf16 on this CPU (", 0),
            0u);
  EXPECT_TRUE(describe_cpu_precision_request(Precision::kBf16, timings(10.0, 5.0)).empty());  // they agree
  EXPECT_TRUE(describe_cpu_precision_request(Precision::kFp32, timings(9.5, 12.4)).empty());
  EXPECT_TRUE(describe_cpu_precision_request(Precision::kFp32, timings(0.0, 0.0)).empty());  // not timed
  std::string why = "stale";
  EXPECT_EQ(resolve_precision(Precision::kBf16, at::Device(at::kCPU), &why), Precision::kBf16);
  EXPECT_EQ(why, cpu_has_native_bf16() || fp16_products_available()
                     ? describe_cpu_precision_request(Precision::kBf16, cpu_precision_timings())
                     : std::string())
      << why;

  // The real timing: both precisions ran here; measured once, then the same figures at once; the global
  // random stream a run is seeded from does not move.
  at::manual_seed(7);
  const auto expected = at::rand({4});
  at::manual_seed(7);
  const auto fresh = time_cpu_precisions();
  EXPECT_GT(fresh.fp32, 0.0);
  EXPECT_TRUE(at::equal(at::rand({4}), expected));
  const auto& measured = cpu_precision_timings();
  EXPECT_GT(measured.fp32, 0.0);
  EXPECT_GT(measured.bf16, 0.0);  // autocast's kernels where the CPU lacks the dot products
  EXPECT_EQ(measured.dot_products, bf16_products_preferred());
  EXPECT_EQ(measured.fp16 > 0, fp16_products_available());  // fp16 timed only where the CPU has AVX-512 FP16
  ASSERT_NE(measured_cpu_precisions(), nullptr);
  EXPECT_EQ(measured_cpu_precisions(), &cpu_precision_timings());
}

// The GPU cases run where LibTorch sees a CUDA device (the device machine) and skip elsewhere.
TEST(PrecisionCuda, MixedPrecisionTrainsOnTheGpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const int steps = 60;
  const auto fp32 = train_losses(Precision::kFp32, DeviceChoice::kCuda, steps);
  ASSERT_EQ(fp32.size(), static_cast<std::size_t>(steps));
  for (const auto precision : {Precision::kBf16, Precision::kFp16})
    expect_tracks(train_losses(precision, DeviceChoice::kCuda, steps), fp32, precision_name(precision));
}

TEST(PrecisionCuda, AutoTimesTheGpuAndPicksAPrecisionItCanTrainIn) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const at::Device gpu(at::kCUDA);
  const auto t = time_precisions(gpu);
  EXPECT_GT(t.fp32, 0.0);
  std::string why;
  const auto chosen = resolve_precision(Precision::kAuto, gpu, &why);
  EXPECT_NO_THROW(check_precision(chosen, gpu));
  EXPECT_NE(why.find("product on this GPU"), std::string::npos) << why;
}

}  // namespace
}  // namespace ts
