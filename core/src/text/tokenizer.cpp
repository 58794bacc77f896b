// SPDX-License-Identifier: GPL-3.0-or-later
// Tokenizers (see ts/text/tokenizer.h): the text normalisation every kind shares (valid UTF-8,
// whitespace and control clean-up, OpenCC, ICU lowercasing), the word and char tokenizers with
// their detokenizers, and SentencePiece BPE/unigram models trained in memory (SentencePiece
// itself runs in a dlopen()ed module, see sentencepiece_loader.h).
#include "ts/text/tokenizer.h"
#include "ts/text/tokenize_all.h"

#include <fmt/format.h>
#include <unicode/bytestream.h>
#include <unicode/casemap.h>
#include <unicode/stringpiece.h>
#include <unicode/uchar.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <future>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>
#ifdef TS_HAVE_OPENCC
#include <opencc.h>
#endif

#include "sentencepiece_loader.h"
#include "ts/host/cpu.h"
#include "ts/text/base64.h"
#include "ts/text/utf8.h"

namespace ts {

namespace {

// ------------------------------------------------------------------ config validation

const std::vector<std::string> kConfigKeys = {"kind",    "lowercase",  "punctuation",
                                              "chinese", "vocab_size", "character_coverage"};
constexpr int kMinVocabSize = 16;
constexpr int kMaxVocabSize = 1000000;

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

/// A closed set's value by name, or std::invalid_argument naming the key and the accepted names (the
/// value quoted as JSON, so a control byte cannot cut the message short).
template <typename Enum>
Enum parse_choice(const char* key, const nlohmann::json& value, Enum (*parse)(const std::string&),
                  const char* allowed) {
  if (value.is_string()) {
    try {
      return parse(value.get<std::string>());
    } catch (const std::invalid_argument&) {}
  }
  throw std::invalid_argument(fmt::format("tokenizer.{} {} is not one of {}", key,
                                          value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                                          allowed));
}

void validate(const TokenizerConfig& c) {
  if (c.vocab_size < kMinVocabSize || c.vocab_size > kMaxVocabSize) {
    throw std::invalid_argument(
        fmt::format("tokenizer.vocab_size {} is not in {}..{}", c.vocab_size, kMinVocabSize, kMaxVocabSize));
  }
  if (!(c.character_coverage > 0.0 && c.character_coverage <= 1.0)) {
    throw std::invalid_argument(fmt::format("tokenizer.character_coverage {} is not in (0, 1]", c.character_coverage));
  }
}

/// `value` as a T, or std::invalid_argument naming the key when `ok` (its type check) fails.
template <typename T>
T checked(const std::string& key, const nlohmann::json& value, bool ok, const char* what) {
  if (!ok) {
    throw std::invalid_argument(fmt::format("tokenizer.{} must be {}, not {}", key, what,
                                            value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  }
  return value.get<T>();
}

// ------------------------------------------------------------------ character classes

// How the tokenizers treat a code point. kControl (control and format characters) is dropped.
enum class CharClass : std::uint8_t { kSpace, kControl, kWord, kOther };

constexpr std::array<CharClass, 128> make_ascii_classes() {
  std::array<CharClass, 128> table{};
  for (int c = 0; c < 128; ++c) {
    if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F)) {
      table[c] = CharClass::kSpace;  // Python's \s in ASCII
    } else if (c < 0x20 || c == 0x7F) {
      table[c] = CharClass::kControl;
    } else if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
      table[c] = CharClass::kWord;
    } else {
      table[c] = CharClass::kOther;
    }
  }
  return table;
}
constexpr auto kAsciiClass = make_ascii_classes();

/// Word characters are letters, marks, numbers, connector punctuation and the zero-width joiners.
CharClass classify(char32_t cp) {
  if (cp < 0x80) return kAsciiClass[cp];
  if (is_space(cp)) return CharClass::kSpace;
  if (cp == 0x200C || cp == 0x200D) return CharClass::kWord;
  switch (u_charType(static_cast<UChar32>(cp))) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
    case U_NON_SPACING_MARK:
    case U_ENCLOSING_MARK:
    case U_COMBINING_SPACING_MARK:
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER:
    case U_CONNECTOR_PUNCTUATION:
      return CharClass::kWord;
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
      return CharClass::kControl;
    default:
      return CharClass::kOther;
  }
}

char32_t first_code_point(std::string_view token) {
  std::size_t pos = 0;
  return token.empty() ? 0 : next_code_point(token, pos);
}

