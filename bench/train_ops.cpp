// SPDX-License-Identifier: GPL-3.0-or-later
// Two parts of a training step timed alone, old way against new: the hash dropout's one-element loop
// against its AVX-512 pass (fp32 and bf16), and LibTorch's label-smoothed cross-entropy against ours
// (forward and backward), and the attention's products through at::matmul against attention_matmul
// (forward and backward, fp32), and a linear layer in fp32, under bf16 autocast, as bf16_linear and
// as fp16_linear (forward and backward). Prints the median of 20 repetitions in milliseconds.
//   ts_bench_train_ops [TOKENS] [WIDTH] [VOCAB]     (defaults 1000 1024 8000: a 1,000-token batch of the
//                                                   default recipe's base model)
//   ts_bench_train_ops --step-tail [VOCAB]          (the step's tail alone, below; vocabulary 8000)
//   ts_bench_train_ops --tiles [ROWS]               (the AMX tiles' products alone, below; a share of ROWS
//                                                   tokens, 352 by default)
//   ts_bench_train_ops --output-loss [ROWS] [VOCAB] [D]  (the output layer and the loss on bf16 products,
//                                                   two nodes against one, below; 416 8000 192)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/optim/adam.h>

#include "ts/host/amx_tiles.h"
#include "ts/model/attention.h"
#include "ts/model/fp16_products.h"
#include "ts/host/blas.h"
#include "ts/model/bf16_products.h"
#include "ts/model/precision.h"
#include "ts/train/config.h"
#include "ts/train/loss.h"
#include "ts/train/optimizer.h"
#include "ts/train/trainer.h"
#include "ts/model/transformer.h"
#include "ts/text/vocab.h"

