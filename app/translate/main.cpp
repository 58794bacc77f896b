// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio-translate: translate a file (or standard input) with a trained run, one
// sentence per line, without loading LibTorch. Debian's LibTorch takes about half a second to load
// before a program's first line runs; this program reads the run's translator file (written beside
// the checkpoint by `transformer-studio-cli translate`) and decodes on the packed CPU kernels
// (ts/infer), in length-sorted batches shared out among the cores, with the outputs of
// `transformer-studio-cli translate` on the same weights.
//
// What it cannot do itself (no translator file yet or a stale one, a lexical shortlist changed or
// unreadable since the file was written, weights "libtorch") it hands to `transformer-studio-cli
// translate` with the same arguments.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ts/host/cpu.h"
#include "ts/infer/batch_search.h"
#include "ts/infer/translator_file.h"
#include "ts/model/float_mode.h"
#include "ts/text/files.h"
#include "ts/text/line_stream.h"
#include "ts/text/pipeline.h"

namespace {

namespace fs = std::filesystem;
using namespace ts;

struct Args {
  std::string checkpoint, input, weights;
  int beam = 0, threads = 0, batch = -1;  // beam 0: the model's own setting
  double length_penalty = -1;             // -1: the model's own
  bool shortlist = false;                 // --shortlist: the run's lexical shortlist, which must exist
};

// The checkpoint a run folder means, as transformer-studio-cli resolves it: its last.ckpt (a model
// folder, with config.json and model.safetensors, is itself the checkpoint).
std::string checkpoint_path(const std::string& run_or_checkpoint) {
  const fs::path dir(run_or_checkpoint);
  if (fs::is_directory(dir) &&
      !(fs::is_regular_file(dir / "config.json") && fs::is_regular_file(dir / "model.safetensors")))
    return (dir / "last.ckpt").string();
  return run_or_checkpoint;
}

// transformer-studio-cli beside this program, or on the PATH.
std::string cli_program() {
  std::error_code error;
  const auto self = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    for (const auto& dir : {self.parent_path(), self.parent_path().parent_path() / "cli"}) {
      const auto beside = dir / "transformer-studio-cli";
      if (fs::exists(beside)) return beside.string();
    }
  }
  return "transformer-studio-cli";
}