char32_t last_code_point(std::string_view token) {
  if (token.empty()) return 0;
  std::size_t start = token.size() - 1;
  while (start > 0 && token.size() - start < 4 && (static_cast<unsigned char>(token[start]) & 0xC0) == 0x80) --start;
  return next_code_point(token, start);
}

/// The code point when `token` is exactly one, else 0.
char32_t single_code_point(std::string_view token) {
  std::size_t pos = 0;
  const char32_t cp = token.empty() ? 0 : next_code_point(token, pos);
  return pos == token.size() ? cp : 0;
}

bool is_word_token(std::string_view token) {
  return !token.empty() && classify(first_code_point(token)) == CharClass::kWord;
}

// ------------------------------------------------------------------ normalisation

constexpr char kSpaceMarker[] = "\u2581";

/// What clean() saw, so later steps can take their fast paths.
struct TextTraits {
  bool ascii = true;        // pure ASCII
  bool simple_case = true;  // no non-ASCII character changes when lowercased
};

/// Valid UTF-8 (bad bytes -> U+FFFD), every whitespace character turned into ' ', control and
/// format characters dropped.
std::string clean(std::string_view text, TextTraits& traits) {
  traits = TextTraits{};
  const auto printable = [](char c) { return c >= 0x20 && c < 0x7F; };
  if (std::all_of(text.begin(), text.end(), printable)) return std::string(text);  // fast path
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    if (byte < 0x80) {
      ++pos;
      const CharClass cls = kAsciiClass[byte];
      if (cls == CharClass::kSpace) {
        out += ' ';
      } else if (cls != CharClass::kControl) {
        out += static_cast<char>(byte);
      }
      continue;
    }
    const std::size_t start = pos;
    const char32_t cp = next_code_point(text, pos);
    const CharClass cls = classify(cp);
    if (cls == CharClass::kSpace) {
      out += ' ';
    } else if (cls != CharClass::kControl) {
      traits.ascii = false;
      if (u_hasBinaryProperty(static_cast<UChar32>(cp), UCHAR_CHANGES_WHEN_LOWERCASED)) {
        traits.simple_case = false;
      }
      if (cp == 0xFFFD) {
        append_utf8(out, cp);  // may stand for an invalid byte
      } else {
        out.append(text.substr(start, pos - start));
      }
    }
  }
  return out;
}

/// Unicode lowercasing with the root locale (full mappings: "GRÜẞE" -> "grüße", final sigma).
/// When only ASCII letters can change, a byte loop does the same much faster.
void lowercase(std::string& text, bool simple_case) {
  if (simple_case) {
    for (char& c : text) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
    }
    return;
  }
  std::string out;
  out.reserve(text.size());
  icu::StringByteSink<std::string> sink(&out, static_cast<int32_t>(text.size()));
  UErrorCode status = U_ZERO_ERROR;
  icu::CaseMap::utf8ToLower("", 0, icu::StringPiece(text.data(), static_cast<int32_t>(text.size())), sink, nullptr,
                            status);
  if (U_SUCCESS(status)) text = std::move(out);
}

/// Traditional <-> simplified Chinese via OpenCC; a null handle converts nothing.
using ChineseConverter = std::shared_ptr<void>;

ChineseConverter open_chinese_converter(ChineseScript script) {
  if (script == ChineseScript::kNone) return nullptr;
  const std::string mode = chinese_script_name(script);
#ifdef TS_HAVE_OPENCC
  const std::string file = mode + ".json";
  opencc_t handle = opencc_open(file.c_str());
  if (handle == reinterpret_cast<opencc_t>(-1)) {
    throw std::runtime_error(fmt::format("OpenCC could not load {}: {}", file, opencc_error()));
  }
  return ChineseConverter(handle, [](void* h) { opencc_close(h); });
#else
  throw std::invalid_argument(
      fmt::format("tokenizer.chinese \"{}\" needs OpenCC, which is unavailable in this build (use \"none\")", mode));
#endif
}

std::string convert_chinese(const ChineseConverter& converter, const std::string& text) {
#ifdef TS_HAVE_OPENCC
  char* converted = opencc_convert_utf8(converter.get(), text.data(), text.size());
  if (converted == nullptr) return text;
  std::string out(converted);
  opencc_convert_utf8_free(converted);
  return out;
#else
  return text;
#endif
}

/// The normalisation every tokenizer applies before splitting.
class Normaliser {
 public:
  explicit Normaliser(const TokenizerConfig& config)
      : lowercase_(config.lowercase), chinese_(open_chinese_converter(config.chinese)) {}

