// SPDX-License-Identifier: GPL-3.0-or-later
// A thread's floating-point mode (on x86, MXCSR: flush-to-zero, denormals-are-zero, rounding), handed
// from one thread to another. configure_threads turns flush-to-zero on for the calling thread only
// (subnormal Adam moments once slowed training fifty-fold), and LibTorch's OpenMP worker threads
// start without it: a loop that shares its work among them (at::parallel_for in a file compiled with
// OpenMP) takes the caller's mode into each worker, so every element is computed alike on any thread.
//
//   const auto mode = FloatMode::current();
//   at::parallel_for(0, n, grain, [&](std::int64_t begin, std::int64_t end) {
//     const FloatMode::Scope same(mode);
//     ...
//   });
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define TS_FLOAT_MODE_X86 1
#else
#define TS_FLOAT_MODE_X86 0
#endif

namespace ts::FloatMode {

/// The calling thread's mode (0 where there is nothing to hand on).
inline unsigned int current() {
#if TS_FLOAT_MODE_X86
  return _mm_getcsr();
#else
  return 0;
#endif
}

/// Sets `mode` on the calling thread for the scope, then puts back the thread's own.
class Scope {
 public:
  explicit Scope(unsigned int mode) : own_(current()) {
#if TS_FLOAT_MODE_X86
    _mm_setcsr(mode);
#else
    (void)mode;
#endif
  }
  ~Scope() {
#if TS_FLOAT_MODE_X86
    _mm_setcsr(own_);
#endif
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  unsigned int own_;
};

}  // namespace ts::FloatMode
