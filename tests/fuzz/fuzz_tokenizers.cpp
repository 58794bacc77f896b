// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target: the tokenizers (ts/text/tokenizer.h), UTF-8 helpers (ts/text/utf8.h) and Vocab
// (ts/text/vocab.h) on arbitrary bytes, invalid UTF-8 included.
//
// Word (split/strip/keep, with and without lowercasing), char, and SentencePiece BPE and unigram
// tokenizers, the latter trained ONCE at start-up on a built-in text. Beyond "no crash" it checks
// what the headers promise: tokenize never throws, tokens are non-empty valid UTF-8, re-tokenizing
// the detokenized (or space-joined) tokens gives the same tokens, SentencePiece decoding gives back
// the normalised text, Vocab round trips. Inputs whose selector byte is 0xFF are instead a
// SentencePiece model (as a checkpoint's text pipeline would carry it): loading it may only throw
// std::invalid_argument, and a model that loads must encode without crashing.
#include <memory>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "ts/text/base64.h"
#include "ts/text/tokenizer.h"
#include "ts/text/utf8.h"
#include "ts/text/vocab.h"

namespace {

using ts::fuzz::escaped;
using Tokens = std::vector<std::string>;

// A small English/German text with punctuation, digits, accents and a little CJK: enough for
// SentencePiece to learn merges, made up for this target.
std::vector<std::string> training_text() {
  const std::vector<std::string> starts = {"The cat", "Ein Hund",       "My sister's friend", "Der Lehrer",
                                           "Zoë",     "Our neighbours", "Das Mädchen",        "A small boy"};
  const std::vector<std::string> middles = {"reads", "sieht",  "doesn't like", "kauft",
                                            "wrote", "findet", "ate",          "möchte"};
  const std::vector<std::string> ends = {
      "a long letter.",    "the green apple!", "das alte Haus?", "zwei Äpfel, bitte.", "\"quotes\" (and brackets)",
      "3,5 km/h at 10:30", "e-mail & co",      "你好，世界。"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < 160; ++i) {
    out.push_back(starts[i % starts.size()] + " " + middles[(i / 3) % middles.size()] + " " +
                  ends[(i / 5) % ends.size()] + " " + std::to_string(i * 7));
  }
  return out;
}

struct Tokenizers {
  std::vector<std::unique_ptr<ts::Tokenizer>> word;  // split, strip, keep (lowercase), split (cased)
  std::unique_ptr<ts::Tokenizer> chars, chars_cased;
  std::unique_ptr<ts::Tokenizer> bpe, unigram;
};

std::unique_ptr<ts::Tokenizer> make(const std::string& kind, bool lowercase, const std::string& punctuation = "split") {
  ts::TokenizerConfig config;
  config.kind = ts::parse_tokenizer_kind(kind);
  config.lowercase = lowercase;
  config.punctuation = ts::parse_punctuation(punctuation);
  config.vocab_size = kind == "bpe" ? 160 : 120;
  config.character_coverage = 1.0;
  if (kind == "word" || kind == "char") return ts::make_tokenizer(config);
  return ts::make_tokenizer(config, training_text());
}

const Tokenizers& tokenizers() {
  static const Tokenizers t = [] {
    Tokenizers t;
    for (const char* mode : {"split", "strip", "keep"}) t.word.push_back(make("word", true, mode));
    t.word.push_back(make("word", false, "split"));
    t.chars = make("char", true);
    t.chars_cased = make("char", false);
    t.bpe = make("bpe", true);
    t.unigram = make("unigram", false);
    // The JSON round trip (what checkpoints store) rebuilds identical SentencePiece tokenizers.
    for (const ts::Tokenizer* tok : {t.bpe.get(), t.unigram.get()}) {
      const auto copy = ts::tokenizer_from_json(tok->to_json());
      for (const auto& line : training_text())
        TS_FUZZ_CHECK(copy->tokenize(line) == tok->tokenize(line), "tokenizer_from_json round trip");
    }
    return t;
  }();
  return t;
}

std::string join(const Tokens& tokens, const char* separator) {
  std::string out;
  for (const auto& token : tokens) out += (out.empty() ? "" : separator) + token;
  return out;
}

void check_tokens_valid(const Tokens& tokens, const char* who, std::string_view text) {
  for (const auto& token : tokens) {
    TS_FUZZ_CHECK(!token.empty(), std::string(who) + ": empty token for " + escaped(text));
    TS_FUZZ_CHECK(ts::is_valid_utf8(token), std::string(who) + ": invalid UTF-8 token " + escaped(token));
  }
}

bool contains_space_marker(std::string_view text) { return text.find("\u2581") != std::string_view::npos; }

// ------------------------------------------------------------------ UTF-8 helpers

// A straightforward reference decoder (RFC 3629), to compare is_valid_utf8 against.
bool reference_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    int n = 0;
    char32_t cp = 0, min = 0;
    if (b < 0x80) {
      ++i;
      continue;
    }
    if ((b & 0xE0) == 0xC0) {
      n = 1;
      cp = b & 0x1F;
      min = 0x80;
    } else if ((b & 0xF0) == 0xE0) {
      n = 2;
      cp = b & 0x0F;
      min = 0x800;
    } else if ((b & 0xF8) == 0xF0) {
      n = 3;
      cp = b & 0x07;
      min = 0x10000;
    } else
      return false;
    for (int k = 1; k <= n; ++k) {
      if (i + static_cast<std::size_t>(k) >= s.size()) return false;
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += static_cast<std::size_t>(n) + 1;
  }
  return true;
}