  std::string operator()(std::string_view text) const {
    TextTraits traits;
    std::string out = clean(text, traits);
    if (chinese_ && !traits.ascii) {
      out = convert_chinese(chinese_, out);
      traits.simple_case = false;  // be safe: the converted text was not inspected
    }
    if (lowercase_) lowercase(out, traits.simple_case);
    return out;
  }

 private:
  bool lowercase_;
  ChineseConverter chinese_;
};

// ------------------------------------------------------------------ splitting

/// Runs of word characters, plus (when `keep_punctuation`) each other character as a token:
/// Python's re.findall(r"\w+|[^\w\s]", s) on normalised text.
std::vector<std::string> split_words(const std::string& s, bool keep_punctuation) {
  std::vector<std::string> tokens;
  tokens.reserve(s.size() / 4 + 1);
  std::size_t word_start = std::string::npos;
  std::size_t pos = 0;
  auto flush_word = [&](std::size_t end) {
    if (word_start == std::string::npos) return;
    tokens.emplace_back(s, word_start, end - word_start);
    word_start = std::string::npos;
  };
  while (pos < s.size()) {
    const std::size_t start = pos;
    const auto byte = static_cast<unsigned char>(s[pos]);
    CharClass cls;
    if (byte < 0x80) {
      cls = kAsciiClass[byte];
      ++pos;
    } else {
      cls = classify(next_code_point(s, pos));
    }
    if (cls == CharClass::kWord) {
      if (word_start == std::string::npos) word_start = start;
      continue;
    }
    flush_word(start);
    if (cls == CharClass::kOther && keep_punctuation) tokens.emplace_back(s, start, pos - start);
  }
  flush_word(s.size());
  return tokens;
}

/// Space-separated chunks of normalised text.
std::vector<std::string> split_spaces(const std::string& s) {
  std::vector<std::string> tokens;
  std::size_t pos = 0;
  while (pos < s.size()) {
    const std::size_t start = s.find_first_not_of(' ', pos);
    if (start == std::string::npos) break;
    const std::size_t end = std::min(s.find(' ', start), s.size());
    tokens.emplace_back(s, start, end - start);
    pos = end;
  }
  return tokens;
}

/// One token per code point, whitespace runs as one kSpaceMarker, none at either end.
std::vector<std::string> split_chars(const std::string& s) {
  std::vector<std::string> tokens;
  tokens.reserve(s.size());
  bool pending_space = false;
  std::size_t pos = 0;
  while (pos < s.size()) {
    const std::size_t start = pos;
    if (next_code_point(s, pos) == U' ') {
      pending_space = !tokens.empty();
      continue;
    }
    if (pending_space) tokens.emplace_back(kSpaceMarker);
    pending_space = false;
    tokens.emplace_back(s, start, pos - start);
  }
  return tokens;
}

std::string join_with_spaces(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& token : tokens) {
    if (!out.empty()) out += ' ';
    out += token;
  }
  return out;
}

// ------------------------------------------------------------------ word detokenization

/// Whether a punctuation token sticks to its left neighbour, its right one, or both.
enum class Glue : std::uint8_t { kNone, kLeft, kRight, kBoth };

bool attaches_left(char32_t cp) {
  switch (cp) {
    case U',':
    case U'.':
    case U'!':
    case U'?':
    case U';':
    case U':':
    case U')':
    case U']':
    case U'}':
    case U'%':
    case U'\u2026' /* … */:
    case U'\u2030' /* ‰ */:
      return true;
    default:
      return false;
  }
}

bool attaches_right(char32_t cp) {
  switch (cp) {
    case U'(':
    case U'[':
    case U'{':
    case U'\u00BF' /* ¿ */:
    case U'\u00A1' /* ¡ */:
      return true;
    default:
      return false;
  }
}

/// The quotes that close an opening quote `cp` (empty when `cp` opens nothing).
std::u32string_view closers_of(char32_t cp) {
  switch (cp) {
    case U'"':
      return U"\"";
    case U'\'':
      return U"'";
    case U'\u201C' /* “ */:
      return U"\u201D";
    case U'\u2018' /* ‘ */:
      return U"\u2019";
    case U'\u201E' /* „ */:
      return U"\u201C\u201D";
    case U'\u201A' /* ‚ */:
      return U"\u2018\u2019";
    case U'\u00AB' /* « */:
      return U"\u00BB";
    case U'\u00BB' /* » */:
      return U"\u00AB";
    case U'\u2039' /* ‹ */:
      return U"\u203A";
    case U'\u203A' /* › */:
      return U"\u2039";
    default:
      return {};
  }
}

