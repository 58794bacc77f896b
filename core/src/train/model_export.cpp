// SPDX-License-Identifier: GPL-3.0-or-later
// Model folders (see ts/train/model_export.h).
#include "ts/train/model_export.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ts/model/errors.h"
#include "ts/model/safetensors.h"
#include "ts/store/atomic_file.h"
#include "ts/store/sha256.h"
#include "ts/text/base64.h"
#include "ts/text/files.h"
#include "ts/text/vocab.h"

namespace ts {

namespace fs = std::filesystem;
using namespace model_folder;

namespace {

constexpr std::uintmax_t kMaxConfigBytes = 1u << 30;  // vocabularies and SentencePiece models included

// Writes one file of the folder atomically (ts/store/atomic_file.h), failures as CheckpointError.
void write_file(const fs::path& path, const std::function<void(int fd)>& body) {
  try {
    write_file_atomically(path.string(), body);
  } catch (const FileWriteError& e) {
    throw CheckpointError(e.what());
  }
}

void write_file(const fs::path& path, std::string_view bytes) {
  write_file(path, [&](int fd) { write_all(fd, bytes, path.string()); });
}

// Makes `dir` ready for an export: created when missing; an existing one must be empty or an
// earlier export (whose files are then replaced).
void prepare_folder(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) fail(dir, "exists and is not a folder");
    if (!fs::is_empty(dir, ec) && !is_model_folder(dir))
      fail(dir, "is a folder with other files in it: export into a new or empty folder");
  }
  fs::create_directories(dir, ec);
  if (ec) fail(dir, "cannot create the folder: " + ec.message());
}

// Writes the weights of `module` (by their names, no prefix) as DIR/model.safetensors.
void write_weights(const fs::path& folder, const torch::nn::Module& module, ExportSummary& summary) {
  NamedTensors tensors;
  append_module_state(tensors, "", module);
  for (const auto& p : module.parameters()) summary.parameters += p.numel();
  const auto weights = folder / "model.safetensors";
  write_file(weights, [&](int fd) {
    write_safetensors(tensors, {{"format", kFormat}, {"version", std::to_string(kVersion)}},
                      [&](const void* d, std::size_t n) {
                        write_all(fd, {static_cast<const char*>(d), n}, weights.string());
                      });
  });
}

void add_file(ExportSummary& summary, const fs::path& path) {
  summary.files.push_back(path.string());
  summary.bytes += fs::file_size(path);
}

}  // namespace

namespace model_folder {

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw CheckpointError(path + ": " + what); }

ExportSummary begin_export(const std::string& dir, const torch::nn::Module& module) {
  prepare_folder(dir);
  ExportSummary summary;
  summary.dir = dir;
  write_weights(fs::path(dir), module, summary);
  add_file(summary, fs::path(dir) / "model.safetensors");
  return summary;
}

void end_export(ExportSummary& summary, const nlohmann::json& config, const std::vector<fs::path>& extra,
                const std::string& readme_text) {
  const fs::path folder(summary.dir);
  write_file(folder / "config.json", config.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + '\n');
  add_file(summary, folder / "config.json");
  for (const auto& f : extra) add_file(summary, f);
  write_file(folder / "README.md", readme_text);
  add_file(summary, folder / "README.md");
}

std::string source_sha256(const std::string& checkpoint) {
  return is_model_folder(checkpoint) ? "" : read_checkpoint_header(checkpoint).sha256;
}

bool write_spm(const nlohmann::json& tokenizer, const fs::path& path) {
  if (!tokenizer.is_object() || !tokenizer.contains("model")) return false;
  write_file(path, base64_decode(tokenizer["model"].get<std::string>()));
  return true;
}

std::string read_folder_config(const std::string& dir, nlohmann::json& out) {
  const auto config_path = (fs::path(dir) / "config.json").string();
  const auto weights_path = (fs::path(dir) / "model.safetensors").string();
  if (!is_model_folder(dir)) fail(dir, "is not an exported model folder (it needs config.json and model.safetensors)");
  for (const auto& p : {config_path, weights_path})
    if (const auto kind = special_file_kind(p); !kind.empty()) fail(p, "is " + kind + ", not a file");
  if (fs::file_size(config_path) > kMaxConfigBytes) fail(config_path, "is larger than 1 GB: not a model configuration");
  {
    std::ifstream in(config_path, std::ios::binary);
    if (!in) fail(config_path, std::string("cannot open: ") + std::strerror(errno));
    try {
      out = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      fail(config_path, std::string("not valid JSON: ") + e.what());
    }
  }
  if (!out.is_object() || out.value("format", "") != kFormat)
    fail(config_path, "not a Transformer Studio model configuration");
  if (!out.contains("version") || !out.at("version").is_number_integer() ||
      out.at("version").get<std::int64_t>() != kVersion)
    fail(config_path,
         "model folder version " + out.value("version", nlohmann::json()).dump() + " is not supported by this program");
  const auto kind = out.contains("kind") && out["kind"].is_string() ? out["kind"].get<std::string>() : "";
  if (kind != "translation" && kind != "lm")
    fail(config_path, "unknown model kind (\"kind\" must be \"translation\" or \"lm\")");
  return kind;
}

std::int64_t exported_step(const nlohmann::json& source) {
  const auto& step = source.contains("step") ? source["step"] : nlohmann::json();
  return step.is_number_integer() && step.get<std::int64_t>() >= 0 ? step.get<std::int64_t>() : 0;
}

