// SPDX-License-Identifier: GPL-3.0-or-later
// Converter for version-1 checkpoints (see ts/train/legacy_checkpoint.h).
#include "ts/train/legacy_checkpoint.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/serialize/input-archive.h>

#include "ts/model/errors.h"
#include "ts/store/sha256.h"
#include "ts/text/files.h"
#include "ts/train/checkpoint.h"

namespace ts {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw CheckpointError(path + ": " + what); }

// The old envelope: "TRANSFORMER-STUDIO-CHECKPOINT 1 <sha256> <bytes>\n" and the archive.
std::string read_version1_payload(const std::string& path) {
  if (const auto kind = special_file_kind(path); !kind.empty()) fail(path, "is " + kind + ", not a checkpoint file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::string line;
  std::getline(in, line);
  std::istringstream fields(line);
  std::string magic, sha;
  int version = 0;
  std::uint64_t bytes = 0;
  if (!(fields >> magic >> version >> sha >> bytes) || magic != "TRANSFORMER-STUDIO-CHECKPOINT")
    fail(path, "not a Transformer Studio checkpoint");
  if (version != 1) fail(path, "is a version-" + std::to_string(version) + " checkpoint: nothing to upgrade");
  if (std::filesystem::file_size(path) != line.size() + 1 + bytes) fail(path, "truncated or damaged checkpoint");
  std::string payload(bytes, '\0');
  if (!in.read(payload.data(), static_cast<std::streamsize>(bytes))) fail(path, "cannot read the checkpoint");
  if (sha256_hex(payload) != sha) fail(path, "corrupted checkpoint: SHA-256 mismatch");
  return payload;
}

void add_rng(NamedTensors& tensors, torch::serialize::InputArchive& archive, const char* old_name,
             const char* new_name) {
  at::Tensor state;
  if (archive.try_read(old_name, state)) tensors.emplace_back(new_name, state.to(at::kCPU));
}

}  // namespace

std::string upgrade_legacy_checkpoint(const std::string& input, const std::string& output,
                                      const std::map<std::string, LegacyModelBuilder>& other_kinds) {
  std::istringstream payload(read_version1_payload(input));
  torch::serialize::InputArchive archive;
  nlohmann::json meta;
  try {
    archive.load_from(payload, at::Device(at::kCPU));
    c10::IValue value;
    if (!archive.try_read("meta", value) || !value.isString()) fail(input, "holds no metadata");
    meta = nlohmann::json::parse(value.toStringRef());
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    fail(input, "unreadable version-1 checkpoint: " + error_message(e));
  }
  NamedTensors tensors;
  std::string what;
  try {
    torch::serialize::InputArchive model_archive, optimizer_archive;
    archive.read("model", model_archive);
    const bool has_optimizer = archive.try_read("optimizer", optimizer_archive);
    // The modules are rebuilt from the metadata so LibTorch maps the archive's tensors by name;
    // the new file's loader checks every shape again when it is opened.
    const auto convert = [&](torch::nn::Module& module, torch::optim::Optimizer& optimizer) {
      module.load(model_archive);
      append_module_state(tensors, "model.", module);
      if (has_optimizer) {
        optimizer.load(optimizer_archive);
        append_optimizer_state(tensors, "optimizer.", optimizer);
      }
    };
    if (const std::string kind = meta.value("kind", ""); !kind.empty() && kind != "translation") {
      const auto builder = other_kinds.find(kind);
      if (builder == other_kinds.end())
        fail(input, "holds a model of kind \"" + kind + "\", which this converter was not given");
      const auto m = builder->second(meta);
      convert(*m.module, *m.optimizer);
      for (const auto& [old_name, new_name] : m.rngs) add_rng(tensors, archive, old_name.c_str(), new_name.c_str());
      what = m.what;
    } else {
      const auto config = ExperimentConfig::from_saved_json(meta.at("config"));
      const auto pipeline = TextPipeline::from_json(meta.at("pipeline"));
      auto model =
          build_model(config.model, static_cast<std::int64_t>(pipeline.src_vocab->size()),
                      static_cast<std::int64_t>(pipeline.tgt_vocab->size()), Vocab::kPad, pipeline.shared_vocab);
      const auto& t = config.train;
      if (t.optimizer == Optimizer::kAdamW) {
        torch::optim::AdamW optimizer(model->parameters(),
                                      torch::optim::AdamWOptions(t.lr).weight_decay(t.weight_decay));
        convert(*model, optimizer);
      } else {
        torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(t.lr).weight_decay(t.weight_decay));
        convert(*model, optimizer);
      }
      add_rng(tensors, archive, "rng", "rng.cpu");
      what = "translation model";
    }
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    fail(input, "cannot convert the version-1 checkpoint: " + error_message(e));
  }
  const auto header = write_checkpoint_file(output, meta, tensors);
  return fmt::format("{}: {} with {} tensors, converted to checkpoint version 2 in {} ({} bytes)", input, what,
                     tensors.size(), output, header.header_bytes + header.payload_bytes);
}

}  // namespace ts