namespace {
double median_ms(const std::function<void()>& f) {
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < 20; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The step's tail after the shares' forward and backward, for the parameters of the default recipe's
// "small" and "base" models (2+2 d 192, 3+3 d 256) with VOCAB tokens a side: two shares' gradients added
// up (add_share_gradients), then the clipping factor and the Adam update (clipped_fused_adam_step).
// Each is printed with the rate at which it moves memory (the sum reads two gradients and writes one,
// 12 bytes a parameter; the norm reads one, 4; Adam reads four and writes three, 28), next to LibTorch's
// add of two 16 M-float tensors on all threads, a measure of the memory's rate.
void step_tail(std::int64_t vocab) {
  const std::int64_t n = 16 << 20;
  const auto a = at::randn({n}), b = at::randn({n});
  auto c = at::empty({n});
  const double add_ms = median_ms([&] { at::add_out(c, a, b); });
  std::printf("memory: LibTorch's add of two %lld-float tensors %7.3f ms (%.1f GB/s)\n", static_cast<long long>(n),
              add_ms, 12.0 * static_cast<double>(n) / add_ms / 1e6);
  for (const auto& [layers, d] : std::vector<std::pair<int, int>>{{2, 192}, {3, 256}}) {
    auto config = ts::preset("auto");
    config.model.encoder_layers = config.model.decoder_layers = layers;
    config.model.d_model = d;
    config.model.d_ff = 4 * d;
    config.model.heads = 4;
    config.model.share_embeddings = false;  // a vocabulary for each side, as en-zh trains
    at::manual_seed(0);
    auto model = ts::build_model(config.model, vocab, vocab, ts::Vocab::kPad, /*shared_vocab=*/false);
    const auto parameters = model->parameters();
    torch::optim::Adam optimizer(parameters, torch::optim::AdamOptions(1e-4).betas({0.9, 0.98}).eps(1e-9));
    std::vector<std::vector<at::Tensor>> shares(2);
    double numel = 0;
    for (const auto& p : parameters) numel += static_cast<double>(p.numel());
    std::vector<double> sum_ms, update_ms;
    for (int i = 0; i < 23; ++i) {
      ts::clear_gradients(parameters);
      for (auto& share : shares) {  // new tensors each time, as autograd hands them over
        share.clear();
        for (const auto& p : parameters) share.push_back(at::randn_like(p));
      }
      auto t = std::chrono::steady_clock::now();
      ts::add_share_gradients(shares, parameters);
      const auto t1 = std::chrono::steady_clock::now();
      ts::clipped_fused_adam_step(optimizer, 1.0);
      const auto t2 = std::chrono::steady_clock::now();
      if (i < 3) continue;
      sum_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t).count());
      update_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    }
    std::sort(sum_ms.begin(), sum_ms.end());
    std::sort(update_ms.begin(), update_ms.end());
    const double s = sum_ms[sum_ms.size() / 2], u = update_ms[update_ms.size() / 2];
    std::printf(
        "step tail, %d+%d d %d, %.2f M parameters in %zu tensors: two shares' gradients summed %7.3f ms (%.1f GB/s)   "
        "clipping and Adam %7.3f ms (%.1f GB/s)\n",
        layers, layers, d, numel / 1e6, parameters.size(), s, 12 * numel / s / 1e6, u, 32 * numel / u / 1e6);
  }
}
// The AMX tiles' products alone, from packed operands, on one thread: first a 32 × 32 product with
// K 768 repeated, whose operands and result stay in the core's L1 cache (what the tiles give this VM's
// minute without memory), then the products of one training share of ROWS tokens for the default
// recipe's 2+2 d 192 (forward x · Wᵀ, dX = G · W, dW = Gᵀ · X, each layer's shapes, and the output
// projection for 2,816 and 8,000 tokens). The minimum of 7 rounds.
void tiles(std::int64_t rows) {
  if (!ts::amx::available()) {
    std::printf("this CPU (or its operating system) gives no AMX tiles\n");
    return;
  }
  const auto run = [](std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t repeats) {
    const std::int64_t pairs = ts::amx::padded_pairs(k);
    std::vector<std::uint32_t> a(static_cast<std::size_t>(ts::amx::packed_a_words(m, pairs)), 0x3f803f80u);
    std::vector<std::uint32_t> b(static_cast<std::size_t>(ts::amx::column_blocks(n) * pairs * 16), 0x3f803f80u);
    std::vector<float> bias(static_cast<std::size_t>((ts::amx::column_blocks(n) + 1) * 16), 0.0f);
    std::vector<float> c(static_cast<std::size_t>(m * n));
    double best = 1e30;
    for (int round = 0; round < 7; ++round) {
      const auto start = std::chrono::steady_clock::now();
      for (std::int64_t r = 0; r < repeats; ++r)
        ts::amx::multiply(a.data(), m, b.data(), n, pairs, bias.data(), c.data());
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return std::make_pair(best / static_cast<double>(repeats) * 1e3,
                          2.0 * static_cast<double>(m * n * k * repeats) / best / 1e9);
  };
  const auto [l1_ms, l1] = run(32, 32, 768, 5000);
  std::printf("tiles, 32 x 32, K 768, operands in L1: %.4f ms, %.0f GFLOP/s\n", l1_ms, l1);
  struct Shape {
    const char* what;
    std::int64_t m, n, k;
  };
  const std::int64_t d = 192, ff = 768;
  const std::vector<Shape> shapes = {{"forward, d -> d", rows, d, d},
                                     {"forward, d -> 3d", rows, 3 * d, d},
                                     {"forward, d -> ff", rows, ff, d},
                                     {"forward, ff -> d", rows, d, ff},
                                     {"forward, d -> 2,816", rows, 2816, d},
                                     {"forward, d -> 8,000", rows, 8000, d},
                                     {"dX, d -> d", rows, d, d},
                                     {"dX, ff -> d", rows, ff, d},
                                     {"dX, 2,816 -> d", rows, d, 2816},
                                     {"dX, 8,000 -> d", rows, d, 8000},
                                     {"dW, d -> d", d, d, rows},
                                     {"dW, d -> ff", ff, d, rows},
                                     {"dW, ff -> d", d, ff, rows},
                                     {"dW, d -> 2,816", 2816, d, rows},
                                     {"dW, d -> 8,000", 8000, d, rows}};
  for (const auto& s : shapes) {
    const auto [ms, rate] = run(s.m, s.n, s.k, 1 + 200000000 / (s.m * s.n * s.k));
    std::printf("%-22s m %5lld n %5lld k %5lld  %8.4f ms  %5.0f GFLOP/s\n", s.what, static_cast<long long>(s.m),
                static_cast<long long>(s.n), static_cast<long long>(s.k), ms, rate);
  }
}
// The output layer and the loss, forward and backward, on one thread (a share of the batch) on bf16
// products, on each kernel the CPU has: bf16_linear then smoothed_cross_entropy_sum (two nodes: the
// loss writes G [ROWS, VOCAB] whole, both backward products pack it) against
// projected_cross_entropy_sum (one node: G made and packed 32 rows at a time). Label smoothing 0.1,
// every 7th row padding; the median of 20, and the gradients compared bit for bit.
void output_loss(std::int64_t rows, std::int64_t vocab, std::int64_t d) {
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  at::manual_seed(3);
  const auto hidden0 = at::randn({rows, d}), weight0 = at::randn({vocab, d}) * 0.1, bias0 = at::zeros({vocab});
  auto targets = at::randint(1, vocab, {rows}, at::kLong);
  targets.index_put_({at::arange(0, rows, 7)}, 0);
  for (const auto kernel : {ts::Bf16Kernel::kDotProducts, ts::Bf16Kernel::kTiles}) {
    if (!ts::bf16_kernel_available(kernel)) continue;
    const ts::Bf16KernelScope on(kernel);
    const ts::Bf16ProductsScope products;
    std::vector<at::Tensor> grads[2];
    const auto run = [&](bool fused) {
      auto h = hidden0.detach().requires_grad_(true), w = weight0.detach().requires_grad_(true),
           b = bias0.detach().requires_grad_(true);
      const auto loss = fused ? ts::projected_cross_entropy_sum(h, w, b, targets, 0, 0.1)
                              : ts::smoothed_cross_entropy_sum(ts::bf16_linear(h, w, b), targets, 0, 0.1);
      torch::autograd::backward({loss});
      auto& kept = grads[fused ? 1 : 0];
      kept.clear();
      for (const auto* t : {&h, &w, &b}) kept.emplace_back(t->grad());
    };
    const double two = median_ms([&] { run(false); });
    const double one = median_ms([&] { run(true); });
    bool same = true;
    for (std::size_t i = 0; i < 3; ++i) same = same && at::equal(grads[0][i], grads[1][i]);
    std::printf(
        "output layer and loss, %s, %lld rows x %lld, d %lld, one thread: two nodes %7.2f ms   one node "
        "%7.2f ms   %.2fx   gradients %s\n",
        ts::bf16_kernel_name(kernel), static_cast<long long>(rows), static_cast<long long>(vocab),
        static_cast<long long>(d), two, one, two / one, same ? "the same bits" : "DIFFER");
  }
  at::set_num_threads(threads);
}
}  // namespace

