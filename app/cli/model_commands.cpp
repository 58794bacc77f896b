// SPDX-License-Identifier: GPL-3.0-or-later
// export and upgrade-checkpoint (see model_commands.h).
#include "model_commands.h"

#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ts/lm/lm_export.h"
#include "ts/onnx/onnx_export.h"

namespace ts::cli {

namespace fs = std::filesystem;

ModelCommands::ModelCommands(CLI::App& app) {
  export_ = app.add_subcommand("export",
                               "Write a translation or language model as a folder other tools read: model.safetensors, "
                               "config.json (architecture, tokenizers, vocabularies) and README.md");
  export_
      ->add_option("--checkpoint", checkpoint_, "Checkpoint file or run directory (uses its best.ckpt, else last.ckpt)")
      ->required();
  export_->add_option("--out", out_, "Folder to write (created; must be new, empty or an earlier export)")->required();
  export_
      ->add_option("--format", format_,
                   "folder (the default), or onnx: the same folder with encoder.onnx and decoder_step.onnx beside, "
                   "graphs any ONNX runtime runs (translation models; docs/export.md, examples/onnx)")
      ->check(CLI::IsMember({"folder", "onnx"}));
  upgrade_ =
      app.add_subcommand("upgrade-checkpoint",
                         "Convert a checkpoint written by Transformer Studio 0.1 (a LibTorch archive) to the current "
                         "format. Opening the old format runs LibTorch's TorchScript loader: only for files you trust");
  upgrade_->add_option("checkpoint", checkpoint_, "The old checkpoint")->required();
  upgrade_->add_option("--out", out_, "Where to write the converted checkpoint (default: replace the old one)");
}

bool ModelCommands::chosen() const { return export_->parsed() || upgrade_->parsed(); }

int ModelCommands::dispatch() {
  if (upgrade_->parsed()) {
    fmt::print("{}\n", upgrade_legacy_checkpoint(checkpoint_, out_.empty() ? checkpoint_ : out_,
                                                 {{"lm", legacy_language_model()}}));
    return 0;
  }
  std::string checkpoint = checkpoint_;
  if (fs::is_directory(checkpoint) && !is_model_folder(checkpoint)) {
    const auto best = fs::path(checkpoint) / "best.ckpt";
    checkpoint = (fs::exists(best) ? best : fs::path(checkpoint) / "last.ckpt").string();
  }
  const auto format = parse_export_format(format_);
  const auto summary = export_model_as(checkpoint, out_, format);
  fmt::print("exported {} ({} parameters) to {}:\n", checkpoint, summary.parameters, summary.dir);
  for (const auto& f : summary.files) fmt::print("  {}  {} bytes\n", f, fs::file_size(f));
  if (model_kind(summary.dir) == "lm")
    fmt::print("generate with: transformer-studio-cli lm-generate --checkpoint {}\n", summary.dir);
  else
    fmt::print("translate with: transformer-studio-cli translate --checkpoint {}\n", summary.dir);
  if (format == ExportFormat::kOnnx)
    fmt::print("or in ONNX Runtime (opset {}): node examples/onnx/translate.js {} < sentences.txt\n", kOnnxOpset,
               summary.dir);
  return 0;
}

}  // namespace ts::cli
