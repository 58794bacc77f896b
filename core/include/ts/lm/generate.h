// SPDX-License-Identifier: GPL-3.0-or-later
// Text generation from a language model: greedy (temperature 0) or sampling with temperature,
// top-k and top-p from a seed, the context cropped to the block size, cached keys/values, each
// token handed to a callback as soon as it is chosen.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "ts/lm/gpt.h"
#include "ts/lm/text_data.h"

namespace ts {

struct GenerateOptions {
  std::int64_t length = 200;  // tokens to generate
  double temperature = 1.0;   // 0 = greedy
  int top_k = 0;              // 0 = off
  double top_p = 1.0;         // 1 = off
  std::uint64_t seed = 0;
  bool record_attention = false;
  /// Ids never to generate (generate_text adds the vocabulary's PAD/UNK/BOS/EOS, which are no text).
  std::vector<std::int64_t> suppress;
};

struct GenerateResult {
  std::vector<std::int64_t> ids;  // generated tokens (prompt excluded)
  std::string text;               // generated text (when generated through a codec)
  /// With record_attention: per layer [1, H, T, T] over the last window (at most block_size tokens
  /// of prompt + generated text), and those window tokens' ids.
  std::vector<at::Tensor> attention;
  std::vector<std::int64_t> attention_ids;
};

/// Generates options.length tokens after `prompt` (not empty). `on_token` gets each id as it is chosen.
GenerateResult generate(LanguageModel& model, const std::vector<std::int64_t>& prompt, const GenerateOptions& options,
                        const std::function<void(std::int64_t)>& on_token = {});

/// Text in, text out: the prompt is encoded strictly (a character the model never saw is an error
/// naming it; an empty prompt starts from a newline), `on_text` gets each new piece of text.
GenerateResult generate_text(LanguageModel& model, const LmCodec& codec, const std::string& prompt,
                             const GenerateOptions& options,
                             const std::function<void(const std::string&)>& on_text = {});

}  // namespace ts
