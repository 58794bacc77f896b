// SPDX-License-Identifier: GPL-3.0-or-later
// Checkpoint files (see ts/train/checkpoint.h).
#include "ts/train/checkpoint.h"
#include "ts/train/model_export.h"

#include "ts/decode/shortlist.h"
#include "ts/decode/translator.h"
#include "ts/infer/translator_file.h"
#include "ts/model/errors.h"
#include "ts/model/packed_transformer.h"
#include "ts/model/torch_compat.h"
#include "ts/store/atomic_file.h"
#include "ts/store/fault.h"
#include "ts/store/sha256.h"
#include "ts/text/demo_corpus.h"
#include "ts/text/files.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <c10/util/string_utils.h>
#include <torch/nn/module.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>

namespace ts {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw CheckpointError(path + ": " + what); }

// One block of a checkpoint file (the fault point "checkpoint.write" can fail it with ENOSPC).
void write_block(int fd, std::string_view data, const std::string& path) {
  if (fault_point("checkpoint.write")) fail(path, std::string("cannot write: ") + std::strerror(ENOSPC));
  write_all(fd, data, path);
}

// Writes `path` atomically (ts/store/atomic_file.h), failures as CheckpointError.
void write_atomically(const std::string& path, const std::function<void(int)>& write_body) {
  try {
    write_file_atomically(path, write_body);
  } catch (const FileWriteError& e) {
    throw CheckpointError(e.what());
  }
}

constexpr const char* kMagic = "TRANSFORMER-STUDIO-CHECKPOINT";
constexpr int kEnvelopeVersion = 2;
constexpr const char* kMetaKey = "transformer-studio";

void check_is_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) fail(path, "checkpoint not found (moved or deleted?)");
  // A FIFO would block the reader forever, a device could stream without end.
  if (const auto kind = special_file_kind(path); !kind.empty()) fail(path, "is " + kind + ", not a checkpoint file");
}

CheckpointHeader parse_header(const std::string& path, std::istream& in) {
  std::string line;
  line.reserve(128);
  char c = 0;
  while (line.size() < 160 && in.get(c) && c != '\n') line += c;
  std::istringstream fields(line);
  std::string magic, sha;
  int version = 0;
  std::uint64_t bytes = 0;
  if (c != '\n' || !(fields >> magic >> version >> sha >> bytes) || magic != kMagic)
    fail(path, "not a Transformer Studio checkpoint (unknown file format)");
  if (version == 1)
    fail(path,
         "was written by Transformer Studio 0.1 as a LibTorch archive, which this version no longer opens "
         "(loading one compiles TorchScript, so a crafted file could run code). If you trust the file, "
         "convert it once: transformer-studio-cli upgrade-checkpoint " +
             path);
  if (version != kEnvelopeVersion)
    fail(path, "checkpoint envelope version " + std::to_string(version) + " is not supported");
  if (sha.size() != 64) fail(path, "damaged checkpoint header");
  return {sha, bytes, line.size() + 1};
}

// Reads the payload and verifies size and checksum; only then may LibTorch parse it.
std::string read_verified_payload(const std::string& path) {
  check_is_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  const auto header = parse_header(path, in);
  const auto size = fs::file_size(path);
  if (size != header.header_bytes + header.payload_bytes)
    fail(path, "truncated or damaged checkpoint: expected " +
                   std::to_string(header.header_bytes + header.payload_bytes) + " bytes, found " +
                   std::to_string(size));
  std::string payload(header.payload_bytes, '\0');
  if (!in.read(payload.data(), static_cast<std::streamsize>(payload.size()))) fail(path, "cannot read the checkpoint");
  if (sha256_hex(payload) != header.sha256) fail(path, "corrupted checkpoint: SHA-256 mismatch");
  return payload;
}

CheckpointMeta meta_from_json(const nlohmann::json& j, const std::string& path) {
  try {
    CheckpointMeta meta;
    if (j.value("kind", "") == "lm") fail(path, "is a language-model checkpoint: use lm-generate");
    if (!j.at("format").is_number_integer()) fail(path, "damaged checkpoint metadata: format is not an integer");
    meta.format = j.at("format").get<std::int64_t>();
    if (meta.format != 1)
      fail(path, "checkpoint format " + std::to_string(meta.format) + " is newer than this program");
    meta.config = ExperimentConfig::from_saved_json(j.at("config"));
    meta.position = TrainingPosition::from_json(j.at("position"));
    meta.corpus_path = j.value("corpus", "");
    meta.pipeline = j.at("pipeline");
    meta.metrics = j.value("metrics", nlohmann::json::object());
    return meta;
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    fail(path, std::string("damaged checkpoint metadata: ") + e.what());
  }
}

