// SPDX-License-Identifier: GPL-3.0-or-later
// The `auto` recipe: a configuration fitted to a corpus, a direction, a time budget and a machine,
// with a sentence saying why for every choice (shown in the CLI log and the Configuration panel).
// No measurement happens here: the machine enters through MachineProfile (cores, CPU flags, GPU and,
// from ts/train/calibration.h, the measured throughput of the reference model on this machine), and
// the model size follows from that throughput and each size's cost per token. Without a measurement
// the throughput is estimated from constants measured on one machine type, and the reasons say so.
// Pure and quick, so the app can call it whenever the corpus or budget changes.
#pragma once

#include <string>
#include <vector>

#include "ts/text/corpus.h"
#include "ts/train/config.h"

namespace ts {

/// What the recipe needs to know about the machine that will train.
struct MachineProfile {
  int cores = 1;               // threads training will use
  bool cuda = false;           // a CUDA GPU will train
  bool native_bf16 = false;    // the CPU computes bf16 products natively (AMX or AVX-512 BF16)
  bool bf16_products = false;  // bf16 trains on bf16_matmul (ts/model/bf16_products.h), a share per thread
  bool bf16_tiles = false;     // ... on AMX tiles (else on AVX-512 BF16 dot products)
  bool fp16_products = false;  // the CPU has AVX-512 FP16: fp16 trains on it (ts/model/fp16_products.h)
  bool avx512 = false;         // AVX-512F (twice AVX2's fp32 width)
  std::string cpu_model;       // for the log
  /// Measured training throughput of the reference model (ts/train/calibration.h) in target tokens
  /// per second on this device, threads and precision, with auto_batch_tokens() batches; 0: not measured.
  double measured_tokens_per_second = 0;
  double measured_seconds = 0;  // what measuring took
  /// measured_tokens_per_second was given (train --machine-speed), not timed by this process: the
  /// same recipe run after run, where a timing of a few seconds moves with the machine's load.
  bool speed_given = false;
  /// > 1: measured_tokens_per_second is a data-parallel group's, all its ranks together (each its share
  /// of every batch, the gradients summed over them: ts::measure_data_parallel_throughput).
  int data_parallel_ranks = 1;
  /// The precision the person chose (train.precision, --precision); kAuto: the recipe's for this machine.
  Precision precision = Precision::kAuto;
  /// One thread's products in fp32, bf16 and fp16 where precision auto timed them on this CPU
  /// (ts/model/precision.h, cpu_precision_timings); 0: not timed.
  double fp32_product_seconds = 0, bf16_product_seconds = 0, fp16_product_seconds = 0;
  /// What precision auto trains in here: bf16 on a GPU (what the recipe assumes there); on a CPU whose
  /// products were timed, choose_cpu_precision's answer; not timed yet, bf16 where the CPU has native
  /// bf16, else fp32.
  Precision auto_precision() const;
  /// auto_precision() is bf16.
  bool auto_trains_bf16() const { return auto_precision() == Precision::kBf16; }
  /// This machine (LibTorch's device and threads as train.device/threads would pick them, /proc/cpuinfo).
  static MachineProfile detect(DeviceChoice device = DeviceChoice::kAuto, int threads = 0);
  /// Training throughput of the reference model (3+3 layers, d 256, an 8,000-token vocabulary) in
  /// target tokens per second: the measurement when there is one, else estimated_tokens_per_second().
  double reference_tokens_per_second() const;
  /// The estimate from constants (docs/benchmarks.md: one AMD EPYC type's figures, scaled by cores,
  /// vector width and bf16; a guess for a GPU). VMs of one type already differ from it by a third.
  double estimated_tokens_per_second() const;
  /// "AMD EPYC, 2 cores, AVX-512, native bf16" (or "a CUDA GPU"); for a data-parallel group "AMD EPYC,
  /// 2 data-parallel ranks of 1 core each, …".
  std::string describe() const;
};

/// What the recipe saw in the corpus.
struct CorpusShape {
  std::size_t pairs = 0;
  double src_chars_per_sentence = 0, tgt_chars_per_sentence = 0;
  bool src_cjk = false, tgt_cjk = false;  // mostly Han/kana/Hangul characters
  std::size_t src_distinct_chars = 0, tgt_distinct_chars = 0;
};
CorpusShape measure_corpus(const Corpus& corpus, const Direction& direction);

struct RecipeChoice {
  ExperimentConfig config;           // preset "auto", ready to train (overrides may follow)
  std::vector<std::string> reasons;  // one sentence per choice, in the order the log prints them
  /// Target tokens the budget buys at the estimated speed, and the passes over the training pairs
  /// that makes with target tokens estimated from characters (before any tokenizer is trained).
  double budget_target_tokens = 0, estimated_passes = 0;
};

/// The batch size the recipe trains with on this machine, in target tokens (1,000 on a CPU: more
/// updates in a short budget; 8,000 on a GPU).
int auto_batch_tokens(const MachineProfile& machine);

/// Fits the `auto` preset to `corpus` in `direction` for a budget of `budget_minutes` (> 0) on
/// `machine`. The result sets train.budget_minutes to the budget.
RecipeChoice auto_recipe(const Corpus& corpus, const Direction& direction, double budget_minutes,
                         const MachineProfile& machine);

}  // namespace ts
