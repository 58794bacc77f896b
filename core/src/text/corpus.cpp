// SPDX-License-Identifier: GPL-3.0-or-later
// Corpus reading (see ts/text/corpus.h): the whole file is read into one string and parsed
// line by line through string_views, so a 12 MB Tatoeba file takes a few tens of milliseconds.
#include "ts/text/corpus.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "ts/text/files.h"
#include "ts/text/language.h"
#include "ts/text/utf8.h"

namespace ts {

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";
constexpr std::size_t kBinaryProbeBytes = 64 * 1024;  // where a NUL byte means "binary"
constexpr std::size_t kEncodingSampleLines = 1000;    // lines sampled for the UTF-8 check

struct KnownLanguage {
  std::string_view iso3;  // Tatoeba / ISO 639-3 file code
  std::string_view iso1;  // ISO 639-1 code
  std::string_view name;
};

constexpr KnownLanguage kLanguages[] = {
    {"deu", "de", "German"},     {"cmn", "zh", "Chinese"},    {"zho", "zh", "Chinese"},    {"fra", "fr", "French"},
    {"spa", "es", "Spanish"},    {"ita", "it", "Italian"},    {"jpn", "ja", "Japanese"},   {"rus", "ru", "Russian"},
    {"por", "pt", "Portuguese"}, {"nld", "nl", "Dutch"},      {"tur", "tr", "Turkish"},    {"pol", "pl", "Polish"},
    {"kor", "ko", "Korean"},     {"ara", "ar", "Arabic"},     {"heb", "he", "Hebrew"},     {"ukr", "uk", "Ukrainian"},
    {"swe", "sv", "Swedish"},    {"fin", "fi", "Finnish"},    {"ell", "el", "Greek"},      {"ces", "cs", "Czech"},
    {"hun", "hu", "Hungarian"},  {"vie", "vi", "Vietnamese"}, {"ind", "id", "Indonesian"}, {"dan", "da", "Danish"},
    {"nob", "nb", "Norwegian"},  {"ron", "ro", "Romanian"},   {"bul", "bg", "Bulgarian"},  {"srp", "sr", "Serbian"},
    {"hrv", "hr", "Croatian"},   {"slk", "sk", "Slovak"},     {"slv", "sl", "Slovenian"},  {"lit", "lt", "Lithuanian"},
    {"lav", "lv", "Latvian"},    {"est", "et", "Estonian"},   {"isl", "is", "Icelandic"},  {"cat", "ca", "Catalan"},
    {"eus", "eu", "Basque"},     {"glg", "gl", "Galician"},   {"epo", "eo", "Esperanto"},  {"lat", "la", "Latin"},
    {"hin", "hi", "Hindi"},      {"ben", "bn", "Bengali"},    {"urd", "ur", "Urdu"},       {"pes", "fa", "Persian"},
    {"fas", "fa", "Persian"},    {"tha", "th", "Thai"},       {"tgl", "tl", "Tagalog"},    {"zsm", "ms", "Malay"},
    {"kat", "ka", "Georgian"},   {"hye", "hy", "Armenian"},   {"bel", "be", "Belarusian"}, {"mkd", "mk", "Macedonian"},
    {"sqi", "sq", "Albanian"},   {"afr", "af", "Afrikaans"},  {"swh", "sw", "Swahili"},    {"gle", "ga", "Irish"},
    {"cym", "cy", "Welsh"},
};

constexpr std::string_view kEnglishTokens[] = {"en", "eng", "english"};

[[noreturn]] void fail(const std::string& message) { throw CorpusError(message); }

std::string quoted(const std::string& path) { return "\"" + path + "\""; }

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// is_valid_utf8 with a fast path over the leading ASCII bytes (most of a typical corpus).
bool is_valid_line(std::string_view line) {
  const auto non_ascii =
      std::find_if(line.begin(), line.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
  return is_valid_utf8(line.substr(static_cast<std::size_t>(non_ascii - line.begin())));
}

bool is_ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::string_view trim_ascii(std::string_view s) {
  while (!s.empty() && is_ascii_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ascii_space(s.back())) s.remove_suffix(1);
  return s;
}

// Trims Unicode whitespace (NBSP, ideographic space, ...) from both ends of valid UTF-8.
std::string_view trim_unicode(std::string_view s) {
  while (!s.empty()) {
    std::size_t pos = 0;
    if (!is_space(next_code_point(s, pos))) break;
    s.remove_prefix(pos);
  }
  while (!s.empty()) {
    std::size_t start = s.size() - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    std::size_t pos = start;
    if (!is_space(next_code_point(s, pos))) break;
    s.remove_suffix(s.size() - start);
  }
  return s;
}

// Calls `visit(line, number)` for each line (1-based, CR of CRLF removed) until it returns false.
template <typename Visit>
void for_each_line(std::string_view text, Visit&& visit) {
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!visit(line, ++number)) return;
  }
}