std::string shape_text(at::IntArrayRef shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// Every parameter of `optimizer`, in group order: the index is the parameter's name in the file.
std::vector<at::Tensor> optimizer_parameters(const torch::optim::Optimizer& optimizer) {
  std::vector<at::Tensor> all;
  for (const auto& group : optimizer.param_groups())
    for (const auto& p : group.params()) all.push_back(p);
  return all;
}

template <class State>
bool append_adam_state(NamedTensors& out, const std::string& prefix, const torch::optim::Optimizer& optimizer) {
  const auto params = optimizer_parameters(optimizer);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto it = optimizer.state().find(torch_compat::optimizer_state_key(params[i]));
    if (it == optimizer.state().end()) continue;  // never stepped
    const auto* state = dynamic_cast<const State*>(it->second.get());
    if (!state) return false;
    const auto name = prefix + std::to_string(i) + ".";
    out.emplace_back(name + "step", at::scalar_tensor(state->step(), at::kLong));
    out.emplace_back(name + "exp_avg", state->exp_avg());
    out.emplace_back(name + "exp_avg_sq", state->exp_avg_sq());
    if (state->max_exp_avg_sq().defined()) out.emplace_back(name + "max_exp_avg_sq", state->max_exp_avg_sq());
  }
  return true;
}

template <class State>
void load_adam_state(const SafetensorsReader& file, const std::string& prefix, torch::optim::Optimizer& optimizer,
                     const std::string& path) {
  const auto params = optimizer_parameters(optimizer);
  // The file may hold no state for a parameter that was never stepped, but none for a parameter
  // the optimizer does not have.
  for (const auto& [name, entry] : file.entries()) {
    if (name.rfind(prefix, 0) != 0) continue;
    const auto rest = name.substr(prefix.size());
    std::size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    if (digits == 0 || digits > 9 || std::stoul(rest.substr(0, digits)) >= params.size())
      fail(path, "holds optimizer state \"" + name + "\" for a parameter the model does not have");
  }
  at::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto name = prefix + std::to_string(i) + ".";
    if (!file.contains(name + "step")) continue;
    const auto& p = params[i];
    auto moment = [&](const std::string& which) {
      const auto key = name + which;
      const auto t = file.tensor(key);
      if (t.sizes() != p.sizes() || t.scalar_type() != p.scalar_type())
        fail(path, fmt::format("optimizer state {} is {} {}, its parameter {} {}", key, c10::toString(t.scalar_type()),
                               shape_text(t.sizes()), c10::toString(p.scalar_type()), shape_text(p.sizes())));
      return t.to(p.device());
    };
    const auto step = file.tensor(name + "step");
    if (step.dim() != 0 || step.scalar_type() != at::kLong || step.item<std::int64_t>() < 0)
      fail(path, "optimizer state " + name + "step is not a non-negative integer");
    auto state = std::make_unique<State>();
    state->step(step.item<std::int64_t>());
    state->exp_avg(moment("exp_avg"));
    state->exp_avg_sq(moment("exp_avg_sq"));
    if (file.contains(name + "max_exp_avg_sq")) state->max_exp_avg_sq(moment("max_exp_avg_sq"));
    optimizer.state()[torch_compat::optimizer_state_key(p)] = std::move(state);
  }
}

}  // namespace

nlohmann::json TrainingPosition::to_json() const {
  return {{"step", step},
          {"epoch", epoch},
          {"batch_in_epoch", batch_in_epoch},
          {"tokens_seen", tokens_seen},
          {"elapsed_seconds", elapsed_seconds},
          {"best_metric", best_metric},
          {"has_best", has_best},
          {"bad_validations", bad_validations},
          {"budget_seconds", budget_seconds},
          {"budget_used_seconds", budget_used_seconds},
          {"schedule_start_step", schedule_start_step},
          {"budget_warmup_end", budget_warmup_end}};
}

namespace {
// Typed reads of the position: get<std::int64_t>() on a float would truncate 1.5 silently and is
// undefined behaviour for 1e300 (UBSan, tests/fuzz/fuzz_checkpoint), and a checksum only proves
// the file is intact, not that its metadata is sane.
std::int64_t position_integer(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)))
    throw std::invalid_argument(std::string("position.") + key + ": expected an integer, got " +
                                v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return v.get<std::int64_t>();
}
double position_number(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_number())
    throw std::invalid_argument(std::string("position.") + key + ": expected a number, got " +
                                v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return v.get<double>();
}
}  // namespace

