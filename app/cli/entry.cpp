// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio-cli-libtorch's entry point: every command, with LibTorch. transformer-studio-cli
// (front.cpp) starts it in its place for all but translating from a translator file; run directly, it
// does the same work.
#include "cli_main.h"
#include "ts/host/blas.h"

int main(int argc, char** argv) {
  ts::use_the_right_blas_kernels(argv);  // may start the program again, once (not when started by the front)
  return cli_main(argc, argv);
}