// Refuses content that is obviously not a UTF-8 text corpus, naming what it looks like.
void check_looks_like_text(std::string_view content, const std::string& name) {
  const auto starts_with = [&](std::string_view magic) { return content.substr(0, magic.size()) == magic; };
  const std::string file = quoted(name);
  if (starts_with("PK\x03\x04") || starts_with("PK\x05\x06")) {
    fail(file +
         " looks like a zip archive, not a text corpus: unzip it first and open the "
         "text file inside (e.g. deu-eng.zip -> deu.txt)");
  }
  if (starts_with("\x1F\x8B")) {
    fail(file +
         " looks like a gzip-compressed file, not a text corpus: decompress it first "
         "(e.g. gunzip deu.txt.gz -> deu.txt)");
  }
  if (starts_with("%PDF")) fail(file + " looks like a PDF document, not a text corpus");
  if (starts_with("\xFF\xFE") || starts_with("\xFE\xFF")) {
    fail(file + " looks like UTF-16 text: save it as UTF-8 and open it again");
  }
  const std::size_t nul = content.substr(0, kBinaryProbeBytes).find('\0');
  if (nul != std::string_view::npos) {
    fail(file + " looks like a binary file (NUL byte at offset " + std::to_string(nul) + "), not a text corpus");
  }
  std::size_t sampled = 0, invalid = 0;
  for_each_line(content, [&](std::string_view line, std::size_t) {
    if (trim_ascii(line).empty()) return true;
    ++sampled;
    if (!is_valid_line(line)) ++invalid;
    return sampled < kEncodingSampleLines;
  });
  if (invalid * 10 > sampled) {
    fail(file + " does not look like UTF-8 text (" + std::to_string(invalid) + " of the first " +
         std::to_string(sampled) + " lines are invalid UTF-8): save it as UTF-8");
  }
}

// Why `line` cannot be used, or an empty string when it yields the pair (english, other).
std::string check_line(std::string_view line, const Corpus& corpus, const CorpusReadOptions& options,
                       std::string_view& english, std::string_view& other) {
  if (!is_valid_line(line)) return "invalid UTF-8";
  if (line.size() > options.max_line_chars && code_point_count(line) > options.max_line_chars) {
    return "line longer than " + std::to_string(options.max_line_chars) + " characters";
  }
  const std::size_t tab = line.find('\t');
  if (tab == std::string_view::npos) return "no tab separator";
  english = trim_unicode(line.substr(0, tab));
  const std::string_view rest = line.substr(tab + 1);
  other = trim_unicode(rest.substr(0, rest.find('\t')));
  if (english.empty()) return "empty " + corpus.english.name + " side";
  if (other.empty()) {
    const bool known = corpus.other.name != "Other";
    return "empty " + (known ? corpus.other.name : std::string("non-English")) + " side";
  }
  return {};
}

