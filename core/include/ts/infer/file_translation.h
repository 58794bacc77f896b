// SPDX-License-Identifier: GPL-3.0-or-later
// Translating a file (or a stream) with a run's translator file, without LibTorch: what
// `transformer-studio-cli translate` does for the requests the translator file can serve, and what
// transformer-studio-translate does, with the outputs of the LibTorch path on the same weights.
//
// Debian's LibTorch takes about half a second to load before a program's first line runs (twice
// that where OpenBLAS has to be started again for its kernels, ts/host/blas.h), longer than
// translating a thousand sentences: so the programs ask FileTranslation::open first and load
// LibTorch only when it says why it cannot serve (no translator file yet, a stale one, a lexical
// shortlist changed since, weights "libtorch"). No LibTorch here.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ts {

/// True when `path` is a folder written by export_model (it has config.json and model.safetensors).
bool is_model_folder(const std::string& path);

/// A run folder means its last.ckpt; a checkpoint file, or an exported model folder (config.json and
/// model.safetensors), is itself the checkpoint. How every command resolves --checkpoint.
std::string checkpoint_of(const std::string& run_or_checkpoint);

/// What `translate` was asked for, as the command line gives it.
struct FileTranslationRequest {
  std::string checkpoint;  // a run folder, a checkpoint file or a model folder
  std::string input;       // a file of sentences; empty: the stream given to run()
  std::string weights;     // "fp32", "bf16", "int8" or "libtorch"; empty: the model's own setting
  int beam = 0;            // 0: the model's own setting; 1: greedy
  int threads = 0;         // 0: every core
  int batch = -1;  // -1: cpu_decode_batch (32 greedily, 8 with a beam of 4), or 1 when someone types at a terminal
  double length_penalty = -1;  // -1: the model's own
  bool shortlist = false;      // asked for on the command line: the run's lexical shortlist must exist
};

/// The options of `transformer-studio-cli translate` that FileTranslation serves: the request they
/// make, or nothing when `args` (what follows "translate") hold anything else or a value the
/// command's own checks would refuse (the LibTorch program then says what is wrong). `device_auto_is_cpu`:
/// whether "--device auto" means the CPU (a LibTorch built without CUDA).
std::optional<FileTranslationRequest> parse_translate_arguments(const std::vector<std::string>& args,
                                                                bool device_auto_is_cpu);

class FileTranslation {
 public:
  /// Reads the checkpoint's translator file and packs its weights. Returns null, with the reason in
  /// `why_not`, when the LibTorch path must translate instead: no translator file yet, one unreadable
  /// or made from an earlier state of the checkpoint or of its shortlist, weights "libtorch". Throws
  /// std::invalid_argument naming what the person must change: no such checkpoint, an input file that
  /// cannot be read, --shortlist where the run has none.
  static std::unique_ptr<FileTranslation> open(const FileTranslationRequest& request, std::string& why_not);

  ~FileTranslation();
  FileTranslation(const FileTranslation&) = delete;
  FileTranslation& operator=(const FileTranslation&) = delete;

  /// Translates the request's input file (once: open() opened it), or `in` without one, to `out`, one line per line, in
  /// length-sorted batches shared out among the threads; `in` read a line at a time and each answer
  /// written at once when someone types at a terminal. A progress line on standard error when the
  /// input is a file and standard error a terminal.
  void run(std::istream& in, std::ostream& out);

 private:
  struct State;
  explicit FileTranslation(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace ts