/// The tokens around the punctuation token being placed (empty past either end).
struct Neighbours {
  std::string_view prev, next, after_next;
  bool prev_word = false, next_word = false;
};

Neighbours neighbours_of(const std::vector<std::string>& tokens, std::size_t i) {
  Neighbours n;
  if (i > 0) n.prev = tokens[i - 1];
  if (i + 1 < tokens.size()) n.next = tokens[i + 1];
  if (i + 2 < tokens.size()) n.after_next = tokens[i + 2];
  n.prev_word = is_word_token(n.prev);
  n.next_word = is_word_token(n.next);
  return n;
}

bool is_digit_at(char32_t cp) { return cp != 0 && u_isdigit(static_cast<UChar32>(cp)); }

bool equals_ascii_ci(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x >= 'A' && x <= 'Z' ? x + 32 : x) == (y >= 'A' && y <= 'Z' ? y + 32 : y);
         });
}

/// Pops the innermost open quote that `cp` closes; false when it closes none.
bool close_quote(char32_t cp, std::vector<char32_t>& open) {
  for (auto it = open.rbegin(); it != open.rend(); ++it) {
    if (closers_of(*it).find(cp) != std::u32string_view::npos) {
      open.erase(std::next(it).base(), open.end());
      return true;
    }
  }
  return false;
}

/// Apostrophe between two words: contractions glue both sides ("don't", "geht's", "l'homme",
/// "qu'il", "o'clock"), German "'ne" sticks right, other elisions stick left ("hab' ihn", "ladies'
/// man").
Glue apostrophe_glue(const Neighbours& n) {
  static constexpr std::string_view kSuffixes[] = {"s", "t", "re", "ve", "ll", "d", "m"};
  const bool suffix = std::any_of(std::begin(kSuffixes), std::end(kSuffixes),
                                  [&n](std::string_view s) { return equals_ascii_ci(n.next, s); });
  static constexpr std::string_view kElidedWords[] = {"c", "d", "j", "l", "m", "n", "o", "qu", "s", "t"};
  const bool elided = std::any_of(std::begin(kElidedWords), std::end(kElidedWords),
                                  [&n](std::string_view s) { return equals_ascii_ci(n.prev, s); });
  if (suffix || elided) return Glue::kBoth;
  if (equals_ascii_ci(n.next, "ne") || equals_ascii_ci(n.next, "nen")) return Glue::kRight;
  return Glue::kLeft;
}

/// Hyphen between two words: glued ("e-mail"), except before a conjunction, where German
/// leaves it hanging ("vor- und nachteile").
Glue hyphen_glue(const Neighbours& n) {
  static constexpr std::string_view kConjunctions[] = {"und", "oder", "bis", "als", "sowie"};
  const bool hanging = std::any_of(std::begin(kConjunctions), std::end(kConjunctions),
                                   [&n](std::string_view s) { return equals_ascii_ci(n.next, s); });
  return hanging ? Glue::kLeft : Glue::kBoth;
}

/// Punctuation glued between two words: apostrophes, hyphens ("e-mail"), slashes ("km/h"),
/// separators inside numbers ("3,5", "1.000", "10:30") and abbreviations ("p.m.", "z.b.").
std::optional<Glue> between_words_glue(char32_t cp, const Neighbours& n, std::vector<char32_t>& open) {
  if (cp == U'\'' || cp == U'\u2019') {
    const Glue glue = apostrophe_glue(n);
    if (glue == Glue::kLeft) close_quote(cp, open);
    return glue;
  }
  if (cp == U'-' || cp == U'\u2010') return hyphen_glue(n);
  if (cp == U'/') return Glue::kBoth;
  const bool number_separator = cp == U',' || cp == U'.' || cp == U':';
  if (number_separator && is_digit_at(last_code_point(n.prev)) && is_digit_at(first_code_point(n.next))) {
    const bool date = cp == U',' && n.prev.size() <= 2 && n.next.size() == 4;  // "march 5, 1977"
    return date ? Glue::kLeft : Glue::kBoth;
  }
  if (cp == U'.' && code_point_count(n.next) == 1 && n.after_next == ".") return Glue::kBoth;
  return std::nullopt;
}

/// Quotes pair up: one closing the innermost matching open quote sticks left, an opening one
/// sticks right. German „…“ and »…« as well as English “…” and "…" work; a straight quote
/// after a word and before punctuation closes even without a seen opener ("my parents'.").
std::optional<Glue> quote_glue(char32_t cp, const Neighbours& n, std::vector<char32_t>& open) {
  if (close_quote(cp, open)) return Glue::kLeft;
  if (!closers_of(cp).empty()) {
    const bool straight = cp == U'"' || cp == U'\'';
    if (straight && n.prev_word && !n.next_word) return Glue::kLeft;
    open.push_back(cp);
    return Glue::kRight;
  }
  if (cp == U'\u201D' || cp == U'\u2019') return Glue::kLeft;  // closing quote without opener
  return std::nullopt;
}

