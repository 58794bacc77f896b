// SPDX-License-Identifier: GPL-3.0-or-later
// The ts_sentencepiece module: SentencePiece training, encoding and decoding behind the plain C
// interface of sentencepiece_module.h. It is the only code that includes SentencePiece headers;
// ts_text dlopen()s it (see core/src/text/sentencepiece_loader.cpp). Every entry point catches
// all exceptions and reports them through its `error` out-string.
#include "sentencepiece_module.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

struct TsSpmModel {
  sentencepiece::SentencePieceProcessor processor;
};

namespace {

/// SentencePiece's status: its own `sentencepiece::util::Status` up to 0.2.0 (Debian 12, 13), abseil's
/// `absl::Status` in 0.2.2 (Debian sid, 2026). Named by what the processor returns, so both build.
using SpmStatus = decltype(std::declval<const sentencepiece::SentencePieceProcessor&>().status());

/// malloc()ed copy of `size` bytes plus a terminating NUL (so text can be used as a C string).
char* copy_bytes(const char* data, size_t size) {
  auto* out = static_cast<char*>(std::malloc(size + 1));
  if (out == nullptr) throw std::bad_alloc();
  if (size > 0) std::memcpy(out, data, size);
  out[size] = '\0';
  return out;
}

/// Stores `message` in *error; a failed allocation leaves it null (the caller copes).
void set_error(char** error, const char* message) noexcept {
  if (error == nullptr) return;
  const size_t size = std::strlen(message) + 1;
  *error = static_cast<char*>(std::malloc(size));
  if (*error != nullptr) std::memcpy(*error, message, size);
}

/// Runs `body`, turning any exception into `error`; returns 0 on success, 1 on failure.
template <typename Body>
int guarded(char** error, Body&& body) noexcept {
  if (error != nullptr) *error = nullptr;
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    set_error(error, e.what());
  } catch (...) {
    set_error(error, "unknown exception in the SentencePiece module");
  }
  return 1;
}

/// A SentencePiece failure, carrying only its message (what callers match on).
struct StatusError : std::runtime_error {
  explicit StatusError(const SpmStatus& status) : std::runtime_error(std::string(status.message())) {}
};

void check(const SpmStatus& status) {
  if (!status.ok()) throw StatusError(status);
}

/// Pulls training sentences from the caller's callback.
class CallbackSentences final : public sentencepiece::SentenceIterator {
 public:
  CallbackSentences(TsSpmNextSentence next, void* context) : next_(next), context_(context) { advance(); }
  bool done() const override { return done_; }
  void Next() override { advance(); }
  const std::string& value() const override { return current_; }
  SpmStatus status() const override { return {}; }

 private:
  void advance() {
    const char* data = nullptr;
    size_t size = 0;
    done_ = next_(context_, &data, &size) == 0;
    if (done_) {
      current_.clear();
    } else {
      current_.assign(data, size);
    }
  }
  TsSpmNextSentence next_;
  void* context_;
  bool done_ = true;
  std::string current_;
};

}  // namespace

extern "C" {

int ts_spm_api_version(void) { return TS_SPM_API_VERSION; }

void ts_spm_free(void* buffer) { std::free(buffer); }

int ts_spm_train(TsSpmNextSentence next, void* context, const char* const* option_keys,
                 const char* const* option_values, size_t option_count, char** model, size_t* model_size,
                 char** error) {
  *model = nullptr;
  *model_size = 0;
  return guarded(error, [&] {
    std::unordered_map<std::string, std::string> options;
    for (size_t i = 0; i < option_count; ++i) options[option_keys[i]] = option_values[i];
    CallbackSentences sentences(next, context);
    std::string serialized;
    check(sentencepiece::SentencePieceTrainer::Train(options, &sentences, &serialized));
    *model = copy_bytes(serialized.data(), serialized.size());
    *model_size = serialized.size();
  });
}

TsSpmModel* ts_spm_load(const char* model, size_t model_size, char** error) {
  TsSpmModel* loaded = nullptr;
  const int failed = guarded(error, [&] {
    auto handle = std::make_unique<TsSpmModel>();
    check(handle->processor.LoadFromSerializedProto(absl::string_view(model, model_size)));
    loaded = handle.release();
  });
  return failed ? nullptr : loaded;
}

void ts_spm_model_free(TsSpmModel* model) { delete model; }

int ts_spm_encode(const TsSpmModel* model, const char* text, size_t text_size, char** pieces, size_t** piece_sizes,
                  size_t* piece_count, char** error) {
  *pieces = nullptr;
  *piece_sizes = nullptr;
  *piece_count = 0;
  return guarded(error, [&] {
    std::vector<std::string> encoded;
    check(model->processor.Encode(absl::string_view(text, text_size), &encoded));
    std::string joined;
    auto* sizes = static_cast<size_t*>(std::malloc(sizeof(size_t) * (encoded.size() + 1)));
    if (sizes == nullptr) throw std::bad_alloc();
    for (size_t i = 0; i < encoded.size(); ++i) {
      sizes[i] = encoded[i].size();
      joined += encoded[i];
    }
    try {
      *pieces = copy_bytes(joined.data(), joined.size());
    } catch (...) {
      std::free(sizes);
      throw;
    }
    *piece_sizes = sizes;
    *piece_count = encoded.size();
  });
}

int ts_spm_decode(const TsSpmModel* model, const char* const* pieces, const size_t* piece_sizes, size_t piece_count,
                  char** text, size_t* text_size, char** error) {
  *text = nullptr;
  *text_size = 0;
  return guarded(error, [&] {
    std::vector<std::string> input;
    input.reserve(piece_count);
    for (size_t i = 0; i < piece_count; ++i) input.emplace_back(pieces[i], piece_sizes[i]);
    std::string decoded;
#ifdef ABSL_TYPES_SPAN_H_
    // SentencePiece 0.2.2 includes abseil's span and deprecates its std::vector overloads.
    check(model->processor.Decode(absl::MakeConstSpan(input), &decoded));
#else
    check(model->processor.Decode(input, &decoded));
#endif
    *text = copy_bytes(decoded.data(), decoded.size());
    *text_size = decoded.size();
  });
}

}  // extern "C"
