// SPDX-License-Identifier: GPL-3.0-or-later
// Forward and backward on shares of a batch, one share per CPU thread.
#pragma once

#include <functional>

namespace ts {

/// Runs work(0) … work(shares - 1) at the same time, each on its own OpenMP thread, and returns
/// when all have ended; the first exception any of them threw is rethrown here, after all ended.
/// Inside each call LibTorch's operations run on that one thread: a parallel region of LibTorch
/// (its `at::parallel_for`, oneDNN, OpenBLAS) sees that it is already inside one and does not
/// start another. This is for the training step on a CPU: the operations of a small Transformer
/// are too small to share among threads one at a time (the threads wait at the end of each), but
/// each thread can run the whole forward and backward on its own share of the batch, the
/// gradients adding up in the shared parameters (LibTorch's gradient accumulation holds a lock per
/// parameter). Each call starts with the calling thread's LibTorch thread-local state (grad mode,
/// dispatch keys), as LibTorch's own workers do; what `work` changes stays on its thread.
/// Without OpenMP, or with shares <= 1, the calls run one after another on the calling thread.
void run_shares_on_threads(int shares, const std::function<void(int share)>& work);

/// True when core was built with OpenMP, so that run_shares_on_threads uses several threads.
bool shares_run_on_threads();

}  // namespace ts