bool is_currency(char32_t cp) {
  return cp == U'$' || cp == U'\u00A3' /* £ */ || cp == U'\u20AC' /* € */ || cp == U'\u00A5' /* ¥ */;
}

/// How token `i` (a single non-word character `cp`) attaches to its neighbours.
Glue punctuation_glue(const std::vector<std::string>& tokens, std::size_t i, char32_t cp,
                      std::vector<char32_t>& open_quotes) {
  if (classify(cp) == CharClass::kWord) return Glue::kNone;
  const Neighbours n = neighbours_of(tokens, i);
  if (n.prev_word && n.next_word) {
    if (const auto glue = between_words_glue(cp, n, open_quotes)) return *glue;
  }
  if (is_cjk(cp)) return Glue::kBoth;  // CJK punctuation: no spaces either side
  if (is_currency(cp) && is_digit_at(first_code_point(n.next))) return Glue::kRight;  // "$5"
  if (cp == U'-' && n.prev_word && !n.next_word) return Glue::kLeft;                  // "sitzungs-, kein"
  if (const auto glue = quote_glue(cp, n, open_quotes)) return *glue;
  if (attaches_left(cp)) return Glue::kLeft;
  if (attaches_right(cp)) return Glue::kRight;
  return Glue::kNone;
}

/// Joins word tokens with spaces and re-attaches punctuation ("don ' t know , tom ." -> "don't
/// know, tom.").
std::string join_with_punctuation(const std::vector<std::string>& tokens) {
  std::string out;
  std::vector<char32_t> open_quotes;
  bool glue_next = false;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const char32_t cp = single_code_point(tokens[i]);
    const Glue glue = cp != 0 ? punctuation_glue(tokens, i, cp, open_quotes) : Glue::kNone;
    const bool glue_left = glue_next || glue == Glue::kLeft || glue == Glue::kBoth;
    if (!out.empty() && !glue_left) out += ' ';
    out += tokens[i];
    glue_next = glue == Glue::kRight || glue == Glue::kBoth;
  }
  return out;
}

// ------------------------------------------------------------------ tokenizers

class WordTokenizer final : public Tokenizer {
 public:
  explicit WordTokenizer(const TokenizerConfig& config) : config_(config), normalise_(config) {}

  std::vector<std::string> tokenize(std::string_view text) const override {
    const std::string s = normalise_(text);
    if (config_.punctuation == Punctuation::kKeep) return split_spaces(s);
    return split_words(s, config_.punctuation == Punctuation::kSplit);
  }
  std::string detokenize(const std::vector<std::string>& tokens) const override {
    return config_.punctuation == Punctuation::kSplit ? join_with_punctuation(tokens) : join_with_spaces(tokens);
  }
  const TokenizerConfig& config() const override { return config_; }
  nlohmann::json to_json() const override { return {{"config", config_.to_json()}}; }

 private:
  TokenizerConfig config_;
  Normaliser normalise_;
};

class CharTokenizer final : public Tokenizer {
 public:
  explicit CharTokenizer(const TokenizerConfig& config) : config_(config), normalise_(config) {}

  std::vector<std::string> tokenize(std::string_view text) const override { return split_chars(normalise_(text)); }
  std::string detokenize(const std::vector<std::string>& tokens) const override {
    std::string out;
    for (const auto& token : tokens) out += token == kSpaceMarker ? std::string(" ") : token;
    return out;
  }
  const TokenizerConfig& config() const override { return config_; }
  nlohmann::json to_json() const override { return {{"config", config_.to_json()}}; }

 private:
  TokenizerConfig config_;
  Normaliser normalise_;
};

/// Feeds normalised, non-empty training lines to the SentencePiece trainer, one at a time: every
/// line up to sentencepiece_training_lines(vocab_size), an evenly spaced sample of them beyond.
spm::SentenceSource training_sentences(const std::vector<std::string>& lines, const Normaliser& normalise,
                                       int vocab_size) {
  const std::size_t limit = sentencepiece_training_lines(vocab_size);
  return [&lines, &normalise, limit, taken = std::size_t{0}](std::string& sentence) mutable {
    while (taken < std::min(limit, lines.size())) {
      sentence = normalise(lines[detail::evenly_spaced(taken++, lines.size(), limit)]);
      if (sentence.find_first_not_of(' ') != std::string::npos) return true;
    }
    return false;
  };
}

