// SPDX-License-Identifier: GPL-3.0-or-later
// Fault points (see ts/store/fault.h): a hook only test programs install.
#include "ts/store/fault.h"

#include <atomic>

namespace ts {
namespace {

std::atomic<FaultHook> installed{nullptr};

}  // namespace

void install_fault_hook(FaultHook hook) { installed.store(hook, std::memory_order_release); }

std::string fault_action(const char* name) {
  const FaultHook hook = installed.load(std::memory_order_relaxed);
  return hook ? hook(name) : std::string();
}

bool fault_point(const char* name) { return !fault_action(name).empty(); }

}  // namespace ts
