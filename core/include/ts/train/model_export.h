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
// A language model's folder ("kind": "lm") is written and read by ts/lm/lm_export.h with the same
// pieces (model_folder below).
//
// docs/export.md and docs/export_example.py show the folder loaded into plain PyTorch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "ts/infer/file_translation.h"
#include "ts/model/safetensors.h"
#include "ts/train/checkpoint.h"

namespace ts {

struct ExportSummary {
  std::string dir;
  std::vector<std::string> files;  // written, in order
  std::int64_t parameters = 0;
  std::uint64_t bytes = 0;
};

/// Writes the translation model of `checkpoint` (a checkpoint file or an exported folder; weights
/// only, no optimizer) into `dir`. `dir` is created if needed; an existing folder must be empty or an
/// earlier export (its files are replaced). Throws CheckpointError naming the file or folder, also
/// for a language model (model_kind says which: ts/lm/lm_export.h exports those).
ExportSummary export_model(const std::string& checkpoint, const std::string& dir);

/// "translation" or "lm": what a checkpoint file or exported folder holds (throws CheckpointError
/// for anything else).
std::string model_kind(const std::string& path);

// is_model_folder: ts/infer/file_translation.h (LibTorch-free, so the CLI's front resolves folders too).

/// Rebuilds the model of an exported folder onto `device` (load_checkpoint does this too for a
/// folder). The position's step is the one it was exported at; there is no optimizer state: a folder
/// can be translated with, not resumed. Throws CheckpointError naming the file.
LoadedModel import_model(const std::string& dir, const at::Device& device);

/// The pieces every model folder is written and read with, whatever its kind.
namespace model_folder {

constexpr const char* kFormat = "transformer-studio-model";  // config.json "format"
constexpr int kVersion = 1;                                  // config.json "version"

/// Throws CheckpointError "<path>: <what>".
[[noreturn]] void fail(const std::string& path, const std::string& what);
/// Makes `dir` ready (created, or an empty folder or an earlier export) and writes the weights of
/// `module` (by their names, no prefix) as DIR/model.safetensors: the start of every export.
ExportSummary begin_export(const std::string& dir, const torch::nn::Module& module);
/// Writes config.json, lists the `extra` files already written, and writes README.md: the end of
/// every export.
void end_export(ExportSummary& summary, const nlohmann::json& config, const std::vector<std::filesystem::path>& extra,
                const std::string& readme_text);
/// The SHA-256 of the checkpoint an export came from (empty when it came from a folder).
std::string source_sha256(const std::string& checkpoint);
/// Writes a base64 SentencePiece model found at `tokenizer["model"]` as a plain file, for other
/// readers; false when there is none.
bool write_spm(const nlohmann::json& tokenizer, const std::filesystem::path& path);
/// The kind a model folder's config.json declares ("translation" or "lm"), after checking its
/// format and version; the parsed config goes to `out`.
std::string read_folder_config(const std::string& dir, nlohmann::json& out);
/// The training step a folder was exported at (0 when `source.step` is missing or not a count).
std::int64_t exported_step(const nlohmann::json& source);
/// DIR/model.safetensors, opened (errors as CheckpointError).
SafetensorsReader read_weights(const std::string& dir);

}  // namespace model_folder

}  // namespace ts
