// SPDX-License-Identifier: GPL-3.0-or-later
// Reading parallel corpora in the Tatoeba/Anki format: `english<TAB>other[<TAB>attribution]`.
// UTF-8 with or without BOM, LF or CRLF. Bad lines are skipped and counted, never fatal;
// a file with no valid pair, or one that is not text at all, is a CorpusError with a clear message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ts {

/// Error raised for an unreadable, non-text or empty corpus. `what()` names the file.
class CorpusError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One translation pair as stored in the file: column 1 is English, column 2 the other language.
struct CorpusPair {
  std::string english;
  std::string other;
};

/// One skipped line: its 1-based number and why it was skipped.
struct CorpusProblem {
  std::size_t line = 0;
  std::string
      reason;  // e.g. "no tab separator", "empty English side", "invalid UTF-8", "line longer than 1000 characters"
};

/// What reading a corpus found (shown by describe() and the UI).
struct CorpusStats {
  std::size_t lines = 0;                      // lines read, blank ones included
  std::size_t blank_lines = 0;                // empty lines (skipped silently, not counted as problems)
  std::size_t skipped = 0;                    // malformed lines skipped
  std::vector<CorpusProblem> first_problems;  // the first few (CorpusReadOptions::max_reported)
  bool had_bom = false;
  bool crlf = false;        // at least one CRLF line ending seen
  std::uint64_t bytes = 0;  // size of the content, BOM included
};

/// A language as inferred from a file name ("deu.txt" -> {"de", "German"}) or detected from the
/// text (ts/text/language.h).
struct Language {
  std::string code;  // ISO 639-1 where known ("en", "de", "zh", ...), else the file's stem
  std::string name;  // human name ("English", "German", "Chinese", ... or "Other")
};

/// Limits for read_corpus / parse_corpus.
struct CorpusReadOptions {
  std::size_t max_line_chars = 1000;  // lines longer than this (in code points) are skipped as absurd
  std::size_t max_reported = 5;       // how many problems to keep with their line numbers
  std::size_t max_pairs = 0;          // 0 = no limit; otherwise stop after this many valid pairs
};

/// A parsed corpus: the valid pairs in file order (sides trimmed of surrounding whitespace,
/// columns after the second ignored) and what was skipped.
struct Corpus {
  std::string path;  // as given ("<memory>" for parse_corpus)
  Language english{"en", "English"};
  Language other;                   // inferred from the file name, else detected from the text
  bool language_from_text = false;  // `other` was detected from the text (the name said nothing)
  std::vector<CorpusPair> pairs;
  CorpusStats stats;
};

/// Reads a corpus file. Throws CorpusError when the file cannot be opened, is not text
/// (zip/gzip/PDF magic, NUL bytes, mostly invalid UTF-8) or holds no valid pair.
/// The non-English language comes from the file name (infer_language); when the name names none,
/// it is detected from the second column (detect_language, at most 2,000 sentences read) and,
/// if that is convincing and not English, `other` is set to it and `language_from_text` to true.
/// Otherwise `other` stays {stem, "Other"}.
Corpus read_corpus(const std::string& path, const CorpusReadOptions& options = {});

/// Parses corpus content already in memory (same rules; `name` is used in messages and for
/// language inference).
Corpus parse_corpus(std::string_view content, const std::string& name, const CorpusReadOptions& options = {});

/// Infers the non-English language from a file name: deu->German, cmn->Chinese, fra->French,
/// spa->Spanish, ita->Italian, jpn->Japanese, rus->Russian, ..., otherwise {stem, "Other"}.
/// Each alphanumeric token of the stem is tried ("deu-eng.txt", "cmn_small.txt" work), as
/// 3-letter code, 2-letter code or English name of the language.
Language infer_language(const std::string& path);

/// The language of infer_language()'s table named by `token` (ISO 639-1 code, 3-letter code or
/// English name, any case): known_language("de") == {"de", "German"}, "en" gives
/// {"en", "English"}; an unknown token gives {"", "Other"}.
Language known_language(std::string_view token);

/// A translation direction over a corpus: which column is the source.
struct Direction {
  std::string src_code;  // e.g. "de"
  std::string tgt_code;  // e.g. "en"
  bool english_is_source = true;
  std::string str() const { return src_code + "-" + tgt_code; }
};

/// Parses "en-de" / "de-en" against the corpus languages. Accepts the other side's code or its
/// file stem ("deu-en" works for deu.txt) and language names ("German-English"), ignoring case;
/// when the language was detected from the text, the file's stem still works too
/// ("pairs-en" for a German pairs.tsv). Throws std::invalid_argument naming the accepted values.
Direction parse_direction(const std::string& text, const Corpus& corpus);

/// A source/target sentence pair after a direction has been applied.
struct SentencePair {
  std::string src;
  std::string tgt;
};

/// The corpus pairs as source/target for `direction`, in corpus order.
std::vector<SentencePair> oriented_pairs(const Corpus& corpus, const Direction& direction);

/// Summary for humans, with the first problems:
/// "deu.txt: 169813 pairs (English/German), 2 skipped (line 17: no tab separator; line 20: ...)";
/// "pairs.tsv: 500 pairs (English/German, language detected from the text)" when it was.
std::string describe(const Corpus& corpus);

}  // namespace ts
