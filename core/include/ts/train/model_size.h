// SPDX-License-Identifier: GPL-3.0-or-later
// Model size and training memory from a configuration alone, without building the model: the
// configuration panel shows these live while the user edits hyperparameters, and the trainer
// refuses a run that would not fit before it allocates anything.
#pragma once

#include <cstdint>

#include "ts/model/size.h"
#include "ts/train/config.h"

namespace ts {

struct ModelSize {
  std::int64_t parameters = 0;      // exactly what build_model() would allocate
  std::int64_t weight_bytes = 0;    // fp32 weights
  std::int64_t training_bytes = 0;  // weights + gradients + Adam moments + activations of one batch (estimate)
  std::int64_t batch_tokens = 0;    // padded tokens per batch assumed for the activation estimate
};

/// `src_vocab`/`tgt_vocab` include the special tokens. `avg_sentence_tokens` is used when the
/// batch is counted in sentences.
ModelSize estimate_model_size(const ExperimentConfig& config, std::int64_t src_vocab, std::int64_t tgt_vocab,
                              double avg_sentence_tokens = 12);

}  // namespace ts
