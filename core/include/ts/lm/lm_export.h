// SPDX-License-Identifier: GPL-3.0-or-later
// A language model as a folder other tools read ("kind": "lm"): model.safetensors
// (token_embed.weight, position_embed.weight, blocks.0.attention.qkv.weight, ..., or table.weight for
// a bigram), config.json ("model": the LmConfig, "codec": the vocabulary and SentencePiece
// tokenizer), tokenizer.spm for bpe/unigram, README.md. Written and read with the same pieces as a
// translation model's folder (ts/train/model_export.h); docs/export.md describes both.
#pragma once

#include <string>

#include <ATen/ATen.h>

#include "ts/lm/lm_trainer.h"
#include "ts/train/legacy_checkpoint.h"
#include "ts/train/model_export.h"

namespace ts {

/// Writes the language model of `checkpoint` (a checkpoint file or an exported folder) into `dir`,
/// as export_model does for a translation model. Throws CheckpointError naming the file or folder.
ExportSummary export_language_model(const std::string& checkpoint, const std::string& dir);

/// Either kind of model: export_model or export_language_model, as model_kind says.
ExportSummary export_any_model(const std::string& checkpoint, const std::string& dir);

/// Rebuilds the language model of an exported folder onto `device`, in eval mode
/// (load_lm_checkpoint does this too for a folder).
LoadedLanguageModel import_language_model(const std::string& dir, const at::Device& device);

/// How upgrade_legacy_checkpoint (ts/train/legacy_checkpoint.h) rebuilds a version-1 language-model
/// checkpoint: pass {{"lm", legacy_language_model()}} as its `other_kinds`.
LegacyModelBuilder legacy_language_model();

}  // namespace ts
