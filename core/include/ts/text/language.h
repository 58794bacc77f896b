// SPDX-License-Identifier: GPL-3.0-or-later
// Detecting the language of a column of sentences from the text (script, then frequent words).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ts/text/corpus.h"

namespace ts {

/// What detect_language() found.
struct DetectedLanguage {
  /// Code and name as in infer_language()'s table ({"de", "German"}, {"zh", "Chinese"}, ...;
  /// {"en", "English"} for English), or {"", "Other"} when nothing is convincing.
  Language language{"", "Other"};
  /// Share of the sampled sentences with letters that agree on the answer, in [0, 1]; also set
  /// (to the best guess's value) when the answer is "Other".
  double confidence = 0;
  /// The dominant script: "Latin", "Han", "Han+Kana", "Hangul", "Cyrillic", "Greek", "Arabic",
  /// "Hebrew", "Thai", "Devanagari", "Bengali", "Georgian", "Armenian", "Other" (a script not
  /// known here), or "" when the sentences hold no letters at all.
  std::string script;
};

/// detect_language() reads at most this many sentences, evenly spread over its input (Tatoeba
/// files are sorted by length, so the first ones would all be one-word sentences).
inline constexpr std::size_t kLanguageSampleSentences = 2000;
/// Below this confidence the answer is "Other".
inline constexpr double kMinLanguageConfidence = 0.5;
/// Fewer sentences with a signal (letters of the script; for Latin, a known word or letter)
/// than this give "Other".
inline constexpr std::size_t kMinLanguageSentences = 3;

/// Detects the language of `sentences` (valid or invalid UTF-8; invalid bytes are ignored), for a
/// corpus whose file name names no language. No dictionaries or models: code point counts per
/// script and, for Latin script, short frequent words and language-specific letters.
/// Script first (by the script most sentences are written in): Han without kana -> Chinese,
/// Han with kana -> Japanese, Hangul -> Korean, Cyrillic -> Russian or Ukrainian, Greek, Arabic
/// (Persian and Urdu by their own letters), Hebrew, Thai, Devanagari -> Hindi, Bengali, Georgian,
/// Armenian. Latin script: each sentence votes for the language whose frequent short words and
/// characteristic letters score highest (English, German, French, Spanish, Italian, Portuguese,
/// Dutch, Swedish, Danish, Norwegian, Finnish, Turkish, Polish, Czech, Hungarian, Romanian,
/// Indonesian, Vietnamese). Deterministic.
DetectedLanguage detect_language(const std::vector<std::string_view>& sentences);

/// True for the codes of Chinese and Japanese ("zh", "cmn", "ja", "jpn"): languages written without
/// spaces between words, so a word tokenizer is replaced by characters (data.cjk_chars) and BLEU
/// splits their characters ("zh" tokenisation).
bool is_cjk_language(const std::string& code);

}  // namespace ts
