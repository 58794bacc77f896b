// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/host/openmp_policy.h"

#include <cstdlib>

namespace ts {

bool set_desktop_openmp_policy() {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT") || std::getenv("TS_OPENMP_POLICY_SET"))
    return false;
  ::setenv("GOMP_SPINCOUNT", kDesktopSpinCount, 1);
  ::setenv("TS_OPENMP_POLICY_SET", "1", 1);
  return true;
}

}  // namespace ts
