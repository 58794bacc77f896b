// SPDX-License-Identifier: GPL-3.0-or-later
// This process's age, and starting a companion program in its place (see ts/host/process.h).
#include "ts/host/process.h"

#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ts/host/blas.h"

namespace ts {

std::optional<unsigned long long> parse_proc_stat_start_ticks(const std::string& stat_line) {
  // "pid (comm) state ppid ... starttime ...": starttime is field 22, the 20th after the command
  // name's closing parenthesis (the last one on the line: the name may hold ')').
  const auto close = stat_line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat_line.substr(close + 1));
  std::string field;
  for (int i = 0; i < 20; ++i) {
    if (!(fields >> field)) return std::nullopt;
  }
  if (field.empty() || field.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  try {
    return std::stoull(field);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

double process_age_seconds() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  const auto ticks = parse_proc_stat_start_ticks(line);
  const long per_second = sysconf(_SC_CLK_TCK);
  timespec now{};
  // Linux counts a process's start time on the boot-time clock (suspend included).
  if (!ticks || per_second <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return 0;
  const double age = static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9 - static_cast<double>(*ticks) / per_second;
  return age > 0 ? age : 0;
}

std::string companion_program(const std::string& name, std::string* looked) {
  namespace fs = std::filesystem;
  std::error_code error;
  auto self = fs::read_symlink("/proc/self/exe", error);
  if (error) {
    // Where /proc/self/exe cannot be read (a sandbox's /proc may refuse it), the path execve was
    // given stands in.
    const auto why = error.message();
    const char* const exec_path = reinterpret_cast<const char*>(::getauxval(AT_EXECFN));
    if (exec_path != nullptr && *exec_path != '\0') self = fs::absolute(exec_path, error);
    if (error || exec_path == nullptr || *exec_path == '\0') {
      if (looked) *looked = "this program's own path is unknown: /proc/self/exe: " + why;
      return {};
    }
  }
  const auto dir = self.parent_path();
  std::string places;
  for (const auto& place : {dir, dir.parent_path() / "cli", dir.parent_path() / "lib" / "transformer-studio"}) {
    const auto program = place / name;
    const bool file = fs::is_regular_file(program, error);
    if (file && ::access(program.c_str(), X_OK) == 0) return program.string();
    places += (places.empty() ? "" : ", ") + program.lexically_normal().string() +
              (file    ? ": not executable"
               : error ? ": " + error.message()
                       : ": not a file");
  }
  if (looked) *looked = "looked for " + places;
  return {};
}

int run_companion_instead(const std::string& self, const std::string& name, const std::string& what, int argc,
                          char** argv) {
  std::string looked;
  const auto program = companion_program(name, &looked);
  if (program.empty()) {
    std::fprintf(stderr,
                 "%s: cannot find %s (beside this program, or in ../lib/transformer-studio), %s; reinstall Transformer "
                 "Studio\n(%s)\n",
                 self.c_str(), name.c_str(), what.c_str(), looked.c_str());
    return 127;
  }
  set_openblas_core_for_a_program_to_start();
  run_instead(program, {argv, argv + argc});
  return 127;
}

void run_instead(const std::string& program, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(program.c_str(), argv.data());
  std::fprintf(stderr, "%s: cannot start %s: %s\n", args.empty() ? "transformer-studio" : args[0].c_str(),
               program.c_str(), std::strerror(errno));
}

}  // namespace ts
