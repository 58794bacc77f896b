// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/text/corpus.h"

#include <gtest/gtest.h>

#include "temp_dir.h"
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

namespace ts {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
using test::TempDir;

std::string error_of(const std::string& path) {
  try {
    read_corpus(path);
  } catch (const CorpusError& e) {
    return e.what();
  }
  return "no error";
}

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

TEST(Corpus, ParsesTabSeparatedPairs) {
  const Corpus corpus = parse_corpus("Hi.\tHallo!\nRun!\tLauf!\n", "deu.txt");
  ASSERT_EQ(corpus.pairs.size(), 2u);
  EXPECT_EQ(corpus.pairs[0].english, "Hi.");
  EXPECT_EQ(corpus.pairs[0].other, "Hallo!");
  EXPECT_EQ(corpus.pairs[1].english, "Run!");
  EXPECT_EQ(corpus.pairs[1].other, "Lauf!");
  EXPECT_EQ(corpus.stats.lines, 2u);
  EXPECT_EQ(corpus.stats.skipped, 0u);
  EXPECT_EQ(corpus.stats.bytes, 22u);
  EXPECT_FALSE(corpus.stats.had_bom);
  EXPECT_FALSE(corpus.stats.crlf);
  EXPECT_EQ(corpus.other.code, "de");
  EXPECT_EQ(corpus.path, "deu.txt");
}

TEST(Corpus, StripsUtf8Bom) {
  const Corpus corpus = parse_corpus("\xEF\xBB\xBFHi.\t\xE5\x97\xA8\xE3\x80\x82\n", "cmn.txt");
  ASSERT_EQ(corpus.pairs.size(), 1u);
  EXPECT_TRUE(corpus.stats.had_bom);
  EXPECT_EQ(corpus.pairs[0].english, "Hi.");
  EXPECT_EQ(corpus.pairs[0].other, "嗨。");
}

TEST(Corpus, HandlesCrlfLineEndings) {
  const Corpus corpus = parse_corpus("Hi.\tHallo!\r\nRun!\tLauf!\r\n", "deu.txt");
  ASSERT_EQ(corpus.pairs.size(), 2u);
  EXPECT_TRUE(corpus.stats.crlf);
  EXPECT_EQ(corpus.pairs[0].other, "Hallo!");
  EXPECT_EQ(corpus.pairs[1].other, "Lauf!");
}

TEST(Corpus, IgnoresAttributionAndFurtherColumns) {
  const Corpus corpus = parse_corpus("Hi.\tHallo!\tCC-BY 2.0 (France) #538123\nRun!\tLauf!\tx\ty\n", "deu.txt");
  ASSERT_EQ(corpus.pairs.size(), 2u);
  EXPECT_EQ(corpus.pairs[0].other, "Hallo!");
  EXPECT_EQ(corpus.pairs[1].other, "Lauf!");
  EXPECT_EQ(corpus.stats.skipped, 0u);
}

TEST(Corpus, ReadsFinalLineWithoutNewline) {
  const Corpus corpus = parse_corpus("Hi.\tHallo!\r\nRun!\tLauf!", "deu.txt");
  ASSERT_EQ(corpus.pairs.size(), 2u);
  EXPECT_EQ(corpus.pairs[1].english, "Run!");
  EXPECT_EQ(corpus.pairs[1].other, "Lauf!");
  EXPECT_EQ(corpus.stats.lines, 2u);
}

TEST(Corpus, TrimsSurroundingWhitespaceOfEachSide) {
  // U+3000 (ideographic space) and U+00A0 (no-break space) count as whitespace too.
  const Corpus corpus = parse_corpus("  Hi. \t\xE3\x80\x80Hallo!\xC2\xA0 \tattr\n", "deu.txt");
  ASSERT_EQ(corpus.pairs.size(), 1u);
  EXPECT_EQ(corpus.pairs[0].english, "Hi.");
  EXPECT_EQ(corpus.pairs[0].other, "Hallo!");
}

TEST(Corpus, SkipsBlankLinesSilently) {
  const Corpus corpus = parse_corpus("\nHi.\tHallo!\n   \n\r\nRun!\tLauf!\n\n", "deu.txt");
  EXPECT_EQ(corpus.pairs.size(), 2u);
  EXPECT_EQ(corpus.stats.lines, 6u);
  EXPECT_EQ(corpus.stats.blank_lines, 4u);
  EXPECT_EQ(corpus.stats.skipped, 0u);
  EXPECT_TRUE(corpus.stats.first_problems.empty());
}

TEST(Corpus, ReportsMalformedLinesWithLineNumbers) {
  CorpusReadOptions options;
  options.max_line_chars = 30;
  const std::string content =
      "Hi.\tHallo!\n"              // 1
      "no tab here\n"              // 2
      "\tLeer\n"                   // 3: empty English side
      "Empty.\t   \n"              // 4: empty German side
      "Bad \xFF byte.\tKaputt.\n"  // 5: invalid UTF-8
      "\n"                         // 6: blank
      + std::string(40, 'x') +
      "\tLang\n"             // 7: too long
      "Run!\tLauf!\n"        // 8
      "Wow!\tPotzdonner!\n"  // 9
      "Fire!\tFeuer!\n"      // 10
      "Help!\tHilfe!\n"      // 11
      "Stop!\tStopp!\n"      // 12
      "Wait!\tWarte!\n";     // 13
  const Corpus corpus = parse_corpus(content, "deu.txt", options);
  EXPECT_EQ(corpus.pairs.size(), 7u);
  EXPECT_EQ(corpus.stats.lines, 13u);
  EXPECT_EQ(corpus.stats.blank_lines, 1u);
  EXPECT_EQ(corpus.stats.skipped, 5u);
  const auto& problems = corpus.stats.first_problems;
  ASSERT_EQ(problems.size(), 5u);
  EXPECT_EQ(problems[0].line, 2u);
  EXPECT_EQ(problems[0].reason, "no tab separator");
  EXPECT_EQ(problems[1].line, 3u);
  EXPECT_EQ(problems[1].reason, "empty English side");
  EXPECT_EQ(problems[2].line, 4u);
  EXPECT_EQ(problems[2].reason, "empty German side");
  EXPECT_EQ(problems[3].line, 5u);
  EXPECT_EQ(problems[3].reason, "invalid UTF-8");
  EXPECT_EQ(problems[4].line, 7u);
  EXPECT_EQ(problems[4].reason, "line longer than 30 characters");
}

TEST(Corpus, KeepsOnlyTheFirstProblems) {
  CorpusReadOptions options;
  options.max_reported = 2;
  const Corpus corpus = parse_corpus("a\nb\nHi.\tHallo!\nc\nd\n", "deu.txt", options);
  EXPECT_EQ(corpus.stats.skipped, 4u);
  ASSERT_EQ(corpus.stats.first_problems.size(), 2u);
  EXPECT_EQ(corpus.stats.first_problems[0].line, 1u);
  EXPECT_EQ(corpus.stats.first_problems[1].line, 2u);
}

TEST(Corpus, MeasuresLineLengthInCodePoints) {
  CorpusReadOptions options;
  options.max_line_chars = 25;
  std::string umlauts;
  for (int i = 0; i < 10; ++i) umlauts += "\xC3\xBC";  // 10 x 'ü': 20 bytes, 10 code points
  const Corpus corpus = parse_corpus("Over.\t" + umlauts + "\n", "deu.txt", options);
  EXPECT_EQ(corpus.pairs.size(), 1u);
  EXPECT_EQ(corpus.stats.skipped, 0u);
}

TEST(Corpus, StopsAfterMaxPairs) {
  CorpusReadOptions options;
  options.max_pairs = 2;
  const Corpus corpus = parse_corpus("a\tA\nb\tB\nc\tC\n", "deu.txt", options);
  ASSERT_EQ(corpus.pairs.size(), 2u);
  EXPECT_EQ(corpus.pairs[1].english, "b");
}

TEST(Corpus, ReadsFileWithBomCrlfAndAttribution) {
  const TempDir dir;
  const std::string path =
      dir.write("cmn.txt", "\xEF\xBB\xBFHi.\t\xE5\x97\xA8\xE3\x80\x82\tCC-BY\r\nRun.\t\xE8\xB7\x91\tCC");
  const Corpus corpus = read_corpus(path);
  ASSERT_EQ(corpus.pairs.size(), 2u);
  EXPECT_TRUE(corpus.stats.had_bom);
  EXPECT_TRUE(corpus.stats.crlf);
  EXPECT_EQ(corpus.pairs[0].other, "嗨。");
  EXPECT_EQ(corpus.pairs[1].english, "Run.");
  EXPECT_EQ(corpus.pairs[1].other, "跑");
  EXPECT_EQ(corpus.other.code, "zh");
  EXPECT_EQ(corpus.path, path);
}

TEST(Corpus, RefusesZipArchive) {
  const TempDir dir;
  const std::string message = error_of(dir.write("deu-eng.zip", "PK\x03\x04\x14\0\0\0rest"s));
  EXPECT_CONTAINS(message, "deu-eng.zip");
  EXPECT_CONTAINS(message, "zip archive");
  EXPECT_CONTAINS(message, "unzip");
}

TEST(Corpus, RefusesGzipFile) {
  const TempDir dir;
  const std::string message = error_of(dir.write("deu.txt.gz", "\x1F\x8B\x08\0\0\0"s));
  EXPECT_CONTAINS(message, "deu.txt.gz");
  EXPECT_CONTAINS(message, "gzip");
}

TEST(Corpus, RefusesPdf) {
  const TempDir dir;
  const std::string message = error_of(dir.write("paper.pdf", "%PDF-1.7\n%\xE2\xE3\xCF\xD3\n"));
  EXPECT_CONTAINS(message, "paper.pdf");
  EXPECT_CONTAINS(message, "PDF");
}

TEST(Corpus, RefusesBinaryFileWithNulByte) {
  const TempDir dir;
  const std::string message = error_of(dir.write("model.bin", "Hi.\tHallo!\n\x7F\0\x01\x02"s));
  EXPECT_CONTAINS(message, "model.bin");
  EXPECT_CONTAINS(message, "binary file");
}

TEST(Corpus, RefusesUtf16Text) {
  const TempDir dir;
  const std::string message = error_of(dir.write("deu.txt", "\xFF\xFEH\0i\0\t\0H\0"s));
  EXPECT_CONTAINS(message, "deu.txt");
  EXPECT_CONTAINS(message, "UTF-16");
}

TEST(Corpus, RefusesMostlyInvalidUtf8) {
  // Latin-1 German: every line with an umlaut is invalid UTF-8.
  const TempDir dir;
  const std::string path = dir.write("deu.txt", "Hi.\tGr\xFC\xDF Gott!\nHelp!\tZu H\xFClf!\nRun!\tLauf!\n");
  const std::string message = error_of(path);
  EXPECT_CONTAINS(message, path);
  EXPECT_CONTAINS(message, "UTF-8");
}

TEST(Corpus, MissingFileNamesPathAndReason) {
  const TempDir dir;
  const std::string path = dir.str() + "/nothing-here.txt";
  const std::string message = error_of(path);
  EXPECT_CONTAINS(message, path);
  EXPECT_CONTAINS(message, std::strerror(ENOENT));
}

TEST(Corpus, DirectoryIsRefused) {
  const TempDir dir;
  const std::string message = error_of(dir.str());
  EXPECT_CONTAINS(message, dir.str());
  EXPECT_CONTAINS(message, "it is a directory");
}

TEST(Corpus, FifoIsRefusedWithoutBlocking) {
  const TempDir dir;
  const std::string path = dir.str() + "/deu.txt";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  // Opening a FIFO for reading would wait for a writer forever.
  const std::string message = error_of(path);
  EXPECT_CONTAINS(message, path);
  EXPECT_CONTAINS(message, "FIFO");
}

TEST(Corpus, EmptyFileIsAnError) {
  const TempDir dir;
  const std::string path = dir.write("deu.txt", "");
  const std::string message = error_of(path);
  EXPECT_CONTAINS(message, path);
  EXPECT_CONTAINS(message, "empty");
}

TEST(Corpus, FileWithOnlyBadLinesNamesTheFirstProblem) {
  const TempDir dir;
  const std::string path = dir.write("deu.txt", "\nHello there\nHi.\t\n");
  const std::string message = error_of(path);
  EXPECT_CONTAINS(message, path);
  EXPECT_CONTAINS(message, "no valid sentence pair");
  EXPECT_CONTAINS(message, "line 2: no tab separator");
}

TEST(Corpus, DescribeSummarisesPairsAndProblems) {
  CorpusReadOptions options;
  options.max_reported = 1;
  const Corpus clean = parse_corpus("Hi.\tHallo!\n", "data/deu.txt");
  EXPECT_EQ(describe(clean), "deu.txt: 1 pairs (English/German)");
  const Corpus messy = parse_corpus("Hi.\tHallo!\nbad\nworse\n", "data/deu.txt", options);
  EXPECT_EQ(describe(messy), "deu.txt: 1 pairs (English/German), 2 skipped (line 2: no tab separator; ...)");
}

TEST(Corpus, ReadsRealGermanCorpus) {
  const std::string path = TS_SHARED_DATA_DIR "/deu.txt";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
  const auto start = std::chrono::steady_clock::now();
  const Corpus corpus = read_corpus(path);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  RecordProperty("read_seconds", std::to_string(elapsed.count()));
  EXPECT_EQ(corpus.pairs.size(), 169813u);
  EXPECT_EQ(corpus.stats.skipped, 0u);
  EXPECT_FALSE(corpus.stats.had_bom);
  EXPECT_EQ(corpus.other.name, "German");
  EXPECT_EQ(corpus.pairs[0].english, "Hi.");
  EXPECT_EQ(corpus.pairs[0].other, "Hallo!");
}

TEST(Corpus, ReadsRealChineseCorpus) {
  const std::string path = TS_SHARED_DATA_DIR "/cmn.txt";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
  const Corpus corpus = read_corpus(path);
  EXPECT_EQ(corpus.pairs.size(), 29155u);
  EXPECT_EQ(corpus.stats.skipped, 0u);
  EXPECT_TRUE(corpus.stats.had_bom);
  EXPECT_EQ(corpus.other.code, "zh");
  ASSERT_FALSE(corpus.pairs.empty());
  EXPECT_EQ(corpus.pairs[0].english, "Hi.");
  for (const CorpusPair& pair : corpus.pairs) ASSERT_FALSE(pair.other.empty());
}

TEST(Language, InfersKnownCodes) {
  EXPECT_EQ(infer_language("deu.txt").code, "de");
  EXPECT_EQ(infer_language("deu.txt").name, "German");
  EXPECT_EQ(infer_language("cmn.txt").code, "zh");
  EXPECT_EQ(infer_language("cmn.txt").name, "Chinese");
  EXPECT_EQ(infer_language("fra.txt").name, "French");
  EXPECT_EQ(infer_language("jpn.txt").code, "ja");
  EXPECT_EQ(infer_language("ell.txt").code, "el");
}

TEST(Language, IgnoresDirectoriesAndCase) {
  EXPECT_EQ(infer_language("/home/me/corpora.v2/deu.txt").code, "de");
  EXPECT_EQ(infer_language("data/SPA.TXT").code, "es");
  EXPECT_EQ(infer_language("deu").code, "de");
}

TEST(Language, FindsCodeInsideCompoundStems) {
  EXPECT_EQ(infer_language("deu-eng.txt").code, "de");
  EXPECT_EQ(infer_language("eng-fra.tsv").code, "fr");
  EXPECT_EQ(infer_language("demo-deu.txt").code, "de");
  EXPECT_EQ(infer_language("cmn_small.txt").code, "zh");
  EXPECT_EQ(infer_language("german.txt").code, "de");
}

TEST(Language, FallsBackToTheStem) {
  const Language language = infer_language("/tmp/MyData.txt");
  EXPECT_EQ(language.code, "mydata");
  EXPECT_EQ(language.name, "Other");
  EXPECT_EQ(infer_language("eng.txt").name, "Other");  // English alone names no other language
}

Corpus german_corpus() { return parse_corpus("Hi.\tHallo!\nRun!\tLauf!\n", "data/deu.txt"); }

TEST(Direction, ParsesBothDirections) {
  const Corpus corpus = german_corpus();
  const Direction en_de = parse_direction("en-de", corpus);
  EXPECT_TRUE(en_de.english_is_source);
  EXPECT_EQ(en_de.src_code, "en");
  EXPECT_EQ(en_de.tgt_code, "de");
  EXPECT_EQ(en_de.str(), "en-de");
  const Direction de_en = parse_direction("de-en", corpus);
  EXPECT_FALSE(de_en.english_is_source);
  EXPECT_EQ(de_en.src_code, "de");
  EXPECT_EQ(de_en.tgt_code, "en");
}

TEST(Direction, AcceptsStemCodesAndLanguageNames) {
  const Corpus corpus = german_corpus();
  EXPECT_FALSE(parse_direction("deu-en", corpus).english_is_source);
  EXPECT_TRUE(parse_direction("en-deu", corpus).english_is_source);
  EXPECT_TRUE(parse_direction("eng-deu", corpus).english_is_source);
  EXPECT_FALSE(parse_direction("German-English", corpus).english_is_source);
  EXPECT_TRUE(parse_direction(" EN-DE ", corpus).english_is_source);
  EXPECT_EQ(parse_direction("deu-en", corpus).str(), "de-en");
}

TEST(Direction, RejectsOtherLanguagesNamingTheChoices) {
  const Corpus corpus = german_corpus();
  try {
    parse_direction("fr-en", corpus);
    FAIL() << "fr-en accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "direction \"fr-en\" does not match corpus deu.txt (English/German): "
                 "use en-de or de-en");
  }
}

