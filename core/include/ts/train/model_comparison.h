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

/// Called before each model is translated: its index, how many there are, and its name.
using CompareProgress = std::function<void(std::size_t index, std::size_t count, const std::string& name)>;

/// Translates the test split of every model (greedy, beam or sampling as its configuration's decode
/// section says, on fp32 weights as `eval` does) and returns the comparison's input: the
/// references and sources of that split, the target side of the first model's training split (for
/// word frequencies), the target language's BLEU tokenisation, one system per model and each
/// output's confidence (mean token log-probability). Throws
/// std::invalid_argument naming the model whose test split holds other sentences than the first's,
/// and CheckpointError for a file that is not a model. `stop` (when given) is checked between
/// models: a stop throws std::runtime_error("stopped").
CompareInput compare_input_from_models(const std::vector<ModelToCompare>& models, const CompareProgress& progress = {},
                                       const std::function<bool()>& stop = {});

}  // namespace ts
