// SPDX-License-Identifier: GPL-3.0-or-later
// The desktop app's OpenMP setting. LibTorch's and OpenBLAS's OpenMP threads spin at the end of every
// parallel region; with GNU OpenMP's default a training run loses 3-9x of its speed as soon as another
// program wants a core (docs/benchmarks.md, "The desktop app's OpenMP wait policy"). libgomp reads its
// setting once, as it loads, before main runs: the program that sets it must start the app after,
// either the desktop front (app/gui/front.cpp, which loads no LibTorch) or the app itself, again.
// No LibTorch here.
#pragma once

namespace ts {

/// GOMP_SPINCOUNT for the desktop app: a bounded spin, then sleep.
inline constexpr const char* kDesktopSpinCount = "1000";

/// Sets GOMP_SPINCOUNT to kDesktopSpinCount (and TS_OPENMP_POLICY_SET, so that this happens once)
/// unless OMP_WAIT_POLICY, GOMP_SPINCOUNT or TS_OPENMP_POLICY_SET is in the environment already: a
/// person's own setting is kept. Returns whether it set something, i.e. whether a program already
/// running with OpenMP loaded must start again for it to count.
bool set_desktop_openmp_policy();

}  // namespace ts