TrainingPosition TrainingPosition::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("position: expected an object");
  TrainingPosition p;
  p.step = position_integer(j, "step");
  p.epoch = position_integer(j, "epoch");
  p.batch_in_epoch = position_integer(j, "batch_in_epoch");
  p.tokens_seen = position_integer(j, "tokens_seen");
  p.elapsed_seconds = position_number(j, "elapsed_seconds");
  p.best_metric = position_number(j, "best_metric");
  if (!j.at("has_best").is_boolean()) throw std::invalid_argument("position.has_best: expected true or false");
  p.has_best = j.at("has_best").get<bool>();
  p.bad_validations = position_integer(j, "bad_validations");
  // Written since the time budget came (checkpoints from before it have none).
  if (j.contains("budget_seconds")) p.budget_seconds = position_number(j, "budget_seconds");
  if (j.contains("budget_used_seconds")) p.budget_used_seconds = position_number(j, "budget_used_seconds");
  if (j.contains("schedule_start_step")) p.schedule_start_step = position_integer(j, "schedule_start_step");
  if (j.contains("budget_warmup_end")) p.budget_warmup_end = position_number(j, "budget_warmup_end");
  return p;
}

CheckpointHeader read_checkpoint_header(const std::string& path) {
  check_is_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  return parse_header(path, in);
}

static at::Device first_parameter_device(const torch::nn::Module& module) {
  const auto parameters = module.parameters();
  return parameters.empty() ? at::Device(at::kCPU) : parameters.front().device();
}

CheckpointHeader save_checkpoint(const std::string& path, const CheckpointMeta& meta, Transformer& model,
                                 torch::optim::Optimizer* optimizer, const NamedTensors* raw) {
  const nlohmann::json j = {
      {"format", meta.format},      {"config", meta.config.to_json()}, {"position", meta.position.to_json()},
      {"corpus", meta.corpus_path}, {"pipeline", meta.pipeline},       {"metrics", meta.metrics}};
  NamedTensors tensors;
  append_module_state(tensors, "model.", *model);
  if (raw) tensors.insert(tensors.end(), raw->begin(), raw->end());
  if (optimizer) {
    append_optimizer_state(tensors, "optimizer.", *optimizer);
    append_dropout_generators(tensors, first_parameter_device(*model));
  }
  return write_checkpoint_file(path, j, tensors);
}

void append_module_state(NamedTensors& out, const std::string& prefix, const torch::nn::Module& module) {
  for (const auto& item : module.named_parameters()) out.emplace_back(prefix + item.key(), item.value());
  for (const auto& item : module.named_buffers()) out.emplace_back(prefix + item.key(), item.value());
}

void append_optimizer_state(NamedTensors& out, const std::string& prefix, const torch::optim::Optimizer& optimizer) {
  const bool done = dynamic_cast<const torch::optim::AdamW*>(&optimizer)
                        ? append_adam_state<torch::optim::AdamWParamState>(out, prefix, optimizer)
                        : append_adam_state<torch::optim::AdamParamState>(out, prefix, optimizer);
  if (!done) throw std::logic_error("checkpoints keep the state of Adam and AdamW only");
}

void append_generator_state(NamedTensors& out, const std::string& name, at::Generator generator) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  out.emplace_back(name, generator.get_state());
}

void append_dropout_generators(NamedTensors& out, const at::Device& model_device) {
  append_generator_state(out, "rng.cpu", at::detail::getDefaultCPUGenerator());
  if (model_device.is_cuda())
    append_generator_state(out, "rng.cuda", at::globalContext().defaultGenerator(model_device));
}

CheckpointHeader write_checkpoint_file(const std::string& path, const nlohmann::json& meta,
                                       const NamedTensors& tensors) {
  // The payload is streamed into the file while it is hashed, so no copy of it (hundreds of MB for
  // a large vocabulary with its Adam state) is held in memory. The header goes first in the file but
  // needs the digest and size: a fixed-width placeholder is written, then overwritten at the end
  // (the size is zero-padded to 20 digits; readers parse it as a number).
  const auto header_line = [](const std::string& sha, std::uint64_t bytes) {
    return fmt::format("{} {} {} {:020d}\n", kMagic, kEnvelopeVersion, sha, bytes);
  };
  CheckpointHeader header{std::string(64, '0'), 0, 0};
  // Linux file names are bytes: a corpus path that is not UTF-8 is kept with U+FFFD for the bad
  // bytes (it is only shown), where a plain dump() would throw and fail every save of the run.
  const std::string meta_text = meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  write_atomically(path, [&](int fd) {
    const auto placeholder = header_line(header.sha256, 0);
    write_block(fd, placeholder, path);
    Sha256 digest;
    write_safetensors(tensors, {{kMetaKey, meta_text}}, [&](const void* data, std::size_t size) {
      write_block(fd, std::string_view(static_cast<const char*>(data), size), path);
      digest.update(data, size);
      header.payload_bytes += size;
    });
    header.sha256 = digest.hex();
    const auto line = header_line(header.sha256, header.payload_bytes);
    header.header_bytes = line.size();
    if (::pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size()))
      fail(path, std::string("cannot write the header: ") + std::strerror(errno));
  });
  return header;
}

