// SPDX-License-Identifier: GPL-3.0-or-later
// Where a CPU training step's time goes, by LibTorch operator. Builds a model of the given shape, runs
// the training step the trainer runs (forward_backward_batch with its shares of the batch, gradient
// clipping, the fused Adam step) on random sentences, times some steps, then records as many with
// LibTorch's profiler and prints each operator's self time (its own time, the operators it called
// left out) per step: with shares summed over the threads, as a share of the threads' time; on
// LibTorch's threads as the calling thread records it, as a share of the wall time. What no operator
// covers (our own kernels: the hash dropout's pass, the fused Adam step; threads waiting) is the
// rest. Its batches keep one shape, which glibc serves worse than training's changing ones: with an
// 8,000-token vocabulary it took 15,000 page faults a step and spent 10% of the time in the kernel,
// against 2% in a real run (perf, 2026-11-27): compare changes on `transformer-studio-cli train` too
// (bench/throughput.sh). --clip-apart clips the gradients in a pass of their own before the Adam step
// (as training did before commit after acc758c) instead of inside it, to compare the two.
//   ts_bench_train_profile [LAYERS D FF HEADS] [--precision fp32|bf16] [--threads N] [--whole-batch]
//                          [--clip-apart] [--steps N] [--vocab V] [--sentences S] [--length L] [--top K]
// Defaults: 2 192 768 4 (the default recipe's 5-minute shape), fp32, all cores, shares as the trainer
// uses them (fp32, and bf16 on AVX-512 BF16 dot products), 20 steps timed and 20 recorded after 5,
// vocabulary 4,000, 64 sentences of 12 tokens a side, the 25 largest operators.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/optim/adam.h>
#include <torch/types.h>

#include "ts/model/transformer.h"
#include "ts/host/blas.h"
#include "ts/text/vocab.h"
#include "ts/train/config.h"
#include "ts/train/optimizer.h"
#include "ts/train/trainer.h"

namespace {

struct Options {
  int layers = 2, d = 192, ff = 768, heads = 4;
  ts::Precision precision = ts::Precision::kFp32;
  int threads = 0, steps = 20, vocab = 4000, sentences = 64, length = 12, top = 25;
  bool shares = true;
  bool clip_apart = false;
};

int usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [LAYERS D FF HEADS] [--precision fp32|bf16] [--threads N] [--whole-batch] [--clip-apart] "
               "[--steps N] [--vocab V] [--sentences S] [--length L] [--top K]\n",
               program);
  return 2;
}

std::string fmt_ms(const char* what, double seconds) {
  char text[96];
  std::snprintf(text, sizeof text, "%s %.2f ms", what, 1e3 * seconds);
  return text;
}

struct Total {
  double self_us = 0;
  long calls = 0;
  std::map<std::string, long> callers;  // the enclosing operator's name (none at the top)
};

