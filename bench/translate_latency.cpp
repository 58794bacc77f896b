// SPDX-License-Identifier: GPL-3.0-or-later
// Interactive translation latency (issue 6, target 3): how long one sentence takes to translate with
// attention captured, greedy and beam 5, on the CPU threads given.
//
//   ts_bench_translate [--checkpoint FILE] [--sentence TEXT] [--runs N] [--threads N] [--out-len N]
//                      [--mode greedy|beam|all] [--weights fp32|bf16|int8|aten|all]
//
// --weights picks how the decoder steps run (decode.weights; "aten" is LibTorch's own ops, the path
// before packed weights); "all" (the default) measures each in turn.
//
// With a checkpoint it translates `--sentence` as the app does. Without one it builds the Annotated
// preset (6+6 layers, d 256, ff 1024, 8 heads) with random weights and the vocabulary sizes of the
// English→Chinese cmn.txt setup; a random model almost never emits EOS, so every decode runs exactly
// --out-len steps (default 14: a 12-word sentence and its punctuation and EOS), which makes runs
// comparable without a trained model.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include "ts/decode/search.h"
#include "ts/host/blas.h"
#include "ts/decode/translator.h"
#include "ts/train/checkpoint.h"
#include "ts/train/config.h"
#include "ts/train/trainer.h"

namespace {

struct Args {
  std::string checkpoint;
  std::string sentence = "I think it is going to rain this afternoon, so take your umbrella.";
  std::string mode = "all";  // "greedy", "beam" or "all"
  std::string weights = "all";
  int runs = 30, threads = 0, out_len = 14;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--checkpoint")
      a.checkpoint = value();
    else if (k == "--sentence")
      a.sentence = value();
    else if (k == "--runs")
      a.runs = std::max(1, std::atoi(value().c_str()));
    else if (k == "--threads")
      a.threads = std::max(0, std::atoi(value().c_str()));
    else if (k == "--out-len")
      a.out_len = std::max(1, std::atoi(value().c_str()));
    else if (k == "--mode")
      a.mode = value();
    else if (k == "--weights")
      a.weights = value();
    else {
      std::fprintf(
          stderr,
          "usage: %s [--checkpoint FILE] [--sentence TEXT] [--runs N] [--threads N] [--out-len N] [--mode greedy|beam|all] [--weights fp32|bf16|int8|aten|all]\n",
          argv[0]);
      std::exit(k == "--help" ? 0 : 2);
    }
  }
  return a;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::min<double>(v.size() - 1, p * (v.size() - 1) + 0.5));
  return v[i];
}

std::string g_mode = "all";

template <class F>
void measure(const char* name, int runs, F&& decode) {
  const std::string n = name;
  if (g_mode != "all" && n.rfind(g_mode, 0) != 0) return;  // --mode picks the lines that start with it
  decode();                                                // warm-up: first-call allocations and kernel selection
  std::vector<double> ms;
  std::size_t tokens = 0;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    tokens = decode();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%-22s p50 %7.1f ms   p90 %7.1f ms   min %7.1f ms   (%zu output tokens, %d runs)\n", name,
              percentile(ms, 0.5), percentile(ms, 0.9), *std::min_element(ms.begin(), ms.end()), tokens, runs);
}

}  // namespace

int main(int argc, char** argv) {
  ts::use_the_right_blas_kernels(argv);  // OpenBLAS kernels for this CPU, as the app gets them
  const Args a = parse(argc, argv);
  g_mode = a.mode;
  const int threads = ts::configure_threads(a.threads);
  ts::DecodeConfig greedy;
  ts::DecodeConfig beam;
  beam.mode = ts::DecodeMode::kBeam;
  beam.beam = 5;
  std::vector<std::string> formats{"libtorch", "fp32", "bf16", "int8"};
  if (a.weights != "all") formats = {a.weights == "aten" ? "libtorch" : a.weights};
  if (!a.checkpoint.empty()) {
    auto translator = ts::load_translator(a.checkpoint, at::Device(at::kCPU));
    std::printf("checkpoint %s, %d threads, sentence: %s\n", a.checkpoint.c_str(), threads, a.sentence.c_str());
    for (const auto& weights : formats)
      for (auto [name, config] : {std::pair{"greedy + attention", greedy}, std::pair{"beam 5 + attention", beam}}) {
        config.weights = ts::parse_decode_weights(weights);
        const auto label = std::string(name) + ", " + weights;
        measure(label.c_str(), a.runs,
                [&, config = config] { return translator.translate(a.sentence, config, true).target_tokens.size(); });
        std::printf("    -> %s\n", translator.translate(a.sentence, config, true).text.c_str());
      }
    return 0;
  }
  auto config = ts::preset("annotated");
  const std::int64_t src_vocab = 7094, tgt_vocab = 2830;  // cmn.txt English words -> Chinese characters
  at::manual_seed(1);
  auto model = ts::build_model(config.model, src_vocab, tgt_vocab, /*pad_id=*/0, /*shared_vocab=*/false);
  model->eval();
  std::vector<std::int64_t> src;
  for (int i = 0; i < 13; ++i) src.push_back(4 + (i * 37) % (src_vocab - 4));  // 12 words and a full stop
  src.push_back(3);                                                            // EOS
  for (auto* d : {&greedy, &beam}) {
    d->max_len_a = 0;
    d->max_len_b = a.out_len;
  }
  std::printf("annotated preset, random weights (%.1f M parameters), %d threads, %zu source tokens\n",
              model->parameter_count() / 1e6, threads, src.size());
  for (const auto& weights : formats) {
    for (auto [name, config] : {std::pair{"greedy + attention", greedy}, std::pair{"beam 5 + attention", beam},
                                std::pair{"greedy, no attention", greedy}}) {
      config.weights = ts::parse_decode_weights(weights);
      const bool record = std::string(name).find("no attention") == std::string::npos;
      const auto label = std::string(name) + ", " + weights;
      measure(label.c_str(), a.runs,
              [&, config = config] { return ts::search(model, src, config, record).front().token_log_probs.size(); });
    }
  }
  const auto src_t = at::tensor(src, at::kLong).unsqueeze(0);
  measure("encoder only", a.runs, [&] {
    torch::NoGradGuard no_grad;
    model->encode(src_t, ts::padding_mask(src_t, 0));
    return std::size_t{0};
  });
  return 0;
}
