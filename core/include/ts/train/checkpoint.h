// Checkpoints: one self-contained file with the model, optimizer, training position, RNG state,
// text pipeline (tokenizers and vocabularies) and config. Written atomically: temp file, fsync,
// rename, so a crash never leaves a half-written checkpoint under the real name.
//
// File layout: one header line "TRANSFORMER-STUDIO-CHECKPOINT 1 <sha256 of payload> <payload bytes>\n"
// followed by the LibTorch archive (the payload). Loading checks the header, the size and the
// SHA-256 before LibTorch parses anything: LibTorch can crash on malformed archives.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "ts/model/transformer.h"
#include "ts/train/config.h"
#include "ts/train/data.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}
namespace torch::serialize {
class InputArchive;
class OutputArchive;
}

namespace ts {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where training stood when the checkpoint was written.
struct TrainingPosition {
  std::int64_t step = 0;             // optimizer steps done
  std::int64_t epoch = 0;            // current epoch (0-based)
  std::int64_t batch_in_epoch = 0;   // batches of the current epoch already consumed
  std::int64_t tokens_seen = 0;      // target tokens trained on
  double elapsed_seconds = 0;        // training wall-clock so far (resumes add to it)
  double best_metric = 0;            // best dev BLEU (higher better) or loss (lower better)
  bool has_best = false;
  std::int64_t bad_validations = 0;  // for early stopping
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
  std::string sha256;        // of the payload
  std::uint64_t payload_bytes = 0;
  std::uint64_t header_bytes = 0;
};

/// Reads and checks only the header line (cheap); throws CheckpointError for a missing or foreign file.
CheckpointHeader read_checkpoint_header(const std::string& path);

/// Writes model (+ optimizer and RNG state when given) atomically to `path`; returns its header.
CheckpointHeader save_checkpoint(const std::string& path, const CheckpointMeta& meta, Transformer& model,
                     torch::optim::Optimizer* optimizer);

/// The envelope alone, for other kinds of checkpoint (the language models of ts/lm): streams
/// `archive` atomically into `path` under the header line; returns the header.
CheckpointHeader write_checkpoint_archive(const std::string& path, torch::serialize::OutputArchive& archive);
/// Verifies the envelope of `path` (header, size, SHA-256), then loads its archive onto `device`.
void read_checkpoint_archive(const std::string& path, torch::serialize::InputArchive& archive, const at::Device& device);

/// Reads only the metadata (throws CheckpointError with the path for a missing or foreign file).
CheckpointMeta read_checkpoint_meta(const std::string& path);

/// A model ready to translate, rebuilt from a checkpoint.
struct LoadedModel {
  CheckpointMeta meta;
  TextPipeline pipeline;
  Transformer model{nullptr};
};

/// Rebuilds the model from a checkpoint onto `device`.
LoadedModel load_checkpoint(const std::string& path, const at::Device& device);

/// Loads `archive` into `module`, refusing (CheckpointError naming `path` and the tensor) weights
/// whose shape differs from the module's own: LibTorch alone would take them as they are.
void load_module_checked(torch::nn::Module& module, torch::serialize::InputArchive& archive, const std::string& path);

/// Loads the optimizer state (and RNG) from a checkpoint into an existing optimizer.
void load_training_state(const std::string& path, torch::optim::Optimizer& optimizer, bool restore_rng);

}  // namespace ts
