// SPDX-License-Identifier: GPL-3.0-or-later
// How long this process has existed: a `train --budget` counts from the command's start, and the
// dynamic loader spends seconds (tens of seconds from a cold disk) loading LibTorch before main runs.
// And the programs installed with this one, started in its place (the fronts without LibTorch).
// No LibTorch here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ts {

/// Seconds since this process started, from /proc/self/stat and the boot-time clock (to 1/100 s);
/// 0 where they cannot be read.
double process_age_seconds();

/// The start time field of a /proc/<pid>/stat line, in clock ticks since boot; nothing when the line
/// is malformed. The command name (field 2) may hold spaces and parentheses.
std::optional<unsigned long long> parse_proc_stat_start_ticks(const std::string& stat_line);

/// The program `name` that was built or installed with this one: beside it (the build tree's
/// app/cli; an installed bin/), in ../cli (the build tree seen from app/translate) or in
/// ../lib/transformer-studio (where an installed transformer-studio-cli-libtorch lives); empty when
/// none is there, and then `looked` (when given) says where it looked and what it found there.
std::string companion_program(const std::string& name, std::string* looked = nullptr);

/// Runs `program` with `args` (args[0]: the name it is told it has) in place of this process: the
/// same process id and start time, standard streams and environment. Returns only when that failed,
/// after saying why on standard error.
void run_instead(const std::string& program, const std::vector<std::string>& args);

/// The last thing a front does (a program without LibTorch that starts the one with it in its place:
/// transformer-studio-cli, transformer-studio): finds `name` with companion_program, sets OpenBLAS's
/// kernels for it (set_openblas_core_for_a_program_to_start, ts/host/blas.h) and runs it in this
/// process's place with this process's arguments (argv[0] kept: the program's help names the front).
/// Returns only when that failed, with 127, after saying on standard error what is missing: "`self`:
/// cannot find `name` (beside this program, or in ../lib/transformer-studio), `what`; reinstall ...",
/// then the places it looked and what was there.
int run_companion_instead(const std::string& self, const std::string& name, const std::string& what, int argc,
                          char** argv);

}  // namespace ts
