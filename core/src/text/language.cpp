// SPDX-License-Identifier: GPL-3.0-or-later
// Language detection from text (see ts/text/language.h): scripts, then word and letter scores.
#include "ts/text/language.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>
#include <utility>

#include "ts/text/utf8.h"

namespace ts {

namespace {

enum class Script {
  none,  // not a letter: digits, punctuation, symbols, marks, emoji
  latin,
  han,
  kana,
  hangul,
  cyrillic,
  greek,
  arabic,
  hebrew,
  thai,
  devanagari,
  bengali,
  georgian,
  armenian,
  other,  // a letter of a script not listed here
  count
};
constexpr std::size_t kScripts = static_cast<std::size_t>(Script::count);

constexpr std::string_view kScriptNames[kScripts] = {"",           "Latin",   "Han",      "Kana",     "Hangul",
                                                     "Cyrillic",   "Greek",   "Arabic",   "Hebrew",   "Thai",
                                                     "Devanagari", "Bengali", "Georgian", "Armenian", "Other"};

// The script of a code point, by Unicode block (a script's own punctuation counts as the script).
Script script_of(char32_t cp) {
  if (cp < 0x80) {
    const char32_t lower = cp | 0x20;
    return lower >= 'a' && lower <= 'z' ? Script::latin : Script::none;
  }
  if (cp < 0xC0) return Script::none;  // Latin-1 punctuation and symbols
  if (cp < 0x250) return cp == 0xD7 || cp == 0xF7 ? Script::none : Script::latin;
  if (cp < 0x370) return Script::none;  // IPA, spacing modifiers, combining marks
  if (cp < 0x400) return Script::greek;
  if (cp < 0x530) return Script::cyrillic;
  if (cp < 0x590) return Script::armenian;
  if (cp < 0x600) return Script::hebrew;
  if (cp < 0x700) return Script::arabic;
  if (cp >= 0x750 && cp < 0x780) return Script::arabic;
  if (cp >= 0x8A0 && cp < 0x900) return Script::arabic;
  if (cp >= 0x900 && cp < 0x980) return Script::devanagari;
  if (cp >= 0x980 && cp < 0xA00) return Script::bengali;
  if (cp >= 0xE00 && cp < 0xE80) return Script::thai;
  if (cp >= 0x10A0 && cp < 0x1100) return Script::georgian;
  if (cp >= 0x1100 && cp < 0x1200) return Script::hangul;
  if (cp >= 0x1C90 && cp < 0x1CC0) return Script::georgian;
  if (cp >= 0x1E00 && cp < 0x1F00) return Script::latin;
  if (cp >= 0x1F00 && cp < 0x2000) return Script::greek;
  if (cp >= 0x2000 && cp < 0x2C00) return Script::none;  // punctuation, symbols, arrows, maths
  if (cp >= 0x2E00 && cp < 0x2E80) return Script::none;
  if (cp >= 0x3000 && cp < 0x3040) {  // CJK punctuation; 々 and 〇 are written as ideographs
    return cp == 0x3005 || cp == 0x3007 ? Script::han : Script::none;
  }
  if (cp >= 0x3040 && cp < 0x30A0) return Script::kana;  // hiragana
  if (cp >= 0x30A0 && cp < 0x3100) {  // katakana; Chinese uses ・ in names, ー goes with kana anyway
    return cp == 0x30FB || cp == 0x30FC ? Script::none : Script::kana;
  }
  if (cp >= 0x3130 && cp < 0x3190) return Script::hangul;
  if (cp >= 0x31F0 && cp < 0x3200) return Script::kana;
  if (cp >= 0x3400 && cp < 0x4DC0) return Script::han;
  if (cp >= 0x4E00 && cp < 0xA000) return Script::han;
  if (cp >= 0xA960 && cp < 0xA980) return Script::hangul;
  if (cp >= 0xAC00 && cp < 0xD800) return Script::hangul;
  if (cp >= 0xE000 && cp < 0xF900) return Script::none;  // private use
  if (cp >= 0xF900 && cp < 0xFB00) return Script::han;
  if (cp >= 0xFB00 && cp < 0xFB1D) return Script::latin;  // ligatures (ﬁ, ﬂ, ...)
  if (cp >= 0xFB1D && cp < 0xFB50) return Script::hebrew;
  if (cp >= 0xFB50 && cp < 0xFE00) return Script::arabic;
  if (cp >= 0xFE00 && cp < 0xFE70) return Script::none;
  if (cp >= 0xFE70 && cp < 0xFF00) return Script::arabic;
  if ((cp >= 0xFF21 && cp <= 0xFF3A) || (cp >= 0xFF41 && cp <= 0xFF5A)) return Script::latin;
  if (cp >= 0xFF66 && cp <= 0xFF9D) return Script::kana;   // half-width katakana
  if (cp >= 0xFF00 && cp < 0x10000) return Script::none;   // other full-width forms, U+FFFD
  if (cp >= 0x1F000 && cp < 0x1FB00) return Script::none;  // emoji and pictographs
  if (cp >= 0x20000 && cp < 0x2FA20) return Script::han;
  if (cp >= 0xE0000) return Script::none;  // tags, variation selectors, private use
  return Script::other;
}

bool is_combining_mark(char32_t cp) { return cp >= 0x300 && cp < 0x370; }

// Lower case for the letters the tables below use (Latin, Cyrillic); others are returned as is.
char32_t to_lower(char32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if (cp < 0xC0) return cp;
  if (cp <= 0xDE) return cp == 0xD7 ? cp : cp + 32;
  if (cp == 0x130) return 'i';  // Turkish İ
  if (cp >= 0x100 && cp <= 0x137) return cp | 1;
  if (cp >= 0x139 && cp <= 0x148) return (cp & 1) != 0 ? cp + 1 : cp;
  if (cp >= 0x14A && cp <= 0x177) return cp | 1;
  if (cp == 0x178) return 0xFF;
  if (cp >= 0x179 && cp <= 0x17E) return (cp & 1) != 0 ? cp + 1 : cp;
  if (cp == 0x1A0 || cp == 0x1AF) return cp + 1;  // Vietnamese Ơ, Ư
  if (cp >= 0x218 && cp <= 0x21B) return cp | 1;  // Romanian Ș, Ț
  if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
  if (cp >= 0x410 && cp <= 0x42F) return cp + 32;
  if (cp == 0x490) return 0x491;  // Ґ
  if (cp == 0x1E9E) return 0xDF;  // capital ẞ
  if ((cp >= 0x1E00 && cp <= 0x1E95) || (cp >= 0x1EA0 && cp <= 0x1EFF)) return cp | 1;
  if (cp >= 0xFF21 && cp <= 0xFF3A) return cp - 0xFF21 + 'a';  // full-width Latin
  if (cp >= 0xFF41 && cp <= 0xFF5A) return cp - 0xFF41 + 'a';
  return cp;
}

// ---- Latin script: frequent short words and characteristic letters -------------------------

enum Latin : std::uint8_t { en, de, fr, es, it, pt, nl, sv, da, nb, fi, tr, pl, cs, hu, ro, id, vi };
constexpr std::size_t kLatinLanguages = 18;
constexpr std::string_view kLatinCodes[kLatinLanguages] = {"en", "de", "fr", "es", "it", "pt", "nl", "sv", "da",
                                                           "nb", "fi", "tr", "pl", "cs", "hu", "ro", "id", "vi"};

// About 30-60 frequent words each, space-separated, lower case. A word may belong to several
// languages ("de", "la", "en"): it scores for each, and the words only one of them uses decide.
// French and Italian elisions split at the apostrophe ("j'ai" -> "j", "ai").
struct WordList {
  Latin language;
  std::string_view words;
};
constexpr WordList kWords[] = {
    {en,
     "the i you to a is it that and of in me my this what he we not do be have was are for "
     "your on can with she they there know will all here go just at like his her him want how "
     "why where no so up did an let very please don come"},
    {de,
     "der die das und ist nicht ich du er sie es wir ihr ein eine einen einem dem den des zu "
     "mit auf für von habe hast hat haben sind bin bist was wie auch sehr noch kein keine "
     "schon mir mich dich dir uns gern nein will kann muss um im am ins in nichts mein meine "
     "dein deine sein seine wird war doch mal jetzt immer hier alle viel so an"},
    {fr,
     "le la les de des du un une et est je tu il elle nous vous ils ne pas que qui ce cette "
     "au aux avec pour dans sur mais très bien suis sont ai a as j qu c n l d ça où en y on me "
     "te se mon ma moi toi lui fait peux veux"},
    {es,
     "el la los las de del que y en un una es no se lo por para con está estoy muy mi yo qué "
     "cómo pero al hay eso este esta tiene me te a le su tu más ya bien tengo quiero puedo "
     "mucho ella"},
    {it,
     "il lo la gli le di del della che e è un una uno non per con sono ho ha hai mi ti si ci "
     "io lui lei noi voi ma molto questo questa come cosa perché anche più dove qui c l a i in "
     "da sei tu mio mia al alla alle nel nella sul dal"},
    {pt,
     "o a os as de do da dos das que e é em no na um uma não com para por eu você ele ela se "
     "me meu minha mas muito está estou isso isto tem foi sou ao te lhe seu sua nós vai"},
    {nl,
     "de het een en is niet ik je jij hij zij ze we wij van dat die er op te met voor maar "
     "ook naar zijn heb heeft was wat hoe geen nog mijn in aan om dit kan wil moet al hier"},
    {sv,
     "och i att det som en ett är jag du han hon vi ni de inte på med för till av har var "
     "vad den om men så kan vill mycket mig dig sig här också min din nu hade ska"},
    {da,
     "og i at det er en et jeg du han hun vi ikke på med for til af har hvad den om men så "
     "kan vil meget mig dig sig her også min din nu noget lidt efter bliver skal var"},
    {nb,
     "og i at det er en et jeg du han hun vi ikke på med for til av har hva den om men så "
     "kan vil mye meg deg seg her også min din nå noe litt etter blir veldig skal var"},
    {fi,
     "on ja ei se että hän minä sinä me te he olen olet oli ovat mitä mikä tämä tuo kanssa "
     "mutta niin kun jos en et hyvin nyt myös ole minun sinun hänen"},
    {tr,
     "bir bu ve ne da de mi mı mu mü çok ben sen o biz siz onlar için ile var yok değil gibi "
     "daha ama şey her benim senin neden nasıl bana sana"},
    {pl,
     "i w z na nie to się że jest jak do co ja ty on ona my wy oni jestem jesteś mam ma ale "
     "tak o po od tego za czy bardzo mnie go już tu tylko moja mój moje"},
    {cs,
     "a je to se na v z že ne jsem jsi jsme ale jak co já ty on ona my vy oni tak do o si mi "
     "mě tě byl být velmi už tady proč ještě nic není mám máš jen"},
    {hu,
     "a az egy és nem hogy is van meg de ez azt ezt én te ő mi ti ők vagyok vagy volt nagyon "
     "már csak még mit miért itt ott kell"},
    {ro,
     "și şi în de la nu este e un o pe cu că să ce mai din am ai eu tu el ea noi voi ei "
     "foarte pentru sunt acest această unde aici asta"},
    {id,
     "yang dan di itu ini tidak saya ke dari untuk dengan ada akan apa anda dia kamu sudah "
     "bisa mau aku kami kita mereka sangat juga tapi belum harus"},
    {vi,
     "không là của và có tôi người này được một những cho với anh em đã sẽ rất bạn ở đi gì "
     "ta thì cái chúng nó"},
};

// Letters that point to languages, with a weight per occurrence (a function word scores 1).
struct LetterSignal {
  char32_t letter;  // lower case
  Latin language;
  double weight;
};
constexpr LetterSignal kLetters[] = {
    {U'ß', de, 1.5},  {U'ä', de, 0.5},  {U'ä', sv, 0.5},  {U'ä', fi, 0.5},  {U'ö', de, 0.5},  {U'ö', sv, 0.5},
    {U'ö', fi, 0.5},  {U'ö', tr, 0.5},  {U'ö', hu, 0.5},  {U'ü', de, 0.5},  {U'ü', tr, 0.5},  {U'ü', hu, 0.5},
    {U'ñ', es, 1.5},  {U'ç', fr, 0.5},  {U'ç', pt, 0.5},  {U'ç', tr, 0.5},  {U'œ', fr, 1.5},  {U'è', fr, 0.5},
    {U'è', it, 0.5},  {U'ê', fr, 0.5},  {U'ê', pt, 0.5},  {U'à', fr, 0.5},  {U'à', it, 0.5},  {U'à', pt, 0.25},
    {U'â', fr, 0.5},  {U'â', pt, 0.5},  {U'â', ro, 0.5},  {U'î', fr, 0.5},  {U'î', ro, 0.5},  {U'ô', fr, 0.5},
    {U'ô', pt, 0.5},  {U'û', fr, 0.5},  {U'ë', fr, 0.25}, {U'ë', nl, 0.25}, {U'ï', fr, 0.25}, {U'ï', nl, 0.25},
    {U'ù', fr, 0.5},  {U'ù', it, 0.5},  {U'ì', it, 1},    {U'ò', it, 1},    {U'ã', pt, 1.5},  {U'õ', pt, 1.5},
    {U'á', es, 0.5},  {U'á', pt, 0.5},  {U'á', cs, 0.5},  {U'á', hu, 0.5},  {U'é', fr, 0.5},  {U'é', es, 0.5},
    {U'é', pt, 0.5},  {U'é', it, 0.25}, {U'é', cs, 0.25}, {U'é', hu, 0.5},  {U'í', es, 0.5},  {U'í', pt, 0.5},
    {U'í', cs, 0.5},  {U'í', hu, 0.5},  {U'ó', es, 0.5},  {U'ó', pt, 0.5},  {U'ó', pl, 0.5},  {U'ó', cs, 0.25},
    {U'ó', hu, 0.5},  {U'ú', es, 0.5},  {U'ú', pt, 0.25}, {U'ú', cs, 0.5},  {U'ú', hu, 0.5},  {U'ğ', tr, 1.5},
    {U'ı', tr, 1.5},  {U'ş', tr, 1},    {U'ş', ro, 0.5},  {U'ł', pl, 1.5},  {U'ą', pl, 1.5},  {U'ę', pl, 1.5},
    {U'ś', pl, 1.5},  {U'ź', pl, 1.5},  {U'ż', pl, 1.5},  {U'ć', pl, 1.5},  {U'ń', pl, 1.5},  {U'å', sv, 0.75},
    {U'å', da, 0.75}, {U'å', nb, 0.75}, {U'æ', da, 1},    {U'æ', nb, 1},    {U'ø', da, 1},    {U'ø', nb, 1},
    {U'ř', cs, 1.5},  {U'ě', cs, 1.5},  {U'ů', cs, 1.5},  {U'č', cs, 0.5},  {U'š', cs, 0.5},  {U'ž', cs, 0.5},
    {U'ý', cs, 0.5},  {U'ť', cs, 1},    {U'ď', cs, 1},    {U'ň', cs, 1},    {U'ő', hu, 1.5},  {U'ű', hu, 1.5},
    {U'ș', ro, 1.5},  {U'ț', ro, 1.5},  {U'ţ', ro, 1.5},  {U'ă', ro, 1},    {U'ă', vi, 0.5},  {U'đ', vi, 1.5},
    {U'ơ', vi, 1.5},  {U'ư', vi, 1.5},
};
constexpr double kVietnameseLetterWeight = 1.5;  // U+1EA0..U+1EF9: ạ ả ấ ầ ... ỹ
constexpr double kDutchIjWeight = 0.5;           // per word containing "ij"

using Scores = std::array<double, kLatinLanguages>;

const std::unordered_map<std::string_view, std::uint32_t>& word_table() {
  static const auto table = [] {
    std::unordered_map<std::string_view, std::uint32_t> words;
    for (const WordList& list : kWords) {
      std::string_view rest = list.words;
      while (!rest.empty()) {
        const std::size_t space = rest.find(' ');
        const std::string_view word = rest.substr(0, space);
        if (!word.empty()) words[word] |= 1u << list.language;
        rest.remove_prefix(space == std::string_view::npos ? rest.size() : space + 1);
      }
    }
    return words;
  }();
  return table;
}

const std::unordered_map<char32_t, std::vector<std::pair<Latin, double>>>& letter_table() {
  static const auto table = [] {
    std::unordered_map<char32_t, std::vector<std::pair<Latin, double>>> letters;
    for (const LetterSignal& signal : kLetters) {
      letters[signal.letter].emplace_back(signal.language, signal.weight);
    }
    return letters;
  }();
  return table;
}

void score_word(const std::string& word, Scores& scores) {
  if (word.empty()) return;
  const auto& words = word_table();
  if (const auto it = words.find(word); it != words.end()) {
    for (std::size_t language = 0; language < kLatinLanguages; ++language) {
      if ((it->second >> language) & 1u) scores[language] += 1;
    }
  }
  if (word.find("ij") != std::string::npos) scores[nl] += kDutchIjWeight;
}

void score_letter(char32_t lower, Scores& scores) {
  if (lower < 0x80) return;
  if (lower >= 0x1EA0 && lower <= 0x1EF9) {
    scores[vi] += kVietnameseLetterWeight;
    return;
  }
  const auto& letters = letter_table();
  if (const auto it = letters.find(lower); it != letters.end()) {
    for (const auto& [language, weight] : it->second) scores[language] += weight;
  }
}

// ---- One sentence ---------------------------------------------------------------------------

// Letters that tell the Cyrillic languages apart.
struct CyrillicMarks {
  std::size_t russian = 0;     // ы э ё
  std::size_t ukrainian = 0;   // і ї є ґ
  std::size_t belarusian = 0;  // ў
  std::size_t serbian = 0;     // ђ ћ
  std::size_t macedonian = 0;  // ѓ ќ ѕ
  std::size_t south = 0;       // ј љ њ џ (Serbian and Macedonian)
  std::size_t hard_sign = 0;   // ъ (frequent in Bulgarian, rare in Russian)
  void add(char32_t lower) {
    switch (lower) {
      case U'ы':
      case U'э':
      case U'ё':
        ++russian;
        break;
      case U'і':
      case U'ї':
      case U'є':
      case U'ґ':
        ++ukrainian;
        break;
      case U'ў':
        ++belarusian;
        break;
      case U'ђ':
      case U'ћ':
        ++serbian;
        break;
      case U'ѓ':
      case U'ќ':
      case U'ѕ':
        ++macedonian;
        break;
      case U'ј':
      case U'љ':
      case U'њ':
      case U'џ':
        ++south;
        break;
      case U'ъ':
        ++hard_sign;
        break;
      default:
        break;
    }
  }
  void operator+=(const CyrillicMarks& o) {
    russian += o.russian;
    ukrainian += o.ukrainian;
    belarusian += o.belarusian;
    serbian += o.serbian;
    macedonian += o.macedonian;
    south += o.south;
    hard_sign += o.hard_sign;
  }
};

// Letters that tell Arabic, Persian and Urdu apart.
struct ArabicMarks {
  std::size_t arabic = 0;   // ي ك ة
  std::size_t persian = 0;  // پ چ ژ گ ک ی (Urdu uses them too)
  std::size_t urdu = 0;     // ٹ ڈ ڑ ں ہ ے
  void add(char32_t cp) {
    switch (cp) {
      case 0x064A:
      case 0x0643:
      case 0x0629:
        ++arabic;
        break;
      case 0x067E:
      case 0x0686:
      case 0x0698:
      case 0x06AF:
      case 0x06A9:
      case 0x06CC:
        ++persian;
        break;
      case 0x0679:
      case 0x0688:
      case 0x0691:
      case 0x06BA:
      case 0x06C1:
      case 0x06D2:
        ++urdu;
        break;
      default:
        break;
    }
  }
  void operator+=(const ArabicMarks& o) {
    arabic += o.arabic;
    persian += o.persian;
    urdu += o.urdu;
  }
};

struct SentenceCounts {
  std::array<std::size_t, kScripts> letters{};
  Scores latin{};
  CyrillicMarks cyrillic;
  ArabicMarks arabic;
};

void count_sentence(std::string_view sentence, SentenceCounts& counts, std::string& word) {
  word.clear();
  std::size_t pos = 0;
  while (pos < sentence.size()) {
    const char32_t cp = next_code_point(sentence, pos);
    const Script script = script_of(cp);
    ++counts.letters[static_cast<std::size_t>(script)];
    if (script == Script::latin) {
      const char32_t lower = to_lower(cp);
      append_utf8(word, lower);
      score_letter(lower, counts.latin);
      continue;
    }
    if (is_combining_mark(cp) && !word.empty()) continue;  // decomposed accents stay in the word
    score_word(word, counts.latin);
    word.clear();
    if (script == Script::cyrillic) counts.cyrillic.add(to_lower(cp));
    if (script == Script::arabic) counts.arabic.add(cp);
  }
  score_word(word, counts.latin);
}

// The script a sentence is written in: the one with most letters (Han and kana together count
// as Han, so Japanese is one script), or none without letters.
Script dominant_script(const SentenceCounts& counts) {
  auto letters = counts.letters;
  letters[static_cast<std::size_t>(Script::han)] += letters[static_cast<std::size_t>(Script::kana)];
  letters[static_cast<std::size_t>(Script::kana)] = 0;
  Script best = Script::none;
  std::size_t most = 0;
  for (std::size_t s = 1; s < kScripts; ++s) {
    if (letters[s] > most) {
      most = letters[s];
      best = static_cast<Script>(s);
    }
  }
  return best;
}

// ---- The whole sample -----------------------------------------------------------------------

struct Totals {
  std::size_t letter_sentences = 0;             // sentences with any letter
  std::array<std::size_t, kScripts> votes{};    // sentences per dominant script
  std::array<std::size_t, kScripts> letters{};  // letters of a script where it dominates
  // Latin: sentences with a clear enough score, their votes per language, and total scores.
  std::size_t latin_signal = 0;
  std::array<double, kLatinLanguages> latin_votes{};
  Scores latin_scores{};
  std::size_t kana = 0;  // kana letters in Han-dominated sentences
  CyrillicMarks cyrillic;
  ArabicMarks arabic;
};

constexpr double kMinSentenceScore = 1.0;  // a sentence below this says nothing about its language

void add_sentence(const SentenceCounts& counts, Totals& totals) {
  const Script script = dominant_script(counts);
  if (script == Script::none) return;
  const auto index = static_cast<std::size_t>(script);
  ++totals.letter_sentences;
  ++totals.votes[index];
  totals.letters[index] += counts.letters[index];
  switch (script) {
    case Script::han:
      totals.kana += counts.letters[static_cast<std::size_t>(Script::kana)];
      totals.letters[index] += counts.letters[static_cast<std::size_t>(Script::kana)];
      break;
    case Script::cyrillic:
      totals.cyrillic += counts.cyrillic;
      break;
    case Script::arabic:
      totals.arabic += counts.arabic;
      break;
    case Script::latin: {
      const double best = *std::max_element(counts.latin.begin(), counts.latin.end());
      if (best < kMinSentenceScore) break;
      ++totals.latin_signal;
      // A tie splits the sentence's vote.
      const auto winners = static_cast<double>(std::count(counts.latin.begin(), counts.latin.end(), best));
      for (std::size_t l = 0; l < kLatinLanguages; ++l) {
        if (counts.latin[l] == best) totals.latin_votes[l] += 1.0 / winners;
        totals.latin_scores[l] += counts.latin[l];
      }
      break;
    }
    default:
      break;
  }
}

// A language guess within the winning script: its code, how sure (0..1) and how many sentences
// carried the signal.
struct Guess {
  std::string_view code;
  double certainty = 0;
  std::size_t signal = 0;
};

Guess latin_guess(const Totals& totals) {
  if (totals.latin_signal == 0) return {};
  std::size_t best = 0;
  for (std::size_t l = 1; l < kLatinLanguages; ++l) {
    const bool more_votes = totals.latin_votes[l] > totals.latin_votes[best];
    const bool tie_more_score =
        totals.latin_votes[l] == totals.latin_votes[best] && totals.latin_scores[l] > totals.latin_scores[best];
    if (more_votes || tie_more_score) best = l;
  }
  return {kLatinCodes[best], totals.latin_votes[best] / static_cast<double>(totals.latin_signal), totals.latin_signal};
}

Guess han_guess(const Totals& totals, std::size_t sentences) {
  const std::size_t letters = totals.letters[static_cast<std::size_t>(Script::han)];
  const double kana_share = letters == 0 ? 0 : static_cast<double>(totals.kana) / static_cast<double>(letters);
  if (kana_share >= 0.10) return {"ja", 1.0, sentences};
  if (kana_share <= 0.02) return {"zh", 1.0, sentences};
  return {kana_share >= 0.05 ? "ja" : "zh", 0.5, sentences};  // unclear: kana here and there
}

Guess cyrillic_guess(const Totals& totals, std::size_t sentences) {
  const CyrillicMarks& m = totals.cyrillic;
  const auto letters = static_cast<double>(totals.letters[static_cast<std::size_t>(Script::cyrillic)]);
  const auto rate = [&](std::size_t n) { return static_cast<double>(n) / letters; };
  if (rate(m.belarusian) >= 0.003) return {"be", 1.0, sentences};
  if (rate(m.serbian + m.macedonian + m.south) >= 0.005) {
    return {m.macedonian > m.serbian ? "mk" : "sr", 1.0, sentences};
  }
  if (m.ukrainian > 2 * m.russian && rate(m.ukrainian) >= 0.005) return {"uk", 1.0, sentences};
  if (m.russian > 2 * m.ukrainian && rate(m.russian) >= 0.002) return {"ru", 1.0, sentences};
  if (m.russian == 0 && m.ukrainian == 0) {
    if (rate(m.hard_sign) >= 0.005) return {"bg", 1.0, sentences};
    // Too little text for Russian's ы/э to show up: most likely Russian, but less sure.
    if (letters < 300) return {"ru", 0.75, sentences};
  }
  return {"", 0, sentences};
}

Guess arabic_guess(const Totals& totals, std::size_t sentences) {
  const ArabicMarks& m = totals.arabic;
  const auto letters = static_cast<double>(totals.letters[static_cast<std::size_t>(Script::arabic)]);
  if (static_cast<double>(m.urdu) >= 0.005 * letters) return {"ur", 1.0, sentences};
  if (m.persian > m.arabic) return {"fa", 1.0, sentences};
  return {"ar", 1.0, sentences};
}

Guess script_guess(Script script, const Totals& totals) {
  const std::size_t sentences = totals.votes[static_cast<std::size_t>(script)];
  switch (script) {
    case Script::latin:
      return latin_guess(totals);
    case Script::han:
      return han_guess(totals, sentences);
    case Script::cyrillic:
      return cyrillic_guess(totals, sentences);
    case Script::arabic:
      return arabic_guess(totals, sentences);
    case Script::hangul:
      return {"ko", 1.0, sentences};
    case Script::greek:
      return {"el", 1.0, sentences};
    case Script::hebrew:
      return {"he", 1.0, sentences};
    case Script::thai:
      return {"th", 1.0, sentences};
    case Script::devanagari:
      return {"hi", 1.0, sentences};
    case Script::bengali:
      return {"bn", 1.0, sentences};
    case Script::georgian:
      return {"ka", 1.0, sentences};
    case Script::armenian:
      return {"hy", 1.0, sentences};
    default:
      return {"", 0, sentences};
  }
}

}  // namespace

DetectedLanguage detect_language(const std::vector<std::string_view>& sentences) {
  DetectedLanguage result;
  Totals totals;
  SentenceCounts counts;
  std::string word;
  const std::size_t n = sentences.size();
  const std::size_t sample = std::min(n, kLanguageSampleSentences);
  for (std::size_t i = 0; i < sample; ++i) {
    // Evenly spread: index i * n / sample (all of them when n <= the sample size).
    const std::size_t index = sample == n ? i : i * n / sample;
    counts = SentenceCounts{};
    count_sentence(sentences[index], counts, word);
    add_sentence(counts, totals);
  }
  if (totals.letter_sentences == 0) return result;

  auto script = Script::none;
  std::size_t most = 0;
  for (std::size_t s = 1; s < kScripts; ++s) {
    if (totals.votes[s] > most) {
      most = totals.votes[s];
      script = static_cast<Script>(s);
    }
  }
  const double script_share = static_cast<double>(most) / static_cast<double>(totals.letter_sentences);
  const Guess guess = script_guess(script, totals);
  result.script = std::string(kScriptNames[static_cast<std::size_t>(script)]);
  if (guess.code == "ja") result.script = "Han+Kana";
  result.confidence = std::clamp(script_share * guess.certainty, 0.0, 1.0);
  if (guess.code.empty() || guess.signal < kMinLanguageSentences || result.confidence < kMinLanguageConfidence) {
    return result;
  }
  result.language = known_language(guess.code);
  return result;
}

bool is_cjk_language(const std::string& code) { return code == "zh" || code == "ja" || code == "cmn" || code == "jpn"; }

}  // namespace ts
