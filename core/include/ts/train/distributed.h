// SPDX-License-Identifier: GPL-3.0-or-later
// Data-parallel training on LibTorch's c10d: a TCPStore for the rendezvous (rank 0 serves it) and
// a Gloo process group on CPU (NCCL on CUDA where the LibTorch build has it). No networking of our
// own: every byte between ranks goes through c10d's collectives.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "ts/model/transformer.h"

namespace ts {

struct DistributedConfig {
  int world_size = 1;
  int rank = 0;
  std::string master_addr = "127.0.0.1";  // where rank 0 serves the TCPStore
  int master_port = 29500;
  /// For the rendezvous and every collective. Ranks wait for rank 0 at the next collective while it
  /// validates and writes checkpoints, so this must exceed the longest validation.
  double timeout_s = 1800;

  /// Throws std::invalid_argument naming the field (world_size, rank, master_addr, master_port, timeout_s).
  void validate() const;
};

/// True when this build has c10d with Gloo (libgloo-dev present when it was configured).
bool data_parallel_available();
/// "Gloo", "NCCL" or "none": the backend `connect` would use for `device`.
std::string data_parallel_backend(const at::Device& device);
/// A TCP port that was free on `host` a moment ago (bound to port 0 and released), for rank 0.
int free_port(const std::string& host = "127.0.0.1");

/// One rank's view of the process group. Every collective must be called by all ranks in the
/// same order; a rank that dies makes the others' next collective throw (peer closed) rather than
/// wait for the timeout.
class DataParallel {
 public:
  DataParallel();
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  /// Joins the group: rank 0 serves the TCPStore, every rank connects to it (retrying until the
  /// timeout, so ranks may start in any order) and builds the process group. Gloo on CPU, NCCL on
  /// CUDA when available (else Gloo). Throws std::runtime_error naming the address, port and rank.
  void connect(const DistributedConfig& config, const at::Device& device);
  bool connected() const;

  int rank() const;
  int world_size() const;
  const DistributedConfig& config() const;
  at::Device device() const;
  std::string backend() const;  // "Gloo" or "NCCL"

  /// Copies rank 0's parameters and buffers to every rank (at start and after resume).
  void broadcast_parameters(Transformer& model);
  /// Sums every parameter's gradient over the ranks (in a few flat buckets, one allreduce each),
  /// multiplied by `scale`. A rank without a gradient for a parameter contributes zeros.
  void all_reduce_gradients(Transformer& model, double scale = 1.0);
  /// Element-wise sum over the ranks, in place (losses, token counts, flags).
  void all_reduce_sum(std::vector<double>& values);
  /// Rank 0's values to every rank, in place; all ranks must pass the same length.
  void broadcast(std::vector<double>& values);
  void barrier();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ts
