// SPDX-License-Identifier: GPL-3.0-or-later
// Language-model folders and version-1 language-model checkpoints (see ts/lm/lm_export.h).
#include "ts/lm/lm_export.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/optim/adamw.h>

#include "ts/lm/gpt.h"
#include "ts/model/errors.h"

namespace ts {

namespace fs = std::filesystem;
using namespace model_folder;

namespace {

std::string lm_readme(const LoadedLanguageModel& m, const std::string& checkpoint) {
  const auto& c = m.meta.config;
  const std::string architecture = c.kind == LmKind::kBigram
                                       ? std::string("a bigram table")
                                       : fmt::format("{} layers, n_embd {}, {} heads, a context of {} tokens",
                                                     c.n_layer, c.n_embd, c.n_head, c.block_size);
  return fmt::format(
      "# A Transformer Studio language model ({}, {} tokens)\n\n"
      "Exported from `{}` (step {}).\n\n"
      "- `model.safetensors`: the weights ({}), by their names in the app (safetensors: any reader\n"
      "  opens it, nothing in it is code).\n"
      "- `config.json`: the configuration (`model`), the tokenizer and vocabulary (`codec`: token id i is\n"
      "  `codec.vocab.tokens[i]`), and where the model came from (`source`).\n"
      "- `tokenizer.spm` (when present): the SentencePiece model that splits text into the vocabulary's pieces.\n\n"
      "Generate with the app: `transformer-studio-cli lm-generate --checkpoint <this folder>`.\n",
      c.kind == LmKind::kBigram ? "bigram" : "GPT", lm_tokenizer_name(m.meta.codec.kind()), checkpoint, m.meta.step,
      architecture);
}

}  // namespace

ExportSummary export_language_model(const std::string& checkpoint, const std::string& dir) {
  const auto loaded = load_lm_checkpoint(checkpoint, at::Device(at::kCPU));
  auto summary = begin_export(dir, *loaded.model);
  const auto folder = fs::path(dir);
  const auto codec = loaded.meta.codec.to_json();
  const bool spm = write_spm(codec.value("tokenizer", nlohmann::json()), folder / "tokenizer.spm");
  const auto& c = loaded.meta.config;
  const nlohmann::json config = {
      {"format", kFormat},
      {"version", kVersion},
      {"kind", "lm"},
      {"model", c.to_json()},
      {"vocab_size", loaded.meta.codec.vocab().size()},
      {"block_size", c.block_size},
      {"codec", codec},
      {"source",
       {{"checkpoint", checkpoint},
        {"sha256", source_sha256(checkpoint)},
        {"step", loaded.meta.step},
        {"text", loaded.meta.text_path},
        {"metrics", loaded.meta.metrics}}},
      {"parameters", summary.parameters},
      {"architecture", c.kind == LmKind::kBigram ? std::string("bigram table")
                                                 : fmt::format("GPT, {} layers, n_embd {}, {} heads, block {}",
                                                               c.n_layer, c.n_embd, c.n_head, c.block_size)}};
  end_export(summary, config, spm ? std::vector<fs::path>{folder / "tokenizer.spm"} : std::vector<fs::path>{},
             lm_readme(loaded, checkpoint));
  return summary;
}

ExportSummary export_any_model(const std::string& checkpoint, const std::string& dir) {
  return model_kind(checkpoint) == "lm" ? export_language_model(checkpoint, dir) : export_model(checkpoint, dir);
}

LoadedLanguageModel import_language_model(const std::string& dir, const at::Device& device) {
  const auto config_path = (fs::path(dir) / "config.json").string();
  const auto weights_path = (fs::path(dir) / "model.safetensors").string();
  nlohmann::json config;
  if (read_folder_config(dir, config) != "lm")
    fail(dir, "is a translation model folder, not a language model (use translate)");
  LoadedLanguageModel loaded;
  try {
    loaded.meta.config = LmConfig::from_json(config.at("model"));
    loaded.meta.codec = LmCodec::from_json(config.at("codec"));
    const auto& source = config.value("source", nlohmann::json::object());
    loaded.meta.text_path = source.value("text", "");
    loaded.meta.metrics = source.value("metrics", nlohmann::json::object());
    loaded.meta.step = exported_step(source);
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    fail(config_path, "damaged model configuration: " + error_message(e));
  }
  const auto weights = read_weights(dir);
  try {
    loaded.model =
        build_language_model(loaded.meta.config, static_cast<std::int64_t>(loaded.meta.codec.vocab().size()));
    loaded.model->to(device);
  } catch (const std::exception& e) {
    fail(config_path, "cannot build the model it describes: " + error_message(e));
  }
  load_module_state(*loaded.model, weights, "", weights_path);
  loaded.model->eval();
  return loaded;
}

LegacyModelBuilder legacy_language_model() {
  return [](const nlohmann::json& meta) {
    const auto config = LmConfig::from_json(meta.at("config"));
    const auto codec = LmCodec::from_json(meta.at("codec"));
    auto model = build_language_model(config, static_cast<std::int64_t>(codec.vocab().size()));
    LegacyModel m;
    m.module = model;
    m.optimizer = std::make_shared<torch::optim::AdamW>(
        model->parameters(), torch::optim::AdamWOptions(config.lr).weight_decay(config.weight_decay));
    m.what = "language model";
    m.rngs = {{"rng", "rng.cpu"}, {"batch_rng", "rng.batch"}};
    return m;
  };
}

}  // namespace ts
