// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target: the corpus reader (ts/text/corpus.h) on arbitrary bytes.
//
// The first byte picks the options (file name and so the inferred language, line-length limit,
// max_pairs, max_reported, a BOM in front, reading through a real file); the rest is the content.
// Only ts::CorpusError may escape parse_corpus/read_corpus, and std::invalid_argument
// parse_direction (both documented); any other exception, crash or broken invariant is a bug.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "fuzz_util.h"
#include "ts/text/corpus.h"
#include "ts/text/utf8.h"

namespace {

using ts::fuzz::escaped;

constexpr std::string_view kBom = "\xEF\xBB\xBF";

const char* const kNames[] = {"deu.txt", "cmn-eng.tsv", "data/My Corpus.txt", ""};
const char* const kDirections[] = {"en-de", "de-en", "German-English", "en-zh", "eng-x", "-", ""};

struct Outcome {
  bool ok = false;
  ts::Corpus corpus;
  std::string error;
};

Outcome parse(std::string_view content, const std::string& name, const ts::CorpusReadOptions& options) {
  Outcome out;
  try {
    out.corpus = ts::parse_corpus(content, name, options);
    out.ok = true;
  } catch (const ts::CorpusError& e) {
    out.error = e.what();
    TS_FUZZ_CHECK(!out.error.empty(), "CorpusError without a message");
  }
  return out;
}

bool starts_or_ends_with_space(std::string_view s) {
  std::size_t pos = 0;
  if (ts::is_space(ts::next_code_point(s, pos))) return true;
  const auto cps = ts::to_u32(s);
  return ts::is_space(cps.back());
}

// What every successful parse must satisfy.
void check_corpus(const ts::Corpus& corpus, std::string_view content, const ts::CorpusReadOptions& options) {
  const ts::CorpusStats& stats = corpus.stats;
  TS_FUZZ_CHECK(!corpus.pairs.empty(), "a successful parse has pairs");
  if (options.max_pairs != 0) TS_FUZZ_CHECK(corpus.pairs.size() <= options.max_pairs, "max_pairs honoured");
  TS_FUZZ_CHECK(stats.bytes == content.size(), "stats.bytes is the content size");
  TS_FUZZ_CHECK(stats.had_bom == (content.substr(0, 3) == kBom), "BOM detected");
  TS_FUZZ_CHECK(stats.first_problems.size() == std::min(stats.skipped, options.max_reported),
                "first_problems holds the first max_reported skipped lines");
  std::size_t previous = 0;
  for (const auto& problem : stats.first_problems) {
    TS_FUZZ_CHECK(problem.line > previous && problem.line <= stats.lines, "problem lines ascend within the file");
    TS_FUZZ_CHECK(!problem.reason.empty(), "a problem has a reason");
    previous = problem.line;
  }
  if (options.max_pairs == 0) {
    // Every line is a pair, blank or skipped; the line count follows the newlines.
    std::string_view body = content.substr(stats.had_bom ? 3 : 0);
    const auto newlines = static_cast<std::size_t>(std::count(body.begin(), body.end(), '\n'));
    const std::size_t expected = newlines + (!body.empty() && body.back() != '\n' ? 1 : 0);
    TS_FUZZ_CHECK(stats.lines == expected,
                  "line count " + std::to_string(stats.lines) + " vs " + std::to_string(expected));
    TS_FUZZ_CHECK(stats.lines == stats.blank_lines + stats.skipped + corpus.pairs.size(),
                  "lines = blank + skipped + pairs");
  }
  for (const auto& pair : corpus.pairs) {
    for (const std::string* side : {&pair.english, &pair.other}) {
      const std::string& s = *side;
      TS_FUZZ_CHECK(!s.empty(), "sides are non-empty");
      TS_FUZZ_CHECK(ts::is_valid_utf8(s), "sides are valid UTF-8: " + escaped(s));
      TS_FUZZ_CHECK(s.find('\t') == std::string::npos && s.find('\n') == std::string::npos,
                    "no tab or newline inside a side: " + escaped(s));
      TS_FUZZ_CHECK(!starts_or_ends_with_space(s), "sides are trimmed: " + escaped(s));
      TS_FUZZ_CHECK(ts::code_point_count(s) <= options.max_line_chars, "line-length limit honoured");
    }
  }
  const std::string summary = ts::describe(corpus);
  TS_FUZZ_CHECK(!summary.empty(), "describe() says something");
  for (const char* text : kDirections) {
    try {
      const ts::Direction direction = ts::parse_direction(text, corpus);
      TS_FUZZ_CHECK(direction.src_code != direction.tgt_code || corpus.other.code == "en", "a direction has two sides");
      const auto oriented = ts::oriented_pairs(corpus, direction);
      TS_FUZZ_CHECK(oriented.size() == corpus.pairs.size(), "oriented_pairs keeps every pair");
    } catch (const std::invalid_argument&) {}
  }
}

bool same_pairs(const ts::Corpus& a, const ts::Corpus& b) {
  if (a.pairs.size() != b.pairs.size()) return false;
  for (std::size_t i = 0; i < a.pairs.size(); ++i) {
    if (a.pairs[i].english != b.pairs[i].english || a.pairs[i].other != b.pairs[i].other) return false;
  }
  return a.stats.skipped == b.stats.skipped && a.stats.lines == b.stats.lines;
}

std::string temp_path() {
  static const std::string path = "/tmp/ts-fuzz-corpus-" + std::to_string(::getpid()) + ".txt";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ts::fuzz::Input input(data, size);
  const std::uint8_t s = input.selector;
  const std::string name = kNames[s & 3];
  ts::CorpusReadOptions options;
  if (s & 4) options.max_line_chars = 12;
  if (s & 8) options.max_pairs = 3;
  if (s & 16) options.max_reported = (s & 32) ? 0 : 1;
  std::string content(input.rest);
  if (s & 64) content.insert(0, kBom);

  const Outcome first = parse(content, name, options);
  if (first.ok) check_corpus(first.corpus, content, options);

  // Deterministic: the same bytes give the same result.
  const Outcome again = parse(content, name, options);
  TS_FUZZ_CHECK(first.ok == again.ok && first.error == again.error, "parse_corpus is deterministic");
  if (first.ok) TS_FUZZ_CHECK(same_pairs(first.corpus, again.corpus), "parse_corpus is deterministic");

  // A BOM in front changes nothing but had_bom (when the content does not already start with one).
  if (!(s & 64) && content.substr(0, 3) != kBom) {
    const Outcome with_bom = parse(std::string(kBom) + content, name, options);
    TS_FUZZ_CHECK(with_bom.ok == first.ok, "a BOM does not change acceptance");
    if (first.ok) TS_FUZZ_CHECK(same_pairs(first.corpus, with_bom.corpus), "a BOM does not change the pairs");
  }

  // Reading through a file gives what parsing the same bytes gives.
  if (s & 128) {
    const std::string path = temp_path();
    if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
      std::fwrite(content.data(), 1, content.size(), f);
      std::fclose(f);
      try {
        const ts::Corpus from_file = ts::read_corpus(path, options);
        TS_FUZZ_CHECK(first.ok && same_pairs(first.corpus, from_file), "read_corpus agrees with parse_corpus");
      } catch (const ts::CorpusError&) {
        TS_FUZZ_CHECK(!first.ok, "read_corpus refused what parse_corpus accepted");
      }
    }
  }
  return 0;
}