/// A trained SentencePiece model: its serialized proto, the vocabulary size it was trained with,
/// and, when that differs from the configured one, why (for the log).
struct TrainedSentencePiece {
  std::string model;
  int vocab_size = 0;
  std::string note;
};

/// The number of characters SentencePiece says the vocabulary must at least hold, from its message
/// "Vocabulary size is smaller than required_chars. 1000 vs 3512. ..." (0 when not found).
int required_chars(const std::string& message) {
  const auto at = message.find("required_chars.");
  if (at == std::string::npos) return 0;
  const auto vs = message.find(" vs ", at);
  if (vs == std::string::npos) return 0;
  try {
    return std::stoi(message.substr(vs + 4));
  } catch (const std::exception&) {
    return 0;
  }
}

/// Trains a SentencePiece model on `lines`. If the data cannot fill `vocab_size` pieces, retries
/// with a soft limit (a smaller vocabulary) instead of failing; if `vocab_size` is smaller than the
/// number of distinct characters the model must cover (a Chinese or Japanese side of a few
/// thousand characters with scratch-bpe's 1,000 pieces), the vocabulary is raised to those
/// characters plus the pieces asked for, and the note says so.
TrainedSentencePiece train_sentencepiece(const TokenizerConfig& config, const std::vector<std::string>& lines,
                                         const Normaliser& normalise) {
  std::unordered_map<std::string, std::string> args = {
      {"model_type", tokenizer_kind_name(config.kind)},
      {"character_coverage", fmt::format("{}", config.character_coverage)},
      // Our Vocab adds PAD/UNK/BOS/EOS itself; SentencePiece only needs its mandatory unknown
      // piece.
      {"unk_id", "0"},
      {"bos_id", "-1"},
      {"eos_id", "-1"},
      {"pad_id", "-1"},
      // Text is already cleaned; NFKC would rewrite e.g. full-width Chinese punctuation.
      {"normalization_rule_name", "identity"},
      {"input_sentence_size", "2000000"},
      {"shuffle_input_sentence", "true"},
      {"num_threads", std::to_string(cpu_cores())},
      {"minloglevel", "2"}};  // errors only: keep training quiet
  const auto& module = spm::sentencepiece_module();
  TrainedSentencePiece out;
  out.vocab_size = config.vocab_size;
  bool hard_limit = true, raised = false;
  while (true) {
    args["vocab_size"] = std::to_string(out.vocab_size);
    args["hard_vocab_limit"] = hard_limit ? "true" : "false";
    std::string message;
    try {
      out.model = module.train(training_sentences(lines, normalise, config.vocab_size), args);
      return out;
    } catch (const spm::SentencePieceError& e) {
      message = e.what();
    }
    if (hard_limit && message.find("Vocabulary size too high") != std::string::npos) {
      hard_limit = false;
      continue;
    }
    if (message.find("smaller than required_chars") != std::string::npos) {
      const int required = required_chars(message);
      if (!raised && required > 0 && required + config.vocab_size <= kMaxVocabSize) {
        raised = true;
        out.vocab_size = required + config.vocab_size;
        out.note = fmt::format(
            "tokenizer.vocab_size {} is smaller than the {} distinct characters the {} model must cover "
            "(character_coverage {}): raised to {}, the characters plus the {} pieces asked for",
            config.vocab_size, required, tokenizer_kind_name(config.kind), config.character_coverage, out.vocab_size,
            config.vocab_size);
        continue;
      }
      throw std::runtime_error(
          fmt::format("{} training failed: tokenizer.vocab_size {} is smaller than the number of distinct "
                      "characters to cover; raise vocab_size or lower character_coverage ({})",
                      tokenizer_kind_name(config.kind), out.vocab_size, message));
    }
    throw std::runtime_error(fmt::format("{} training failed: {}", tokenizer_kind_name(config.kind), message));
  }
}

/// Loads a serialized model through the SentencePiece module.
spm::SentencePieceModel load_sentencepiece(const std::string& model) {
  const auto& module = spm::sentencepiece_module();
  try {
    return module.load(model);
  } catch (const spm::SentencePieceError& e) {
    throw std::invalid_argument(fmt::format("tokenizer.model is not a valid SentencePiece model: {}", e.what()));
  }
}

