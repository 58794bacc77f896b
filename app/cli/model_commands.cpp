// SPDX-License-Identifier: GPL-3.0-or-later
// export, upgrade-checkpoint and shortlist (see model_commands.h).
#include "model_commands.h"

#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ts/decode/shortlist.h"
#include "ts/lm/lm_export.h"
#include "ts/onnx/onnx_export.h"
#include "ts/train/checkpoint.h"
#include "ts/train/model_comparison.h"

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
  shortlist_ = app.add_subcommand(
      "shortlist",
      "Make a run's lexical shortlist from its training pairs (shortlist.safetensors beside the checkpoint): "
      "`translate --shortlist` then scores each sentence's likely target tokens instead of the whole vocabulary");
  shortlist_->add_option("--checkpoint", checkpoint_, "Checkpoint file or run directory")->required();
  shortlist_->add_option("--frequent", frequent_, "The most frequent target tokens, in every sentence's list")
      ->check(CLI::Range(0, 100000));
  shortlist_->add_option("--per-source", per_source_, "Target tokens kept per source token")
      ->check(CLI::Range(0, 100000));
}

bool ModelCommands::chosen() const { return export_->parsed() || upgrade_->parsed() || shortlist_->parsed(); }

int ModelCommands::shortlist_command() {
  const auto checkpoint = model_of_path(checkpoint_);  // a run folder: its best.ckpt, else last.ckpt
  const auto loaded = load_checkpoint(checkpoint, at::kCPU);
  const auto split = checkpoint_split(loaded);
  std::vector<Example> pairs;
  pairs.reserve(split.train.size());
  for (const auto& pair : split.train) pairs.push_back(loaded.pipeline.encode(pair));
  const auto src_vocab = loaded.model->src_vocab_size(), tgt_vocab = loaded.model->tgt_vocab_size();
  const auto list = LexicalShortlist::build(pairs, src_vocab, tgt_vocab, {frequent_, per_source_});
  // How long the lists are on the dev pairs (never on test), against the whole vocabulary.
  double mean = 0;
  for (const auto& pair : split.dev)
    mean += static_cast<double>(list.targets(loaded.pipeline.encode_source(pair.src)).size());
  if (!split.dev.empty()) mean /= static_cast<double>(split.dev.size());
  const auto path = shortlist_file(checkpoint);
  const auto partial = path + ".partial";
  list.save(partial);
  fs::rename(partial, path);
  fmt::print("shortlist of {} training pairs: the {} most frequent target tokens and {} per source token; ",
             pairs.size(), list.frequent().size(), per_source_);
  if (!split.dev.empty())
    fmt::print("a dev sentence's list holds {:.0f} of the {} target tokens on average; ", mean, tgt_vocab);
  fmt::print("written to {}\n", path);
  return 0;
}

int ModelCommands::dispatch() {
  if (shortlist_->parsed()) return shortlist_command();
  if (upgrade_->parsed()) {
    fmt::print("{}\n", upgrade_legacy_checkpoint(checkpoint_, out_.empty() ? checkpoint_ : out_,
                                                 {{"lm", legacy_language_model()}}));
    return 0;
  }
  const auto checkpoint = model_of_path(checkpoint_);  // a run folder: its best.ckpt, else last.ckpt
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
