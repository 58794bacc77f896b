// SPDX-License-Identifier: GPL-3.0-or-later
// The built-in demo corpus (see ts/text/demo_corpus.h): a small English->German grammar that
// makes thousands of distinct, grammatical sentence pairs, deterministic for a seed. It covers
// German articles by gender, number and case, adjective endings, verb agreement, dative verbs,
// ditransitive "geben"-type verbs, modal verbs (infinitive at the end), verb-second after a
// fronted adverb, verb-first questions, "nicht" negation and verb-final subordinate clauses
// ("dass", "weil", "wenn"), so attention maps show real re-ordering.
//
// Everything here is our own: the word tables and the grammar. Randomness is std::mt19937_64
// with plain `rng() % n` index picking, which is identical on every standard library.
#include "ts/text/demo_corpus.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace ts {

namespace {

// ---------------------------------------------------------------------------------------------
// Word tables
// ---------------------------------------------------------------------------------------------

enum class Gender { kMasculine = 0, kFeminine = 1, kNeuter = 2 };
constexpr Gender kMas = Gender::kMasculine;
constexpr Gender kFem = Gender::kFeminine;
constexpr Gender kNeu = Gender::kNeuter;

// German case; also the row index of the article and ending tables.
enum Case { kNominative = 0, kAccusative = 1, kDative = 2 };

// Person and number of a subject. English "you" is always "du" (never "ihr" or "Sie"), so each
// English sentence has exactly one German translation.
enum Agreement { kFirstSingular, kSecondSingular, kThirdSingular, kFirstPlural, kThirdPlural };

// Semantic classes, so that verbs get sensible subjects and objects ("the man eats the apple",
// never "the apple eats the man").
enum Kind : unsigned {
  kPerson = 1u << 0,
  kAnimal = 1u << 1,
  kThing = 1u << 2,
  kFood = 1u << 3,
  kReadable = 1u << 4,
  kPortable = 1u << 5,
  kUnowned = 1u << 6,  // odd after "my"/"your" ("my woman")
  kOnlyOne = 1u << 7,  // singular after "my"/"your" ("my mother", never "my mothers")
};
constexpr unsigned kAnimate = kPerson | kAnimal;
constexpr unsigned kAnything = kAnimate | kThing;

struct Noun {
  const char* en_singular;
  const char* en_plural;
  const char* de_singular;
  const char* de_plural;  // nominative/accusative plural; the dative plural is derived
  Gender gender;
  unsigned kinds;
};

constexpr Noun kNouns[] = {
    {"man", "men", "Mann", "Männer", kMas, kPerson | kUnowned},
    {"woman", "women", "Frau", "Frauen", kFem, kPerson | kUnowned},
    {"child", "children", "Kind", "Kinder", kNeu, kPerson},
    {"girl", "girls", "Mädchen", "Mädchen", kNeu, kPerson | kUnowned},
    {"teacher", "teachers", "Lehrer", "Lehrer", kMas, kPerson},
    {"doctor", "doctors", "Arzt", "Ärzte", kMas, kPerson},
    {"friend", "friends", "Freund", "Freunde", kMas, kPerson},
    {"sister", "sisters", "Schwester", "Schwestern", kFem, kPerson},
    {"brother", "brothers", "Bruder", "Brüder", kMas, kPerson},
    {"mother", "mothers", "Mutter", "Mütter", kFem, kPerson | kOnlyOne},
    {"father", "fathers", "Vater", "Väter", kMas, kPerson | kOnlyOne},
    {"dog", "dogs", "Hund", "Hunde", kMas, kAnimal},
    {"cat", "cats", "Katze", "Katzen", kFem, kAnimal},
    {"horse", "horses", "Pferd", "Pferde", kNeu, kAnimal},
    {"bird", "birds", "Vogel", "Vögel", kMas, kAnimal},
    {"mouse", "mice", "Maus", "Mäuse", kFem, kAnimal},
    {"cow", "cows", "Kuh", "Kühe", kFem, kAnimal},
    {"pig", "pigs", "Schwein", "Schweine", kNeu, kAnimal},
    {"book", "books", "Buch", "Bücher", kNeu, kThing | kReadable | kPortable},
    {"letter", "letters", "Brief", "Briefe", kMas, kThing | kReadable | kPortable},
    {"newspaper", "newspapers", "Zeitung", "Zeitungen", kFem, kThing | kReadable | kPortable},
    {"apple", "apples", "Apfel", "Äpfel", kMas, kThing | kFood | kPortable},
    {"cake", "cakes", "Kuchen", "Kuchen", kMas, kThing | kFood | kPortable},
    {"egg", "eggs", "Ei", "Eier", kNeu, kThing | kFood | kPortable},
    {"banana", "bananas", "Banane", "Bananen", kFem, kThing | kFood | kPortable},
    {"ball", "balls", "Ball", "Bälle", kMas, kThing | kPortable},
    {"key", "keys", "Schlüssel", "Schlüssel", kMas, kThing | kPortable},
    {"cup", "cups", "Tasse", "Tassen", kFem, kThing | kPortable},
    {"flower", "flowers", "Blume", "Blumen", kFem, kThing | kPortable},
    {"picture", "pictures", "Bild", "Bilder", kNeu, kThing | kPortable},
    {"car", "cars", "Auto", "Autos", kNeu, kThing},
    {"house", "houses", "Haus", "Häuser", kNeu, kThing},
    {"chair", "chairs", "Stuhl", "Stühle", kMas, kThing},
    {"door", "doors", "Tür", "Türen", kFem, kThing},
};

struct Adjective {
  const char* en;
  const char* de_stem;  // takes the case ending: "groß" -> "große", "großen", "großer", ...
  unsigned kinds;       // nouns it fits
};

constexpr Adjective kAdjectives[] = {
    {"big", "groß", kAnything},
    {"small", "klein", kAnything},
    {"old", "alt", kAnything},
    {"young", "jung", kAnimate},
    {"new", "neu", kThing},
    {"red", "rot", kThing},
    {"black", "schwarz", kAnimal | kThing},
    {"beautiful", "schön", kAnything},
};

// How a verb combines with its complements.
enum Frame : unsigned {
  kTransitive = 1u << 0,    // accusative object: "sieht den Hund"
  kDativeObject = 1u << 1,  // dative object: "hilft dem Kind"
  kDitransitive = 1u << 2,  // dative recipient + accusative theme: "gibt dem Kind den Ball"
  kIntransitive = 1u << 3,  // nothing, or a "mit" partner when object_kinds is set
  kReport = 1u << 4,        // takes a "dass" clause: "weiß, dass ..."
};
constexpr unsigned kSimpleFrames = kTransitive | kDativeObject | kIntransitive;
constexpr unsigned kClauseFrames = kSimpleFrames | kDitransitive;

struct Verb {
  const char* en_base;   // "see"; also the English infinitive
  const char* en_third;  // "sees"
  // German present tense: ich, du, er/sie, wir/sie. The plural form is also the infinitive.
  std::array<const char*, 4> de;
  Frame frame;
  unsigned subject_kinds;
  unsigned object_kinds;  // object, recipient or "mit" partner; 0 for none
  unsigned theme_kinds;   // ditransitive only: what is given
};

constexpr Verb kVerbs[] = {
    {"see", "sees", {"sehe", "siehst", "sieht", "sehen"}, kTransitive, kAnimate, kAnything, 0},
    {"like", "likes", {"mag", "magst", "mag", "mögen"}, kTransitive, kAnimate, kAnything, 0},
    {"have", "has", {"habe", "hast", "hat", "haben"}, kTransitive, kPerson, kAnimal | kThing, 0},
    {"buy", "buys", {"kaufe", "kaufst", "kauft", "kaufen"}, kTransitive, kPerson, kAnimal | kThing, 0},
    {"read", "reads", {"lese", "liest", "liest", "lesen"}, kTransitive, kPerson, kReadable, 0},
    {"eat", "eats", {"esse", "isst", "isst", "essen"}, kTransitive, kPerson, kFood, 0},
    {"find", "finds", {"finde", "findest", "findet", "finden"}, kTransitive, kAnimate, kAnything, 0},
    {"visit", "visits", {"besuche", "besuchst", "besucht", "besuchen"}, kTransitive, kPerson, kPerson, 0},
    {"hear", "hears", {"höre", "hörst", "hört", "hören"}, kTransitive, kAnimate, kAnimate, 0},
    {"carry", "carries", {"trage", "trägst", "trägt", "tragen"}, kTransitive, kPerson, kPortable, 0},
    {"help", "helps", {"helfe", "hilfst", "hilft", "helfen"}, kDativeObject, kAnimate, kAnimate, 0},
    {"follow", "follows", {"folge", "folgst", "folgt", "folgen"}, kDativeObject, kAnimate, kAnimate, 0},
    {"thank", "thanks", {"danke", "dankst", "dankt", "danken"}, kDativeObject, kPerson, kPerson, 0},
    {"give", "gives", {"gebe", "gibst", "gibt", "geben"}, kDitransitive, kPerson, kAnimate, kPortable},
    {"show", "shows", {"zeige", "zeigst", "zeigt", "zeigen"}, kDitransitive, kPerson, kPerson, kPortable},
    {"bring", "brings", {"bringe", "bringst", "bringt", "bringen"}, kDitransitive, kPerson, kAnimate, kPortable},
    {"sleep", "sleeps", {"schlafe", "schläfst", "schläft", "schlafen"}, kIntransitive, kAnimate, 0, 0},
    {"laugh", "laughs", {"lache", "lachst", "lacht", "lachen"}, kIntransitive, kPerson, 0, 0},
    {"work", "works", {"arbeite", "arbeitest", "arbeitet", "arbeiten"}, kIntransitive, kPerson, 0, 0},
    {"play", "plays", {"spiele", "spielst", "spielt", "spielen"}, kIntransitive, kAnimate, kAnimate | kPortable, 0},
    {"know", "knows", {"weiß", "weißt", "weiß", "wissen"}, kReport, kPerson, 0, 0},
    {"think", "thinks", {"denke", "denkst", "denkt", "denken"}, kReport, kPerson, 0, 0},
    {"say", "says", {"sage", "sagst", "sagt", "sagen"}, kReport, kPerson, 0, 0},
};

struct Modal {
  const char* en_third;  // "wants to"
  const char* en_other;  // "want to"
  std::array<const char*, 4> de;
};

constexpr Modal kModals[] = {
    {"wants to", "want to", {"will", "willst", "will", "wollen"}},
    {"can", "can", {"kann", "kannst", "kann", "können"}},
    {"must", "must", {"muss", "musst", "muss", "müssen"}},
};

struct Pronoun {
  const char* en_subject;
  const char* en_object;
  std::array<const char*, 3> de;  // nominative, accusative, dative
  Agreement agreement;
  int person;
};

constexpr Pronoun kPronouns[] = {
    {"I", "me", {"ich", "mich", "mir"}, kFirstSingular, 1}, {"you", "you", {"du", "dich", "dir"}, kSecondSingular, 2},
    {"he", "him", {"er", "ihn", "ihm"}, kThirdSingular, 3}, {"she", "her", {"sie", "sie", "ihr"}, kThirdSingular, 3},
    {"we", "us", {"wir", "uns", "uns"}, kFirstPlural, 1},   {"they", "them", {"sie", "sie", "ihnen"}, kThirdPlural, 3},
};

constexpr const char* kNames[] = {"Anna", "Tom", "Lisa", "Paul"};

struct Adverb {
  const char* en;
  const char* de;
};

constexpr Adverb kAdverbs[] = {{"today", "heute"}, {"tomorrow", "morgen"}, {"now", "jetzt"}, {"sometimes", "manchmal"}};

// Article and ending tables: rows are cases, columns masculine, feminine, neuter, plural.
using CaseTable = std::array<std::array<const char*, 4>, 3>;
constexpr CaseTable kDefiniteArticles = {
    {{"der", "die", "das", "die"}, {"den", "die", "das", "die"}, {"dem", "der", "dem", "den"}}};
// Endings of "ein", "mein", "dein" (the plural column is unused for "ein").
constexpr CaseTable kEinEndings = {{{"", "e", "", "e"}, {"en", "e", "", "e"}, {"em", "er", "em", "en"}}};
// Adjective endings after "der/die/das" (weak) and after "ein/mein/dein" (mixed).
constexpr CaseTable kWeakEndings = {{{"e", "e", "e", "en"}, {"en", "e", "e", "en"}, {"en", "en", "en", "en"}}};
constexpr CaseTable kMixedEndings = {{{"er", "e", "es", "en"}, {"en", "e", "es", "en"}, {"en", "en", "en", "en"}}};

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

// Deterministic random choices: mt19937_64 is fully specified, and so is `% n`.
class Picker {
 public:
  explicit Picker(std::uint64_t seed) : rng_(seed) {}
  std::size_t index(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  bool percent(unsigned p) { return rng_() % 100 < p; }
  template <class T, std::size_t N>
  const T& from(const T (&items)[N]) {
    return items[index(N)];
  }

 private:
  std::mt19937_64 rng_;
};

// Joins the non-empty words with single spaces.
std::string join_words(std::initializer_list<std::string> words) {
  std::string out;
  for (const auto& w : words) {
    if (w.empty()) continue;
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out = join_words({out, w});
  return out;
}

// Upper-cases the first letter: ASCII, or the UTF-8 umlauts ä/ö/ü.
std::string capitalize(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') {
    s[0] = static_cast<char>(s[0] - 'a' + 'A');
  } else if (s.size() >= 2 && s[0] == '\xC3' && (s[1] == '\xA4' || s[1] == '\xB6' || s[1] == '\xBC')) {
    s[1] = static_cast<char>(s[1] - 0x20);
  }
  return s;
}

bool starts_with_vowel(const std::string& word) {
  return !word.empty() && std::string("aeiou").find(word[0]) != std::string::npos;
}

std::size_t word_count(const std::string& s) {
  std::size_t n = 0;
  bool in_word = false;
  for (char c : s) {
    if (c == ' ') {
      in_word = false;
    } else if (!in_word) {
      in_word = true;
      ++n;
    }
  }
  return n;
}

// "Hunde" -> "Hunden", "Kinder" -> "Kindern"; plurals in -n or -s keep their form.
std::string dative_plural(const std::string& plural) {
  const char last = plural.back();
  return (last == 'n' || last == 's') ? plural : plural + "n";
}

// Index of the German verb form for a subject: ich, du, er/sie, wir/sie.
std::size_t german_form(Agreement a) {
  switch (a) {
    case kFirstSingular:
      return 0;
    case kSecondSingular:
      return 1;
    case kThirdSingular:
      return 2;
    case kFirstPlural:
    case kThirdPlural:
      return 3;
  }
  return 2;
}

// ---------------------------------------------------------------------------------------------
// Noun phrases
// ---------------------------------------------------------------------------------------------

enum class Determiner { kDefinite, kIndefinite, kMy, kYour };

// One noun phrase in every form the grammar needs.
struct Phrase {
  std::string en_subject;         // "I", "the big dog"
  std::string en_object;          // "me", "the big dog"
  std::array<std::string, 3> de;  // nominative, accusative, dative
  Agreement agreement = kThirdSingular;
  int person = 3;  // 1 or 2 for "I/we" and "you", to avoid "I see me"
};

// What a slot (subject, object, ...) accepts.
struct Slot {
  unsigned kinds = kAnything;
  bool pronouns = true;        // object pronouns are left out where word order would get subtle
  bool definite_only = false;  // "nicht" negation needs a definite object ("kein" is not modelled)
};

const Noun& pick_noun(Picker& p, unsigned kinds) {
  std::vector<const Noun*> fits;
  for (const auto& noun : kNouns)
    if (noun.kinds & kinds) fits.push_back(&noun);
  return *fits[p.index(fits.size())];
}

const Adjective& pick_adjective(Picker& p, unsigned noun_kinds) {
  std::vector<const Adjective*> fits;
  for (const auto& adjective : kAdjectives)
    if (adjective.kinds & noun_kinds) fits.push_back(&adjective);
  return *fits[p.index(fits.size())];
}

Determiner pick_determiner(Picker& p, const Noun& noun, bool definite_only) {
  const std::size_t roll = p.index(100);
  if (roll < 50) return Determiner::kDefinite;
  if (roll < 75) return definite_only ? Determiner::kDefinite : Determiner::kIndefinite;
  if (noun.kinds & kUnowned) return Determiner::kDefinite;
  return roll < 88 ? Determiner::kMy : Determiner::kYour;
}

bool is_possessive(Determiner det) { return det == Determiner::kMy || det == Determiner::kYour; }

std::string english_noun_phrase(const Noun& noun, bool plural, Determiner det, const Adjective* adj) {
  const std::string rest = join_words({adj ? adj->en : "", plural ? noun.en_plural : noun.en_singular});
  switch (det) {
    case Determiner::kDefinite:
      return "the " + rest;
    case Determiner::kMy:
      return "my " + rest;
    case Determiner::kYour:
      return "your " + rest;
    case Determiner::kIndefinite:
      if (plural) return rest;
      return (starts_with_vowel(rest) ? "an " : "a ") + rest;
  }
  return rest;
}

std::string german_article(Determiner det, std::size_t column, Case c) {
  switch (det) {
    case Determiner::kDefinite:
      return kDefiniteArticles[c][column];
    case Determiner::kIndefinite:
      return column == 3 ? "" : std::string("ein") + kEinEndings[c][column];
    case Determiner::kMy:
      return std::string("mein") + kEinEndings[c][column];
    case Determiner::kYour:
      return std::string("dein") + kEinEndings[c][column];
  }
  return "";
}

std::string adjective_ending(Determiner det, std::size_t column, Case c) {
  if (det == Determiner::kDefinite) return kWeakEndings[c][column];
  if (det == Determiner::kIndefinite && column == 3) return c == kDative ? "en" : "e";  // no article
  return kMixedEndings[c][column];
}

std::string german_noun_phrase(const Noun& noun, bool plural, Determiner det, const Adjective* adj, Case c) {
  const std::size_t column = plural ? 3 : static_cast<std::size_t>(noun.gender);
  const std::string noun_form = !plural        ? noun.de_singular
                                : c == kDative ? dative_plural(noun.de_plural)
                                               : noun.de_plural;
  const std::string adjective = adj ? adj->de_stem + adjective_ending(det, column, c) : "";
  return join_words({german_article(det, column, c), adjective, noun_form});
}

Phrase noun_phrase(Picker& p, unsigned kinds, bool definite_only) {
  const Noun& noun = pick_noun(p, kinds);
  const Determiner det = pick_determiner(p, noun, definite_only);
  const bool plural = p.percent(30) && !(is_possessive(det) && (noun.kinds & kOnlyOne));
  const Adjective* adj = p.percent(20) ? &pick_adjective(p, noun.kinds) : nullptr;
  Phrase phrase;
  phrase.en_subject = phrase.en_object = english_noun_phrase(noun, plural, det, adj);
  for (Case c : {kNominative, kAccusative, kDative}) phrase.de[c] = german_noun_phrase(noun, plural, det, adj, c);
  phrase.agreement = plural ? kThirdPlural : kThirdSingular;
  return phrase;
}

Phrase pronoun_phrase(const Pronoun& pronoun) {
  Phrase phrase;
  phrase.en_subject = pronoun.en_subject;
  phrase.en_object = pronoun.en_object;
  for (Case c : {kNominative, kAccusative, kDative}) phrase.de[c] = pronoun.de[c];
  phrase.agreement = pronoun.agreement;
  phrase.person = pronoun.person;
  return phrase;
}

Phrase name_phrase(const char* name) {
  Phrase phrase;
  phrase.en_subject = phrase.en_object = name;
  phrase.de = {name, name, name};
  return phrase;
}

Phrase pick_phrase(Picker& p, const Slot& slot) {
  const bool people = (slot.kinds & kPerson) != 0;
  const std::size_t roll = p.index(100);
  if (people && slot.pronouns && roll < 20) return pronoun_phrase(p.from(kPronouns));
  if (people && roll < 28) return name_phrase(p.from(kNames));
  return noun_phrase(p, slot.kinds, slot.definite_only);
}

// An object phrase that reads naturally next to `subject` and is unambiguous in German:
// no "I see me", and no accusative "sie" (it would be both "her" and "them").
Phrase pick_object(Picker& p, const Slot& slot, const Phrase& subject, Case c) {
  Phrase object = pick_phrase(p, slot);
  const bool same_speaker = object.person < 3 && (object.person == subject.person);
  const bool ambiguous_sie = c == kAccusative && object.de[kAccusative] == "sie";
  if (same_speaker || ambiguous_sie) return noun_phrase(p, slot.kinds, slot.definite_only);
  return object;
}

// ---------------------------------------------------------------------------------------------
// Clauses
// ---------------------------------------------------------------------------------------------

// What a clause may contain.
struct ClauseRules {
  unsigned frames = kClauseFrames;
  bool object_pronouns = true;
  bool negated = false;
  bool modal = false;
};

// A subject, a verb (maybe under a modal) and its complements, in both languages.
struct Clause {
  Phrase subject;
  const Verb* verb = nullptr;
  const Modal* modal = nullptr;
  bool negated = false;
  std::string en_complement;           // "the cat", "the ball to the child", "with the dog"
  std::vector<std::string> de_middle;  // German complements in German order
};

const Verb& pick_verb(Picker& p, unsigned frames) {
  // Frame weights first, then a verb within the frame: keeps the mix stable as verbs are added.
  constexpr std::pair<Frame, unsigned> kWeights[] = {
      {kTransitive, 45}, {kDativeObject, 15}, {kDitransitive, 15}, {kIntransitive, 25}, {kReport, 10}};
  unsigned total = 0;
  for (const auto& [frame, weight] : kWeights)
    if (frames & frame) total += weight;
  std::size_t roll = p.index(total);
  Frame chosen = kTransitive;
  for (const auto& [frame, weight] : kWeights) {
    if (!(frames & frame)) continue;
    if (roll < weight) {
      chosen = frame;
      break;
    }
    roll -= weight;
  }
  std::vector<const Verb*> fits;
  for (const auto& verb : kVerbs)
    if (verb.frame == chosen) fits.push_back(&verb);
  return *fits[p.index(fits.size())];
}

void add_object(Clause& clause, const Phrase& object, Case c) {
  clause.en_complement = object.en_object;
  clause.de_middle.push_back(object.de[c]);
}

// "gives the ball to the child" / "gibt dem Kind den Ball".
void add_gift(Picker& p, const Slot& recipient_slot, Clause& clause) {
  const Phrase recipient = pick_object(p, recipient_slot, clause.subject, kDative);
  const Phrase theme = noun_phrase(p, clause.verb->theme_kinds, false);
  clause.en_complement = theme.en_object + " to " + recipient.en_object;
  clause.de_middle = {recipient.de[kDative], theme.de[kAccusative]};
}

// "plays with the dog" / "spielt mit dem Hund".
void add_partner(Picker& p, const Slot& slot, Clause& clause) {
  const Phrase partner = pick_object(p, slot, clause.subject, kDative);
  clause.en_complement = "with " + partner.en_object;
  clause.de_middle = {"mit " + partner.de[kDative]};
}

void add_complement(Picker& p, const ClauseRules& rules, Clause& clause) {
  const Verb& verb = *clause.verb;
  const Slot slot{verb.object_kinds, rules.object_pronouns, rules.negated};
  switch (verb.frame) {
    case kTransitive:
      add_object(clause, pick_object(p, slot, clause.subject, kAccusative), kAccusative);
      break;
    case kDativeObject:
      add_object(clause, pick_object(p, slot, clause.subject, kDative), kDative);
      break;
    case kDitransitive:
      add_gift(p, slot, clause);
      break;
    case kIntransitive:
      if (verb.object_kinds != 0 && !rules.negated && p.percent(50)) add_partner(p, slot, clause);
      break;
    case kReport:
      break;  // the caller appends the "that" clause
  }
}

Clause make_clause(Picker& p, const ClauseRules& rules) {
  Clause clause;
  clause.verb = &pick_verb(p, rules.frames);
  clause.subject = pick_phrase(p, Slot{clause.verb->subject_kinds, true, false});
  clause.modal = rules.modal ? &p.from(kModals) : nullptr;
  clause.negated = rules.negated;
  add_complement(p, rules, clause);
  return clause;
}

bool third_singular(const Clause& clause) { return clause.subject.agreement == kThirdSingular; }

std::string english_verb_group(const Clause& clause) {
  const bool third = third_singular(clause);
  const Verb& verb = *clause.verb;
  if (clause.modal) return std::string(third ? clause.modal->en_third : clause.modal->en_other) + " " + verb.en_base;
  if (clause.negated) return std::string(third ? "does not " : "do not ") + verb.en_base;
  return third ? verb.en_third : verb.en_base;
}

// "the dog sees the cat" (English keeps subject-verb-object everywhere).
std::string english_clause(const Clause& clause) {
  return join_words({clause.subject.en_subject, english_verb_group(clause), clause.en_complement});
}

// "does the dog see the cat"
std::string english_question(const Clause& clause) {
  return join_words(
      {third_singular(clause) ? "does" : "do", clause.subject.en_subject, clause.verb->en_base, clause.en_complement});
}

// German main clauses put the finite verb second or first; subordinate clauses put it last.
enum class Order { kVerbSecond, kVerbFirst, kVerbFinal };

std::string german_clause(const Clause& clause, Order order) {
  const std::size_t form = german_form(clause.subject.agreement);
  const std::string finite = clause.modal ? clause.modal->de[form] : clause.verb->de[form];
  std::vector<std::string> middle = clause.de_middle;
  if (clause.negated) middle.push_back("nicht");
  if (clause.modal) middle.push_back(clause.verb->de[3]);  // the infinitive goes to the end
  const std::string& subject = clause.subject.de[kNominative];
  const std::string rest = join_words(middle);
  switch (order) {
    case Order::kVerbSecond:
      return join_words({subject, finite, rest});
    case Order::kVerbFirst:
      return join_words({finite, subject, rest});
    case Order::kVerbFinal:
      return join_words({subject, rest, finite});
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// Sentences: one function per construction
// ---------------------------------------------------------------------------------------------

CorpusPair sentence(const std::string& english, const std::string& german, char mark) {
  return {capitalize(english) + mark, capitalize(german) + mark};
}

// "The dog sees the cat." / "Der Hund sieht die Katze."
CorpusPair statement(Picker& p) {
  const Clause clause = make_clause(p, {});
  return sentence(english_clause(clause), german_clause(clause, Order::kVerbSecond), '.');
}

// "The child wants to see the dog." / "Das Kind will den Hund sehen."
CorpusPair modal_statement(Picker& p) {
  ClauseRules rules;
  rules.modal = true;
  const Clause clause = make_clause(p, rules);
  return sentence(english_clause(clause), german_clause(clause, Order::kVerbSecond), '.');
}

// "The dog does not see the cat." / "Der Hund sieht die Katze nicht."
CorpusPair negation(Picker& p) {
  ClauseRules rules;
  rules.frames = kSimpleFrames;
  rules.negated = true;
  const Clause clause = make_clause(p, rules);
  return sentence(english_clause(clause), german_clause(clause, Order::kVerbSecond), '.');
}

// "Today the man sees the woman." / "Heute sieht der Mann die Frau."
CorpusPair adverb_first(Picker& p) {
  const Adverb& adverb = p.from(kAdverbs);
  ClauseRules rules;
  rules.object_pronouns = false;
  rules.modal = p.percent(25);
  const Clause clause = make_clause(p, rules);
  return sentence(join_words({adverb.en, english_clause(clause)}),
                  join_words({adverb.de, german_clause(clause, Order::kVerbFirst)}), '.');
}

// "Does the dog see the cat?" / "Sieht der Hund die Katze?"
CorpusPair question(Picker& p) {
  ClauseRules rules;
  rules.object_pronouns = false;
  const Clause clause = make_clause(p, rules);
  return sentence(english_question(clause), german_clause(clause, Order::kVerbFirst), '?');
}

// "I know that the dog sees the cat." / "Ich weiß, dass der Hund die Katze sieht."
CorpusPair reported(Picker& p) {
  ClauseRules main_rules;
  main_rules.frames = kReport;
  const Clause main = make_clause(p, main_rules);
  ClauseRules sub_rules;
  sub_rules.modal = p.percent(20);
  const Clause sub = make_clause(p, sub_rules);
  return sentence(english_clause(main) + " that " + english_clause(sub),
                  german_clause(main, Order::kVerbSecond) + ", dass " + german_clause(sub, Order::kVerbFinal), '.');
}

// "The child laughs because the dog sees the cat." / "Das Kind lacht, weil der Hund die Katze sieht."
CorpusPair because(Picker& p) {
  ClauseRules main_rules;
  main_rules.frames = kSimpleFrames;
  const Clause main = make_clause(p, main_rules);
  ClauseRules sub_rules;
  sub_rules.modal = p.percent(20);
  const Clause sub = make_clause(p, sub_rules);
  return sentence(english_clause(main) + " because " + english_clause(sub),
                  german_clause(main, Order::kVerbSecond) + ", weil " + german_clause(sub, Order::kVerbFinal), '.');
}

// "If the cat sleeps, the dog plays." / "Wenn die Katze schläft, spielt der Hund."
CorpusPair condition(Picker& p) {
  const Clause sub = make_clause(p, {});
  ClauseRules main_rules;
  main_rules.frames = kSimpleFrames;
  main_rules.object_pronouns = false;
  const Clause main = make_clause(p, main_rules);
  return sentence("if " + english_clause(sub) + ", " + english_clause(main),
                  "wenn " + german_clause(sub, Order::kVerbFinal) + ", " + german_clause(main, Order::kVerbFirst), '.');
}

// Picks a construction by weight (percent) and builds one pair.
CorpusPair random_pair(Picker& p) {
  using Builder = CorpusPair (*)(Picker&);
  constexpr std::pair<Builder, unsigned> kConstructions[] = {{statement, 24},    {modal_statement, 12}, {negation, 8},
                                                             {adverb_first, 12}, {question, 8},         {reported, 14},
                                                             {because, 11},      {condition, 11}};
  std::size_t roll = p.index(100);
  for (const auto& [build, weight] : kConstructions) {
    if (roll < weight) return build(p);
    roll -= weight;
  }
  return statement(p);
}

// Short enough for a small model to learn quickly, long enough to carry some grammar.
bool acceptable_length(const CorpusPair& pair) {
  constexpr std::size_t kMinWords = 3;
  constexpr std::size_t kMaxWords = 14;
  for (const std::string* side : {&pair.english, &pair.other}) {
    const std::size_t n = word_count(*side);
    if (n < kMinWords || n > kMaxWords) return false;
  }
  return true;
}

}  // namespace

std::vector<CorpusPair> generate_demo_corpus(const DemoCorpusOptions& options) {
  // Stop when this many draws in a row bring nothing new: the grammar is (nearly) exhausted.
  constexpr std::size_t kMaxMissesInARow = 20000;
  Picker picker(options.seed);
  std::unordered_set<std::string> seen_english;
  std::unordered_set<std::string> seen_german;
  std::vector<CorpusPair> pairs;
  pairs.reserve(options.pairs);
  std::size_t misses = 0;
  while (pairs.size() < options.pairs && misses < kMaxMissesInARow) {
    CorpusPair pair = random_pair(picker);
    // One German sentence per English one and vice versa: the first construction to make either wins.
    if (!acceptable_length(pair) || seen_english.count(pair.english) || seen_german.count(pair.other)) {
      ++misses;
      continue;
    }
    misses = 0;
    seen_english.insert(pair.english);
    seen_german.insert(pair.other);
    pairs.push_back(std::move(pair));
  }
  return pairs;
}

Corpus demo_corpus(const DemoCorpusOptions& options) {
  Corpus corpus;
  corpus.path = "demo-deu.txt";
  corpus.english = {"en", "English"};
  corpus.other = {"de", "German"};
  corpus.pairs = generate_demo_corpus(options);
  corpus.stats.lines = corpus.pairs.size();
  for (const auto& pair : corpus.pairs) corpus.stats.bytes += pair.english.size() + pair.other.size() + 2;
  return corpus;
}

std::string to_anki_text(const std::vector<CorpusPair>& pairs) {
  std::string text;
  for (const auto& pair : pairs) {
    text += pair.english;
    text += '\t';
    text += pair.other;
    text += '\n';
  }
  return text;
}

}  // namespace ts
