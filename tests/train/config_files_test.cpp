// SPDX-License-Identifier: GPL-3.0-or-later
// The commented configuration files in resources/configs/: each loads, is valid and complete, and
// equals its preset except for the keys its header lists ("// Changed from the preset: a.b, c.d").
// Comments never change what a file means; a syntax error names the file and the line.
#include "ts/train/config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "test_utils.h"

#ifndef TS_CONFIGS_DIR
#define TS_CONFIGS_DIR "resources/configs"
#endif

namespace ts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string config_path(const std::string& name) { return (fs::path(TS_CONFIGS_DIR) / name).string(); }

// Every *.jsonc in the directory, sorted, so a new file is tested without listing it here.
std::vector<fs::path> config_files() {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(TS_CONFIGS_DIR), ec))
    if (entry.is_regular_file() && entry.path().extension() == ".jsonc") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Dotted names of every leaf value: "data.src_tokenizer.kind", "train.lr", "preset", ...
void leaf_keys(const json& j, const std::string& prefix, std::set<std::string>& out) {
  for (const auto& item : j.items()) {
    const std::string key = prefix.empty() ? item.key() : prefix + "." + item.key();
    if (item.value().is_object())
      leaf_keys(item.value(), key, out);
    else
      out.insert(key);
  }
}

std::set<std::string> leaf_keys(const json& j) {
  std::set<std::string> out;
  leaf_keys(j, "", out);
  return out;
}

// Dotted names of the values that differ between two configurations (from a JSON patch:
// "/data/max_vocab" -> "data.max_vocab").
std::set<std::string> changed_keys(const json& from, const json& to) {
  std::set<std::string> keys;
  for (const auto& op : json::diff(from, to)) {
    std::string path = op.at("path").get<std::string>();
    std::replace(path.begin(), path.end(), '/', '.');
    keys.insert(path.substr(1));
  }
  return keys;
}

// The keys listed on a header line "// Changed from the preset: data.max_vocab, train.probe";
// empty when there is no such line (the file is then its preset verbatim).
std::set<std::string> declared_changes(const std::string& text) {
  static const std::string marker = "Changed from the preset:";
  std::set<std::string> keys;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto at = line.find(marker);
    if (at == std::string::npos || line.compare(0, 2, "//") != 0) continue;
    std::istringstream list(line.substr(at + marker.size()));
    std::string key;
    while (std::getline(list, key, ',')) {
      const auto first = key.find_first_not_of(" \t\r");
      if (first == std::string::npos) continue;
      const auto last = key.find_last_not_of(" \t\r");
      keys.insert(key.substr(first, last - first + 1));
    }
  }
  return keys;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += "\n  - " + item;
  return out;
}

// The same file with every full-line comment replaced by another one (or dropped), a block comment
// in front and a line comment at the end: the meaning must not change.
std::string rewrite_comments(const std::string& text, bool drop) {
  std::istringstream lines(text);
  std::string line;
  std::string out = "/* a block comment\n   over two lines, with \"quotes\" and { braces } */\n";
  while (std::getline(lines, line)) {
    const auto first = line.find_first_not_of(" \t");
    const bool comment = first != std::string::npos && line.compare(first, 2, "//") == 0;
    if (!comment) {
      out += line + "\n";
    } else if (!drop) {
      out += line.substr(0, first) + "// another comment: \"quotes\", { braces }, a comma, and /* */\n";
    }
  }
  return out + "// the end";
}

TEST(ConfigFiles, TheDocumentedFilesArePresent) {
  std::set<std::string> names;
  for (const auto& file : config_files()) names.insert(file.filename().string());
  for (const char* expected : {"annotated-cmn-en-zh.jsonc", "deu-de-en.jsonc", "scratch-bpe.jsonc", "tiny.jsonc"})
    EXPECT_EQ(names.count(expected), 1u) << expected << " is missing from " << TS_CONFIGS_DIR;
}