void parse_lines(std::string_view text, const CorpusReadOptions& options, Corpus& corpus) {
  CorpusStats& stats = corpus.stats;
  for_each_line(text, [&](std::string_view line, std::size_t number) {
    ++stats.lines;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
      stats.crlf = true;
    }
    if (trim_ascii(line).empty()) {
      ++stats.blank_lines;
      return true;
    }
    std::string_view english, other;
    std::string reason = check_line(line, corpus, options, english, other);
    if (!reason.empty()) {
      ++stats.skipped;
      if (stats.first_problems.size() < options.max_reported) {
        stats.first_problems.push_back({number, std::move(reason)});
      }
      return true;
    }
    corpus.pairs.push_back({std::string(english), std::string(other)});
    return options.max_pairs == 0 || corpus.pairs.size() < options.max_pairs;
  });
}

std::string no_pair_message(const Corpus& corpus) {
  std::string message = quoted(corpus.path) + " holds no valid sentence pair";
  const CorpusStats& stats = corpus.stats;
  if (stats.lines == stats.blank_lines) {
    message += stats.lines == 0 ? " (the file is empty)" : " (only blank lines)";
  } else {
    message += " (" + std::to_string(stats.skipped) + " lines skipped";
    if (!stats.first_problems.empty()) {
      const CorpusProblem& first = stats.first_problems.front();
      message += "; first: line " + std::to_string(first.line) + ": " + first.reason;
    }
    message += ")";
  }
  return message + "; expected lines of the form English<TAB>translation";
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (const auto kind = special_file_kind(path); !kind.empty()) {
    fail("cannot read corpus " + quoted(path) + ": it is " + kind + ", not a text file");
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) fail("cannot open corpus " + quoted(path) + ": " + std::strerror(errno));
  const auto size = std::filesystem::file_size(path, ec);
  std::string content(ec ? 0 : static_cast<std::size_t>(size), '\0');
  content.resize(std::fread(content.data(), 1, content.size(), file.get()));
  char chunk[64 * 1024];  // the file may have grown, or its size may be unknown
  while (const std::size_t n = std::fread(chunk, 1, sizeof chunk, file.get())) {
    content.append(chunk, n);
  }
  if (std::ferror(file.get())) {
    fail("cannot read corpus " + quoted(path) + ": " + std::strerror(errno));
  }
  return content;
}

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// Lowercase alphanumeric runs of the file stem: "data/Demo-deu_small.txt" -> demo, deu, small.
std::vector<std::string> stem_tokens(const std::string& stem) {
  std::vector<std::string> tokens(1);
  for (char c : ascii_lower(stem)) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum) tokens.back() += c;
    if (!alnum && !tokens.back().empty()) tokens.emplace_back();
  }
  if (tokens.back().empty()) tokens.pop_back();
  return tokens;
}

const KnownLanguage* find_language(std::string_view token) {
  for (const KnownLanguage& language : kLanguages) {
    if (token == language.iso3 || token == language.iso1 || token == ascii_lower(language.name)) {
      return &language;
    }
  }
  return nullptr;
}

bool is_english_token(std::string_view token) {
  return std::find(std::begin(kEnglishTokens), std::end(kEnglishTokens), token) != std::end(kEnglishTokens);
}

enum class Side { none, english, other };

// Which corpus column a direction component ("en", "deu", "German", ...) names.
Side side_of(std::string_view token, const Corpus& corpus) {
  if (token.empty()) return Side::none;
  if (token == corpus.english.code || is_english_token(token)) return Side::english;
  if (token == corpus.other.code) return Side::other;
  const KnownLanguage* language = find_language(token);
  if (language != nullptr && language->iso1 == corpus.other.code) return Side::other;
  // A language detected from the text: the stem a run named before detection existed still works.
  if (corpus.language_from_text && token == infer_language(corpus.path).code) return Side::other;
  return Side::none;
}

// When the file name names no language, detects it from the non-English column. English is left
// alone: both sides would then be "en" and no direction could tell them apart.
void detect_other_language(Corpus& corpus) {
  if (corpus.other.name != "Other") return;
  std::vector<std::string_view> sentences;
  const std::size_t n = corpus.pairs.size();
  const std::size_t sample = std::min(n, kLanguageSampleSentences);
  sentences.reserve(sample);
  // The same even spread detect_language would take, without a view of every pair.
  for (std::size_t i = 0; i < sample; ++i) {
    sentences.emplace_back(corpus.pairs[sample == n ? i : i * n / sample].other);
  }
  const DetectedLanguage detected = detect_language(sentences);
  if (detected.language.code.empty() || detected.language.code == corpus.english.code) return;
  corpus.other = detected.language;
  corpus.language_from_text = true;
}

}  // namespace

