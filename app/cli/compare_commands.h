// SPDX-License-Identifier: GPL-3.0-or-later
// `transformer-studio-cli compare`: two or more systems on one test set, the way MT researchers
// compare them (ts/analysis/compare.h): scores with 95% intervals and paired-bootstrap p-values,
// word accuracy by frequency, sentence buckets, characteristic n-grams and the sentences where the
// systems differ most. Systems are text files (--hyp) or models (--checkpoint, --run), translated
// on their shared test split first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ts/train/model_comparison.h"

namespace CLI {
class App;
}

namespace ts::cli {

/// Prints a comparison's progress to standard error: a line as each model starts and, on a
/// terminal, a line of sentences done that updates in place (`compare`, `runs report --test`).
CompareProgress print_compare_progress();

class CompareCommand {
 public:
  explicit CompareCommand(CLI::App& app);
  bool chosen() const;
  int dispatch();

 private:
  std::string ref_, src_, train_, tokenize_, db_;
  std::vector<std::string> hyps_, names_, checkpoints_;
  std::vector<std::int64_t> runs_;
  int resamples_ = 1000, examples_ = 10, ngrams_ = 10, threads_ = 0;
  std::uint64_t seed_ = 12345;
  bool json_ = false;
  CLI::App* command_ = nullptr;
};

}  // namespace ts::cli
