// SPDX-License-Identifier: GPL-3.0-or-later
// Private to ts_text: finds and dlopen()s the ts_sentencepiece module (core/src/spm/) once and
// wraps its C interface in small C++ classes for tokenizer.cpp. SentencePiece is never linked
// into the process directly (its private protobuf copy clashes with LibTorch's libprotobuf).
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../spm/sentencepiece_module.h"

namespace ts::spm {

/// A failure reported by SentencePiece itself (bad training data, corrupt model); the message is
/// SentencePiece's own. Module loading failures are plain std::runtime_error instead.
class SentencePieceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The module's resolved entry points.
struct SentencePieceApi {
  TsSpmFreeFn free = nullptr;
  TsSpmTrainFn train = nullptr;
  TsSpmLoadFn load = nullptr;
  TsSpmModelFreeFn model_free = nullptr;
  TsSpmEncodeFn encode = nullptr;
  TsSpmDecodeFn decode = nullptr;
};

/// A loaded model. Encoding and decoding are const and safe to call from several threads.
class SentencePieceModel {
 public:
  std::vector<std::string> encode(std::string_view text) const;
  std::string decode(const std::vector<std::string>& pieces) const;

 private:
  friend class SentencePieceModule;
  using Handle = std::unique_ptr<TsSpmModel, TsSpmModelFreeFn>;
  SentencePieceModel(const SentencePieceApi& api, Handle handle);

  SentencePieceApi api_;
  Handle handle_;
};

/// Yields the next training sentence into `sentence`; returns false at the end.
using SentenceSource = std::function<bool(std::string& sentence)>;

/// The dlopen()ed module with its resolved entry points. Never unloaded.
class SentencePieceModule {
 public:
  /// Loads the module at `path`. Throws std::runtime_error naming `path` and dlerror() when it
  /// cannot be opened, lacks an entry point or has the wrong API version.
  static SentencePieceModule open(const std::string& path);

  /// Trains with SentencePieceTrainer key/value `options`; returns the serialized model.
  /// Throws SentencePieceError when SentencePiece fails; rethrows what `source` throws.
  std::string train(const SentenceSource& source, const std::unordered_map<std::string, std::string>& options) const;
  /// Throws SentencePieceError when `model` is not a valid serialized model.
  SentencePieceModel load(std::string_view model) const;

  const std::string& path() const { return path_; }

 private:
  SentencePieceModule() = default;

  std::string path_;
  SentencePieceApi api_;
};

/// Where the module is looked for, in order: $TS_SENTENCEPIECE_MODULE alone when set; otherwise
/// the build-tree module, next to the executable, ../lib/transformer-studio/ relative to it,
/// and the install directory.
std::vector<std::string> sentencepiece_module_candidates();

/// The process-wide module, loaded on first use (thread-safe). Throws std::runtime_error naming
/// every place it looked when no candidate loads; the failure is remembered.
const SentencePieceModule& sentencepiece_module();

}  // namespace ts::spm
