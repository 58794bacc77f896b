// SPDX-License-Identifier: GPL-3.0-or-later
// Version-1 checkpoints (Transformer Studio 0.1): a LibTorch archive under the envelope's header
// line. LibTorch's archive reader is TorchScript's module loader, so a crafted file can crash it or
// worse; the current loader refuses these files, and this converter is the one place that still
// opens them, on the user's explicit request (`transformer-studio-cli upgrade-checkpoint`).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace ts {

/// A model of a kind other than translation, rebuilt from a version-1 file's metadata so LibTorch
/// can map the archive's tensors onto it. The language models (ts/lm, a layer above this one) give
/// theirs with legacy_language_model (ts/lm/lm_export.h).
struct LegacyModel {
  std::shared_ptr<torch::nn::Module> module;
  std::shared_ptr<torch::optim::Optimizer> optimizer;
  std::string what;                                       // "language model", for the summary
  std::vector<std::pair<std::string, std::string>> rngs;  // generator states: archive name -> tensor name
};
using LegacyModelBuilder = std::function<LegacyModel(const nlohmann::json& meta)>;

/// Converts the version-1 checkpoint `input` (a translation model, or a kind `other_kinds` knows by
/// its metadata's "kind", with its optimizer and RNG state when present) into the current format at
/// `output`, written atomically (`output` may be `input`). Verifies the old header and SHA-256 first.
/// Only for files you trust. Throws CheckpointError naming the file; returns a one-line summary of
/// what was converted.
std::string upgrade_legacy_checkpoint(const std::string& input, const std::string& output,
                                      const std::map<std::string, LegacyModelBuilder>& other_kinds = {});

}  // namespace ts
