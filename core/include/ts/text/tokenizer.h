// SPDX-License-Identifier: GPL-3.0-or-later
// Tokenizers, selectable per side: word, char (per code point) and SentencePiece (BPE/unigram).
// Each has a matching detokenizer; BLEU is computed on detokenised text.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ts {

/// How a side's text is cut into tokens: words and punctuation marks, characters (spaces become the
/// token "\u2581"), or pieces of a SentencePiece model (BPE or unigram) trained on the corpus.
enum class TokenizerKind { kWord, kChar, kBpe, kUnigram };
/// "word", "char", "bpe", "unigram".
const char* tokenizer_kind_name(TokenizerKind kind);
/// The inverse of tokenizer_kind_name; throws std::invalid_argument naming the accepted values.
TokenizerKind parse_tokenizer_kind(const std::string& name);
/// True for the kinds that train a SentencePiece model (bpe, unigram).
bool is_sentencepiece(TokenizerKind kind);

/// What the word tokenizer does with punctuation marks: makes them tokens of their own, drops them,
/// or keeps them attached to the words (splitting on spaces only).
enum class Punctuation { kSplit, kStrip, kKeep };
/// "split", "strip", "keep".
const char* punctuation_name(Punctuation punctuation);
/// The inverse of punctuation_name; throws std::invalid_argument naming the accepted values.
Punctuation parse_punctuation(const std::string& name);

/// Traditional/simplified Chinese normalisation through OpenCC (when this build has it).
enum class ChineseScript { kNone, kT2s, kS2t };
/// "none", "t2s" (traditional to simplified), "s2t".
const char* chinese_script_name(ChineseScript script);
/// The inverse of chinese_script_name; throws std::invalid_argument naming the accepted values.
ChineseScript parse_chinese_script(const std::string& name);

struct TokenizerConfig {
  TokenizerKind kind = TokenizerKind::kWord;
  bool lowercase = true;                          // all kinds: lowercase (Unicode-aware, via ICU) before tokenizing
  Punctuation punctuation = Punctuation::kSplit;  // word only
  ChineseScript chinese = ChineseScript::kNone;
  int vocab_size = 8000;               // bpe/unigram: SentencePiece vocabulary size (16..1000000)
  double character_coverage = 0.9995;  // bpe/unigram: share of characters covered, in (0, 1]

  nlohmann::json to_json() const;
  /// Missing keys keep their defaults; unknown keys or bad values -> std::invalid_argument
  /// naming the key and the allowed values.
  static TokenizerConfig from_json(const nlohmann::json& j);
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  /// Text to tokens. Never throws on odd input (invalid UTF-8 becomes U+FFFD).
  virtual std::vector<std::string> tokenize(std::string_view text) const = 0;
  /// Tokens back to text: words joined by spaces with punctuation re-attached ("Hallo , Welt !" -> "Hallo, Welt!"),
  /// characters joined without spaces (the space marker restored), SentencePiece decoding.
  virtual std::string detokenize(const std::vector<std::string>& tokens) const = 0;
  virtual const TokenizerConfig& config() const = 0;
  /// Everything needed to rebuild this tokenizer (config, plus the serialized SentencePiece model
  /// base64-encoded under "model"). A checkpoint stores this so it is self-contained.
  virtual nlohmann::json to_json() const = 0;
  /// What training this tokenizer changed from its configuration and why (e.g. a vocabulary
  /// raised to cover every character), for the log; empty when nothing.
  virtual std::string training_note() const { return {}; }
};

/// SentencePiece learns a vocabulary from at most this many lines of its training text: 100,000,
/// or 20 a piece for larger vocabularies (160,000 for 8,000 pieces). A larger corpus gives an evenly
/// spaced sample of its lines, the same on every run: on deu.txt's 335,626 lines (both sides, one
/// vocabulary of 4,000 pieces) training took 9.4 s of a 1-minute budget, 3.4 s on 100,000 lines;
/// the pieces cut the training targets into 0.4% more tokens, and dev BLEU at 5 minutes stayed
/// level (docs/benchmarks.md "SentencePiece on a sample").
inline constexpr std::size_t kFewestSentencePieceLines = 100000;
inline constexpr std::size_t kSentencePieceLinesPerPiece = 20;
std::size_t sentencepiece_training_lines(int vocab_size);
namespace detail {
/// The i-th of k line numbers spread evenly over n lines (i itself when k >= n), ascending.
std::size_t evenly_spaced(std::size_t i, std::size_t n, std::size_t k);
}  // namespace detail

/// Builds a tokenizer. Word and char need no training data; bpe/unigram train a SentencePiece
/// model on `training_text` (in memory, no temp files left behind). Throws std::invalid_argument
/// for a bad config and std::runtime_error if SentencePiece training fails.
std::unique_ptr<Tokenizer> make_tokenizer(const TokenizerConfig& config,
                                          const std::vector<std::string>& training_text = {});

/// Rebuilds a tokenizer from Tokenizer::to_json() output. Throws std::invalid_argument when `j`
/// is malformed (bad config, missing or corrupt SentencePiece model).
std::unique_ptr<Tokenizer> tokenizer_from_json(const nlohmann::json& j);

/// True when this build has OpenCC, i.e. TokenizerConfig::chinese t2s/s2t can be used
/// (otherwise make_tokenizer rejects them with std::invalid_argument).
bool chinese_conversion_available();

}  // namespace ts
