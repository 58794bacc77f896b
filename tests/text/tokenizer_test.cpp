// SPDX-License-Identifier: GPL-3.0-or-later
// Tokenizer tests: word/char/SentencePiece tokenization, detokenization round trips, config JSON.
#include "ts/text/tokenizer.h"
#include "ts/text/tokenize_all.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "ts/text/base64.h"
#include "ts/text/utf8.h"

namespace ts {
namespace {

using Tokens = std::vector<std::string>;

std::unique_ptr<Tokenizer> word_tokenizer(const std::string& punctuation = "split", bool lowercase = true) {
  TokenizerConfig config;
  config.punctuation = parse_punctuation(punctuation);
  config.lowercase = lowercase;
  return make_tokenizer(config);
}

std::unique_ptr<Tokenizer> char_tokenizer() {
  TokenizerConfig config;
  config.kind = TokenizerKind::kChar;
  return make_tokenizer(config);
}

// ~200 varied English/German sentences for SentencePiece training.
std::vector<std::string> training_sentences() {
  const std::vector<std::string> subjects = {"Tom",      "Maria",     "the teacher", "my brother",
                                             "der Hund", "die Katze", "ein Kind",    "our neighbour"};
  const std::vector<std::string> verbs = {"sees", "likes", "sucht", "findet", "reads", "kauft", "wants", "braucht"};
  const std::vector<std::string> objects = {"a book.",      "the red car!",        "das Haus?",
                                            "einen Apfel.", "some water, please.", "die Zeitung."};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < 200; ++i) {
    out.push_back(subjects[i % subjects.size()] + " " + verbs[(i / 3) % verbs.size()] + " " +
                  objects[(i / 7) % objects.size()] + " " + std::to_string(i));
  }
  return out;
}

std::unique_ptr<Tokenizer> sentencepiece_tokenizer(const std::string& kind, int vocab_size = 200) {
  TokenizerConfig config;
  config.kind = parse_tokenizer_kind(kind);
  config.vocab_size = vocab_size;
  config.character_coverage = 1.0;
  return make_tokenizer(config, training_sentences());
}

// ---------------------------------------------------------------- word tokenizer

TEST(WordTokenizer, SplitsPunctuationLikePythonFindall) {
  const auto tok = word_tokenizer();
  EXPECT_EQ(tok->tokenize("Don't go!"), (Tokens{"don", "'", "t", "go", "!"}));
  EXPECT_EQ(tok->tokenize("Hallo, Welt!"), (Tokens{"hallo", ",", "welt", "!"}));
  EXPECT_EQ(tok->tokenize("  snake_case\tand 3,5 km...  "),
            (Tokens{"snake_case", "and", "3", ",", "5", "km", ".", ".", "."}));
  EXPECT_EQ(tok->tokenize("er sagte: „ja“."), (Tokens{"er", "sagte", ":", "„", "ja", "“", "."}));
  EXPECT_EQ(tok->tokenize("Ça va? Très bien."), (Tokens{"ça", "va", "?", "très", "bien", "."}));
  EXPECT_TRUE(tok->tokenize("").empty());
  EXPECT_TRUE(tok->tokenize(" \t\n ").empty());
}

TEST(WordTokenizer, CombiningMarksStayInsideWords) {
  const auto tok = word_tokenizer();
  // "e" + COMBINING ACUTE ACCENT is one word, as is Hindi with its vowel signs.
  EXPECT_EQ(tok->tokenize("cafe\u0301 ok"), (Tokens{"cafe\u0301", "ok"}));
  EXPECT_EQ(tok->tokenize("नमस्ते!"), (Tokens{"नमस्ते", "!"}));
}

TEST(WordTokenizer, LowercasesUnicode) {
  const auto tok = word_tokenizer();
  EXPECT_EQ(tok->tokenize("Grüße"), (Tokens{"grüße"}));
  EXPECT_EQ(tok->tokenize("GRÜSSE"), (Tokens{"grüsse"}));
  EXPECT_EQ(tok->tokenize("GRÜ\u1E9EE ÄÖÜ"), (Tokens{"grüße", "äöü"}));  // capital sharp s
  EXPECT_EQ(tok->tokenize("ΟΔΟΣ"), (Tokens{"οδος"}));                    // final sigma
  EXPECT_EQ(tok->tokenize("ПРИВЕТ Мир"), (Tokens{"привет", "мир"}));
  const auto keep_case = word_tokenizer("split", false);
  EXPECT_EQ(keep_case->tokenize("Grüße, TOM"), (Tokens{"Grüße", ",", "TOM"}));
}

TEST(WordTokenizer, StripModeDropsPunctuation) {
  const auto tok = word_tokenizer("strip");
  EXPECT_EQ(tok->tokenize("Hallo, Welt! Wie geht's?"), (Tokens{"hallo", "welt", "wie", "geht", "s"}));
  EXPECT_EQ(tok->detokenize({"hallo", "welt"}), "hallo welt");
  EXPECT_EQ(tok->detokenize(tok->tokenize("ich bin hier")), "ich bin hier");
}

TEST(WordTokenizer, KeepModeSplitsOnWhitespaceOnly) {
  const auto tok = word_tokenizer("keep");
  EXPECT_EQ(tok->tokenize("Hallo,  Welt!\tJa."), (Tokens{"hallo,", "welt!", "ja."}));
  EXPECT_EQ(tok->detokenize(tok->tokenize("i don't know, tom.")), "i don't know, tom.");
}

TEST(WordTokenizer, DetokenizeReattachesPunctuation) {
  const auto tok = word_tokenizer();
  EXPECT_EQ(tok->detokenize({"Hallo", ",", "Welt", "!"}), "Hallo, Welt!");
  EXPECT_EQ(tok->detokenize({"don", "'", "t"}), "don't");
  EXPECT_EQ(tok->detokenize({"(", "ja", ")", "e", "-", "mail"}), "(ja) e-mail");
  EXPECT_EQ(tok->detokenize({"¿", "qué", "?"}), "¿qué?");
  EXPECT_EQ(tok->detokenize({"a", "-", "b", "–", "c"}), "a-b – c");
  EXPECT_EQ(tok->detokenize({"我爱你", "，", "你", "呢", "？"}), "我爱你，你 呢？");
  EXPECT_EQ(tok->detokenize({}), "");
  EXPECT_EQ(tok->detokenize({",", "ja"}), ", ja");
}

TEST(WordTokenizer, RoundTripsTypicalSentences) {
  const auto tok = word_tokenizer();
  const std::vector<std::string> sentences = {
      "i don't know, tom.",
      "wie geht's?",
      "das ist 3,5 km weit.",
      "er sagte: „ja“.",
      "she said \"hello\" to me.",
      "tom's car is red (very red).",
      "it's 10:30 now!",
      "ich habe 1.000 euro gespart; wirklich.",
      "mein e-mail-konto ist leer.",
      "ist das dein ernst?!",
      "warte... was?",
      "»komm her«, sagte er.",
      "¿qué tal?",
      "50% of them went home.",
      "grüße aus köln und zürich!",
      "he said “don't worry” and left.",
      "er fährt 120 km/h.",
      "i owe him $300 since 7 p.m. yesterday.",
      "ich hab' ihn nicht gesehen.",
      "mach 'ne pause!",
      "das hat vor- und nachteile.",
      "i was born on march 5, 1977.",
      "i'm at my parents'.",
      "c'est l'homme qu'il aime.",
  };
  for (const auto& s : sentences) {
    EXPECT_EQ(tok->detokenize(tok->tokenize(s)), s) << "tokens of: " << s;
  }
}

TEST(WordTokenizer, InvalidUtf8BecomesReplacementCharacter) {
  const auto tok = word_tokenizer();
  Tokens tokens;
  ASSERT_NO_THROW(tokens = tok->tokenize("ab\xFF"
                                         "cd \xC3 \xED\xA0\x80"));
  EXPECT_EQ(tokens, (Tokens{"ab", "\uFFFD", "cd", "\uFFFD", "\uFFFD", "\uFFFD", "\uFFFD"}));
  for (const auto& kind : {"keep", "strip"}) {
    EXPECT_NO_THROW(word_tokenizer(kind)->tokenize("\xC0\xAF\x80\xFE"));
  }
  // Control and format characters are dropped, not turned into tokens.
  EXPECT_EQ(tok->tokenize(std::string("a\x01"
                                      "b\u200Bc d",
                                      9)),
            (Tokens{"abc", "d"}));
}

// ---------------------------------------------------------------- char tokenizer

TEST(CharTokenizer, SplitsCodePointsWithSpaceMarker) {
  const auto tok = char_tokenizer();
  EXPECT_EQ(tok->tokenize("我爱你。"), (Tokens{"我", "爱", "你", "。"}));
  EXPECT_EQ(tok->tokenize("  Tom \t 是 A.  "), (Tokens{"t", "o", "m", "▁", "是", "▁", "a", "."}));
  EXPECT_EQ(tok->detokenize({"t", "o", "m", "▁", "是"}), "tom 是");
  EXPECT_TRUE(tok->tokenize("   ").empty());
}

TEST(CharTokenizer, RoundTripsNormalisedText) {
  const auto tok = char_tokenizer();
  for (const std::string s : {"我爱你。", "tom 是 a student.", "你好，世界！", "ok 😀 fine"}) {
    EXPECT_EQ(tok->detokenize(tok->tokenize(s)), s);
  }
  EXPECT_NO_THROW(tok->tokenize("\xF0\x9F"));
  EXPECT_EQ(tok->tokenize("a\xFF"), (Tokens{"a", "\uFFFD"}));
}

// ---------------------------------------------------------------- SentencePiece

TEST(SentencePieceTokenizer, BpeRoundTripsAndCompresses) {
  const auto tok = sentencepiece_tokenizer("bpe");
  const std::string s = "tom sees the red car! 42";
  const auto pieces = tok->tokenize("Tom sees the red car! 42");
  EXPECT_LT(pieces.size(), s.size() / 2);  // merges learnt, not just characters
  EXPECT_EQ(tok->detokenize(pieces), s);
  for (const auto& sentence : training_sentences()) {
    Tokens lowered = tok->tokenize(sentence);
    EXPECT_FALSE(lowered.empty());
  }
  EXPECT_EQ(tok->detokenize(tok->tokenize("die katze findet das haus? 7")), "die katze findet das haus? 7");
}

TEST(SentencePieceTokenizer, UnigramRoundTrips) {
  const auto tok = sentencepiece_tokenizer("unigram", 150);
  for (const std::string s :
       {"maria braucht einen apfel. 3", "our neighbour wants some water, please.", "unseen wörds zebra"}) {
    const auto pieces = tok->tokenize(s);
    EXPECT_FALSE(pieces.empty());
    EXPECT_EQ(tok->detokenize(pieces), s);
  }
  EXPECT_NO_THROW(tok->tokenize("\xFF\xFE broken"));
}

TEST(SentencePieceTokenizer, TooLargeVocabularyShrinksInsteadOfFailing) {
  TokenizerConfig config;
  config.kind = TokenizerKind::kBpe;
  config.vocab_size = 50000;
  std::unique_ptr<Tokenizer> tok;
  ASSERT_NO_THROW(tok = make_tokenizer(config, {"a tiny corpus", "with two lines"}));
  EXPECT_EQ(tok->detokenize(tok->tokenize("a tiny corpus")), "a tiny corpus");
}

// A vocabulary smaller than the characters it must cover: scratch-bpe's 1,000 shared pieces on
// cmn.txt stopped with "vocab_size 1000 is smaller than the number of distinct characters" (issue 21).
// The vocabulary is now raised to the characters plus the pieces asked for, and the tokenizer says so.
TEST(SentencePieceTokenizer, AVocabularyTooSmallForTheCharactersIsRaisedAndSaysSo) {
  std::vector<std::string> lines;  // 600 distinct Chinese characters, each in several lines
  for (int i = 0; i < 300; ++i) {
    std::string line;
    for (int k = 0; k < 12; ++k) append_utf8(line, static_cast<char32_t>(0x4E00 + (i * 7 + k * 50) % 600));
    lines.push_back(line);
  }
  for (const std::string kind : {"bpe", "unigram"}) {
    TokenizerConfig config;
    config.kind = parse_tokenizer_kind(kind);
    config.vocab_size = 100;
    config.character_coverage = 1.0;
    std::unique_ptr<Tokenizer> tok;
    ASSERT_NO_THROW(tok = make_tokenizer(config, lines)) << kind;
    const int used = tok->config().vocab_size;
    EXPECT_GE(used, 600 + 100) << kind;       // every character, and the pieces asked for
    EXPECT_LE(used, 600 + 100 + 10) << kind;  // (plus the few SentencePiece adds of its own)
    const auto note = tok->training_note();
    EXPECT_NE(note.find("tokenizer.vocab_size 100 is smaller than the"), std::string::npos) << note;
    EXPECT_NE(note.find("raised to " + std::to_string(used)), std::string::npos) << note;
    EXPECT_EQ(tok->detokenize(tok->tokenize(lines[5])), lines[5]) << kind;
    // The saved tokenizer carries the size it was trained with.
    EXPECT_EQ(tokenizer_from_json(tok->to_json())->config().vocab_size, used);
  }
  TokenizerConfig plenty;  // nothing to say when the configured size fits
  plenty.kind = TokenizerKind::kBpe;
  plenty.vocab_size = 1000;
  plenty.character_coverage = 1.0;
  EXPECT_EQ(make_tokenizer(plenty, lines)->training_note(), "");
  EXPECT_THROW(make_tokenizer(plenty, {}), std::invalid_argument);  // no training text
}

TEST(SentencePieceTokenizer, TrainingLinesAreAllOfThemUpToTheLimitThenAnEvenlySpacedSample) {
  EXPECT_EQ(sentencepiece_training_lines(200), kFewestSentencePieceLines);
  EXPECT_EQ(sentencepiece_training_lines(4000), 100000u);
  EXPECT_EQ(sentencepiece_training_lines(8000), 160000u);
  // k of n line numbers: ascending, distinct, the first line first, both ends of the range reached.
  for (const auto& [n, k] : std::vector<std::pair<std::size_t, std::size_t>>{{10, 4}, {335626, 100000}, {7, 7}}) {
    std::size_t previous = 0;
    for (std::size_t i = 0; i < std::min(n, k); ++i) {
      const auto line = detail::evenly_spaced(i, n, k);
      ASSERT_LT(line, n);
      if (i == 0) {
        EXPECT_EQ(line, 0u);
      } else {
        ASSERT_GT(line, previous) << "n " << n << " k " << k << " i " << i;
      }
      previous = line;
    }
    EXPECT_GE(previous, n - (n + k - 1) / k) << "the sample reaches the end of the lines";
  }
  EXPECT_EQ(detail::evenly_spaced(3, 5, 10), 3u);  // fewer lines than the limit: every line
}

// A corpus above the limit: SentencePiece learns from the sample, says so in the note, and learns
// the same model on every run (the sample does not depend on a random draw).
TEST(SentencePieceTokenizer, ABigCorpusTrainsOnAnEvenlySpacedSampleTheSameOnEveryRun) {
  std::vector<std::string> lines;
  const auto base = training_sentences();
  for (std::size_t i = 0; lines.size() < kFewestSentencePieceLines + 20000; ++i) lines.push_back(base[i % base.size()]);
  TokenizerConfig config;
  config.kind = TokenizerKind::kUnigram;
  config.vocab_size = 150;
  config.character_coverage = 1.0;
  const auto first = make_tokenizer(config, lines);
  const auto note = first->training_note();
  EXPECT_NE(note.find("learnt from an evenly spaced 100000 of its 120000 training lines"), std::string::npos) << note;
  EXPECT_EQ(first->detokenize(first->tokenize(base[17])), "maria kauft das haus? 17");
  EXPECT_EQ(make_tokenizer(config, lines)->to_json(), first->to_json());
  // At or under the limit there is nothing to say.
  lines.resize(kFewestSentencePieceLines);
  EXPECT_EQ(make_tokenizer(config, lines)->training_note(), "");
}

TEST(SentencePieceTokenizer, JsonRoundTripGivesIdenticalTokenization) {
  for (const std::string kind : {"bpe", "unigram"}) {
    const auto tok = sentencepiece_tokenizer(kind);
    const auto json = tok->to_json();
    ASSERT_TRUE(json.contains("model")) << kind;
    const auto copy = tokenizer_from_json(nlohmann::json::parse(json.dump()));
    EXPECT_STREQ(tokenizer_kind_name(copy->config().kind), kind.c_str());
    for (const auto& s : training_sentences()) EXPECT_EQ(copy->tokenize(s), tok->tokenize(s)) << s;
    EXPECT_EQ(copy->tokenize("völlig neue wörter"), tok->tokenize("völlig neue wörter"));
  }
}

TEST(SentencePieceTokenizer, RejectsCorruptModels) {
  auto json = sentencepiece_tokenizer("bpe", 100)->to_json();
  auto missing = json;
  missing.erase("model");
  EXPECT_THROW(tokenizer_from_json(missing), std::invalid_argument);
  auto not_base64 = json;
  not_base64["model"] = "***";
  EXPECT_THROW(tokenizer_from_json(not_base64), std::invalid_argument);
  auto garbage = json;
  garbage["model"] = base64_encode("definitely not a model proto");
  EXPECT_THROW(tokenizer_from_json(garbage), std::invalid_argument);
}

// ---------------------------------------------------------------- config and JSON

TEST(TokenizerConfig, JsonRoundTrip) {
  TokenizerConfig config;
  config.kind = TokenizerKind::kUnigram;
  config.lowercase = false;
  config.punctuation = Punctuation::kStrip;
  config.chinese = ChineseScript::kT2s;
  config.vocab_size = 1234;
  config.character_coverage = 0.98;
  const auto back = TokenizerConfig::from_json(config.to_json());
  EXPECT_EQ(back.to_json(), config.to_json());
  EXPECT_EQ(back.vocab_size, 1234);
  EXPECT_EQ(back.punctuation, Punctuation::kStrip);
  EXPECT_EQ(config.to_json()["punctuation"], "strip");  // by name in files
  EXPECT_EQ(config.to_json()["kind"], "unigram");
  EXPECT_EQ(config.to_json()["chinese"], "t2s");
  EXPECT_FALSE(back.lowercase);
  // Missing keys keep their defaults.
  EXPECT_EQ(TokenizerConfig::from_json({{"kind", "char"}}).vocab_size, TokenizerConfig{}.vocab_size);
}

// Runs `from_json` on `j` and returns the error message ("" when nothing was thrown).
std::string config_error(const nlohmann::json& j) {
  try {
    TokenizerConfig::from_json(j);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(TokenizerConfig, RejectsBadKeysAndValues) {
  EXPECT_EQ(config_error({{"kind", "wordz"}}), "tokenizer.kind \"wordz\" is not one of word, char, bpe, unigram");
  EXPECT_NE(config_error({{"punctuation", "drop"}}).find("split, strip, keep"), std::string::npos);
  EXPECT_NE(config_error({{"chinese", "zh"}}).find("none, t2s, s2t"), std::string::npos);
  EXPECT_NE(config_error({{"colour", "red"}}).find("unknown key \"colour\""), std::string::npos);
  EXPECT_NE(config_error({{"vocab_size", 0}}).find("tokenizer.vocab_size"), std::string::npos);
  EXPECT_NE(config_error({{"vocab_size", "8000"}}).find("must be an integer"), std::string::npos);
  EXPECT_NE(config_error({{"vocab_size", 4294967396LL}}), "");  // would wrap to 100 as an int
  EXPECT_NE(config_error({{"lowercase", 1}}).find("tokenizer.lowercase"), std::string::npos);
  EXPECT_NE(config_error({{"character_coverage", 1.5}}).find("character_coverage"), std::string::npos);
  EXPECT_NE(config_error(nlohmann::json::array()), "");
  EXPECT_EQ(config_error({{"kind", "bpe"}, {"vocab_size", 300}}), "");

  EXPECT_NE(config_error({{"kind", 3}}).find("tokenizer.kind 3 is not one of"), std::string::npos);
  // A NUL in a name is quoted, so it cannot cut the message short.
  EXPECT_EQ(config_error({{"kind", std::string("wo\0rd", 5)}}),
            "tokenizer.kind \"wo\\u0000rd\" is not one of word, char, bpe, unigram");

  TokenizerConfig bad;
  bad.vocab_size = 3;
  bad.kind = TokenizerKind::kBpe;
  EXPECT_THROW(make_tokenizer(bad, {"a b c"}), std::invalid_argument);
}

// The closed sets of a tokenizer's configuration by name, both ways.
TEST(TokenizerConfig, KindsAndModesHaveNamesBothWays) {
  for (auto kind : {TokenizerKind::kWord, TokenizerKind::kChar, TokenizerKind::kBpe, TokenizerKind::kUnigram})
    EXPECT_EQ(parse_tokenizer_kind(tokenizer_kind_name(kind)), kind);
  for (auto mode : {Punctuation::kSplit, Punctuation::kStrip, Punctuation::kKeep})
    EXPECT_EQ(parse_punctuation(punctuation_name(mode)), mode);
  for (auto script : {ChineseScript::kNone, ChineseScript::kT2s, ChineseScript::kS2t})
    EXPECT_EQ(parse_chinese_script(chinese_script_name(script)), script);
  EXPECT_STREQ(tokenizer_kind_name(TokenizerKind::kUnigram), "unigram");
  EXPECT_TRUE(is_sentencepiece(TokenizerKind::kBpe));
  EXPECT_FALSE(is_sentencepiece(TokenizerKind::kChar));
  EXPECT_THROW(parse_tokenizer_kind("Word"), std::invalid_argument);  // names are exact
  EXPECT_THROW(parse_punctuation(""), std::invalid_argument);
  EXPECT_THROW(parse_chinese_script("zh"), std::invalid_argument);
}

TEST(TokenizerConfig, WordAndCharTokenizersRebuildFromJson) {
  for (const auto kind : {TokenizerKind::kWord, TokenizerKind::kChar}) {
    TokenizerConfig config;
    config.kind = kind;
    config.punctuation = Punctuation::kStrip;
    const auto tok = make_tokenizer(config);
    const auto copy = tokenizer_from_json(tok->to_json());
    EXPECT_EQ(copy->to_json(), tok->to_json());
    EXPECT_EQ(copy->tokenize("Hallo, Welt! 你好"), tok->tokenize("Hallo, Welt! 你好"));
  }
  EXPECT_THROW(tokenizer_from_json({{"config", {{"kind", "word"}}}, {"extra", 1}}), std::invalid_argument);
  EXPECT_THROW(tokenizer_from_json({{"kind", "word"}}), std::invalid_argument);
}

TEST(TokenizerChinese, TraditionalToSimplifiedAndBack) {
  TokenizerConfig config;
  config.kind = TokenizerKind::kChar;
  config.chinese = ChineseScript::kT2s;
  if (!chinese_conversion_available()) {
    EXPECT_THROW(make_tokenizer(config), std::invalid_argument);
    GTEST_SKIP() << "built without OpenCC";
  }
  EXPECT_EQ(make_tokenizer(config)->tokenize("漢語"), (Tokens{"汉", "语"}));
  config.kind = TokenizerKind::kWord;
  EXPECT_EQ(make_tokenizer(config)->tokenize("我愛漢語, OK"), (Tokens{"我爱汉语", ",", "ok"}));
  config.chinese = ChineseScript::kS2t;
  EXPECT_EQ(make_tokenizer(config)->tokenize("汉语"), (Tokens{"漢語"}));
}

// ---------------------------------------------------------------- tokenize_all

// Lines that take every path of the normalisation: ASCII, capitals outside ASCII (ICU), traditional
// Chinese (OpenCC where the tokenizer converts), an invalid byte, control characters.
std::vector<std::string> varied_lines(std::size_t n) {
  const std::vector<std::string> tails = {"GRÜẞE aus Köln!", "我愛漢語, OK", "bad \xff byte",
                                          "tab\there\u200b", "ΣΟΦΙΑ σοφός.", "plain ascii text"};
  const auto heads = training_sentences();
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < n; ++i) lines.push_back(heads[i % heads.size()] + " " + tails[i % tails.size()]);
  return lines;
}

void expect_same_on_any_thread_count(const Tokenizer& tok, const std::vector<std::string>& lines) {
  std::vector<Tokens> one_by_one;
  for (const auto& line : lines) one_by_one.push_back(tok.tokenize(line));
  for (const int threads : {1, 2, 3, 8}) {
    EXPECT_EQ(tokenize_all(tok, lines, threads, /*min_block=*/16), one_by_one) << threads << " threads";
  }
  EXPECT_EQ(tokenize_all(tok, lines), one_by_one) << "the default: the cores, blocks of 4,096";
}

TEST(TokenizeAll, GivesEachLinesTokensInOrderOnAnyThreadCount) {
  const auto lines = varied_lines(1000);
  expect_same_on_any_thread_count(*word_tokenizer(), lines);
  expect_same_on_any_thread_count(*char_tokenizer(), lines);
  expect_same_on_any_thread_count(*sentencepiece_tokenizer("unigram"), lines);
  expect_same_on_any_thread_count(*sentencepiece_tokenizer("bpe"), lines);
  if (chinese_conversion_available()) {
    TokenizerConfig config;
    config.kind = TokenizerKind::kChar;
    config.chinese = ChineseScript::kT2s;
    const auto chinese = make_tokenizer(config);
    EXPECT_EQ(chinese->tokenize("漢"), (Tokens{"汉"}));  // it converts
    expect_same_on_any_thread_count(*chinese, lines);
  }
  EXPECT_TRUE(tokenize_all(*word_tokenizer(), {}, 4, 1).empty());
  EXPECT_EQ(tokenize_all(*word_tokenizer(), {"one line"}, 4, 1), (std::vector<Tokens>{{"one", "line"}}));
}

// A tokenizer that fails on one line, to see a failure on another thread reach the caller.
class FailingTokenizer final : public Tokenizer {
 public:
  explicit FailingTokenizer(std::string bad) : bad_(std::move(bad)) {}
  std::vector<std::string> tokenize(std::string_view text) const override {
    if (text == bad_) throw std::runtime_error("cannot tokenise " + bad_);
    return {std::string(text)};
  }
  std::string detokenize(const std::vector<std::string>& tokens) const override { return tokens.at(0); }
  const TokenizerConfig& config() const override { return config_; }
  nlohmann::json to_json() const override { return {}; }

 private:
  std::string bad_;
  TokenizerConfig config_;
};

TEST(TokenizeAll, RethrowsAFailureOnAnyThread) {
  std::vector<std::string> lines;
  for (int i = 0; i < 100; ++i) lines.push_back("line " + std::to_string(i));
  for (const auto* bad : {"line 0", "line 57", "line 99"}) {  // the calling thread's block, a middle one, the last
    try {
      tokenize_all(FailingTokenizer(bad), lines, 4, 10);
      ADD_FAILURE() << bad << ": no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), std::string("cannot tokenise ") + bad);
    }
  }
  EXPECT_EQ(tokenize_all(FailingTokenizer("none of them"), lines, 4, 10).at(57), (Tokens{"line 57"}));
}

TEST(TokenizerBase64, EncodesAndDecodes) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  std::string all_bytes;
  for (int i = 0; i < 256; ++i) all_bytes += static_cast<char>(i);
  EXPECT_EQ(base64_decode(base64_encode(all_bytes)), all_bytes);
  EXPECT_THROW(base64_decode("Zg="), std::invalid_argument);
  EXPECT_THROW(base64_decode("Z!=="), std::invalid_argument);
  EXPECT_THROW(base64_decode("Zh=="), std::invalid_argument);  // non-zero padding bits
}

}  // namespace
}  // namespace ts
