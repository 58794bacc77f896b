// SPDX-License-Identifier: GPL-3.0-or-later
// Version-1 checkpoints (Transformer Studio 0.1): a LibTorch archive under the envelope's header
// line. LibTorch's archive reader is TorchScript's module loader, so a crafted file can crash it or
// worse; the current loader refuses these files, and this converter is the one place that still
// opens them, on the user's explicit request (`transformer-studio-cli upgrade-checkpoint`).
#pragma once

#include <string>

namespace ts {

/// Converts the version-1 checkpoint `input` (translation or language model, with its optimizer
/// and RNG state when present) into the current format at `output`, written atomically (`output`
/// may be `input`). Verifies the old header and SHA-256 first. Only for files you trust.
/// Throws CheckpointError naming the file; returns a one-line summary of what was converted.
std::string upgrade_legacy_checkpoint(const std::string& input, const std::string& output);

}  // namespace ts