// Self time per operator name from the profiler's per-thread push/pop ranges (nested on each thread).
std::map<std::string, Total> self_times(const torch::autograd::profiler::thread_event_lists& threads) {
  using torch::autograd::profiler::EventKind;
  using torch::autograd::profiler::LegacyEvent;
  std::map<std::string, Total> totals;
  for (const auto& events : threads) {
    struct Open {
      const LegacyEvent* start;
      double children_us;
    };
    std::vector<Open> stack;
    for (const auto& e : events) {
      if (e.kind() == EventKind::PushRange) {
        stack.push_back({&e, 0.0});
      } else if (e.kind() == EventKind::PopRange && !stack.empty()) {
        const Open open = stack.back();
        stack.pop_back();
        const double inclusive = open.start->cpuElapsedUs(e);
        auto& t = totals[open.start->name()];
        t.self_us += inclusive - open.children_us;
        ++t.calls;
        ++t.callers[stack.empty() ? std::string("(none)") : std::string(stack.back().start->name())];
        if (!stack.empty()) stack.back().children_us += inclusive;
      }
    }
  }
  return totals;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  ts::use_the_right_blas_kernels(argv);  // OpenBLAS kernels for this CPU, as the app gets them
  Options o;
  const std::map<std::string, int*> counts{{"--threads", &o.threads}, {"--steps", &o.steps},
                                           {"--vocab", &o.vocab},     {"--sentences", &o.sentences},
                                           {"--length", &o.length},   {"--top", &o.top}};
  std::vector<int> shape;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    const auto count = counts.find(a);
    if (a == "--whole-batch") {
      o.shares = false;
    } else if (a == "--clip-apart") {
      o.clip_apart = true;
    } else if (a == "--precision" && has_value) {
      const std::string p = argv[++i];
      if (p != "fp32" && p != "bf16") return usage(argv[0]);
      o.precision = p == "bf16" ? ts::Precision::kBf16 : ts::Precision::kFp32;
    } else if (count != counts.end() && has_value) {
      *count->second = std::atoi(argv[++i]);
    } else if (!a.empty() && a[0] != '-' && shape.size() < 4) {
      shape.push_back(std::atoi(a.c_str()));
    } else {
      return usage(argv[0]);
    }
  }
  if (!shape.empty() && shape.size() != 4) return usage(argv[0]);
  if (shape.size() == 4) o.layers = shape[0], o.d = shape[1], o.ff = shape[2], o.heads = shape[3];
  if (o.steps < 1 || o.vocab <= ts::Vocab::kEos + 1 || o.sentences < 1 || o.length < 2 || o.layers < 1 || o.d < 1 ||
      o.ff < 1 || o.heads < 1 || o.d % o.heads != 0)
    return usage(argv[0]);

  const int threads = ts::configure_threads(o.threads);
  const int shares = ts::batch_shares(o.shares, at::Device(at::kCPU), o.precision, threads);  // as the trainer
  auto config = ts::preset("auto");
  config.model.encoder_layers = config.model.decoder_layers = o.layers;
  config.model.d_model = o.d;
  config.model.d_ff = o.ff;
  config.model.heads = o.heads;
  config.model.dropout = 0.1;
  at::manual_seed(0);
  auto model = ts::build_model(config.model, o.vocab, o.vocab, ts::Vocab::kPad, /*shared_vocab=*/true);
  model->train();
  const auto parameters = model->parameters();
  torch::optim::Adam optimizer(parameters, torch::optim::AdamOptions(1e-4).betas({0.9, 0.98}).eps(1e-9));
  std::vector<ts::Example> examples(static_cast<std::size_t>(o.sentences));
  std::vector<std::size_t> rows(examples.size());
  const auto ids = at::randint(ts::Vocab::kEos + 1, o.vocab, {o.sentences, 2, o.length}, at::kLong);
  const auto* id = ids.data_ptr<std::int64_t>();
  std::int64_t tokens = 0;
  for (std::size_t i = 0; i < examples.size(); ++i) {
    rows[i] = i;
    examples[i].src.assign(id, id + o.length);
    examples[i].tgt.assign(id + o.length, id + 2 * o.length);
    id += 2 * o.length;
    tokens += o.length + 1;
  }
  const at::Device cpu(at::kCPU);
  double fb_s = 0, clip_s = 0, adam_s = 0;
  const auto step = [&] {
    auto t = std::chrono::steady_clock::now();
    ts::clear_gradients(parameters);
    ts::forward_backward_batch(model, examples, rows, cpu, o.precision, 0.1, static_cast<double>(tokens), 1.0, shares,
                               parameters);
    fb_s += seconds_since(t);
    t = std::chrono::steady_clock::now();
    if (o.clip_apart) {
      ts::clip_gradient_norm(parameters, 1.0);
      clip_s += seconds_since(t);
      t = std::chrono::steady_clock::now();
      if (!ts::fused_adam_step(optimizer)) optimizer.step();
    } else if (!ts::clipped_fused_adam_step(optimizer, 1.0)) {
      optimizer.step();
    }
    adam_s += seconds_since(t);
  };
  for (int i = 0; i < 5; ++i) step();  // warm-up: allocations, kernel selection
  // The same steps without the profiler first: the speed a change is judged by.
  fb_s = clip_s = adam_s = 0;
  const auto plain0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.steps; ++i) step();
  const double plain = seconds_since(plain0);
  // After the forward and backward: clipping then Adam (--clip-apart), or both in one call.
  const auto update_times = [&](double steps) {
    return o.clip_apart ? fmt_ms("clipping", clip_s / steps) + ", " + fmt_ms("Adam", adam_s / steps)
                        : fmt_ms("clipping and Adam", adam_s / steps);
  };
  std::printf("without the profiler: %.2f ms per step (%.0f target tokens/s): forward and backward %.2f ms, %s\n",
              1e3 * plain / o.steps, static_cast<double>(tokens) * o.steps / plain, 1e3 * fb_s / o.steps,
              update_times(o.steps).c_str());
  fb_s = clip_s = adam_s = 0;

  torch::autograd::profiler::enableProfilerLegacy(
      torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.steps; ++i) step();
  const double wall = seconds_since(t0);
  const auto events = torch::autograd::profiler::disableProfilerLegacy();
  const auto totals = self_times(events);

  std::printf("shape %d+%d layers, d %d, ff %d, %d heads, %.2f M parameters; %s; %d thread%s, %s\n", o.layers, o.layers,
              o.d, o.ff, o.heads, static_cast<double>(model->parameter_count()) / 1e6,
              o.precision == ts::Precision::kFp32                ? "fp32"
              : ts::uses_bf16_products(cpu, o.precision, shares) ? "bf16 on the CPU's dot products (bf16_linear)"
                                                                 : "bf16 autocast",
              threads, threads == 1 ? "" : "s",
              shares > 1 ? "each thread on its share of the batch" : "the whole batch on LibTorch's threads");
  std::printf("batch: %d sentences of %d tokens a side, %lld target tokens; %d steps recorded\n", o.sentences, o.length,
              static_cast<long long>(tokens), o.steps);
  std::printf("per step: %.2f ms (%.0f target tokens/s under the profiler): forward and backward %.2f ms, %s\n",
              1e3 * wall / o.steps, static_cast<double>(tokens) * o.steps / wall, 1e3 * fb_s / o.steps,
              update_times(o.steps).c_str());
  std::vector<std::pair<std::string, Total>> sorted(totals.begin(), totals.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second.self_us > b.second.self_us; });
  // With shares, every thread records its own operators: their time is the threads' time. On LibTorch's
  // threads (bf16, or --whole-batch), an operator is recorded once, on the calling thread, for the span
  // its parallel work takes: the wall time.
  const double capacity_us = wall * 1e6 * shares;
  double covered = 0;
  for (const auto& [name, t] : sorted) covered += t.self_us;
  std::printf("%-58s %10s %12s %8s\n",
              shares > 1 ? "operator (self time, all threads)" : "operator (self time, the calling thread)",
              "calls/step", "ms/step", shares > 1 ? "share" : "of wall");
  for (std::size_t i = 0; i < sorted.size() && static_cast<int>(i) < o.top; ++i) {
    const auto& [name, t] = sorted[i];
    auto caller = std::max_element(t.callers.begin(), t.callers.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; });
    std::printf("%-58.58s %10.1f %12.3f %7.1f%%  mostly under %s\n", name.c_str(),
                static_cast<double>(t.calls) / o.steps, t.self_us / 1e3 / o.steps, 100 * t.self_us / capacity_us,
                caller == t.callers.end() ? "-" : caller->first.c_str());
  }
  std::printf("%-58s %10s %12.3f %7.1f%%\n", "all operators", "", covered / 1e3 / o.steps, 100 * covered / capacity_us);
  std::printf("%-58s %10s %12.3f %7.1f%%\n", "outside operators (our kernels, waiting)", "",
              (capacity_us - covered) / 1e3 / o.steps, 100 * (capacity_us - covered) / capacity_us);
  return 0;
}
