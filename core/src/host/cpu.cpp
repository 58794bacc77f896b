// SPDX-License-Identifier: GPL-3.0-or-later
// This machine's CPU (see ts/host/cpu.h).
#include "ts/host/cpu.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

namespace ts {

int cpu_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

bool CpuInfo::has(const std::string& flag) const { return flags.find(" " + flag + " ") != std::string::npos; }

CpuInfo parse_cpu_info(const std::string& proc_cpuinfo) {
  CpuInfo info;
  std::istringstream in(proc_cpuinfo);
  std::string line;
  const auto value = [](const std::string& l) {
    const auto colon = l.find(':');
    if (colon == std::string::npos) return std::string();
    const auto start = l.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : l.substr(start);
  };
  while (std::getline(in, line) && (info.model.empty() || info.flags.empty())) {
    if (info.model.empty() && line.rfind("model name", 0) == 0) info.model = value(line);
    if (info.flags.empty() && line.rfind("flags", 0) == 0) info.flags = " " + value(line) + " ";
  }
  return info;
}

const CpuInfo& cpu_info() {
  static const CpuInfo info = [] {
    std::ifstream in("/proc/cpuinfo");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_cpu_info(text.str());
  }();
  return info;
}

}  // namespace ts
