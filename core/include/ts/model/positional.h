// SPDX-License-Identifier: GPL-3.0-or-later
// Torch-free views of the model's fixed ingredients, for plots and teaching: the sinusoidal
// position table, the label-smoothed target distribution the loss trains towards, and the
// attention masks of a batch. Plain vectors, so the GUI can use them without LibTorch.
#pragma once

#include <cstdint>
#include <vector>

namespace ts {

/// The sinusoidal table of "Attention Is All You Need", row-major [positions × d_model]:
/// PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
/// Same values as sinusoidal_table() in ts/model/transformer.h (which needs an even d_model; an
/// odd one here simply ends with a sine column). Empty for positions <= 0 or d_model <= 0.
std::vector<float> sinusoidal_values(int positions, int d_model);

/// The target distribution q over `vocab` classes that the training loss compares with for one
/// token whose reference id is `target`, exactly as at::cross_entropy_loss(logits, target, {},
/// reduction, ignore_index = pad, label_smoothing = smoothing) in LibTorch 1.13 computes it:
///   loss = (1 - s) * nll + (s / V) * sum_c(-log_softmax_c)  =  -sum_c q_c * log_softmax_c  with
///   q_c = s / V for every class c (pad included) and q_target = 1 - s + s / V.
/// A row whose target is `pad` is ignored by the loss: all zeros is returned.
/// (The Annotated Transformer's LabelSmoothing differs: s / (V - 2) on the non-target, non-pad
/// classes and 0 on pad.) Empty for vocab <= 0; target outside [0, vocab) gives the uniform s / V
/// part only.
std::vector<float> label_smoothing_distribution(int vocab, int target, int pad, double smoothing);

/// The decoder's subsequent (causal) mask, row-major [length × length]: entry (i, j) is 1 when
/// query position i may attend to key position j, i.e. j <= i; 0 above the diagonal.
std::vector<std::uint8_t> causal_mask_values(int length);

/// The padding mask of a batch, row-major [batch.size() × longest row]: 1 for a real token, 0 for
/// `pad` and for the positions past the end of a shorter row (where the batcher would put pads).
std::vector<std::uint8_t> padding_mask_values(const std::vector<std::vector<std::int64_t>>& batch, std::int64_t pad);

}  // namespace ts
