// SPDX-License-Identifier: GPL-3.0-or-later
// Model folders: a trained model in a form other tools read, and that the app reads back with
// identical output. A translation model:
//
//   DIR/model.safetensors   the weights, by their LibTorch names (src_embed.weight,
//                           encoder.0.self_attention.qkv.weight, ..., output_bias)
//   DIR/config.json         {"format": "transformer-studio-model", "version": 1, "model": {...},
//                           "pipeline": {...tokenizers and vocabularies...}, "special_ids": {...},
//                           "source": {...where it came from...}}
//   DIR/src.spm, tgt.spm    the SentencePiece models, when a side uses one
//   DIR/README.md           what each file is, and how to load it (docs/export.md)
//
// A language model ("kind": "lm"): model.safetensors (token_embed.weight, position_embed.weight,
// blocks.0.attention.qkv.weight, ..., or table.weight for a bigram), config.json ("model": the
// LmConfig, "codec": the vocabulary and SentencePiece tokenizer), tokenizer.spm for bpe/unigram, README.md.
//
// docs/export.md and docs/export_example.py show the folder loaded into plain PyTorch.
#pragma once

#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "ts/lm/lm_trainer.h"
#include "ts/train/checkpoint.h"

namespace ts {

struct ExportSummary {
  std::string dir;
  std::vector<std::string> files;  // written, in order
  std::int64_t parameters = 0;
  std::uint64_t bytes = 0;
};

/// Writes the model of `checkpoint` (a checkpoint file or an exported folder; weights only, no
/// optimizer) into `dir`: a translation model, or a language model through export_language_model.
/// `dir` is created if needed; an existing folder must be empty or an earlier export (its files
/// are replaced). Throws CheckpointError naming the file or folder.
ExportSummary export_model(const std::string& checkpoint, const std::string& dir);

/// The same for a language-model checkpoint.
ExportSummary export_language_model(const std::string& checkpoint, const std::string& dir);

/// "translation" or "lm": what a checkpoint file or exported folder holds (throws CheckpointError
/// for anything else).
std::string model_kind(const std::string& path);

/// True when `path` is a folder written by export_model (it has config.json and model.safetensors).
bool is_model_folder(const std::string& path);

/// Rebuilds the model of an exported folder onto `device` (load_checkpoint does this too for a
/// folder). The position's step is the one it was exported at; there is no optimizer state: a folder
/// can be translated with, not resumed. Throws CheckpointError naming the file.
LoadedModel import_model(const std::string& dir, const at::Device& device);

/// Rebuilds the language model of an exported folder onto `device`, in eval mode
/// (load_lm_checkpoint does this too for a folder).
LoadedLanguageModel import_language_model(const std::string& dir, const at::Device& device);

}  // namespace ts
