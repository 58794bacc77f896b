// SPDX-License-Identifier: GPL-3.0-or-later
// A model's parameter count from its configuration alone, without building it, and the memory
// check that refuses, before anything is allocated, a model this machine cannot hold. The training
// footprint (gradients, Adam moments, a batch of activations) is ts/train/model_size.h.
#pragma once

#include <cstdint>
#include <string>

#include "ts/model/model_config.h"

namespace ts {

/// Exactly what build_model() would allocate; `src_vocab`/`tgt_vocab` include the special tokens.
/// A double: exact below 2^53 parameters, and absurd sizes cannot overflow on their way to
/// check_memory().
double parameter_count(const ModelConfig& model, double src_vocab, double tgt_vocab);

/// The floating-point operations (two per multiply-add) of the model's matrix products on one
/// sentence pair of `src_positions` source and `tgt_positions` target positions, forward only: the
/// linear layers (the cross-attention's keys and values over the source), attention's two products
/// (the decoder's whole square, as it is computed) and the output projection over `tgt_vocab`. No
/// padding, no embedding lookups, no element-wise work: the model FLOPs of an MFU figure. Training's
/// forward and backward are three times this.
double forward_flops(const ModelConfig& model, double tgt_vocab, double src_positions, double tgt_positions);

/// Memory the system can still give (MemAvailable of /proc/meminfo), or 0 when unknown.
std::int64_t available_memory_bytes();
/// Refuses, before anything is allocated, what would not fit: throws ConfigError "<what> needs about
/// 1.2 TB but this machine has 21.5 GB available: <advice>". Does nothing when the available memory
/// is unknown. `bytes` is a double so that absurd sizes cannot overflow on the way here.
void check_memory(double bytes, const std::string& what, const std::string& advice);

}  // namespace ts
