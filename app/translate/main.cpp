// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio-translate: translate a file (or standard input) with a trained run, one
// sentence per line, without loading LibTorch: ts::FileTranslation (ts/infer/file_translation.h),
// as `transformer-studio-cli translate` does for the same options, with the same outputs.
//
// What the translator file cannot serve (none yet or a stale one, a lexical shortlist changed or
// unreadable since it was written, weights "libtorch") it hands to transformer-studio-cli-libtorch's
// translate with the same arguments, which writes the translator file again.
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ts/host/process.h"
#include "ts/infer/file_translation.h"

namespace {

// Runs `transformer-studio-cli-libtorch translate` with our arguments instead of this process.
[[noreturn]] void hand_over(int argc, char** argv, const std::string& why) {
  fmt::print(stderr, "note: {}: translating with transformer-studio-cli\n", why);
  auto program = ts::companion_program("transformer-studio-cli-libtorch");
  if (program.empty()) program = ts::companion_program("transformer-studio-cli");
  if (program.empty()) {
    fmt::print(stderr, "error: cannot find transformer-studio-cli-libtorch or transformer-studio-cli beside {}\n",
               argv[0]);
    std::exit(1);
  }
  std::vector<std::string> args{"transformer-studio-cli", "translate"};
  args.insert(args.end(), argv + 1, argv + argc);
  ts::run_instead(program, args);
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Translate standard input (or --input FILE) to standard output, one sentence per line, with a trained run, "
      "without loading LibTorch. Reads the translator file that `transformer-studio-cli translate` writes beside "
      "the checkpoint; without one it hands over to transformer-studio-cli. For n-best lists, sampling, "
      "attention or a GPU: transformer-studio-cli translate."};
  ts::FileTranslationRequest a;
  app.add_option("--checkpoint", a.checkpoint, "A run folder (its last.ckpt), a checkpoint file or a model folder")
      ->required();
  app.add_option("--input", a.input, "A file of sentences, one per line (default: standard input)");
  app.add_option("--beam", a.beam, "Beam width (1: greedy decoding; default: the model's own setting)")
      ->check(CLI::PositiveNumber);
  app.add_option("--length-penalty", a.length_penalty, "Beam search's length penalty alpha (default: the model's)")
      ->check(CLI::NonNegativeNumber);
  app.add_option(
         "--weights", a.weights,
         "Packed weights: bf16 (default; on AMX tiles where the CPU has them), int8 (fastest without AMX) or fp32")
      ->check(CLI::IsMember({"fp32", "bf16", "int8"}));
  app.add_option("--threads", a.threads, "Threads (default: every core)")->check(CLI::NonNegativeNumber);
  app.add_flag("--shortlist", a.shortlist,
               "Score only each sentence's lexical shortlist of target tokens (made by `transformer-studio-cli "
               "shortlist`; default: the model's own setting)");
  app.add_option("--batch", a.batch,
                 "Sentences decoded together (default 32 greedily, 8 with a beam of 4: 32 hypotheses a step; 1 when "
                 "typing at a terminal)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    std::string why_not;
    const auto translation = ts::FileTranslation::open(a, why_not);
    if (!translation) hand_over(argc, argv, why_not);
    translation->run(std::cin, std::cout);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
