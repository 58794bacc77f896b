// SPDX-License-Identifier: GPL-3.0-or-later
// Tests for the built-in demo corpus: determinism, size and distinctness, and German grammar
// checked by scanning the generated pairs (articles by case, verb positions, agreement).
#include "ts/text/demo_corpus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ts/text/utf8.h"

namespace ts {
namespace {

const std::vector<CorpusPair>& default_corpus() {
  static const std::vector<CorpusPair> pairs = generate_demo_corpus();
  return pairs;
}

// Words of a sentence with the punctuation (.,?!) stripped.
std::vector<std::string> words(const std::string& sentence) {
  std::vector<std::string> out;
  std::istringstream in(sentence);
  std::string word;
  while (in >> word) {
    while (!word.empty() && std::string(".,?!").find(word.back()) != std::string::npos) word.pop_back();
    out.push_back(word);
  }
  return out;
}

bool contains_sequence(const std::vector<std::string>& haystack, const std::vector<std::string>& needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) != haystack.end();
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower_first(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

bool starts_upper(const std::string& s) {
  const bool umlaut = starts_with(s, "Ä") || starts_with(s, "Ö") || starts_with(s, "Ü");
  return umlaut || (!s.empty() && std::isupper(static_cast<unsigned char>(s[0])));
}

// German finite verb forms of the grammar (ich, du, er/sie, wir/sie), written out independently
// of the generator; the plural form doubles as the infinitive.
std::set<std::string> finite_forms() {
  const char* const kForms =
      "sehe siehst sieht sehen mag magst mögen habe hast hat haben kaufe kaufst kauft kaufen "
      "lese liest lesen esse isst essen finde findest findet finden besuche besuchst besucht besuchen "
      "höre hörst hört hören trage trägst trägt tragen helfe hilfst hilft helfen folge folgst folgt folgen "
      "danke dankst dankt danken gebe gibst gibt geben zeige zeigst zeigt zeigen bringe bringst bringt bringen "
      "schlafe schläfst schläft schlafen lache lachst lacht lachen arbeite arbeitest arbeitet arbeiten "
      "spiele spielst spielt spielen weiß weißt wissen denke denkst denkt denken sage sagst sagt sagen "
      "will willst wollen kann kannst können muss musst müssen";
  const auto list = words(kForms);
  return {list.begin(), list.end()};
}

// A few nouns and adjectives of the grammar, with what German must make of them.
struct TestNoun {
  std::string en;
  std::string de;
  char gender;  // 'm', 'f', 'n'
};

const std::vector<TestNoun> kTestNouns = {{"dog", "Hund", 'm'},     {"man", "Mann", 'm'},    {"teacher", "Lehrer", 'm'},
                                          {"ball", "Ball", 'm'},    {"apple", "Apfel", 'm'}, {"key", "Schlüssel", 'm'},
                                          {"cat", "Katze", 'f'},    {"woman", "Frau", 'f'},  {"cup", "Tasse", 'f'},
                                          {"flower", "Blume", 'f'}, {"child", "Kind", 'n'},  {"horse", "Pferd", 'n'},
                                          {"book", "Buch", 'n'},    {"egg", "Ei", 'n'}};

struct TestAdjective {
  std::string en;
  std::string de_stem;
};

const std::vector<TestAdjective> kTestAdjectives = {
    {"big", "groß"}, {"small", "klein"}, {"old", "alt"}, {"beautiful", "schön"}};

// An English singular noun phrase found in a sentence: determiner, optional adjective, noun.
struct TestPhrase {
  std::string det;  // "the", "a", "my", "your"
  const TestAdjective* adjective = nullptr;
  const TestNoun* noun = nullptr;
};

// Parses a singular noun phrase of the test vocabulary at en[i], if there is one.
std::optional<TestPhrase> parse_phrase(const std::vector<std::string>& en, std::size_t i) {
  if (i + 1 >= en.size()) return std::nullopt;
  TestPhrase phrase;
  phrase.det = lower_first(en[i]);
  if (phrase.det == "an") phrase.det = "a";
  if (phrase.det != "the" && phrase.det != "a" && phrase.det != "my" && phrase.det != "your") return std::nullopt;
  std::size_t j = i + 1;
  for (const auto& adjective : kTestAdjectives)
    if (en[j] == adjective.en) phrase.adjective = &adjective;
  if (phrase.adjective && ++j >= en.size()) return std::nullopt;
  for (const auto& noun : kTestNouns)
    if (en[j] == noun.en) phrase.noun = &noun;
  if (!phrase.noun) return std::nullopt;
  return phrase;
}

// The German article for a determiner, gender and case ('n', 'a', 'd').
std::string german_article(const std::string& det, char gender, char grammatical_case) {
  if (det == "the") {
    if (grammatical_case == 'n') return gender == 'm' ? "der" : gender == 'f' ? "die" : "das";
    if (grammatical_case == 'a') return gender == 'm' ? "den" : gender == 'f' ? "die" : "das";
    return gender == 'f' ? "der" : "dem";
  }
  std::string ein;
  if (grammatical_case == 'd') {
    ein = gender == 'f' ? "einer" : "einem";
  } else {
    ein = gender == 'f' ? "eine" : (grammatical_case == 'a' && gender == 'm') ? "einen" : "ein";
  }
  if (det == "my") return "m" + ein;
  if (det == "your") return "d" + ein;
  return ein;
}

// Adjective ending after that article: weak after "der/die/das", mixed after "ein/mein/dein".
std::string adjective_ending(const std::string& det, char gender, char grammatical_case) {
  if (grammatical_case == 'd') return "en";
  if (grammatical_case == 'a' && gender == 'm') return "en";
  if (det == "the" || gender == 'f') return "e";
  return gender == 'm' ? "er" : "es";
}

std::vector<std::string> german_phrase(const TestPhrase& phrase, char grammatical_case) {
  const char gender = phrase.noun->gender;
  std::vector<std::string> out = {german_article(phrase.det, gender, grammatical_case)};
  if (phrase.adjective)
    out.push_back(phrase.adjective->de_stem + adjective_ending(phrase.det, gender, grammatical_case));
  out.push_back(phrase.noun->de);
  return out;
}

std::string describe(const CorpusPair& pair) { return pair.english + " / " + pair.other; }

// For every English word in `heads` followed by a test noun phrase, checks that the German holds
// that phrase in `grammatical_case`. Returns how many phrases were checked.
std::size_t check_case_after(const std::set<std::string>& heads, char grammatical_case) {
  std::size_t checked = 0;
  for (const auto& pair : default_corpus()) {
    const auto en = words(pair.english);
    const auto de = words(pair.other);
    for (std::size_t i = 0; i + 1 < en.size(); ++i) {
      if (!heads.count(en[i])) continue;
      const auto phrase = parse_phrase(en, i + 1);
      if (!phrase) continue;
      EXPECT_TRUE(contains_sequence(de, german_phrase(*phrase, grammatical_case))) << describe(pair);
      ++checked;
    }
  }
  return checked;
}

TEST(DemoCorpus, IsDeterministicForASeed) {
  DemoCorpusOptions options;
  options.pairs = 500;
  options.seed = 42;
  const auto first = generate_demo_corpus(options);
  const auto second = generate_demo_corpus(options);
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].english, second[i].english);
    EXPECT_EQ(first[i].other, second[i].other);
  }
  options.seed = 43;
  const auto other = generate_demo_corpus(options);
  ASSERT_EQ(other.size(), first.size());
  std::size_t same = 0;
  for (std::size_t i = 0; i < first.size(); ++i) same += first[i].english == other[i].english;
  EXPECT_LT(same, first.size() / 10);
}

