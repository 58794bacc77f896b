// SPDX-License-Identifier: GPL-3.0-or-later
// Checkpoints: one self-contained file with the model, optimizer, training position, RNG state,
// text pipeline (tokenizers and vocabularies) and config. Written atomically: temp file, fsync,
// rename, so a crash never leaves a half-written checkpoint under the real name.
//
// File layout: one header line "TRANSFORMER-STUDIO-CHECKPOINT 2 <sha256 of payload> <payload bytes>\n"
// followed by the payload, a safetensors buffer (ts/model/safetensors.h): the metadata JSON under
// "transformer-studio", and the tensors "model.<parameter>", "optimizer.<i>.<moment>" and "rng.<name>".
// A checkpoint is data, never code: loading checks the header, the size and the SHA-256, then
// the safetensors structure, then each tensor's name, dtype and shape against the model the
// metadata describes. No LibTorch deserialiser (whose archives are TorchScript programs) is used.
//
// Version 1 files (a LibTorch archive under the same header line) are refused with a pointer to
// `upgrade_legacy_checkpoint` (ts/train/legacy_checkpoint.h), which converts a trusted one.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "ts/model/safetensors.h"
#include "ts/model/transformer.h"
#include "ts/train/config.h"
#include "ts/train/data.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace ts {

class Translator;

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where training stood when the checkpoint was written.
struct TrainingPosition {
  std::int64_t step = 0;            // optimizer steps done
  std::int64_t epoch = 0;           // current epoch (0-based)
  std::int64_t batch_in_epoch = 0;  // batches of the current epoch already consumed
  std::int64_t tokens_seen = 0;     // target tokens trained on
  double elapsed_seconds = 0;       // training wall-clock so far (resumes add to it)
  double best_metric = 0;           // best dev BLEU (higher better) or loss (lower better)
  bool has_best = false;
  std::int64_t bad_validations = 0;  // for early stopping
  // The time budget the learning-rate schedule belongs to (train.budget_minutes, in seconds; 0 =
  // none), the part of it used, and the step its schedule started at (its warmup counts from there).
  // budget_warmup_end: the fraction of it spent when the warmup ended (-1: not yet).
  double budget_seconds = 0, budget_used_seconds = 0, budget_warmup_end = -1;
  std::int64_t schedule_start_step = 0;
  nlohmann::json to_json() const;
  static TrainingPosition from_json(const nlohmann::json& j);
};

/// What a checkpoint file holds besides tensors.
struct CheckpointMeta {
  ExperimentConfig config;
  TrainingPosition position;
  std::string corpus_path;
  nlohmann::json pipeline;  // TextPipeline::to_json()
  nlohmann::json metrics;   // last validation, if any
  std::int64_t format = 1;
};

/// What the header line of a checkpoint file says.
struct CheckpointHeader {
  std::string sha256;  // of the payload
  std::uint64_t payload_bytes = 0;
  std::uint64_t header_bytes = 0;
};

/// Reads and checks only the header line (cheap); throws CheckpointError for a missing or foreign file.
CheckpointHeader read_checkpoint_header(const std::string& path);

/// Writes model (+ optimizer and RNG state when given) atomically to `path`; returns its header.
/// With weight averaging (train.ema), `model` holds the averaged weights, which every reader of
/// "model.*" (eval, translate, export) uses, and `raw` the weights as trained ("raw.<parameter>"),
/// which only resuming reads.
CheckpointHeader save_checkpoint(const std::string& path, const CheckpointMeta& meta, Transformer& model,
                                 torch::optim::Optimizer* optimizer, const NamedTensors* raw = nullptr);

/// The state a checkpoint keeps, as named tensors: a module's parameters and buffers under
/// `prefix`; an Adam/AdamW optimizer's moments and step counts under `prefix` (by parameter
/// index across its groups); a CPU generator's state as `name`.
void append_module_state(NamedTensors& out, const std::string& prefix, const torch::nn::Module& module);
void append_optimizer_state(NamedTensors& out, const std::string& prefix, const torch::optim::Optimizer& optimizer);
void append_generator_state(NamedTensors& out, const std::string& name, at::Generator generator);
/// The dropout generators of a run: the CPU's as "rng.cpu" and, when the model is on a GPU, that
/// GPU's as "rng.cuda" (dropout there draws from it), so a resumed GPU run draws the same masks.
void append_dropout_generators(NamedTensors& out, const at::Device& model_device);

