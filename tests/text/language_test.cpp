// SPDX-License-Identifier: GPL-3.0-or-later
// Tests for detect_language (ts/text/language.h) and its use by the corpus reader.
#include "ts/text/language.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "temp_dir.h"
#include "ts/text/corpus.h"
#include "ts/text/demo_corpus.h"

namespace ts {
namespace {

// Everyday sentences written for these tests (not taken from any corpus).
const std::vector<std::string> kGerman = {
    "Ich habe heute keine Zeit.",
    "Wo ist der Bahnhof?",
    "Das Wetter ist schön.",
    "Wir gehen morgen ins Kino.",
    "Er kauft sich ein neues Fahrrad.",
    "Sie trinkt gern Tee mit Zitrone.",
    "Kannst du mir bitte helfen?",
    "Mein Bruder wohnt in Hamburg.",
    "Die Kinder spielen im Garten.",
    "Ich verstehe die Frage nicht.",
    "Das Buch liegt auf dem Tisch.",
    "Wir müssen jetzt los.",
};
const std::vector<std::string> kFrench = {
    "Je ne sais pas où il est.",    "Nous allons au marché demain.", "Elle a acheté une robe rouge.",
    "Il fait très froid ce matin.", "Tu veux du café ou du thé ?",   "Les enfants jouent dans le jardin.",
    "C'est une bonne idée.",        "Mon frère habite à Lyon.",      "J'ai oublié mes clés.",
    "Vous êtes vraiment gentils.",  "Le train part à huit heures.",  "Qu'est-ce que tu fais ce soir ?",
};
const std::vector<std::string> kSpanish = {
    "No sé dónde está mi teléfono.",
    "Vamos a la playa mañana.",
    "Mi hermana tiene dos gatos.",
    "¿Cuánto cuesta este libro?",
    "Hace mucho calor hoy.",
    "Los niños están en el parque.",
    "Quiero aprender a cocinar.",
    "El tren llega a las ocho.",
    "Ella trabaja en un hospital.",
    "Me gusta mucho esta canción.",
    "¿Por qué no vienes con nosotros?",
    "Hay una farmacia cerca de aquí.",
};
const std::vector<std::string> kItalian = {
    "Non so dove sono le chiavi.",    "Domani andiamo al mare.",    "Mia sorella ha due gatti.",
    "Quanto costa questo libro?",     "Oggi fa molto caldo.",       "I bambini giocano nel giardino.",
    "Vorrei imparare a cucinare.",    "Il treno arriva alle otto.", "Lei lavora in un ospedale.",
    "Questa canzone mi piace molto.", "Perché non vieni con noi?",  "C'è una farmacia qui vicino.",
};
const std::vector<std::string> kDutch = {
    "Ik weet niet waar mijn sleutels zijn.",
    "Morgen gaan we naar het strand.",
    "Mijn zus heeft twee katten.",
    "Hoeveel kost dit boek?",
    "Het is vandaag erg warm.",
    "De kinderen spelen in de tuin.",
    "Ik wil graag leren koken.",
    "De trein komt om acht uur aan.",
    "Zij werkt in een ziekenhuis.",
    "Dit liedje vind ik heel mooi.",
    "Waarom kom je niet mee?",
    "Er is een apotheek hier in de buurt.",
};
const std::vector<std::string> kPortuguese = {
    "Não sei onde estão as minhas chaves.",
    "Amanhã vamos à praia.",
    "A minha irmã tem dois gatos.",
    "Quanto custa este livro?",
    "Hoje está muito calor.",
    "As crianças brincam no jardim.",
    "Eu quero aprender a cozinhar.",
    "O comboio chega às oito.",
    "Ela trabalha num hospital.",
    "Gosto muito desta canção.",
    "Por que você não vem conosco?",
    "Há uma farmácia perto daqui.",
};
const std::vector<std::string> kChinese = {
    "我今天很忙。",         "你想喝茶还是咖啡？", "他们明天去北京。", "这本书很有意思。",
    "我的妹妹在医院工作。", "外面下雨了。",       "你会说中文吗？",   "我们一起吃饭吧。",
    "火车八点到。",         "这个问题很难回答。", "他每天早上跑步。", "请把门关上。",
};
const std::vector<std::string> kJapanese = {
    "今日はとても忙しいです。",   "お茶とコーヒー、どちらがいいですか。",
    "彼らは明日東京へ行きます。", "この本はとても面白い。",
    "妹は病院で働いています。",   "外は雨が降っています。",
    "日本語を話せますか。",       "一緒にご飯を食べましょう。",
    "電車は八時に着きます。",     "この質問は答えにくいです。",
    "彼は毎朝走ります。",         "ドアを閉めてください。",
};
const std::vector<std::string> kRussian = {
    "Я сегодня очень занят.",          "Ты хочешь чай или кофе?",         "Завтра мы едем в Москву.",
    "Эта книга очень интересная.",     "Моя сестра работает в больнице.", "На улице идёт дождь.",
    "Ты говоришь по-русски?",          "Давай поужинаем вместе.",         "Поезд приходит в восемь.",
    "На этот вопрос трудно ответить.", "Он бегает каждое утро.",          "Закрой, пожалуйста, дверь.",
};
const std::vector<std::string> kUkrainian = {
    "Я сьогодні дуже зайнятий.",       "Ти хочеш чай чи каву?",        "Завтра ми їдемо до Києва.",
    "Ця книжка дуже цікава.",          "Моя сестра працює в лікарні.", "На вулиці йде дощ.",
    "Ти розмовляєш українською?",      "Давай повечеряємо разом.",     "Потяг прибуває о восьмій.",
    "На це питання важко відповісти.", "Він бігає щоранку.",           "Зачини, будь ласка, двері.",
};
const std::vector<std::string> kEnglish = {
    "I don't know where my keys are.", "We are going to the beach tomorrow.",
    "My sister has two cats.",         "How much is this book?",
    "It is very hot today.",           "The children are playing in the garden.",
    "I want to learn how to cook.",    "The train arrives at eight.",
    "She works in a hospital.",        "I really like this song.",
    "Why don't you come with us?",     "There is a pharmacy near here.",
};
const std::vector<std::string> kSwedish = {
    "Jag vet inte var mina nycklar är.",   "I morgon åker vi till stranden.", "Min syster har två katter.",
    "Hur mycket kostar den här boken?",    "Det är väldigt varmt i dag.",     "Barnen leker i trädgården.",
    "Jag vill lära mig att laga mat.",     "Tåget kommer klockan åtta.",      "Hon arbetar på ett sjukhus.",
    "Jag tycker mycket om den här låten.", "Varför följer du inte med oss?",  "Det finns ett apotek här i närheten.",
};
const std::vector<std::string> kTurkish = {
    "Anahtarlarımın nerede olduğunu bilmiyorum.",
    "Yarın denize gidiyoruz.",
    "Kız kardeşimin iki kedisi var.",
    "Bu kitap ne kadar?",
    "Bugün hava çok sıcak.",
    "Çocuklar bahçede oynuyor.",
    "Yemek yapmayı öğrenmek istiyorum.",
    "Tren saat sekizde geliyor.",
    "O bir hastanede çalışıyor.",
    "Bu şarkıyı çok seviyorum.",
    "Neden bizimle gelmiyorsun?",
    "Yakında bir eczane var.",
};
const std::vector<std::string> kPolish = {
    "Nie wiem, gdzie są moje klucze.", "Jutro jedziemy nad morze.",    "Moja siostra ma dwa koty.",
    "Ile kosztuje ta książka?",        "Dzisiaj jest bardzo gorąco.",  "Dzieci bawią się w ogrodzie.",
    "Chcę nauczyć się gotować.",       "Pociąg przyjeżdża o ósmej.",   "Ona pracuje w szpitalu.",
    "Bardzo lubię tę piosenkę.",       "Dlaczego nie idziesz z nami?", "Niedaleko jest apteka.",
};
const std::vector<std::string> kKorean = {
    "오늘은 너무 바빠요.",      "차와 커피 중에 뭐가 좋아요?",
    "그들은 내일 서울에 가요.", "이 책은 정말 재미있어요.",
    "밖에 비가 와요.",          "같이 밥 먹어요.",
};
const std::vector<std::string> kGreek = {
    "Σήμερα είμαι πολύ απασχολημένος.",
    "Θέλεις τσάι ή καφέ;",
    "Αύριο πάμε στη θάλασσα.",
    "Αυτό το βιβλίο είναι ενδιαφέρον.",
};
const std::vector<std::string> kArabic = {
    "أنا مشغول جدا اليوم.",
    "هل تريد شايا أم قهوة؟",
    "سنذهب إلى البحر غدا.",
    "هذا الكتاب ممتع جدا.",
};

std::vector<std::string_view> views(const std::vector<std::string>& sentences) {
  return {sentences.begin(), sentences.end()};
}

DetectedLanguage detect(const std::vector<std::string>& sentences) { return detect_language(views(sentences)); }

// An English<TAB>other corpus text, one pair per sentence.
std::string corpus_text(const std::vector<std::string>& other) {
  std::string text;
  for (std::size_t i = 0; i < other.size(); ++i) {
    text += "Sentence " + std::to_string(i + 1) + ".\t" + other[i] + "\n";
  }
  return text;
}

struct Case {
  const std::vector<std::string>* sentences;
  const char* code;
  const char* name;
  const char* script;
};

TEST(DetectLanguage, LatinScriptLanguagesByTheirWords) {
  const Case cases[] = {
      {&kGerman, "de", "German", "Latin"},   {&kFrench, "fr", "French", "Latin"},
      {&kSpanish, "es", "Spanish", "Latin"}, {&kItalian, "it", "Italian", "Latin"},
      {&kDutch, "nl", "Dutch", "Latin"},     {&kPortuguese, "pt", "Portuguese", "Latin"},
      {&kEnglish, "en", "English", "Latin"}, {&kSwedish, "sv", "Swedish", "Latin"},
      {&kTurkish, "tr", "Turkish", "Latin"}, {&kPolish, "pl", "Polish", "Latin"},
  };
  for (const Case& c : cases) {
    const DetectedLanguage detected = detect(*c.sentences);
    EXPECT_EQ(detected.language.code, c.code) << c.name << " (confidence " << detected.confidence << ")";
    EXPECT_EQ(detected.language.name, c.name);
    EXPECT_EQ(detected.script, c.script) << c.name;
    EXPECT_GE(detected.confidence, kMinLanguageConfidence) << c.name;
    EXPECT_LE(detected.confidence, 1.0) << c.name;
  }
}

TEST(DetectLanguage, OtherScriptsByTheirLetters) {
  const Case cases[] = {
      {&kChinese, "zh", "Chinese", "Han"},      {&kJapanese, "ja", "Japanese", "Han+Kana"},
      {&kRussian, "ru", "Russian", "Cyrillic"}, {&kUkrainian, "uk", "Ukrainian", "Cyrillic"},
      {&kKorean, "ko", "Korean", "Hangul"},     {&kGreek, "el", "Greek", "Greek"},
      {&kArabic, "ar", "Arabic", "Arabic"},
  };
  for (const Case& c : cases) {
    const DetectedLanguage detected = detect(*c.sentences);
    EXPECT_EQ(detected.language.code, c.code) << c.name << " (confidence " << detected.confidence << ")";
    EXPECT_EQ(detected.language.name, c.name);
    EXPECT_EQ(detected.script, c.script) << c.name;
    EXPECT_DOUBLE_EQ(detected.confidence, 1.0) << c.name;
  }
}

TEST(DetectLanguage, JapaneseNeedsKanaNotEveryKanji) {
  // Chinese with the odd all-kanji Japanese-looking line is still Chinese...
  std::vector<std::string> chinese = kChinese;
  chinese.push_back("東京大学");
  EXPECT_EQ(detect(chinese).language.code, "zh");
  // ...and a Japanese sample with a few kanji-only lines is still Japanese.
  std::vector<std::string> japanese = kJapanese;
  japanese.insert(japanese.end(), {"東京大学", "日本語", "大丈夫"});
  EXPECT_EQ(detect(japanese).language.code, "ja");
  // Chinese writes foreign names with the katakana middle dot: that is no kana.
  std::vector<std::string> names = kChinese;
  names.push_back("汤姆・克鲁斯是演员。");
  EXPECT_EQ(detect(names).language.code, "zh");
}

TEST(DetectLanguage, ToleratesNamesAndNoiseInTheSample) {
  std::vector<std::string> german = kGerman;
  german.insert(german.end(), {"Tom!", "OK.", "42", "Mary?", "..."});
  const DetectedLanguage detected = detect(german);
  EXPECT_EQ(detected.language.code, "de");
  EXPECT_GE(detected.confidence, 0.7);
  std::vector<std::string> japanese = kJapanese;
  japanese.insert(japanese.end(), {"トムはMaryが好きです。", "OK。"});
  EXPECT_EQ(detect(japanese).language.code, "ja");
}

TEST(DetectLanguage, GarbageIsOther) {
  const std::vector<std::string> garbage = {"xq zvk prt", "bnm wq",   "12345", "!!! ???", "kkk jjj hhh",
                                            "zzz",        "qwrt plk", "---",   "3.14159", "#$%&"};
  const DetectedLanguage detected = detect(garbage);
  EXPECT_EQ(detected.language.code, "");
  EXPECT_EQ(detected.language.name, "Other");
  EXPECT_EQ(detected.script, "Latin");
  EXPECT_LT(detected.confidence, kMinLanguageConfidence);

  const DetectedLanguage nothing = detect({"123", "...", "😀😀", "?"});
  EXPECT_EQ(nothing.language.name, "Other");
  EXPECT_EQ(nothing.script, "");
  EXPECT_EQ(nothing.confidence, 0);
  EXPECT_EQ(detect({}).language.name, "Other");
}

TEST(DetectLanguage, AMixOfLanguagesIsOther) {
  std::vector<std::string> mixed;
  for (std::size_t i = 0; i < 4; ++i) {
    mixed.insert(mixed.end(), {kGerman[i], kFrench[i], kChinese[i]});
  }
  const DetectedLanguage detected = detect(mixed);
  EXPECT_EQ(detected.language.name, "Other");
  EXPECT_EQ(detected.language.code, "");
  EXPECT_LT(detected.confidence, kMinLanguageConfidence);
}

TEST(DetectLanguage, TooFewSentencesIsOther) {
  EXPECT_EQ(detect({"Ich habe heute keine Zeit.", "Wo ist der Bahnhof?"}).language.name, "Other");
  EXPECT_EQ(detect({"我今天很忙。", "外面下雨了。"}).language.name, "Other");
  EXPECT_EQ(detect({kGerman[0], kGerman[1], kGerman[2]}).language.code, "de");
}

TEST(DetectLanguage, ReadsASampleSpreadOverTheWholeInput) {
  // 3,000 sentences without letters, then German: the first 2,000 alone would say nothing.
  std::vector<std::string> sentences(3000, "1, 2, 3.");
  for (int i = 0; i < 300; ++i) sentences.insert(sentences.end(), kGerman.begin(), kGerman.end());
  EXPECT_EQ(detect(sentences).language.code, "de");
}

TEST(DetectLanguage, DecomposedAccentsAndUpperCase) {
  // Capitals, and "schön" / "müssen" written with combining diaereses (NFD).
  const std::vector<std::string> german = {"ICH HABE HEUTE KEINE ZEIT.", "WO IST DER BAHNHOF?",
                                           "Das Wetter ist scho\xCC\x88n.", "Wir mu\xCC\x88ssen jetzt los.",
                                           "DIE KINDER SPIELEN IM GARTEN."};
  EXPECT_EQ(detect(german).language.code, "de");
}

TEST(DetectLanguage, InvalidUtf8DoesNoHarm) {
  std::vector<std::string> german = kGerman;
  german.push_back("Gr\xFC\xDF Gott \xFF\xFE");
  EXPECT_EQ(detect(german).language.code, "de");
}

TEST(KnownLanguage, LooksUpTheCorpusTable) {
  EXPECT_EQ(known_language("de").name, "German");
  EXPECT_EQ(known_language("deu").code, "de");
  EXPECT_EQ(known_language("Chinese").code, "zh");
  EXPECT_EQ(known_language("ZH").name, "Chinese");
  EXPECT_EQ(known_language("en").name, "English");
  EXPECT_EQ(known_language("xx").name, "Other");
  EXPECT_EQ(known_language("xx").code, "");
}

TEST(CorpusLanguage, DetectedWhenTheNameSaysNothing) {
  const Corpus corpus = parse_corpus(corpus_text(kGerman), "pairs.tsv");
  EXPECT_EQ(corpus.other.code, "de");
  EXPECT_EQ(corpus.other.name, "German");
  EXPECT_TRUE(corpus.language_from_text);
  const Direction direction = parse_direction("de-en", corpus);
  EXPECT_FALSE(direction.english_is_source);
  EXPECT_EQ(direction.str(), "de-en");
  EXPECT_EQ(parse_direction("en-German", corpus).str(), "en-de");
  EXPECT_EQ(parse_direction("pairs-en", corpus).str(), "de-en");  // the stem still works
  EXPECT_EQ(describe(corpus), "pairs.tsv: 12 pairs (English/German, language detected from the text)");
}

TEST(CorpusLanguage, DetectedForOtherScriptsAndFromFiles) {
  EXPECT_EQ(parse_corpus(corpus_text(kChinese), "data.txt").other.code, "zh");
  EXPECT_EQ(parse_corpus(corpus_text(kJapanese), "<memory>").other.code, "ja");
  const test::TempDir dir;
  const Corpus corpus = read_corpus(dir.write("my corpus.tsv", corpus_text(kRussian)));
  EXPECT_EQ(corpus.other.code, "ru");
  EXPECT_TRUE(corpus.language_from_text);
  EXPECT_EQ(parse_direction("en-ru", corpus).tgt_code, "ru");
}

TEST(CorpusLanguage, TheFileNameWinsWhenItNamesALanguage) {
  // deu.txt whose text looks French is still German: the name is what the user chose.
  const Corpus corpus = parse_corpus(corpus_text(kFrench), "deu.txt");
  EXPECT_EQ(corpus.other.code, "de");
  EXPECT_EQ(corpus.other.name, "German");
  EXPECT_FALSE(corpus.language_from_text);
  EXPECT_EQ(describe(corpus), "deu.txt: 12 pairs (English/German)");
  EXPECT_FALSE(parse_direction("de-en", corpus).english_is_source);
}

TEST(CorpusLanguage, UnconvincingTextKeepsTheStem) {
  const Corpus garbage = parse_corpus("a\txq zvk\nb\tkkk jjj\nc\t123\nd\tqwrt\n", "my-data.txt");
  EXPECT_EQ(garbage.other.code, "my-data");
  EXPECT_EQ(garbage.other.name, "Other");
  EXPECT_FALSE(garbage.language_from_text);
  EXPECT_EQ(describe(garbage), "my-data.txt: 4 pairs (English/Other)");
  EXPECT_EQ(parse_direction("my-data-en", garbage).src_code, "my-data");
  // English on both sides (a paraphrase corpus): "en" twice would leave no direction, so no.
  const Corpus english = parse_corpus(corpus_text(kEnglish), "pairs.tsv");
  EXPECT_EQ(english.other.code, "pairs");
  EXPECT_FALSE(english.language_from_text);
}

TEST(CorpusLanguage, TheDemoCorpusTextIsGerman) {
  DemoCorpusOptions options;
  options.pairs = 500;
  const Corpus corpus = parse_corpus(to_anki_text(generate_demo_corpus(options)), "demo.txt");
  EXPECT_EQ(corpus.other.code, "de");
  EXPECT_TRUE(corpus.language_from_text);
  EXPECT_EQ(demo_corpus(options).other.code, "de");  // named demo-deu.txt: German by its name
}

}  // namespace
}  // namespace ts
