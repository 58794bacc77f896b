// SPDX-License-Identifier: GPL-3.0-or-later
// Models compared on their shared test split: each checkpoint's test pairs translated with the
// model's own decoding settings, then ts/analysis/compare.h's input. The CLI's `compare --checkpoint`
// and the desktop app's Compare panel both go through here.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ts/analysis/compare.h"

namespace ts {

struct ModelToCompare {
  std::string name;  // shown for the system
  std::string path;  // a checkpoint file or an exported model folder
};

/// The model a path stands for: a run directory its best.ckpt (its last.ckpt when there is no best),
/// a checkpoint file or model folder itself.
std::string model_of_path(const std::string& path);

/// Where a comparison is: model `model` (0-based) of `models`, named `name`, with `done` of the
/// test split's `sentences` translated by it (`done` 0 as it starts; `sentences` 0 until the first
/// model's test split has been read).
struct CompareProgressInfo {
  std::size_t model = 0, models = 0;
  std::string name;
  std::size_t done = 0, sentences = 0;
};
/// Called before each model, and after each batch of sentences it translates.
using CompareProgress = std::function<void(const CompareProgressInfo&)>;

/// Translates the test split of every model (greedy, beam or sampling as its configuration's decode
/// section says, on fp32 weights as `eval` does) and returns the comparison's input: the
/// references and sources of that split, the target side of the first model's training split (for
/// word frequencies), the target language's BLEU tokenisation, one system per model and each
/// output's confidence (mean token log-probability). Throws
/// std::invalid_argument naming the model whose test split holds other sentences than the first's,
/// and CheckpointError for a file that is not a model. `stop` (when given) is checked before each
/// model and after each batch of sentences (default_decode_batch): a stop throws std::runtime_error("stopped").
CompareInput compare_input_from_models(const std::vector<ModelToCompare>& models, const CompareProgress& progress = {},
                                       const std::function<bool()>& stop = {});

}  // namespace ts