TEST(DemoCorpus, ReachesTheRequestedCountWithDistinctSides) {
  const auto& pairs = default_corpus();
  ASSERT_EQ(pairs.size(), DemoCorpusOptions{}.pairs);
  std::set<std::string> english;
  std::set<std::string> german;
  for (const auto& pair : pairs) {
    EXPECT_TRUE(english.insert(pair.english).second) << "duplicate English: " << pair.english;
    EXPECT_TRUE(german.insert(pair.other).second) << "duplicate German: " << pair.other;
  }
  for (std::size_t n : {0, 1, 37}) {
    DemoCorpusOptions options;
    options.pairs = n;
    EXPECT_EQ(generate_demo_corpus(options).size(), n);
  }
}

TEST(DemoCorpus, EveryLineIsCapitalisedAndPunctuated) {
  for (const auto& pair : default_corpus()) {
    for (const std::string* side : {&pair.english, &pair.other}) {
      ASSERT_GE(side->size(), 2u);
      EXPECT_TRUE(starts_upper(*side)) << *side;
      EXPECT_NE(std::string(".?!").find(side->back()), std::string::npos) << *side;
      EXPECT_EQ(side->find("  "), std::string::npos) << *side;
      EXPECT_EQ(side->find_first_of("\t\n\r"), std::string::npos) << *side;
      EXPECT_TRUE(is_valid_utf8(*side)) << *side;
    }
    EXPECT_EQ(pair.english.back(), pair.other.back()) << pair.english << " / " << pair.other;
  }
}

