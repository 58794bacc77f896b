// SPDX-License-Identifier: GPL-3.0-or-later
// Mixed precision (see ts/model/precision.h).
#include "ts/model/precision.h"
#include "ts/model/torch_compat.h"
#include "ts/host/cpu.h"
#include "ts/model/bf16_products.h"
#include "ts/model/fp16_products.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

namespace ts {

bool cpu_has_native_bf16() { return cpu_info().has("amx_bf16") || cpu_info().has("avx512_bf16"); }

PrecisionTimings time_precisions(const c10::Device& device, int n, int repeats) {
  PrecisionTimings t;
  t.n = n;
  const auto time_one = [&](at::ScalarType type) -> double {
    try {
      const auto options = at::TensorOptions().dtype(type).device(device);
      const auto a = at::randn({n, n}, options), b = at::randn({n, n}, options);
      auto c = at::matmul(a, b);
      c.sum().item<double>();  // warm-up; reading a value waits for the device
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < repeats; ++i) c = at::matmul(a, b);
      c.sum().item<double>();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / std::max(repeats, 1);
    } catch (const std::exception&) {
      return 0.0;  // no kernel for this type here
    }
  };
  t.fp32 = time_one(at::kFloat);
  t.bf16 = time_one(at::kBFloat16);
  t.fp16 = time_one(at::kHalf);
  return t;
}

Precision choose_gpu_precision(const PrecisionTimings& t) {
  if (!(t.fp32 > 0)) return Precision::kFp32;
  const bool bf16_fast = t.bf16 > 0 && t.fp32 >= 1.3 * t.bf16;
  const bool fp16_fast = t.fp16 > 0 && t.fp32 >= 1.3 * t.fp16;
  if (bf16_fast && (!fp16_fast || t.bf16 <= 1.1 * t.fp16)) return Precision::kBf16;
  if (fp16_fast) return Precision::kFp16;
  return Precision::kFp32;
}

std::string describe_gpu_precision(const PrecisionTimings& t) {
  const auto ms = [](double s) { return s > 0 ? fmt::format("{:.2f} ms", 1000 * s) : std::string("failed"); };
  const auto chosen = choose_gpu_precision(t);
  return fmt::format("precision auto: {} (one {}×{} product on this GPU: fp32 {}, bf16 {}, fp16 {}){}",
                     chosen == Precision::kFp32 ? "fp32" : std::string(precision_name(chosen)) + " autocast", t.n, t.n,
                     ms(t.fp32), ms(t.bf16), ms(t.fp16),
                     chosen == Precision::kFp16 ? "; fp16 trains with loss scaling" : "");
}

namespace {

constexpr int kShareRows = 512, kLayerIn = 256, kLayerOut = 1024;  // the reference model's feed-forward layer
constexpr int kTimedRepeats = 5;
constexpr std::uint64_t kTimingSeed = 1234;

// Restores LibTorch's thread count when it leaves scope.
class ThreadCountScope {
 public:
  explicit ThreadCountScope(int threads) : previous_(at::get_num_threads()) { at::set_num_threads(threads); }
  ~ThreadCountScope() { at::set_num_threads(previous_); }
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int previous_;
};

// The median seconds of kTimedRepeats runs of `products` after one warm-up.
template <typename Products>
double median_seconds(Products products) {
  products();
  std::vector<double> seconds;
  for (int i = 0; i < kTimedRepeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    products();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + kTimedRepeats / 2, seconds.end());
  return seconds[kTimedRepeats / 2];
}

}  // namespace

CpuPrecisionTimings time_cpu_precisions() {
  CpuPrecisionTimings t;
  // One thread, as training gives each thread its own share of the batch.
  ThreadCountScope one_thread(1);
  // A generator of its own: timing never moves the global random stream a training run is seeded from.
  auto generator = at::make_generator<at::CPUGeneratorImpl>(kTimingSeed);
  const auto x = at::randn({kShareRows, kLayerIn}, generator), w = at::randn({kLayerOut, kLayerIn}, generator);
  const auto dy = at::randn({kShareRows, kLayerOut}, generator);
  try {
    t.fp32 = median_seconds([&] {
      at::mm(x, w.t());   // forward
      at::mm(dy, w);      // the input's gradient
      at::mm(dy.t(), x);  // the weight's gradient
    });
  } catch (const std::exception&) {
    t.fp32 = 0;
  }
  try {
    t.dot_products = bf16_products_preferred();
    t.tiles = t.dot_products && bf16_kernel() == Bf16Kernel::kTiles;
    if (t.dot_products) {
      t.bf16 = median_seconds([&] {
        bf16_matmul(x, w.t());
        bf16_matmul(dy, w);
        bf16_matmul(dy.t(), x);
      });
    } else {
      // Autocast's products: the fp32 operands cast to bf16, then bf16 kernels (oneDNN's).
      t.bf16 = median_seconds([&] {
        const auto xb = x.to(at::kBFloat16), wb = w.to(at::kBFloat16), dyb = dy.to(at::kBFloat16);
        at::mm(xb, wb.t());
        at::mm(dyb, wb);
        at::mm(dyb.t(), xb);
      });
    }
  } catch (const std::exception&) {
    t.bf16 = 0;
  }
  try {
    if (fp16_products_available())
      t.fp16 = median_seconds([&] {
        fp16_matmul(x, w.t());
        fp16_matmul(dy, w);
        fp16_matmul(dy.t(), x);
      });
  } catch (const std::exception&) {
    t.fp16 = 0;
  }
  return t;
}