void check_utf8(std::string_view text) {
  const bool valid = ts::is_valid_utf8(text);
  TS_FUZZ_CHECK(valid == reference_valid_utf8(text), "is_valid_utf8 disagrees with the reference on " + escaped(text));
  const std::u32string cps = ts::to_u32(text);
  TS_FUZZ_CHECK(cps.size() == ts::code_point_count(text), "code_point_count agrees with to_u32");
  const std::string back = ts::to_utf8(cps);
  TS_FUZZ_CHECK(ts::is_valid_utf8(back), "to_utf8 output is valid UTF-8");
  TS_FUZZ_CHECK(ts::to_u32(back) == cps, "to_u32(to_utf8(cps)) == cps");
  const auto pieces = ts::split_code_points(text);
  TS_FUZZ_CHECK(pieces.size() == cps.size(), "split_code_points gives one string per code point");
  if (valid) {
    TS_FUZZ_CHECK(back == text, "valid UTF-8 round trips through to_u32/to_utf8");
    TS_FUZZ_CHECK(join(pieces, "") == text, "split_code_points pieces join to the text");
  } else {
    TS_FUZZ_CHECK(cps.find(U'\uFFFD') != std::u32string::npos, "invalid UTF-8 yields U+FFFD");
  }
  std::size_t pos = 0, steps = 0;
  while (pos < text.size()) {
    const std::size_t before = pos;
    ts::next_code_point(text, pos);
    TS_FUZZ_CHECK(pos > before && pos <= text.size() && pos - before <= 4, "next_code_point advances 1..4 bytes");
    ++steps;
  }
  TS_FUZZ_CHECK(steps == cps.size(), "next_code_point steps = code points");
}

// ------------------------------------------------------------------ tokenizers

void check_word(const ts::Tokenizer& tok, std::string_view text) {
  const Tokens tokens = tok.tokenize(text);
  const std::string mode = ts::punctuation_name(tok.config().punctuation);
  check_tokens_valid(tokens, "word", text);
  for (const auto& token : tokens) {
    for (const char32_t cp : ts::to_u32(token))
      TS_FUZZ_CHECK(!ts::is_space(cp), "word tokens hold no whitespace: " + escaped(token));
  }
  // Tokenizing is idempotent: the tokens joined by spaces give the same tokens again.
  const Tokens again = tok.tokenize(join(tokens, " "));
  TS_FUZZ_CHECK(again == tokens, "word/" + mode + ": tokenize(join(tokens)) != tokens for " + escaped(text) + " -> " +
                                     escaped(join(tokens, "|")) + " vs " + escaped(join(again, "|")));
  // Detokenizing re-attaches punctuation but never merges or splits tokens.
  const std::string detok = tok.detokenize(tokens);
  TS_FUZZ_CHECK(ts::is_valid_utf8(detok), "detokenize gives valid UTF-8");
  if (mode == "split") {
    const Tokens round = tok.tokenize(detok);
    TS_FUZZ_CHECK(round == tokens, "word/split: tokenize(detokenize(t)) != t for " + escaped(text) + ": " +
                                       escaped(join(tokens, "|")) + " -> " + escaped(detok) + " -> " +
                                       escaped(join(round, "|")));
  }
}

// The normalised text (clean-up + lowercasing, whitespace runs collapsed, trimmed), as the char
// tokenizer sees it.
std::string normalised(const ts::Tokenizer& chars, std::string_view text) {
  return chars.detokenize(chars.tokenize(text));
}

