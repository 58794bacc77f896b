// SPDX-License-Identifier: GPL-3.0-or-later
// Translating a file with a run's translator file, without LibTorch (see ts/infer/file_translation.h).
#include "ts/infer/file_translation.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "ts/host/cpu.h"
#include "ts/infer/batch_search.h"
#include "ts/infer/translator_file.h"
#include "ts/model/float_mode.h"
#include "ts/text/line_stream.h"
#include "ts/text/pipeline.h"

namespace ts {

namespace fs = std::filesystem;

bool is_model_folder(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / "config.json", ec) &&
         fs::is_regular_file(fs::path(path) / "model.safetensors", ec);
}

std::string checkpoint_of(const std::string& run_or_checkpoint) {
  std::error_code ec;
  if (fs::is_directory(run_or_checkpoint, ec) && !is_model_folder(run_or_checkpoint))
    return (fs::path(run_or_checkpoint) / "last.ckpt").string();
  return run_or_checkpoint;
}

namespace {

// The whole of `text` as an integer in [low, high].
std::optional<int> whole_int(const std::string& text, int low, int high) {
  int value = 0;
  const auto* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || at != end || value < low || value > high) return std::nullopt;
  return value;
}

// The whole of `text` as a finite number in [low, high].
std::optional<double> whole_double(const std::string& text, double low, double high) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !(value >= low && value <= high)) return std::nullopt;
  return value;
}

}  // namespace

std::optional<FileTranslationRequest> parse_translate_arguments(const std::vector<std::string>& args,
                                                                bool device_auto_is_cpu) {
  // The limits are those of `transformer-studio-cli translate`'s options (app/cli/main.cpp).
  constexpr int kMostBeams = 256, kMostInBatch = 4096;
  constexpr double kMostLengthPenalty = 5;
  FileTranslationRequest r;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i], value;
    bool has_value = false;
    if (const auto equals = name.find('='); name.rfind("--", 0) == 0 && equals != std::string::npos) {
      value = name.substr(equals + 1);
      name = name.substr(0, equals);
      has_value = true;
    }
    if (!seen.insert(name).second) return std::nullopt;  // given twice: the command refuses it
    if (name == "--shortlist") {
      if (has_value) return std::nullopt;
      r.shortlist = true;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) return std::nullopt;
      value = args[++i];
    }
    if (value.empty() || value[0] == '-') return std::nullopt;  // an option where a value belongs
    if (name == "--checkpoint") {
      r.checkpoint = value;
    } else if (name == "--input") {
      r.input = value;
    } else if (name == "--weights") {
      if (value != "fp32" && value != "bf16" && value != "int8") return std::nullopt;  // "libtorch" too
      r.weights = value;
    } else if (name == "--device") {
      if (value != "cpu" && !(value == "auto" && device_auto_is_cpu)) return std::nullopt;
    } else if (name == "--beam") {
      const auto beam = whole_int(value, 1, kMostBeams);
      if (!beam) return std::nullopt;
      r.beam = *beam;
    } else if (name == "--threads") {
      const auto threads = whole_int(value, 0, 1 << 16);
      if (!threads) return std::nullopt;
      r.threads = *threads;
    } else if (name == "--batch") {
      const auto batch = whole_int(value, 1, kMostInBatch);
      if (!batch) return std::nullopt;
      r.batch = *batch;
    } else if (name == "--length-penalty") {
      const auto alpha = whole_double(value, 0, kMostLengthPenalty);
      if (!alpha) return std::nullopt;
      r.length_penalty = *alpha;
    } else {
      return std::nullopt;  // --nbest, --sample, --attention-json, --help, ...: the LibTorch path's
    }
  }
  if (r.checkpoint.empty()) return std::nullopt;
  return r;
}

struct FileTranslation::State {
  FileTranslationRequest request;
  std::ifstream file;  // the request's input file, opened by open()
  DecodeConfig config;
  std::unique_ptr<PackedModel> model;
  TextPipeline pipeline;
  ShortlistOf shortlist_of;
};

FileTranslation::FileTranslation(std::unique_ptr<State> state) : state_(std::move(state)) {}
FileTranslation::~FileTranslation() = default;