SafetensorsReader read_weights(const std::string& dir) {
  try {
    return SafetensorsReader::from_file((fs::path(dir) / "model.safetensors").string());
  } catch (const SafetensorsError& e) {
    throw CheckpointError(e.what());
  }
}

}  // namespace model_folder

namespace {

std::string readme(const LoadedModel& m, const std::string& checkpoint) {
  const auto& c = m.meta.config.model;
  return fmt::format(
      "# A Transformer Studio translation model: {} -> {}\n\n"
      "Exported from `{}` (step {}).\n\n"
      "- `model.safetensors`: the weights ({} encoder and {} decoder layers, d_model {}, {} heads, d_ff {}),\n"
      "  by their names in the app (safetensors: any reader opens it, nothing in it is code).\n"
      "- `config.json`: the architecture (`model`), the tokenizers and vocabularies (`pipeline`), the\n"
      "  special token ids, and where the model came from (`source`).\n"
      "- `src.spm` / `tgt.spm` (when present): SentencePiece models for the source and target side.\n\n"
      "Translate with the app: `transformer-studio-cli translate --checkpoint <this folder>`, or open\n"
      "the folder with File > Import Model Folder. In plain PyTorch: see docs/export.md and\n"
      "docs/export_example.py in the Transformer Studio sources.\n",
      m.pipeline.src_language.name, m.pipeline.tgt_language.name, checkpoint, m.meta.position.step, c.encoder_layers,
      c.decoder_layers, c.d_model, c.heads, c.d_ff);
}

}  // namespace

std::string model_kind(const std::string& path) {
  if (is_model_folder(path)) {
    nlohmann::json config;
    return read_folder_config(path, config);
  }
  return CheckpointFile::open(path).meta().value("kind", "translation");
}

ExportSummary export_model(const std::string& checkpoint, const std::string& dir) {
  if (model_kind(checkpoint) == "lm")
    fail(checkpoint, "holds a language model: export it with export_language_model (ts/lm/lm_export.h)");
  const auto loaded = load_checkpoint(checkpoint, at::Device(at::kCPU));
  auto summary = begin_export(dir, *loaded.model);
  const fs::path folder(dir);
  const nlohmann::json& pipeline = loaded.meta.pipeline;
  std::vector<fs::path> spm_files;
  for (const char* side : {"src", "tgt"})
    if (const auto path = folder / (std::string(side) + ".spm");
        write_spm(pipeline[std::string(side) + "_tokenizer"], path))
      spm_files.push_back(path);
  const auto& model = loaded.meta.config.model;
  const nlohmann::json config = {
      {"format", kFormat},
      {"version", kVersion},
      {"kind", "translation"},
      {"model", loaded.meta.config.to_json().at("model")},
      {"src_vocab_size", loaded.model->src_vocab_size()},
      {"tgt_vocab_size", loaded.model->tgt_vocab_size()},
      {"max_length", loaded.model->max_length()},
      {"special_ids", {{"pad", Vocab::kPad}, {"unk", Vocab::kUnk}, {"bos", Vocab::kBos}, {"eos", Vocab::kEos}}},
      {"pipeline", pipeline},
      {"experiment", loaded.meta.config.to_json()},
      {"source",
       {{"checkpoint", checkpoint},
        {"sha256", source_sha256(checkpoint)},
        {"step", loaded.meta.position.step},
        {"corpus", loaded.meta.corpus_path},
        {"metrics", loaded.meta.metrics}}},
      {"parameters", summary.parameters},
      {"architecture", fmt::format("{}+{} layers, d_model {}, {} heads, {}, {} positions", model.encoder_layers,
                                   model.decoder_layers, model.d_model, model.heads,
                                   model.pre_norm ? "pre-LN" : "post-LN", positions_name(model.positions))}};
  end_export(summary, config, spm_files, readme(loaded, checkpoint));
  return summary;
}

LoadedModel import_model(const std::string& dir, const at::Device& device) {
  const auto config_path = (fs::path(dir) / "config.json").string();
  const auto weights_path = (fs::path(dir) / "model.safetensors").string();
  nlohmann::json config;
  if (read_folder_config(dir, config) == "lm") fail(dir, "is a language-model folder: use lm-generate");
  LoadedModel loaded;
  try {
    loaded.meta.config = ExperimentConfig::from_saved_json(config.at("experiment"));
    loaded.meta.pipeline = config.at("pipeline");
    const auto& source = config.value("source", nlohmann::json::object());
    loaded.meta.corpus_path = source.value("corpus", "");
    loaded.meta.metrics = source.value("metrics", nlohmann::json::object());
    // The training step it was exported at, shown with the model (the folder holds no position to resume).
    loaded.meta.position.step = exported_step(source);
    loaded.pipeline = TextPipeline::from_json(loaded.meta.pipeline);
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    fail(config_path, "damaged model configuration: " + error_message(e));
  }
  const auto weights = read_weights(dir);
  try {
    loaded.model = build_model(loaded.meta.config.model, static_cast<std::int64_t>(loaded.pipeline.src_vocab->size()),
                               static_cast<std::int64_t>(loaded.pipeline.tgt_vocab->size()), Vocab::kPad,
                               loaded.pipeline.shared_vocab);
    loaded.model->to(device);
  } catch (const std::exception& e) {
    fail(config_path, "cannot build the model it describes: " + error_message(e));
  }
  load_module_state(*loaded.model, weights, "", weights_path);
  loaded.model->eval();  // as load_checkpoint
  return loaded;
}

}  // namespace ts