CheckpointFile CheckpointFile::open(const std::string& path) {
  CheckpointFile file;
  file.path_ = path;
  try {
    file.tensors_ = std::make_shared<const SafetensorsReader>(read_verified_payload(path), path);
  } catch (const SafetensorsError& e) {
    throw CheckpointError(std::string(e.what()) + " (the checksum matched: the file was written this way)");
  }
  const auto& metadata = file.tensors_->metadata();
  const auto it = metadata.find(kMetaKey);
  if (it == metadata.end()) fail(path, "not a Transformer Studio checkpoint (no metadata)");
  try {
    file.meta_ = nlohmann::json::parse(it->second);
  } catch (const std::exception& e) {
    fail(path, std::string("damaged checkpoint metadata: ") + e.what());
  }
  if (!file.meta_.is_object()) fail(path, "damaged checkpoint metadata: not a JSON object");
  return file;
}

void load_module_state(torch::nn::Module& module, const SafetensorsReader& file, const std::string& prefix,
                       const std::string& path) {
  std::vector<std::pair<std::string, at::Tensor>> targets;
  for (const auto& item : module.named_parameters()) targets.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers()) targets.emplace_back(item.key(), item.value());
  std::set<std::string> expected;
  for (const auto& [name, t] : targets) expected.insert(prefix + name);
  for (const auto& [name, entry] : file.entries())
    if (name.rfind(prefix, 0) == 0 && !expected.count(name))
      fail(path, "holds a tensor the model does not have: " + name + " (another kind of model or configuration?)");
  at::NoGradGuard no_grad;
  for (const auto& [name, target] : targets) {
    const auto key = prefix + name;
    if (!file.contains(key)) fail(path, "lacks the weights " + key + " (another kind of model or configuration?)");
    const auto& entry = file.entries().at(key);
    if (entry.shape != target.sizes().vec() || entry.dtype != target.scalar_type())
      fail(path, fmt::format("the weights do not fit the model its metadata describes (another vocabulary or "
                             "configuration?): {} is {} {} in the file, {} {} expected",
                             key, c10::toString(entry.dtype), shape_text(entry.shape),
                             c10::toString(target.scalar_type()), shape_text(target.sizes())));
    target.copy_(file.tensor(key));
  }
}

void CheckpointFile::load_module(torch::nn::Module& module, const std::string& prefix) const {
  load_module_state(module, *tensors_, prefix, path_);
}

void CheckpointFile::load_optimizer(torch::optim::Optimizer& optimizer, const std::string& prefix) const {
  if (dynamic_cast<torch::optim::AdamW*>(&optimizer))
    load_adam_state<torch::optim::AdamWParamState>(*tensors_, prefix, optimizer, path_);
  else if (dynamic_cast<torch::optim::Adam*>(&optimizer))
    load_adam_state<torch::optim::AdamParamState>(*tensors_, prefix, optimizer, path_);
  else
    throw std::logic_error("checkpoints keep the state of Adam and AdamW only");
}

void CheckpointFile::load_generator(at::Generator generator, const std::string& name) const {
  if (!tensors_->contains(name)) fail(path_, "holds no RNG state " + name);
  const auto state = tensors_->tensor(name);
  std::lock_guard<std::mutex> lock(generator.mutex());
  try {
    generator.set_state(state);
  } catch (const std::exception& e) {
    fail(path_, "damaged RNG state " + name + ": " + error_message(e));
  }
}

void CheckpointFile::load_dropout_generators(const at::Device& model_device) const {
  load_generator(at::detail::getDefaultCPUGenerator(), "rng.cpu");
  if (model_device.is_cuda() && contains("rng.cuda"))
    load_generator(at::globalContext().defaultGenerator(model_device), "rng.cuda");
}

CheckpointMeta read_checkpoint_meta(const std::string& path) {
  return meta_from_json(CheckpointFile::open(path).meta(), path);
}

