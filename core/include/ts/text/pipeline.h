// SPDX-License-Identifier: GPL-3.0-or-later
// Text to ids and back for one direction: the tokenizers and vocabularies of both sides, as a
// checkpoint keeps them. Training builds one (ts/train/data.h); decoding and the app use it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ts/text/corpus.h"
#include "ts/text/tokenizer.h"
#include "ts/text/vocab.h"

namespace ts {

/// One sentence pair as ids. `src` ends with EOS; `tgt` has neither BOS nor EOS (added per batch).
struct Example {
  std::vector<std::int64_t> src;
  std::vector<std::int64_t> tgt;
};

/// Everything that turns text into ids and back for one direction. Saved inside checkpoints.
struct TextPipeline {
  Direction direction;
  Language src_language, tgt_language;
  std::shared_ptr<const Tokenizer> src_tokenizer, tgt_tokenizer;
  std::shared_ptr<const Vocab> src_vocab, tgt_vocab;
  bool shared_vocab = false;

  Example encode(const SentencePair& pair) const;
  std::vector<std::int64_t> encode_source(const std::string& text) const;  // ends with EOS
  std::string decode_target(const std::vector<std::int64_t>& ids) const;   // detokenised text

  nlohmann::json to_json() const;
  static TextPipeline from_json(const nlohmann::json& j);
};

}  // namespace ts