class SentencePieceTokenizer final : public Tokenizer {
 public:
  SentencePieceTokenizer(const TokenizerConfig& config, std::string model, std::string note = {})
      : config_(config),
        normalise_(config),
        model_(std::move(model)),
        processor_(load_sentencepiece(model_)),
        note_(std::move(note)) {}

  std::vector<std::string> tokenize(std::string_view text) const override {
    return processor_.encode(normalise_(text));
  }
  std::string detokenize(const std::vector<std::string>& tokens) const override { return processor_.decode(tokens); }
  const TokenizerConfig& config() const override { return config_; }
  nlohmann::json to_json() const override { return {{"config", config_.to_json()}, {"model", base64_encode(model_)}}; }
  std::string training_note() const override { return note_; }

 private:
  TokenizerConfig config_;
  Normaliser normalise_;
  std::string model_;  // serialized ModelProto
  spm::SentencePieceModel processor_;
  std::string note_;
};

}  // namespace

// ------------------------------------------------------------------ public API

const char* tokenizer_kind_name(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::kChar:
      return "char";
    case TokenizerKind::kBpe:
      return "bpe";
    case TokenizerKind::kUnigram:
      return "unigram";
    case TokenizerKind::kWord:
      break;
  }
  return "word";
}

TokenizerKind parse_tokenizer_kind(const std::string& name) {
  for (auto kind : {TokenizerKind::kWord, TokenizerKind::kChar, TokenizerKind::kBpe, TokenizerKind::kUnigram})
    if (name == tokenizer_kind_name(kind)) return kind;
  throw std::invalid_argument("unknown tokenizer kind \"" + name + "\" (expected word, char, bpe or unigram)");
}

bool is_sentencepiece(TokenizerKind kind) { return kind == TokenizerKind::kBpe || kind == TokenizerKind::kUnigram; }

const char* punctuation_name(Punctuation punctuation) {
  switch (punctuation) {
    case Punctuation::kStrip:
      return "strip";
    case Punctuation::kKeep:
      return "keep";
    case Punctuation::kSplit:
      break;
  }
  return "split";
}

Punctuation parse_punctuation(const std::string& name) {
  for (auto punctuation : {Punctuation::kSplit, Punctuation::kStrip, Punctuation::kKeep})
    if (name == punctuation_name(punctuation)) return punctuation;
  throw std::invalid_argument("unknown punctuation mode \"" + name + "\" (expected split, strip or keep)");
}

const char* chinese_script_name(ChineseScript script) {
  switch (script) {
    case ChineseScript::kT2s:
      return "t2s";
    case ChineseScript::kS2t:
      return "s2t";
    case ChineseScript::kNone:
      break;
  }
  return "none";
}

ChineseScript parse_chinese_script(const std::string& name) {
  for (auto script : {ChineseScript::kNone, ChineseScript::kT2s, ChineseScript::kS2t})
    if (name == chinese_script_name(script)) return script;
  throw std::invalid_argument("unknown Chinese script conversion \"" + name + "\" (expected none, t2s or s2t)");
}

nlohmann::json TokenizerConfig::to_json() const {
  return {{"kind", tokenizer_kind_name(kind)},
          {"lowercase", lowercase},
          {"punctuation", punctuation_name(punctuation)},
          {"chinese", chinese_script_name(chinese)},
          {"vocab_size", vocab_size},
          {"character_coverage", character_coverage}};
}

TokenizerConfig TokenizerConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("tokenizer config must be a JSON object");
  TokenizerConfig c;
  for (const auto& [key, value] : j.items()) {
    if (key == "kind") {
      c.kind = parse_choice("kind", value, parse_tokenizer_kind, "word, char, bpe, unigram");
    } else if (key == "lowercase") {
      c.lowercase = checked<bool>(key, value, value.is_boolean(), "a boolean");
    } else if (key == "punctuation") {
      c.punctuation = parse_choice("punctuation", value, parse_punctuation, "split, strip, keep");
    } else if (key == "chinese") {
      c.chinese = parse_choice("chinese", value, parse_chinese_script, "none, t2s, s2t");
    } else if (key == "vocab_size") {
      const auto size = checked<std::int64_t>(key, value, value.is_number_integer(), "an integer");
      c.vocab_size = static_cast<int>(std::clamp<std::int64_t>(size, -1, kMaxVocabSize + 1));
    } else if (key == "character_coverage") {
      c.character_coverage = checked<double>(key, value, value.is_number(), "a number");
    } else {
      throw std::invalid_argument(
          fmt::format("tokenizer: unknown key \"{}\" (allowed: {})", key, join_names(kConfigKeys)));
    }
  }
  validate(c);
  return c;
}