void check_char(const ts::Tokenizer& tok, std::string_view text) {
  const Tokens tokens = tok.tokenize(text);
  check_tokens_valid(tokens, "char", text);
  for (const auto& token : tokens)
    TS_FUZZ_CHECK(ts::code_point_count(token) == 1, "char tokens are single code points: " + escaped(token));
  if (contains_space_marker(text)) return;  // a literal U+2581 in the text is ambiguous by design
  if (!tokens.empty()) {
    TS_FUZZ_CHECK(tokens.front() != "\u2581" && tokens.back() != "\u2581", "no space marker at either end");
  }
  for (std::size_t i = 1; i < tokens.size(); ++i)
    TS_FUZZ_CHECK(!(tokens[i] == "\u2581" && tokens[i - 1] == "\u2581"), "space runs give one marker");
  const Tokens round = tok.tokenize(tok.detokenize(tokens));
  TS_FUZZ_CHECK(round == tokens, "char: tokenize(detokenize(t)) != t for " + escaped(text));
}

void check_sentencepiece(const ts::Tokenizer& tok, const ts::Tokenizer& chars, std::string_view text) {
  const Tokens pieces = tok.tokenize(text);
  const std::string kind = ts::tokenizer_kind_name(tok.config().kind);
  check_tokens_valid(pieces, kind.c_str(), text);
  const std::string decoded = tok.detokenize(pieces);
  TS_FUZZ_CHECK(ts::is_valid_utf8(decoded), "SentencePiece decoding gives valid UTF-8");
  if (contains_space_marker(text)) return;
  const std::string expected = normalised(chars, text);
  TS_FUZZ_CHECK(decoded == expected, kind + ": detokenize(tokenize(x)) is not the normalised x for " + escaped(text) +
                                         ": " + escaped(decoded) + " vs " + escaped(expected));
  TS_FUZZ_CHECK(tok.tokenize(decoded) == pieces, kind + ": re-encoding the decoded text differs");
}

void check_vocab(const std::vector<Tokens>& sentences, std::size_t max_size) {
  const ts::Vocab vocab = ts::Vocab::build(sentences, 1, max_size);
  TS_FUZZ_CHECK(vocab.size() >= 4, "the specials are always there");
  if (max_size >= 4) TS_FUZZ_CHECK(vocab.size() <= max_size, "max_size honoured");
  TS_FUZZ_CHECK(ts::Vocab::from_json(vocab.to_json()) == vocab, "Vocab JSON round trip");
  for (const auto& tokens : sentences) {
    const auto ids = vocab.encode(tokens);
    TS_FUZZ_CHECK(ids.size() == tokens.size(), "encode gives one id per token");
    const auto decoded = vocab.decode(ids);
    // decode stops at EOS and skips PAD/BOS; otherwise known tokens come back, unknown as <unk>.
    std::size_t j = 0;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (ids[i] == ts::Vocab::kEos) break;
      if (ids[i] == ts::Vocab::kPad || ids[i] == ts::Vocab::kBos) continue;
      TS_FUZZ_CHECK(j < decoded.size(), "decode keeps every ordinary token");
      const std::string& want = vocab.contains(tokens[i]) ? tokens[i] : std::string(ts::Vocab::kUnkToken);
      TS_FUZZ_CHECK(decoded[j] == want, "decode(encode(t)) keeps the token " + escaped(tokens[i]));
      ++j;
    }
    TS_FUZZ_CHECK(j == decoded.size(), "decode adds nothing");
  }
}

void fuzz_model_bytes(std::string_view bytes) {
  nlohmann::json j = {{"config", {{"kind", "unigram"}, {"vocab_size", 100}}},
                      {"model", ts::base64_encode(std::string(bytes))}};
  std::unique_ptr<ts::Tokenizer> tok;
  try {
    tok = ts::tokenizer_from_json(j);
  } catch (const std::invalid_argument&) {
    return;
  }
  const Tokens pieces = tok->tokenize("Ein kleiner Test, 42 mal!");
  (void)tok->detokenize(pieces);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tokenizers();  // trains the SentencePiece models once
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ts::fuzz::Input input(data, size);
  if (input.selector == 0xFF) {
    fuzz_model_bytes(input.rest);
    return 0;
  }
  const std::string_view text = input.rest;
  check_utf8(text);
  const Tokenizers& t = tokenizers();
  std::vector<Tokens> sentences;
  for (const auto& tok : t.word) {
    check_word(*tok, text);
    sentences.push_back(tok->tokenize(text));
  }
  check_char(*t.chars, text);
  check_char(*t.chars_cased, text);
  sentences.push_back(t.chars->tokenize(text));
  check_sentencepiece(*t.bpe, *t.chars, text);
  check_sentencepiece(*t.unigram, *t.chars_cased, text);
  // The vocabulary learnt from this input, then read back; and a size-capped one.
  sentences.push_back({"<pad>", "</s>", "<s>", "<unk>"});
  check_vocab(sentences, input.selector % 8 == 0 ? 0 : 4 + input.selector % 16);
  return 0;
}