TEST(Direction, RejectsMalformedText) {
  const Corpus corpus = german_corpus();
  for (const char* text : {"", "en", "de", "en-en", "de-de", "en-de-en", "en_de", "-"}) {
    EXPECT_THROW(parse_direction(text, corpus), std::invalid_argument) << text;
  }
}

TEST(Direction, WorksForUnknownLanguages) {
  const Corpus corpus = parse_corpus("Hi.\tHoi!\n", "my-data.txt");
  EXPECT_EQ(corpus.other.code, "my-data");
  EXPECT_EQ(parse_direction("en-my-data", corpus).tgt_code, "my-data");
  EXPECT_EQ(parse_direction("my-data-en", corpus).src_code, "my-data");
}

TEST(Direction, OrientedPairsFollowTheDirection) {
  const Corpus corpus = german_corpus();
  const auto forward = oriented_pairs(corpus, parse_direction("en-de", corpus));
  ASSERT_EQ(forward.size(), 2u);
  EXPECT_EQ(forward[0].src, "Hi.");
  EXPECT_EQ(forward[0].tgt, "Hallo!");
  const auto backward = oriented_pairs(corpus, parse_direction("de-en", corpus));
  ASSERT_EQ(backward.size(), 2u);
  EXPECT_EQ(backward[1].src, "Lauf!");
  EXPECT_EQ(backward[1].tgt, "Run!");
}

}  // namespace
}  // namespace ts
