// SPDX-License-Identifier: GPL-3.0-or-later
// The command-line program as a function: entry.cpp's main calls it, and so does the build of the CLI
// the fault tests use (tests/support/cli_with_faults.cpp), after installing its fault plan.
#pragma once

/// Parses the arguments, runs the subcommand and returns the process's exit status.
int cli_main(int argc, char** argv);
