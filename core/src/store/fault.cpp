// SPDX-License-Identifier: GPL-3.0-or-later
// Fault injection (see ts/store/fault.h).
#include "ts/store/fault.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace ts {
namespace {

struct Plan {
  bool active = false;
  std::string name;
  long long at = 0;
  std::string action;  // "kill", "fail", "busy"
  long long seen = 0;
  std::mutex mutex;
};

Plan& plan() {
  static Plan* p = [] {
    auto* q = new Plan;
    const char* spec = std::getenv("TS_FAULT");
    if (!spec || !*spec) return q;
    const std::string s(spec);
    const auto first = s.find(':');
    if (first == std::string::npos) return q;
    const auto second = s.find(':', first + 1);
    q->name = s.substr(0, first);
    q->at =
        std::atoll(s.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1).c_str());
    q->action = second == std::string::npos ? "kill" : s.substr(second + 1);
    q->active = q->at > 0;
    return q;
  }();
  return *p;
}

}  // namespace

std::string fault_action(const char* name) {
  Plan& p = plan();
  if (!p.active) return {};
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.name != name || ++p.seen != p.at) return {};
  if (p.action == "kill") std::raise(SIGKILL);
  return p.action;
}

bool fault_point(const char* name) { return !fault_action(name).empty(); }

}  // namespace ts