Corpus parse_corpus(std::string_view content, const std::string& name, const CorpusReadOptions& options) {
  Corpus corpus;
  corpus.path = name;
  corpus.other = infer_language(name);
  corpus.stats.bytes = content.size();
  if (content.substr(0, kBom.size()) == kBom) {
    content.remove_prefix(kBom.size());
    corpus.stats.had_bom = true;
  }
  check_looks_like_text(content, name);
  const auto lines = 1 + static_cast<std::size_t>(std::count(content.begin(), content.end(), '\n'));
  corpus.pairs.reserve(options.max_pairs == 0 ? lines : std::min(lines, options.max_pairs));
  parse_lines(content, options, corpus);
  if (corpus.pairs.empty()) fail(no_pair_message(corpus));
  detect_other_language(corpus);
  return corpus;
}

Corpus read_corpus(const std::string& path, const CorpusReadOptions& options) {
  return parse_corpus(read_file(path), path, options);
}

Language infer_language(const std::string& path) {
  const std::string stem = std::filesystem::path(path).stem().string();
  for (const std::string& token : stem_tokens(stem)) {
    if (const KnownLanguage* language = find_language(token)) {
      return {std::string(language->iso1), std::string(language->name)};
    }
  }
  return {ascii_lower(stem), "Other"};
}

Language known_language(std::string_view token) {
  const std::string lowered = ascii_lower(token);
  if (is_english_token(lowered)) return {"en", "English"};
  if (const KnownLanguage* language = find_language(lowered)) {
    return {std::string(language->iso1), std::string(language->name)};
  }
  return {"", "Other"};
}

Direction parse_direction(const std::string& text, const Corpus& corpus) {
  const std::string lowered = ascii_lower(trim_ascii(text));
  // Try every dash, so a fallback code that itself contains one ("my-data") still works.
  for (std::size_t dash = lowered.find('-'); dash != std::string::npos; dash = lowered.find('-', dash + 1)) {
    const Side first = side_of(lowered.substr(0, dash), corpus);
    const Side second = side_of(lowered.substr(dash + 1), corpus);
    if (first == Side::english && second == Side::other) {
      return {corpus.english.code, corpus.other.code, true};
    }
    if (first == Side::other && second == Side::english) {
      return {corpus.other.code, corpus.english.code, false};
    }
  }
  const std::string en = corpus.english.code, other = corpus.other.code;
  throw std::invalid_argument("direction \"" + text + "\" does not match corpus " + file_name(corpus.path) + " (" +
                              corpus.english.name + "/" + corpus.other.name + "): use " + en + "-" + other + " or " +
                              other + "-" + en);
}

std::vector<SentencePair> oriented_pairs(const Corpus& corpus, const Direction& direction) {
  std::vector<SentencePair> out;
  out.reserve(corpus.pairs.size());
  for (const CorpusPair& pair : corpus.pairs) {
    if (direction.english_is_source) {
      out.push_back({pair.english, pair.other});
    } else {
      out.push_back({pair.other, pair.english});
    }
  }
  return out;
}

std::string describe(const Corpus& corpus) {
  const CorpusStats& stats = corpus.stats;
  std::string out = file_name(corpus.path) + ": " + std::to_string(corpus.pairs.size()) + " pairs (" +
                    corpus.english.name + "/" + corpus.other.name +
                    (corpus.language_from_text ? ", language detected from the text)" : ")");
  if (stats.skipped == 0) return out;
  std::string details;
  for (const CorpusProblem& problem : stats.first_problems) {
    details += "line " + std::to_string(problem.line) + ": " + problem.reason + "; ";
  }
  if (stats.skipped > stats.first_problems.size()) details += "...; ";
  details.resize(details.size() - 2);
  return out + ", " + std::to_string(stats.skipped) + " skipped (" + details + ")";
}

}  // namespace ts