int main(int argc, char** argv) {
  ts::use_the_right_blas_kernels(argv);  // OpenBLAS kernels for this CPU, as the app gets them
  if (argc > 1 && std::string(argv[1]) == "--step-tail") {
    std::printf("threads %d (all cores, as training uses them)\n", ts::configure_threads(0));
    step_tail(argc > 2 ? std::atoll(argv[2]) : 8000);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--tiles") {
    tiles(argc > 2 ? std::atoll(argv[2]) : 352);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--output-loss") {
    if (!ts::bf16_dot_products_available()) {
      std::printf("this CPU has no AVX-512 BF16 dot products\n");
      return 0;
    }
    output_loss(argc > 2 ? std::atoll(argv[2]) : 416, argc > 3 ? std::atoll(argv[3]) : 8000,
                argc > 4 ? std::atoll(argv[4]) : 192);
    return 0;
  }
  const std::int64_t tokens = argc > 1 ? std::atoll(argv[1]) : 1000;
  const std::int64_t width = argc > 2 ? std::atoll(argv[2]) : 1024;
  const std::int64_t vocab = argc > 3 ? std::atoll(argv[3]) : 8000;
  std::printf("threads %d, tokens %lld, width %lld, vocabulary %lld\n", at::get_num_threads(),
              static_cast<long long>(tokens), static_cast<long long>(width), static_cast<long long>(vocab));
  for (const auto dtype : {at::kFloat, at::kBFloat16}) {
    const auto x = at::randn({tokens, width}).to(dtype);
    const double loop = median_ms([&] { ts::detail::hash_dropout(x, 7, 0.1, /*vectorised=*/false); });
    const double vector = median_ms([&] { ts::detail::hash_dropout(x, 7, 0.1, /*vectorised=*/true); });
    std::printf("dropout %-5s  one-element loop %7.3f ms   AVX-512 %7.3f ms   %.1fx\n",
                dtype == at::kFloat ? "fp32" : "bf16", loop, vector, loop / vector);
  }
  const auto targets = at::randint(1, vocab, {tokens}, at::kLong);
  for (const auto dtype : {at::kFloat, at::kBFloat16}) {
    for (const double smoothing : {0.0, 0.1}) {
      const auto base = (at::randn({tokens, vocab}) * 2).to(dtype);
      const auto run = [&](bool ours) {
        auto logits = base.detach().requires_grad_(true);
        const auto loss =
            ours ? ts::smoothed_cross_entropy_sum(logits, targets, 0, smoothing)
                 : at::cross_entropy_loss(logits.to(at::kFloat), targets, {}, at::Reduction::Sum, 0, smoothing);
        torch::autograd::backward({loss});
      };
      const double theirs = median_ms([&] { run(false); });
      const double ours = median_ms([&] { run(true); });
      std::printf("loss %-5s smoothing %.1f  LibTorch %7.2f ms   one node %7.2f ms   %.2fx\n",
                  dtype == at::kFloat ? "fp32" : "bf16", smoothing, theirs, ours, theirs / ours);
    }
  }
  // Layer norm forward and backward on one thread (as in a share of the batch), 352 rows (a share of the
  // default recipe's batch) of 192 and 256: LibTorch's against ts::layer_norm.
  {
    const int threads = at::get_num_threads();
    at::set_num_threads(1);
    for (const std::int64_t d : {192, 256}) {
      const auto x0 = at::randn({352, d}), w0 = at::randn({d}), b0 = at::randn({d}), g = at::randn({352, d});
      const auto run = [&](bool ours) {
        const auto x = x0.detach().requires_grad_(true), w = w0.detach().requires_grad_(true),
                   b = b0.detach().requires_grad_(true);
        const auto y = ours ? ts::layer_norm(x, w, b, 1e-6) : at::layer_norm(x, {d}, w, b, 1e-6);
        torch::autograd::backward({y}, {g});
      };
      const double theirs = median_ms([&] { run(false); });
      const double ours = median_ms([&] { run(true); });
      std::printf(
          "layer norm 352 x %lld, one thread, forward and backward  LibTorch %7.3f ms   ours %7.3f ms   %.2fx\n",
          static_cast<long long>(d), theirs, ours, theirs / ours);
    }
    at::set_num_threads(threads);
  }
  // The attention's two products, forward and backward, in fp32: a batch of 32 sentences (a thread's
  // share of 64), 4 heads of 48 (d 192), T query and S key positions, from views as the model makes them.
  for (const std::int64_t t : {12, 30}) {
    const std::int64_t b = 32, h = 4, k = 48, s = t;
    const auto qkv = at::randn({b, t, 3 * h * k});
    const auto heads = [&](int part) {
      return qkv.slice(2, part * h * k, (part + 1) * h * k).view({b, t, h, k}).transpose(1, 2);
    };
    const auto run = [&](bool ours) {
      auto q = heads(0).detach().requires_grad_(true), kk = heads(1).detach().requires_grad_(true);
      auto v = heads(2).detach().requires_grad_(true);
      const auto scores = ours ? ts::attention_matmul(q, kk, true) : at::matmul(q, kk.transpose(-2, -1));
      const auto context =
          ours ? ts::attention_matmul(at::softmax(scores, -1), v, false) : at::matmul(at::softmax(scores, -1), v);
      torch::autograd::backward({context.sum()});
    };
    const double theirs = median_ms([&] { run(false); });
    const double ours = median_ms([&] { run(true); });
    std::printf(
        "attention products, %lld x %lld heads, T = S = %lld, K = %lld  at::matmul %7.3f ms   "
        "attention_matmul %7.3f ms   %.2fx\n",
        static_cast<long long>(b), static_cast<long long>(h), static_cast<long long>(t), static_cast<long long>(k),
        theirs, ours, theirs / ours);
    (void)s;
  }
  // A linear layer's forward and its two backward products at the default recipe's shapes ("mini",
  // "small" and "base": d 128, 192 and 256), for one
  // thread's share of a 1,000-token batch (500 rows): LibTorch in fp32, LibTorch under bf16 autocast
  // (oneDNN), bf16_linear on AVX-512 BF16 dot products, fp16_linear (AVX-512 FP16 multiply-adds) and
  // bf16_linear on AMX tiles, with the GFLOP/s of the three products.
  const bool dots = ts::bf16_dot_products_available(), halves = ts::fp16_products_available();
  const bool tiles = ts::bf16_kernel_available(ts::Bf16Kernel::kTiles);
  for (const auto& shape : std::vector<std::pair<std::int64_t, std::int64_t>>{{128, 384},
                                                                              {128, 512},
                                                                              {512, 128},
                                                                              {128, 8000},
                                                                              {192, 576},
                                                                              {192, 768},
                                                                              {768, 192},
                                                                              {256, 1024},
                                                                              {1024, 256},
                                                                              {256, 8000}}) {
    const std::int64_t rows = tokens / 2, in = shape.first, out = shape.second;
    const auto x0 = at::randn({rows, in});
    const auto w0 = at::randn({out, in}) * 0.05;
    const auto b0 = at::randn({out});
    const auto run = [&](int how) {
      auto x = x0.detach().requires_grad_(true), w = w0.detach().requires_grad_(true);
      auto b = b0.detach().requires_grad_(true);
      at::Tensor y;
      // forward and backward on this thread's kernel (LibTorch runs a CPU backward on the calling thread)
      ts::Bf16KernelScope kernel(how == 4 ? ts::Bf16Kernel::kTiles : ts::Bf16Kernel::kDotProducts);
      if (how == 2 || how == 4) {
        y = ts::bf16_linear(x, w, b);
      } else if (how == 3) {
        y = ts::fp16_linear(x, w, b);
      } else {
        ts::AutocastScope autocast(how == 1 ? ts::Precision::kBf16 : ts::Precision::kFp32, at::kCPU);
        y = at::linear(x, w, b);
      }
      torch::autograd::backward({y}, {at::ones_like(y)});
    };
    const double flops = 6.0 * static_cast<double>(rows * in * out);
    const double fp32 = median_ms([&] { run(0); });
    const double bf16 = median_ms([&] { run(1); });
    const double ours = dots ? median_ms([&] { run(2); }) : 0.0;
    const double half = halves ? median_ms([&] { run(3); }) : 0.0;
    const double tile = tiles ? median_ms([&] { run(4); }) : 0.0;
    std::printf(
        "linear %lld rows, %lld -> %lld, forward and backward  fp32 %7.3f ms (%.0f GFLOP/s)   autocast bf16 %7.3f ms "
        "(%.0f)   bf16_linear dots %7.3f ms (%.0f)   fp16_linear %7.3f ms (%.0f)   bf16_linear AMX %7.3f ms (%.0f)\n",
        static_cast<long long>(rows), static_cast<long long>(in), static_cast<long long>(out), fp32, flops / fp32 / 1e6,
        bf16, flops / bf16 / 1e6, ours, dots ? flops / ours / 1e6 : 0.0, half, halves ? flops / half / 1e6 : 0.0, tile,
        tiles ? flops / tile / 1e6 : 0.0);
  }
  step_tail(vocab);
  return 0;
}