TEST(DemoCorpus, SentencesAreShort) {
  std::size_t total = 0;
  std::size_t longest = 0;
  for (const auto& pair : default_corpus()) {
    const std::size_t n = words(pair.english).size();
    EXPECT_GE(n, 2u) << pair.english;
    EXPECT_LE(words(pair.other).size(), 20u) << pair.other;
    longest = std::max(longest, n);
    total += n;
  }
  EXPECT_LE(longest, 20u);
  const double mean = static_cast<double>(total) / static_cast<double>(default_corpus().size());
  EXPECT_GE(mean, 4.0);
  EXPECT_LE(mean, 12.0);
}

TEST(DemoCorpus, SubjectsAreNominativeAtTheStart) {
  std::size_t checked = 0;
  for (const auto& pair : default_corpus()) {
    const auto en = words(pair.english);
    const auto de = words(lower_first(pair.other));
    const auto phrase = parse_phrase(en, 0);  // "The dog sees ..." -> "Der Hund sieht ..."
    if (!phrase) continue;
    const auto expected = german_phrase(*phrase, 'n');
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), de.begin())) << describe(pair);
    ++checked;
  }
  EXPECT_GT(checked, 100u);
}

TEST(DemoCorpus, AccusativeObjectsUseDenAndEinen) {
  // "sees the dog" -> "den Hund", "likes a big dog" -> "einen großen Hund", "has my cup" -> "meine Tasse"
  const std::set<std::string> verbs = {"see",   "sees",   "like", "likes", "find", "finds", "hear",
                                       "hears", "buy",    "buys", "have",  "has",  "carry", "carries",
                                       "visit", "visits", "read", "reads", "eat",  "eats"};
  EXPECT_GT(check_case_after(verbs, 'a'), 300u);
}

TEST(DemoCorpus, DativeAfterHelpFollowThankAndWith) {
  // "helps the woman" -> "der Frau", "with a small dog" -> "mit einem kleinen Hund",
  // "gives the ball to my child" -> "meinem Kind"
  const std::set<std::string> heads = {"help", "helps", "follow", "follows", "thank", "thanks", "with", "to"};
  EXPECT_GT(check_case_after(heads, 'd'), 200u);
  for (const auto& pair : default_corpus()) {
    if (pair.english.find(" with ") == std::string::npos) continue;
    EXPECT_NE(pair.other.find(" mit "), std::string::npos) << describe(pair);
  }
}

TEST(DemoCorpus, DitransitivePutsTheRecipientBeforeTheThing) {
  // "gives the ball to the child" -> "gibt dem Kind den Ball"
  std::size_t checked = 0;
  for (const auto& pair : default_corpus()) {
    const auto en = words(pair.english);
    const auto de = words(pair.other);
    for (std::size_t i = 0; i < en.size(); ++i) {
      const auto thing = parse_phrase(en, i);
      if (!thing) continue;
      const std::size_t to = i + (thing->adjective ? 3 : 2);
      if (to >= en.size() || en[to] != "to") continue;
      const auto recipient = parse_phrase(en, to + 1);
      if (!recipient) continue;
      auto expected = german_phrase(*recipient, 'd');
      const auto object = german_phrase(*thing, 'a');
      expected.insert(expected.end(), object.begin(), object.end());
      EXPECT_TRUE(contains_sequence(de, expected)) << describe(pair);
      ++checked;
    }
  }
  EXPECT_GT(checked, 20u);
}

