// SPDX-License-Identifier: GPL-3.0-or-later
// The TS_FAULT fault plan (see fault_plan.h).
#include "support/fault_plan.h"

#include <csignal>
#include <cstdlib>
#include <mutex>
#include <string>

#include "ts/store/fault.h"

namespace ts::test {
namespace {

struct Plan {
  std::string spec;
  long long seen = 0;  // calls of the planned point so far
  std::mutex mutex;
};

Plan& plan() {
  static Plan p;
  return p;
}

std::string hook(const char* name) {
  Plan& p = plan();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.spec.compare(0, p.spec.find(':'), name) != 0) return {};
  const auto action = planned_fault_action(p.spec, name, ++p.seen);
  if (action == "kill") std::raise(SIGKILL);
  return action;
}

}  // namespace

std::string planned_fault_action(const std::string& spec, const std::string& point, long long seen) {
  const auto first = spec.find(':');
  if (first == std::string::npos || spec.compare(0, first, point) != 0) return {};
  const auto second = spec.find(':', first + 1);
  const long long at =
      std::atoll(spec.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1).c_str());
  if (at <= 0 || seen != at) return {};
  return second == std::string::npos ? "kill" : spec.substr(second + 1);
}

void install_fault_plan_from_environment() {
  const char* spec = std::getenv("TS_FAULT");
  if (!spec || !*spec) return;
  plan().spec = spec;
  install_fault_hook(&hook);
}

}  // namespace ts::test
