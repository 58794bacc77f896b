// SPDX-License-Identifier: GPL-3.0-or-later
// Model size and training memory from a configuration alone, without building the model: the
// configuration panel shows these live while the user edits hyperparameters.
#pragma once

#include <cstdint>
#include <string>

#include "ts/train/config.h"

namespace ts {

struct ModelSize {
  std::int64_t parameters = 0;        // exactly what build_model() would allocate
  std::int64_t weight_bytes = 0;      // fp32 weights
  std::int64_t training_bytes = 0;    // weights + gradients + Adam moments + activations of one batch (estimate)
  std::int64_t batch_tokens = 0;      // padded tokens per batch assumed for the activation estimate
};

/// `src_vocab`/`tgt_vocab` include the special tokens. `avg_sentence_tokens` is used when the
/// batch is counted in sentences.
ModelSize estimate_model_size(const ExperimentConfig& config, std::int64_t src_vocab, std::int64_t tgt_vocab,
                              double avg_sentence_tokens = 12);

/// Memory the system can still give (MemAvailable of /proc/meminfo), or 0 when unknown.
std::int64_t available_memory_bytes();
/// Refuses, before anything is allocated, what would not fit: throws ConfigError "<what> needs about
/// 1.2 TB but this machine has 21.5 GB available: <advice>". Does nothing when the available memory
/// is unknown. `bytes` is a double so that absurd sizes cannot overflow on the way here.
void check_memory(double bytes, const std::string& what, const std::string& advice);

}  // namespace ts
