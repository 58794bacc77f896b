// SPDX-License-Identifier: GPL-3.0-or-later
// Forward and backward on shares of a batch, one share per CPU thread (see ts/train/thread_shards.h).
// Compiled with OpenMP (core/CMakeLists.txt).
#include "ts/train/thread_shards.h"

#include <exception>
#include <vector>

#include <ATen/ThreadLocalState.h>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ts {

void run_shares_on_threads(int shares, const std::function<void(int share)>& work) {
#ifdef _OPENMP
  if (shares > 1) {
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(shares));
    const at::ThreadLocalState caller;  // grad mode, dispatch keys: as LibTorch's own workers get them
#pragma omp parallel for num_threads(shares) schedule(static, 1)
    for (int share = 0; share < shares; ++share) {
      omp_set_num_threads(1);  // this thread's later regions (none should start inside one) stay on it
      try {
        const at::ThreadLocalStateGuard state(caller);
        work(share);
      } catch (...) {
        errors[static_cast<std::size_t>(share)] = std::current_exception();
      }
    }
    for (auto& error : errors)
      if (error) std::rethrow_exception(error);
    return;
  }
#endif
  for (int share = 0; share < shares; ++share) work(share);
}

bool shares_run_on_threads() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

}  // namespace ts