namespace {
std::atomic<const CpuPrecisionTimings*> g_measured{nullptr};
}  // namespace

const CpuPrecisionTimings& cpu_precision_timings() {
  static const CpuPrecisionTimings timings = time_cpu_precisions();
  g_measured.store(&timings);
  return timings;
}

const CpuPrecisionTimings* measured_cpu_precisions() { return g_measured.load(); }

bool bf16_products_pay(const CpuPrecisionTimings& t) {
  return t.bf16 > 0 && t.fp32 > 0 && t.fp32 >= kCpuBf16MinimumSpeedup * t.bf16;
}

bool fp16_products_pay(const CpuPrecisionTimings& t) {
  return t.fp16 > 0 && t.fp32 > 0 && t.fp32 >= kCpuBf16MinimumSpeedup * t.fp16;
}

Precision choose_cpu_precision(const CpuPrecisionTimings& t) {
  const bool bf16 = bf16_products_pay(t), fp16 = fp16_products_pay(t);
  if (fp16 && (!bf16 || t.fp16 < t.bf16)) return Precision::kFp16;
  return bf16 ? Precision::kBf16 : Precision::kFp32;
}

namespace {
// "(one thread's products of …: fp32 9.4 ms, bf16 on this CPU's … 13.0 ms; bf16 trains when …)"
std::string cpu_timings_clause(const CpuPrecisionTimings& t) {
  const auto ms = [](double s) { return s > 0 ? fmt::format("{:.1f} ms", 1000 * s) : std::string("failed"); };
  const std::string how = !t.dot_products ? "bf16 autocast" : t.tiles ? "AMX tiles" : "AVX-512 BF16 dot products";
  const std::string fp16 = t.fp16 > 0 ? fmt::format(", fp16 on its AVX-512 FP16 multiply-adds {}", ms(t.fp16)) : "";
  return fmt::format(
      "(one thread's products of a {}-token share through a {}->{} layer, forward and backward: fp32 {}, bf16 on "
      "this CPU's {} {}{}; a half precision trains when it is at least {:.1f}x as fast)",
      kShareRows, kLayerIn, kLayerOut, ms(t.fp32), how, ms(t.bf16), fp16, kCpuBf16MinimumSpeedup);
}
}  // namespace

std::string describe_cpu_precision(const CpuPrecisionTimings& t) {
  const auto chosen = choose_cpu_precision(t);
  const std::string what = chosen == Precision::kFp16   ? "fp16 on this CPU's AVX-512 FP16 multiply-adds"
                           : chosen == Precision::kBf16 ? (!t.dot_products ? "bf16 autocast"
                                                           : t.tiles       ? "bf16 on this CPU's AMX tiles"
                                                                     : "bf16 on this CPU's AVX-512 BF16 dot products")
                                                        : "fp32";
  return fmt::format("precision auto: {} {}", what, cpu_timings_clause(t));
}

std::string describe_cpu_precision_request(Precision asked, const CpuPrecisionTimings& t) {
  const auto chosen = choose_cpu_precision(t);
  if (asked == Precision::kAuto || asked == chosen || !(t.fp32 > 0)) return {};
  return fmt::format("precision {}, as asked, though precision auto would train {} on this CPU {}",
                     precision_name(asked), precision_name(chosen), cpu_timings_clause(t));
}

void check_precision(Precision precision, const c10::Device& device) {
  if (precision == Precision::kAuto)
    throw std::invalid_argument("precision auto is a request: resolve it for the device first (resolve_precision)");
  if (precision == Precision::kFp16 && !device.is_cuda() && !(device.is_cpu() && fp16_products_available()))
    throw std::invalid_argument(
        "precision fp16 needs a CUDA GPU or a CPU with AVX-512 FP16, which this one lacks; use bf16 or fp32");
}

AutocastScope::AutocastScope(Precision precision, const c10::Device& device) {
  if (precision == Precision::kFp32) return;
  check_precision(precision, device);
  // fp16 on a CPU is fp16_linear's products (ts/model/fp16_products.h): LibTorch has no fp16 autocast there.
  if (precision == Precision::kFp16 && device.is_cpu())
    throw std::invalid_argument("precision fp16 on a CPU trains with fp16_linear, not under autocast");
  const auto dtype = precision == Precision::kFp16 ? at::kHalf : at::kBFloat16;
  active_ = true;
  device_type_ = device.type();
  previous_enabled_ = torch_compat::autocast_enabled(device_type_);
  previous_dtype_ = torch_compat::autocast_dtype(device_type_);
  torch_compat::set_autocast_dtype(device_type_, dtype);
  torch_compat::set_autocast_enabled(device_type_, true);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // The cache holds the low-precision copies of the weights for one forward pass: drop it when
  // the outermost scope closes, as torch.autocast does, so the next step sees updated weights.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  torch_compat::set_autocast_enabled(device_type_, previous_enabled_);
  torch_compat::set_autocast_dtype(device_type_, previous_dtype_);
}

}  // namespace ts