TEST(ConfigFiles, EveryFileLoadsIsValidAndWritesEveryKey) {
  const auto files = config_files();
  ASSERT_FALSE(files.empty()) << "no *.jsonc in " << TS_CONFIGS_DIR;
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    ExperimentConfig c;
    ASSERT_NO_THROW(c = load_config_file(file.string()));
    const auto problems = c.problems();
    EXPECT_TRUE(problems.empty()) << joined(problems);
    // Complete: the file itself (not only the preset it starts from) sets every key that
    // to_json() writes, and nothing else.
    const json raw =
        json::parse(read_text(file.string()), nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
    EXPECT_EQ(leaf_keys(raw), leaf_keys(c.to_json()));
  }
}

TEST(ConfigFiles, EachFileEqualsItsPresetExceptWhereItsHeaderSays) {
  for (const auto& file : config_files()) {
    SCOPED_TRACE(file.string());
    const auto c = load_config_file(file.string());
    ASSERT_NE(c.preset, "custom") << "every file here starts from a named preset";
    const auto base = preset(c.preset).to_json();
    const auto declared = declared_changes(read_text(file.string()));
    EXPECT_EQ(changed_keys(base, c.to_json()), declared);
    if (declared.empty()) {
      EXPECT_EQ(c.to_json(), base);
    }
  }
}

TEST(ConfigFiles, PresetFilesAreTheirPresetVerbatim) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"annotated-cmn-en-zh.jsonc", "annotated"}, {"scratch-bpe.jsonc", "scratch-bpe"}, {"tiny.jsonc", "tiny"}};
  for (const auto& [name, preset_name] : files) {
    SCOPED_TRACE(name);
    const auto path = config_path(name);
    EXPECT_TRUE(declared_changes(read_text(path)).empty());
    const auto c = load_config_file(path);
    EXPECT_EQ(c.preset, preset_name);
    EXPECT_EQ(c.to_json(), preset(preset_name).to_json());
  }
}

TEST(ConfigFiles, DeuDiffersFromAnnotatedOnlyWhereItsHeaderSays) {
  const auto path = config_path("deu-de-en.jsonc");
  const auto declared = declared_changes(read_text(path));
  EXPECT_EQ(declared, (std::set<std::string>{"data.max_vocab", "train.probe"}));
  const auto c = load_config_file(path);
  EXPECT_EQ(c.preset, "annotated");
  EXPECT_EQ(changed_keys(preset("annotated").to_json(), c.to_json()), declared);
  EXPECT_EQ(c.data.max_vocab, 15000);
  EXPECT_FALSE(c.train.probe.empty());
  // Sinusoidal positions: the few dev pairs of deu.txt longer than a learned table can still be encoded.
  EXPECT_EQ(c.model.positions, Positions::kSinusoidal);
}

TEST(ConfigFiles, ASyntaxErrorNamesTheFileAndTheLine) {
  test::TempDir dir;
  const auto path = dir.file("broken.jsonc");
  {
    std::ofstream(path) << "{\n"
                           "  // the next line lacks a comma between its two members\n"
                           "  \"preset\": \"tiny\" \"model\": {\"heads\": 4}\n"
                           "}\n";
  }
  try {
    load_config_file(path);
    FAIL() << "a file with a syntax error was accepted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("line 3,"), std::string::npos) << what;
  }
}

TEST(ConfigFiles, CommentsDoNotChangeTheMeaning) {
  const auto files = config_files();
  ASSERT_FALSE(files.empty()) << "no *.jsonc in " << TS_CONFIGS_DIR;
  test::TempDir dir;
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    const auto original = load_config_file(file.string()).to_json();
    const auto text = read_text(file.string());
    for (const bool drop : {false, true}) {
      const auto path = dir.file(std::string(drop ? "dropped-" : "rewritten-") + file.filename().string());
      { std::ofstream(path) << rewrite_comments(text, drop); }
      ExperimentConfig changed;
      ASSERT_NO_THROW(changed = load_config_file(path)) << (drop ? "comments dropped" : "comments rewritten");
      EXPECT_EQ(changed.to_json(), original) << (drop ? "comments dropped" : "comments rewritten");
    }
  }
}

}  // namespace
}  // namespace ts