std::size_t sentencepiece_training_lines(int vocab_size) {
  return std::max<std::size_t>(kFewestSentencePieceLines,
                               kSentencePieceLinesPerPiece * static_cast<std::size_t>(std::max(vocab_size, 0)));
}

namespace detail {
std::size_t evenly_spaced(std::size_t i, std::size_t n, std::size_t k) {
  if (k >= n) return i;
  // Line floor(i * n / k): k lines spread over the whole range, the first one first.
  return static_cast<std::size_t>((static_cast<unsigned __int128>(i) * n) / k);
}
}  // namespace detail

std::unique_ptr<Tokenizer> make_tokenizer(const TokenizerConfig& config,
                                          const std::vector<std::string>& training_text) {
  validate(config);
  if (config.kind == TokenizerKind::kWord) return std::make_unique<WordTokenizer>(config);
  if (config.kind == TokenizerKind::kChar) return std::make_unique<CharTokenizer>(config);
  if (training_text.empty()) {
    throw std::invalid_argument(
        fmt::format("tokenizer.kind \"{}\" needs training text", tokenizer_kind_name(config.kind)));
  }
  const Normaliser normalise(config);
  auto trained = train_sentencepiece(config, training_text, normalise);
  if (const auto used = sentencepiece_training_lines(config.vocab_size); used < training_text.size()) {
    const auto sample =
        fmt::format("learnt from an evenly spaced {} of its {} training lines (enough for {} pieces, and faster)", used,
                    training_text.size(), config.vocab_size);
    trained.note = trained.note.empty() ? sample : trained.note + "; " + sample;
  }
  TokenizerConfig used = config;
  used.vocab_size = trained.vocab_size;  // what the model was trained with (raised when the characters needed it)
  return std::make_unique<SentencePieceTokenizer>(used, std::move(trained.model), std::move(trained.note));
}

std::vector<std::vector<std::string>> tokenize_all(const Tokenizer& tokenizer, const std::vector<std::string>& texts,
                                                   int threads, std::size_t min_block) {
  std::vector<std::vector<std::string>> out(texts.size());
  const auto tokenize_block = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) out[i] = tokenizer.tokenize(texts[i]);
  };
  const std::size_t most = static_cast<std::size_t>(threads > 0 ? threads : cpu_cores());
  const std::size_t blocks = std::clamp<std::size_t>(texts.size() / std::max<std::size_t>(min_block, 1), 1, most);
  if (blocks == 1) {
    tokenize_block(0, texts.size());
    return out;
  }
  // Blocks 1.. on their own threads, block 0 on this one; each writes only its own slots of `out`.
  const std::size_t per_block = (texts.size() + blocks - 1) / blocks;
  std::vector<std::future<void>> others;
  others.reserve(blocks - 1);
  for (std::size_t b = 1; b < blocks; ++b) {
    const std::size_t begin = std::min(b * per_block, texts.size());
    others.push_back(std::async(std::launch::async, tokenize_block, begin, std::min(begin + per_block, texts.size())));
  }
  std::exception_ptr failure;
  try {
    tokenize_block(0, std::min(per_block, texts.size()));
  } catch (...) {
    failure = std::current_exception();
  }
  for (auto& other : others) {  // wait for every thread before `out` can go, even after a failure
    try {
      other.get();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

std::unique_ptr<Tokenizer> tokenizer_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("config")) {
    throw std::invalid_argument("tokenizer: expected an object with a \"config\" object");
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "config" && key != "model") {
      throw std::invalid_argument(fmt::format("tokenizer: unknown key \"{}\" (allowed: config, model)", key));
    }
  }
  const auto config = TokenizerConfig::from_json(j.at("config"));
  if (!is_sentencepiece(config.kind)) {
    if (j.contains("model")) {
      throw std::invalid_argument(
          fmt::format("tokenizer.model is not used by kind \"{}\"", tokenizer_kind_name(config.kind)));
    }
    return make_tokenizer(config);
  }
  if (!j.contains("model") || !j.at("model").is_string()) {
    throw std::invalid_argument(fmt::format("tokenizer.model: kind \"{}\" needs a base64 SentencePiece model",
                                            tokenizer_kind_name(config.kind)));
  }
  std::string model;
  try {
    model = base64_decode(j.at("model").get_ref<const std::string&>());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("tokenizer.model: {}", e.what()));
  }
  return std::make_unique<SentencePieceTokenizer>(config, std::move(model));
}

bool chinese_conversion_available() {
#ifdef TS_HAVE_OPENCC
  return true;
#else
  return false;
#endif
}

}  // namespace ts
