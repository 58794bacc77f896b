// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio-cli: the command people run. It loads no LibTorch itself, which takes about half
// a second on Debian's build before a program's first line runs (a second where OpenBLAS must be
// started again for this CPU's kernels, ts/host/blas.h):
// - `translate` with only the options the run's translator file serves (ts/infer/file_translation.h)
//   is translated here, on the packed kernels, with the outputs of the LibTorch path;
// - everything else is run by transformer-studio-cli-libtorch (entry.cpp over the commands), started
//   in this process's place with the same arguments, OPENBLAS_CORETYPE set first where OpenBLAS
//   would fall back on this CPU, so that it loads LibTorch once.
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ts/host/process.h"
#include "ts/infer/file_translation.h"

#ifndef TS_LIBTORCH_HAS_CUDA
#error "TS_LIBTORCH_HAS_CUDA: whether the LibTorch the commands link has CUDA (app/cli/CMakeLists.txt)"
#endif

namespace {

constexpr const char* kLibTorchProgram = "transformer-studio-cli-libtorch";

// Translates here when the translator file serves the request; nothing when the LibTorch program
// must (a request it does not serve, no translator file yet or a stale one, and every mistake in the
// request: that program says what is wrong in the command's own words and exit status).
std::optional<int> translate_here(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "translate") return std::nullopt;
  const auto request =
      ts::parse_translate_arguments({argv + 2, argv + argc}, /*device_auto_is_cpu=*/!TS_LIBTORCH_HAS_CUDA);
  if (!request) return std::nullopt;
  std::unique_ptr<ts::FileTranslation> translation;
  try {
    std::string why_not;
    translation = ts::FileTranslation::open(*request, why_not);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!translation) return std::nullopt;
  try {
    translation->run(std::cin, std::cout);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (const auto status = translate_here(argc, argv)) return *status;
  return ts::run_companion_instead("transformer-studio-cli", kLibTorchProgram,
                                   "which runs every command but translating from a translator file", argc, argv);
}