TEST(DemoCorpus, VerbsAgreeWithTheirSubjects) {
  std::size_t checked = 0;
  const std::set<std::string> irregular_ich = {"will", "kann", "muss", "mag", "weiß"};
  for (const auto& pair : default_corpus()) {
    const auto en = words(pair.english);
    const auto de = words(pair.other);
    if (en.size() < 2 || de.size() < 2 || pair.english.back() == '?') continue;
    if (en[0] == "I" || en[0] == "You" || en[0] == "We" || en[0] == "They") {
      EXPECT_NE(en[1].back(), 's') << pair.english;  // "I see", not "I sees"
      ++checked;
    } else if (en[0] == "He" || en[0] == "She") {
      EXPECT_TRUE(en[1].back() == 's' || en[1] == "can" || en[1] == "must") << pair.english;
      ++checked;
    }
    if (de[0] == "Ich") {
      EXPECT_TRUE(de[1].back() == 'e' || irregular_ich.count(de[1])) << pair.other;
    } else if (de[0] == "Du") {
      EXPECT_TRUE(ends_with(de[1], "st") || ends_with(de[1], "ßt")) << pair.other;
    } else if (de[0] == "Wir") {
      EXPECT_TRUE(ends_with(de[1], "en")) << pair.other;
    }
  }
  EXPECT_GT(checked, 300u);
}

// True when the clause's last word is a finite verb and no finite verb or infinitive comes
// before the last two words (a modal clause ends "... sehen will").
bool verb_final(const std::vector<std::string>& clause, const std::set<std::string>& finite) {
  if (clause.empty() || !finite.count(clause.back())) return false;
  for (std::size_t i = 0; i + 2 < clause.size(); ++i)
    if (finite.count(clause[i])) return false;
  return true;
}

TEST(DemoCorpus, SubordinateClausesPutTheFiniteVerbLast) {
  const auto finite = finite_forms();
  std::size_t dass_weil = 0;
  std::size_t wenn = 0;
  for (const auto& pair : default_corpus()) {
    const std::string& de = pair.other;
    const auto comma = de.find(", ");
    if (comma == std::string::npos) continue;
    if (de.find(", dass ") != std::string::npos || de.find(", weil ") != std::string::npos) {
      // "Ich weiß, dass der Hund die Katze sieht."
      EXPECT_TRUE(verb_final(words(de.substr(comma + 7)), finite)) << describe(pair);
      ++dass_weil;
    }
    if (starts_with(de, "Wenn ")) {
      // "Wenn die Katze schläft, spielt der Hund."
      EXPECT_TRUE(verb_final(words(de.substr(5, comma - 5)), finite)) << describe(pair);
      EXPECT_TRUE(finite.count(words(de.substr(comma + 2)).front())) << describe(pair);
      ++wenn;
    }
  }
  EXPECT_GT(dass_weil, 1000u);
  EXPECT_GT(wenn, 300u);
}

TEST(DemoCorpus, FrontedAdverbsAndQuestionsPutTheVerbFirst) {
  const auto finite = finite_forms();
  const std::set<std::string> adverbs = {"Heute", "Morgen", "Jetzt", "Manchmal"};
  std::size_t fronted = 0;
  std::size_t questions = 0;
  for (const auto& pair : default_corpus()) {
    const auto de = words(pair.other);
    if (adverbs.count(de[0])) {
      EXPECT_TRUE(finite.count(de[1])) << describe(pair);  // "Heute sieht der Mann die Frau."
      ++fronted;
    }
    if (pair.other.back() == '?') {
      EXPECT_TRUE(starts_with(pair.english, "Do ") || starts_with(pair.english, "Does ")) << pair.english;
      EXPECT_TRUE(finite.count(lower_first(de[0]))) << describe(pair);  // "Sieht der Hund die Katze?"
      ++questions;
    }
  }
  EXPECT_GT(fronted, 400u);
  EXPECT_GT(questions, 300u);
}

