// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio: the program people start (the menu entry runs it). It loads neither Qt nor
// LibTorch: it sets what the app's libraries read as they load, before the app's first line runs, and
// starts transformer-studio-app (app/gui/main.cpp) in its place with the same arguments:
// - the desktop OpenMP setting, a bounded spin (ts/host/openmp_policy.h), and
// - OPENBLAS_CORETYPE where OpenBLAS would fall back to its generic kernels on this CPU
//   (ts/host/blas.h).
// Without this front the app sets them and starts itself again, which loads Qt and LibTorch twice:
// about 0.7 s more at every start on an Intel Xeon VM (docs/benchmarks.md, "The desktop app starts once").
#include "ts/host/openmp_policy.h"
#include "ts/host/process.h"

namespace {
constexpr const char* kAppProgram = "transformer-studio-app";
}  // namespace

int main(int argc, char** argv) {
  ts::set_desktop_openmp_policy();
  return ts::run_companion_instead("transformer-studio", kAppProgram, "the desktop app itself", argc, argv);
}