std::unique_ptr<FileTranslation> FileTranslation::open(const FileTranslationRequest& a, std::string& why_not) {
  std::ifstream file;
  if (!a.input.empty()) open_sentences_file(a.input, file);  // names the file when it cannot be read
  const auto checkpoint = checkpoint_of(a.checkpoint);
  if (!fs::exists(checkpoint)) throw std::invalid_argument(checkpoint + ": no such checkpoint");
  const auto path = translator_file_for(checkpoint);
  if (!fs::exists(path)) {
    why_not = path + " does not exist yet";
    return nullptr;
  }
  TranslatorFile loaded;
  try {
    loaded = read_translator_file(path);
  } catch (const std::runtime_error& e) {
    why_not = e.what();  // the LibTorch path writes it again
    return nullptr;
  }
  if (!(loaded.made_from == CheckpointStamp::of(checkpoint))) {
    why_not = path + " was made from an earlier state of " + checkpoint;
    return nullptr;
  }

  auto s = std::make_unique<State>();
  s->request = a;
  s->file = std::move(file);
  DecodeConfig& config = s->config;
  config = loaded.decode;
  if (a.beam > 0) {
    config.beam = a.beam;
    config.mode = a.beam > 1 ? DecodeMode::kBeam : DecodeMode::kGreedy;
  } else if (config.mode == DecodeMode::kSample) {
    config.mode = DecodeMode::kGreedy;  // sampling is asked for on the command line, never inherited
  }
  config.nbest = 1;
  if (a.length_penalty >= 0) config.length_penalty = a.length_penalty;
  if (!a.weights.empty()) config.weights = parse_decode_weights(a.weights);
  if (a.shortlist) config.shortlist = true;
  WeightFormat format = WeightFormat::kBFloat16;
  switch (config.weights) {
    case DecodeWeights::kFloat32:
      format = WeightFormat::kFloat32;
      break;
    case DecodeWeights::kBFloat16:
      format = WeightFormat::kBFloat16;
      break;
    case DecodeWeights::kInt8:
      format = WeightFormat::kInt8;
      break;
    case DecodeWeights::kLibTorch:
      why_not = "weights \"libtorch\" are LibTorch's operations";
      return nullptr;
  }
  if (config.shortlist) {
    // As the LibTorch path: asked for on the command line, a missing shortlist is an error; asked
    // for by the model's own settings, a note, and the whole vocabulary is scored.
    const auto list_path = shortlist_file(checkpoint);
    const auto now = CheckpointStamp::of(list_path);
    if (!(loaded.shortlist_made_from == now)) {
      why_not = list_path + " has changed since " + path + " was written";
      return nullptr;
    }
    if (loaded.shortlist) {
      s->shortlist_of = [list = loaded.shortlist](const std::vector<std::int64_t>& source) {
        return list->targets(source);
      };
    } else if (now.size > 0) {
      why_not = list_path + " could not be read when " + path + " was written";
      return nullptr;
    } else {
      const auto message = missing_shortlist_message(list_path, a.checkpoint, a.shortlist);
      if (a.shortlist) throw std::invalid_argument(message);
      fmt::print(stderr, "note: {}\n", message);
    }
  }
  s->model = std::make_unique<PackedModel>(loaded.shape, loaded.lookup(), format);
  s->pipeline = TextPipeline::from_json(loaded.pipeline);
  return std::unique_ptr<FileTranslation>(new FileTranslation(std::move(s)));
}

void FileTranslation::run(std::istream& standard_input, std::ostream& out) {
  const auto& a = state_->request;
  const auto& model = *state_->model;
  const auto& pipeline = state_->pipeline;
  // Flush-to-zero and denormals-are-zero (MXCSR bits 15 and 6), as the LibTorch path runs
  // (configure_threads): subnormal activations decode alike in both.
  constexpr unsigned kFlushToZeroAndDenormalsAreZero = 0x8040U;
  const FloatMode::Scope flush(FloatMode::current() | kFlushToZeroAndDenormalsAreZero);
  const int threads = a.threads > 0 ? a.threads : cpu_cores();

  std::istream& in = a.input.empty() ? standard_input : state_->file;
  const bool typing = a.input.empty() && ::isatty(STDIN_FILENO);
  const auto batch = static_cast<std::size_t>(a.batch > 0 ? a.batch : typing ? 1 : cpu_decode_batch(state_->config));
  std::size_t total = 0;  // a progress line on a terminal when translating a file (its size is known)
  if (!a.input.empty() && ::isatty(STDERR_FILENO)) {
    std::ifstream count(a.input);
    std::string skip;
    while (std::getline(count, skip)) ++total;
  }
  const auto started = std::chrono::steady_clock::now();
  std::size_t done_before = 0;
  std::vector<std::string> lines;
  // Enough lines at a time that every thread has batches to sort and share out, and sorting by
  // length has sentences to choose from.
  constexpr std::size_t kBatchesPerThread = 16, kFewestLines = 2048;
  const auto chunk = typing ? 1 : std::max(kFewestLines, batch * kBatchesPerThread * static_cast<std::size_t>(threads));
  while (read_line_chunk(in, chunk, lines)) {
    std::vector<std::vector<std::int64_t>> sources;
    sources.reserve(lines.size());
    for (const auto& line : lines)
      sources.push_back(fit_to_positions(pipeline.encode_source(line), model.max_length()));
    const auto found = decode_packed(
        model, sources, state_->config, batch, threads,
        [&](std::size_t done) {
          if (total == 0) return;
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
          fmt::print(stderr, "{}", sentences_progress(done_before + done, total, s));
        },
        state_->shortlist_of);
    std::string text;
    for (const auto& h : found) {
      text += pipeline.decode_target(h.ids);
      text += '\n';
    }
    out << text;
    out.flush();
    done_before += lines.size();
  }
  if (total > 0) fmt::print(stderr, "\n");
}

}  // namespace ts