TEST(DemoCorpus, ModalsAndNegationGoToTheEnd) {
  std::size_t modals = 0;
  std::size_t negations = 0;
  for (const auto& pair : default_corpus()) {
    if (pair.other.find(',') != std::string::npos) continue;
    const auto de = words(pair.other);
    if (pair.english.find(" wants to ") != std::string::npos) {
      const bool wollen =
          contains_sequence(de, {"will"}) || contains_sequence(de, {"willst"}) || contains_sequence(de, {"wollen"});
      EXPECT_TRUE(wollen) << pair.other;
      EXPECT_TRUE(ends_with(de.back(), "en")) << pair.other;  // "Das Kind will den Hund sehen."
      ++modals;
    }
    const bool negated = pair.english.find(" not ") != std::string::npos;
    EXPECT_EQ(negated, contains_sequence(de, {"nicht"})) << pair.english << " / " << pair.other;
    if (negated) {
      EXPECT_EQ(de.back(), "nicht") << pair.other;  // "Der Hund sieht die Katze nicht."
      ++negations;
    }
  }
  EXPECT_GT(modals, 50u);
  EXPECT_GT(negations, 100u);
}

TEST(DemoCorpus, GermanNounsAreCapitalised) {
  const std::set<std::string> determiners = {"der",    "die",   "das",   "den",    "dem",    "ein",    "eine",
                                             "einen",  "einem", "einer", "mein",   "meine",  "meinen", "meinem",
                                             "meiner", "dein",  "deine", "deinen", "deinem", "deiner"};
  std::size_t checked = 0;
  for (const auto& pair : default_corpus()) {
    const auto de = words(pair.other);
    for (std::size_t i = 0; i + 1 < de.size(); ++i) {
      if (!determiners.count(lower_first(de[i]))) continue;
      std::size_t noun = i + 1;
      if (std::islower(static_cast<unsigned char>(de[noun][0])) && noun + 1 < de.size()) ++noun;  // adjective
      EXPECT_TRUE(starts_upper(de[noun])) << pair.other;
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000u);
}

TEST(DemoCorpus, EnglishUsesAAndAnCorrectly) {
  for (const auto& pair : default_corpus()) {
    const auto en = words(pair.english);
    for (std::size_t i = 0; i + 1 < en.size(); ++i) {
      const bool vowel = std::string("aeiou").find(en[i + 1][0]) != std::string::npos;
      if (en[i] == "a" || en[i] == "A") {
        EXPECT_FALSE(vowel) << pair.english;
      } else if (en[i] == "an" || en[i] == "An") {
        EXPECT_TRUE(vowel) << pair.english;
      }
    }
  }
}

TEST(DemoCorpus, CorpusCarriesNamesAndLanguages) {
  DemoCorpusOptions options;
  options.pairs = 300;
  const Corpus corpus = demo_corpus(options);
  EXPECT_EQ(corpus.path, "demo-deu.txt");
  EXPECT_EQ(corpus.english.code, "en");
  EXPECT_EQ(corpus.english.name, "English");
  EXPECT_EQ(corpus.other.code, "de");
  EXPECT_EQ(corpus.other.name, "German");
  ASSERT_EQ(corpus.pairs.size(), 300u);
  EXPECT_EQ(corpus.stats.lines, 300u);
  EXPECT_EQ(corpus.stats.skipped, 0u);
  const auto direct = generate_demo_corpus(options);
  EXPECT_EQ(corpus.pairs.front().english, direct.front().english);
  EXPECT_EQ(corpus.pairs.back().other, direct.back().other);
}

TEST(DemoCorpus, AnkiTextHasOneTabSeparatedLinePerPair) {
  EXPECT_EQ(to_anki_text({}), "");
  EXPECT_EQ(to_anki_text({{"The dog sleeps.", "Der Hund schläft."}, {"I laugh.", "Ich lache."}}),
            "The dog sleeps.\tDer Hund schläft.\nI laugh.\tIch lache.\n");
  DemoCorpusOptions options;
  options.pairs = 50;
  const auto pairs = generate_demo_corpus(options);
  std::istringstream text(to_anki_text(pairs));
  std::string line;
  std::size_t i = 0;
  while (std::getline(text, line)) {
    ASSERT_LT(i, pairs.size());
    EXPECT_EQ(line, pairs[i].english + "\t" + pairs[i].other);
    ++i;
  }
  EXPECT_EQ(i, pairs.size());
}

}  // namespace
}  // namespace ts
