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
#include "ts/store/sha256.h"
#include "ts/text/base64.h"
#include "ts/text/files.h"
#include "ts/text/vocab.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "transformer-studio-model";
constexpr int kVersion = 1;
constexpr std::uintmax_t kMaxConfigBytes = 1u << 30;  // vocabularies and SentencePiece models included

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw CheckpointError(path + ": " + what); }

// Writes `bytes` to `path` through a temp file and a rename, so a reader never sees half a file.
void write_file(const fs::path& path, const std::function<void(std::ostream&)>& body) {
  const auto tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(path.string(), std::string("cannot create: ") + std::strerror(errno));
    body(out);
    out.flush();
    if (!out) {
      const std::string reason = std::strerror(errno);
      fs::remove(tmp);
      fail(path.string(), "cannot write: " + reason);
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp);
    fail(path.string(), "cannot rename into place: " + ec.message());
  }
}

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

bool is_model_folder(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / "config.json", ec) &&
         fs::is_regular_file(fs::path(path) / "model.safetensors", ec);
}

ExportSummary export_model(const std::string& checkpoint, const std::string& dir) {
  const auto loaded = load_checkpoint(checkpoint, at::Device(at::kCPU));
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) fail(dir, "exists and is not a folder");
    if (!fs::is_empty(dir, ec) && !is_model_folder(dir))
      fail(dir, "is a folder with other files in it: export into a new or empty folder");
  }
  fs::create_directories(dir, ec);
  if (ec) fail(dir, "cannot create the folder: " + ec.message());

  ExportSummary summary;
  summary.dir = dir;
  NamedTensors tensors;
  append_module_state(tensors, "", *loaded.model);
  for (const auto& p : loaded.model->parameters()) summary.parameters += p.numel();
  const fs::path folder(dir);
  const auto add = [&](const fs::path& path) {
    summary.files.push_back(path.string());
    summary.bytes += fs::file_size(path);
  };
  write_file(folder / "model.safetensors", [&](std::ostream& out) {
    write_safetensors(tensors, {{"format", kFormat}, {"version", std::to_string(kVersion)}},
                      [&](const void* d, std::size_t n) { out.write(static_cast<const char*>(d), static_cast<std::streamsize>(n)); });
  });
  add(folder / "model.safetensors");

  nlohmann::json pipeline = loaded.meta.pipeline;
  // SentencePiece models also go beside the config as plain files, for other readers.
  std::vector<std::string> spm_files;
  for (const char* side : {"src", "tgt"}) {
    const auto& tokenizer = pipeline[std::string(side) + "_tokenizer"];
    if (!tokenizer.contains("model")) continue;
    const auto bytes = base64_decode(tokenizer["model"].get<std::string>());
    const auto path = folder / (std::string(side) + ".spm");
    write_file(path, [&](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
    spm_files.push_back(path.string());
  }
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
        {"sha256", is_model_folder(checkpoint) ? "" : read_checkpoint_header(checkpoint).sha256},
        {"step", loaded.meta.position.step},
        {"corpus", loaded.meta.corpus_path},
        {"metrics", loaded.meta.metrics}}},
      {"parameters", summary.parameters},
      {"architecture",
       fmt::format("{}+{} layers, d_model {}, {} heads, {}, {} positions", model.encoder_layers, model.decoder_layers,
                   model.d_model, model.heads, model.pre_norm ? "pre-LN" : "post-LN", model.positions)}};
  write_file(folder / "config.json", [&](std::ostream& out) { out << config.dump(2) << '\n'; });
  add(folder / "config.json");
  for (const auto& f : spm_files) add(f);
  write_file(folder / "README.md", [&](std::ostream& out) { out << readme(loaded, checkpoint); });
  add(folder / "README.md");
  return summary;
}

LoadedModel import_model(const std::string& dir, const at::Device& device) {
  const auto config_path = (fs::path(dir) / "config.json").string();
  const auto weights_path = (fs::path(dir) / "model.safetensors").string();
  if (!is_model_folder(dir)) fail(dir, "is not an exported model folder (it needs config.json and model.safetensors)");
  for (const auto& p : {config_path, weights_path})
    if (const auto kind = special_file_kind(p); !kind.empty()) fail(p, "is " + kind + ", not a file");
  if (fs::file_size(config_path) > kMaxConfigBytes) fail(config_path, "is larger than 1 GB: not a model configuration");
  nlohmann::json config;
  {
    std::ifstream in(config_path, std::ios::binary);
    if (!in) fail(config_path, std::string("cannot open: ") + std::strerror(errno));
    try {
      config = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      fail(config_path, std::string("not valid JSON: ") + e.what());
    }
  }
  LoadedModel loaded;
  try {
    if (!config.is_object() || config.value("format", "") != kFormat) fail(config_path, "not a Transformer Studio model configuration");
    if (!config.at("version").is_number_integer() || config.at("version").get<std::int64_t>() != kVersion)
      fail(config_path, "model folder version " + config.at("version").dump() + " is not supported by this program");
    loaded.meta.config = ExperimentConfig::from_json(config.at("experiment"));
    loaded.meta.pipeline = config.at("pipeline");
    const auto& source = config.value("source", nlohmann::json::object());
    loaded.meta.corpus_path = source.value("corpus", "");
    loaded.meta.metrics = source.value("metrics", nlohmann::json::object());
    // The training step it was exported at, shown with the model (the folder holds no position to resume).
    if (source.contains("step") && source["step"].is_number_integer() && source["step"].get<std::int64_t>() >= 0)
      loaded.meta.position.step = source["step"].get<std::int64_t>();
    loaded.pipeline = TextPipeline::from_json(loaded.meta.pipeline);
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    fail(config_path, "damaged model configuration: " + error_message(e));
  }
  std::unique_ptr<SafetensorsReader> weights;
  try {
    weights = std::make_unique<SafetensorsReader>(SafetensorsReader::from_file(weights_path));
  } catch (const SafetensorsError& e) {
    throw CheckpointError(e.what());
  }
  try {
    loaded.model = build_model(loaded.meta.config.model, static_cast<std::int64_t>(loaded.pipeline.src_vocab->size()),
                               static_cast<std::int64_t>(loaded.pipeline.tgt_vocab->size()), Vocab::kPad,
                               loaded.pipeline.shared_vocab);
    loaded.model->to(device);
  } catch (const std::exception& e) {
    fail(config_path, "cannot build the model it describes: " + error_message(e));
  }
  load_module_state(*loaded.model, *weights, "", weights_path);
  return loaded;
}

}  // namespace ts
