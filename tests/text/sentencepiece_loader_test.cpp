// SPDX-License-Identifier: GPL-3.0-or-later
// SentencePiece module loader tests: clear errors for a missing or broken module, the lookup
// order, and bpe failing cleanly (word/char unaffected) when the module cannot be found.
#include <gtest/gtest.h>

#include <filesystem>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "../../core/src/text/sentencepiece_loader.h"
#include "ts/text/tokenizer.h"

namespace ts {
namespace {

constexpr const char* kEnvVar = "TS_SENTENCEPIECE_MODULE";
constexpr const char* kMissing = "/nonexistent/dir/no-such-module.so";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// Sets an environment variable for the current scope, restoring the old value afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string open_error(const std::string& path) {
  try {
    spm::SentencePieceModule::open(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(SentencePieceLoader, MissingFileNamesPathAndDlerror) {
  const std::string error = open_error(kMissing);
  EXPECT_TRUE(contains(error, kMissing)) << error;
  EXPECT_TRUE(contains(error, "dlopen failed")) << error;
}

TEST(SentencePieceLoader, RejectsFilesThatAreNotModules) {
  const std::string path = ::testing::TempDir() + "ts_not_a_module.so";
  std::ofstream(path) << "not an ELF file";
  const std::string error = open_error(path);
  EXPECT_TRUE(contains(error, path)) << error;
  std::remove(path.c_str());
}

TEST(SentencePieceLoader, EnvironmentVariableOverridesLookup) {
  {
    const ScopedEnv env(kEnvVar, kMissing);
    EXPECT_EQ(spm::sentencepiece_module_candidates(), std::vector<std::string>{kMissing});
  }
  const ScopedEnv env(kEnvVar, "");
  const auto candidates = spm::sentencepiece_module_candidates();
  ASSERT_GE(candidates.size(), 3u);
  EXPECT_TRUE(contains(candidates.back(), "transformer-studio")) << candidates.back();
}

TEST(SentencePieceLoader, BuildTreeModuleLoads) {
  const ScopedEnv env(kEnvVar, "");
  // From the build tree the candidates next to the test binary do not exist; the built one does.
  std::string built;
  for (const auto& c : spm::sentencepiece_module_candidates())
    if (built.empty() && std::filesystem::exists(c)) built = c;
  ASSERT_FALSE(built.empty());
  const auto module = spm::SentencePieceModule::open(built);
  EXPECT_THROW(module.load("not a model"), spm::SentencePieceError);
}

/// Runs in a fresh process (see below): bpe must fail clearly, word must still work.
[[noreturn]] void tokenize_without_module() {
  setenv(kEnvVar, kMissing, 1);
  TokenizerConfig config;
  config.kind = TokenizerKind::kBpe;
  try {
    make_tokenizer(config, {"some training text"});
  } catch (const std::runtime_error& e) {
    std::cerr << e.what() << std::endl;
    const std::string message = e.what();
    const bool clear = contains(message, kMissing) && contains(message, kEnvVar);
    const bool word_ok = make_tokenizer(TokenizerConfig{})->tokenize("a b").size() == 2;
    std::exit(clear && word_ok ? 0 : 1);
  }
  std::exit(2);
}

TEST(SentencePieceLoaderDeathTest, MissingModuleFailsClearlyAndWordStillWorks) {
  // "threadsafe" re-executes the binary, so the module is not loaded yet in the child (a fork
  // would inherit an already loaded module from earlier tests).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(tokenize_without_module(), ::testing::ExitedWithCode(0), "no-such-module\\.so");
}

}  // namespace
}  // namespace ts
