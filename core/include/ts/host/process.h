// SPDX-License-Identifier: GPL-3.0-or-later
// How long this process has existed: a `train --budget` counts from the command's start, and the
// dynamic loader spends seconds (tens of seconds from a cold disk) loading LibTorch before main runs.
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
/// none is there.
std::string companion_program(const std::string& name);

/// Runs `program` with `args` (args[0]: the name it is told it has) in place of this process: the
/// same process id and start time, standard streams and environment. Returns only when that failed,
/// after saying why on standard error.
void run_instead(const std::string& program, const std::vector<std::string>& args);

}  // namespace ts
