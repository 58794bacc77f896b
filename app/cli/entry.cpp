// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio-cli's entry point.
#include "cli_main.h"
#include "ts/host/blas.h"

int main(int argc, char** argv) {
  ts::use_the_right_blas_kernels(argv);  // may start the program again, once
  return cli_main(argc, argv);
}
