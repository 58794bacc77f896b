// SPDX-License-Identifier: GPL-3.0-or-later
// Text for language models: one UTF-8 file read with checks (empty, binary, invalid UTF-8 reported
// with its line and byte, too short for a block), tokenised (per code point, or SentencePiece),
// encoded whole, split contiguously 90/10, and sampled as random block_size windows.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "ts/lm/gpt.h"
#include "ts/text/tokenizer.h"
#include "ts/text/vocab.h"

namespace ts {

/// Unusable text for a language model; what() names the file (and line/byte where it applies).
class LmDataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Text <-> ids. "char": one token per code point, newlines and spaces kept as they are, case kept.
/// "bpe"/"unigram": SentencePiece per line, with "\n" as a token of its own between lines.
class LmCodec {
 public:
  LmCodec() = default;
  /// Builds the tokenizer (SentencePiece trained on `text`'s lines) and the vocabulary of `text`.
  static LmCodec build(LmTokenizer kind, int vocab_size, std::string_view text);
  std::vector<std::string> tokenize(std::string_view text) const;
  std::string detokenize(const std::vector<std::string>& tokens) const;
  /// Tokens absent from the vocabulary throw std::invalid_argument naming them when `strict`,
  /// else become <unk>.
  std::vector<std::int64_t> encode(std::string_view text, bool strict = false) const;
  std::string decode(const std::vector<std::int64_t>& ids) const;
  const Vocab& vocab() const { return vocab_; }
  LmTokenizer kind() const { return kind_; }
  nlohmann::json to_json() const;
  static LmCodec from_json(const nlohmann::json& j);

 private:
  LmTokenizer kind_ = LmTokenizer::kChar;
  std::shared_ptr<const Tokenizer> spm_;  // bpe/unigram
  Vocab vocab_;
};

struct LmData {
  std::string path;  // the text file ("" when built from memory)
  std::size_t bytes = 0, chars = 0, lines = 0;
  LmCodec codec;
  at::Tensor train, val;  // 1-D int64 token ids: the first 90% and the last 10%
  std::string summary()
      const;  // "input.txt: 1,115,394 characters, vocabulary 69, train 1,003,854 / val 111,540 tokens"
};

/// Checks `text` (named `name` in messages) and prepares it; `codec` reuses a saved tokenizer and
/// vocabulary (resume) instead of building them. Throws LmDataError.
LmData prepare_lm_text(std::string_view text, const std::string& name, const LmConfig& config,
                       const LmCodec* codec = nullptr);
/// Reads `path` and prepares it as above.
LmData load_lm_text(const std::string& path, const LmConfig& config, const LmCodec* codec = nullptr);

/// `batch` random windows of `block` tokens from `ids`: x [B, T] and y (x shifted by one) [B, T].
std::pair<at::Tensor, at::Tensor> sample_batch(const at::Tensor& ids, std::int64_t batch, std::int64_t block,
                                               at::Generator& generator);

/// Mean negative log-likelihood (nats/token) of `eval` under the bigram table counted on `train`
/// with add-`alpha` smoothing over `vocab` tokens. With eval == train and alpha = 0 it is the
/// conditional entropy H(next | previous) of the text's empirical bigram table.
double bigram_cross_entropy(const at::Tensor& train, const at::Tensor& eval, std::int64_t vocab, double alpha);

}  // namespace ts