LoadedModel load_checkpoint(const std::string& path, const at::Device& device) {
  if (is_model_folder(path)) return import_model(path, device);
  const auto file = CheckpointFile::open(path);
  LoadedModel loaded;
  loaded.meta = meta_from_json(file.meta(), path);
  try {
    loaded.pipeline = TextPipeline::from_json(loaded.meta.pipeline);
    loaded.model = build_model(loaded.meta.config.model, static_cast<std::int64_t>(loaded.pipeline.src_vocab->size()),
                               static_cast<std::int64_t>(loaded.pipeline.tgt_vocab->size()), Vocab::kPad,
                               loaded.pipeline.shared_vocab);
    loaded.model->to(device);
    file.load_module(*loaded.model, "model.");
    // Ready for inference (no dropout; packed copies for CPU decoding are kept between sentences).
    // Training puts a model back into training mode itself.
    loaded.model->eval();
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    fail(path, std::string("cannot rebuild the model: ") + error_message(e));
  }
  return loaded;
}

void export_translator(const LoadedModel& loaded, const std::string& checkpoint) {
  const auto& model = *loaded.model;
  std::map<std::string, WeightView> tensors;
  std::vector<at::Tensor> held;  // CPU fp32 copies where the model's tensors are not
  auto add = [&](const std::string& name, const at::Tensor& t) {
    held.push_back(t.detach().to(at::kCPU, at::kFloat).contiguous());
    tensors[name] = {held.back().data_ptr<float>(), held.back().sizes().vec()};
  };
  for (const auto& item : model.named_parameters(true)) add(item.key(), item.value());
  for (const auto& item : model.named_buffers(true)) add(item.key(), item.value());
  const auto shape = packed_shape(model);
  // The run's lexical shortlist goes with it, and the stamp of its file even when that cannot be
  // read: the translator then hands such a run to transformer-studio-cli, which says what is wrong.
  const auto shortlist_path = shortlist_file(checkpoint);
  std::shared_ptr<const LexicalShortlist> shortlist;
  try {
    shortlist = shortlist_beside(checkpoint, model.src_vocab_size(), model.tgt_vocab_size());
  } catch (const std::runtime_error&) {
    // unreadable: carried as absent, with its file's stamp
  }
  write_translator_file(translator_file_for(checkpoint), shape, loaded.meta.pipeline, loaded.meta.config.decode,
                        CheckpointStamp::of(checkpoint), tensors, shortlist.get(), CheckpointStamp::of(shortlist_path));
}

Translator load_translator(const std::string& path, const at::Device& device) {
  auto loaded = load_checkpoint(path, device);
  return Translator(loaded.model, std::move(loaded.pipeline));
}

DataSplit checkpoint_split(const LoadedModel& loaded) {
  const auto& src = loaded.meta.corpus_path;
  if (src.empty()) throw std::invalid_argument("the checkpoint names no corpus: pass --corpus FILE");
  const auto corpus = src == "<demo>" ? demo_corpus() : read_corpus(src);
  return split_corpus(corpus, loaded.pipeline.direction, loaded.meta.config.data);
}

namespace {

void load_training_state(const CheckpointFile& file, torch::optim::Optimizer& optimizer, bool restore_rng) {
  if (!file.contains("rng.cpu")) fail(file.path(), "holds no optimizer state (a model-only export?)");
  file.load_optimizer(optimizer, "optimizer.");
  if (restore_rng) {
    const auto& params = optimizer.param_groups().front().params();
    file.load_dropout_generators(params.empty() ? at::Device(at::kCPU) : params.front().device());
  }
}

}  // namespace

void load_training_state(const std::string& path, torch::optim::Optimizer& optimizer, bool restore_rng) {
  load_training_state(CheckpointFile::open(path), optimizer, restore_rng);
}

CheckpointMeta load_for_resume(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                               bool restore_rng, std::vector<at::Tensor>* averaged) {
  if (is_model_folder(path))
    fail(path,
         "is an exported model folder: it holds the weights only, no optimizer state to resume from "
         "(resume from the run's last.ckpt)");
  const auto file = CheckpointFile::open(path);
  auto meta = meta_from_json(file.meta(), path);
  file.load_module(model, "model.");
  if (file.contains("raw." + model.named_parameters().begin()->key())) {
    // Written with weight averaging: "model.*" is the average, "raw.*" the weights as trained.
    if (averaged) {
      averaged->clear();
      for (const auto& p : model.parameters()) averaged->push_back(p.detach().to(at::kFloat).clone());
    }
    file.load_module(model, "raw.");
  } else if (averaged) {
    averaged->clear();
  }
  load_training_state(file, optimizer, restore_rng);
  return meta;
}

}  // namespace ts
