// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio-cli's entry point.
#include "cli_main.h"

int main(int argc, char** argv) { return cli_main(argc, argv); }