// Runs `transformer-studio-cli translate` with our arguments instead of this process.
[[noreturn]] void hand_over(int argc, char** argv, const std::string& why) {
  fmt::print(stderr, "note: {}: translating with transformer-studio-cli\n", why);
  const auto program = cli_program();
  std::vector<std::string> args{program, "translate"};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> c_args;
  for (auto& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  ::execvp(program.c_str(), c_args.data());
  fmt::print(stderr, "error: cannot run {}: {}\n", program, std::strerror(errno));
  std::exit(1);
}

int translate(const Args& a, int argc, char** argv) {
  std::ifstream file;
  if (!a.input.empty()) open_sentences_file(a.input, file);
  const auto checkpoint = checkpoint_path(a.checkpoint);
  if (!fs::exists(checkpoint)) throw std::invalid_argument(checkpoint + ": no such checkpoint");
  const auto path = translator_file_for(checkpoint);
  if (!fs::exists(path)) hand_over(argc, argv, path + " does not exist yet");
  TranslatorFile loaded;
  try {
    loaded = read_translator_file(path);
  } catch (const std::runtime_error& e) {
    hand_over(argc, argv, e.what());  // transformer-studio-cli writes it again
  }
  if (!(loaded.made_from == CheckpointStamp::of(checkpoint)))
    hand_over(argc, argv, path + " was made from an earlier state of " + checkpoint);

  DecodeConfig config = loaded.decode;
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
  ShortlistOf shortlist_of;
  if (config.shortlist) {
    // As transformer-studio-cli translate: asked for on the command line, a missing shortlist is an
    // error; asked for by the model's own settings, a note, and the whole vocabulary is scored.
    const auto list_path = shortlist_file(checkpoint);
    const auto now = CheckpointStamp::of(list_path);
    if (!(loaded.shortlist_made_from == now))
      hand_over(argc, argv, list_path + " has changed since " + path + " was written");
    if (loaded.shortlist) {
      shortlist_of = [list = loaded.shortlist](const std::vector<std::int64_t>& source) {
        return list->targets(source);
      };
    } else if (now.size > 0) {
      hand_over(argc, argv, list_path + " could not be read when " + path + " was written");
    } else {
      const auto message = missing_shortlist_message(list_path, a.checkpoint, a.shortlist);
      if (a.shortlist) throw std::invalid_argument(message);
      fmt::print(stderr, "note: {}\n", message);
    }
  }
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
      hand_over(argc, argv, "weights \"libtorch\" are LibTorch's operations");
  }

  // Flush-to-zero and denormals-are-zero (MXCSR bits 15 and 6), as transformer-studio-cli runs
  // (configure_threads): subnormal activations decode alike in both programs.
  constexpr unsigned kFlushToZeroAndDenormalsAreZero = 0x8040U;
  const ts::FloatMode::Scope flush(ts::FloatMode::current() | kFlushToZeroAndDenormalsAreZero);
  const PackedModel model(loaded.shape, loaded.lookup(), format);
  loaded.data = {};  // the packed copy is all that is needed now
  loaded.tensors.clear();
  const auto pipeline = TextPipeline::from_json(loaded.pipeline);
  const int threads = a.threads > 0 ? a.threads : cpu_cores();

  std::istream& in = a.input.empty() ? std::cin : file;
  const bool typing = a.input.empty() && ::isatty(STDIN_FILENO);
  const auto batch = static_cast<std::size_t>(a.batch > 0 ? a.batch : typing ? 1 : 64);
  std::size_t total = 0;  // a progress line on a terminal when translating a file (its size is known)
  if (!a.input.empty() && ::isatty(STDERR_FILENO)) {
    std::ifstream count(a.input);
    std::string skip;
    while (std::getline(count, skip)) ++total;
  }
  const auto started = std::chrono::steady_clock::now();
  std::size_t done_before = 0;
  std::vector<std::string> lines;
  // Enough lines at a time that every thread has batches to sort and share out.
  const auto chunk = typing ? 1 : batch * 16 * static_cast<std::size_t>(threads);
  while (read_line_chunk(in, chunk, lines)) {
    std::vector<std::vector<std::int64_t>> sources;
    sources.reserve(lines.size());
    for (const auto& line : lines)
      sources.push_back(fit_to_positions(pipeline.encode_source(line), model.max_length()));
    const auto found = decode_packed(
        model, sources, config, batch, threads,
        [&](std::size_t done) {
          if (total == 0) return;
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
          fmt::print(stderr, "{}", sentences_progress(done_before + done, total, s));
        },
        shortlist_of);
    std::string out;
    for (const auto& h : found) {
      out += pipeline.decode_target(h.ids);
      out += '\n';
    }
    std::cout << out;
    std::cout.flush();
    done_before += lines.size();
  }
  if (total > 0) fmt::print(stderr, "\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Translate standard input (or --input FILE) to standard output, one sentence per line, with a trained run, "
      "without loading LibTorch. Reads the translator file that `transformer-studio-cli translate` writes beside "
      "the checkpoint; without one it hands over to transformer-studio-cli. For n-best lists, sampling, "
      "attention or a GPU: transformer-studio-cli translate."};
  Args a;
  app.add_option("--checkpoint", a.checkpoint, "A run folder (its last.ckpt), a checkpoint file or a model folder")
      ->required();
  app.add_option("--input", a.input, "A file of sentences, one per line (default: standard input)");
  app.add_option("--beam", a.beam, "Beam width (1: greedy decoding; default: the model's own setting)")
      ->check(CLI::PositiveNumber);
  app.add_option("--length-penalty", a.length_penalty, "Beam search's length penalty alpha (default: the model's)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--weights", a.weights, "Packed weights: bf16 (default), int8 (fastest) or fp32")
      ->check(CLI::IsMember({"fp32", "bf16", "int8"}));
  app.add_option("--threads", a.threads, "Threads (default: every core)")->check(CLI::NonNegativeNumber);
  app.add_flag("--shortlist", a.shortlist,
               "Score only each sentence's lexical shortlist of target tokens (made by `transformer-studio-cli "
               "shortlist`; default: the model's own setting)");
  app.add_option("--batch", a.batch, "Sentences decoded together (default 64; 1 when typing at a terminal)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    return translate(a, argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