/// Copies the `prefix` tensors of `file` into `module`'s parameters and buffers (on their devices),
/// refusing (CheckpointError naming `path`) a tensor that is missing, left over, or of another
/// shape or dtype.
void load_module_state(torch::nn::Module& module, const SafetensorsReader& file, const std::string& prefix,
                       const std::string& path);

/// The envelope for any kind of checkpoint (the language models of ts/lm too): writes `meta` and
/// `tensors` atomically into `path` under the header line; returns the header.
CheckpointHeader write_checkpoint_file(const std::string& path, const nlohmann::json& meta,
                                       const NamedTensors& tensors);

/// A checkpoint file opened and verified (envelope, SHA-256, safetensors structure, metadata JSON).
/// Every error is a CheckpointError naming the file.
class CheckpointFile {
 public:
  static CheckpointFile open(const std::string& path);
  const std::string& path() const { return path_; }
  const nlohmann::json& meta() const { return meta_; }
  bool contains(const std::string& name) const { return tensors_->contains(name); }
  /// Copies the `prefix` tensors into `module`'s parameters and buffers (on their devices),
  /// refusing by name a tensor that is missing, left over, or of another shape or dtype.
  void load_module(torch::nn::Module& module, const std::string& prefix) const;
  /// Restores the Adam/AdamW state written by append_optimizer_state into `optimizer`, which
  /// must hold the same parameters in the same order.
  void load_optimizer(torch::optim::Optimizer& optimizer, const std::string& prefix) const;
  /// Restores a CPU generator's state written by append_generator_state.
  void load_generator(at::Generator generator, const std::string& name) const;
  /// Restores what append_dropout_generators wrote: "rng.cpu", and "rng.cuda" into the GPU the run
  /// resumes on (a GPU checkpoint resumed on the CPU, or the other way round, draws new GPU masks).
  void load_dropout_generators(const at::Device& model_device) const;

 private:
  CheckpointFile() = default;
  std::string path_;
  nlohmann::json meta_;
  std::shared_ptr<const SafetensorsReader> tensors_;
};

/// Reads only the metadata (throws CheckpointError with the path for a missing or foreign file).
CheckpointMeta read_checkpoint_meta(const std::string& path);

/// A model ready to translate, rebuilt from a checkpoint.
struct LoadedModel {
  CheckpointMeta meta;
  TextPipeline pipeline;
  Transformer model{nullptr};
};

/// Rebuilds the model from a checkpoint (or an exported model folder) onto `device`, in eval mode.
LoadedModel load_checkpoint(const std::string& path, const at::Device& device);

/// Writes the translator file of `checkpoint` (ts/infer/translator_file.h: translator_file_for) from
/// `loaded`, the model read from it: its weights (fp32), shape, text pipeline and decoding settings,
/// and the run's lexical shortlist when it has one, for the translator that does not load LibTorch. Throws std::runtime_error naming the file when it
/// cannot be written, std::invalid_argument for a model that cannot be packed.
void export_translator(const LoadedModel& loaded, const std::string& checkpoint);

/// The same, ready to translate (ts/decode/translator.h). Throws CheckpointError with the path.
Translator load_translator(const std::string& path, const at::Device& device);

/// The train/dev/test split of the corpus the model was trained on, as the trainer made it (the
/// built-in demo corpus for "<demo>"). Throws std::invalid_argument when the checkpoint names no
/// corpus; read_corpus's errors name the file.
DataSplit checkpoint_split(const LoadedModel& loaded);

/// Loads the optimizer state (and RNG) from a checkpoint into an existing optimizer.
void load_training_state(const std::string& path, torch::optim::Optimizer& optimizer, bool restore_rng);

/// Resumes training from one read of `path` (opened and SHA-256-verified once): the weights and
/// buffers into `model`, which must have the checkpoint's shapes, the optimizer state into
/// `optimizer`, and the default CPU generator's state when `restore_rng`. Returns the metadata.
/// A checkpoint with weights as trained ("raw.*", written with weight averaging on) gives `model`
/// those, and its averaged "model.*" weights to `averaged` (one tensor per model parameter, in
/// order; left empty when the checkpoint has no average).
CheckpointMeta load_for_resume(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                               bool restore_rng, std::vector<at::Tensor>* averaged = nullptr);

}  // namespace ts
