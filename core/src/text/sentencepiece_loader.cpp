// SPDX-License-Identifier: GPL-3.0-or-later
// Finds and loads the ts_sentencepiece module (see sentencepiece_loader.h).
//
// Why a dlopen()ed module: Debian's libsentencepiece.so.0 (and libsentencepiece_train.so.0)
// carry a private copy of protobuf-lite 3.14 with exported symbols, while LibTorch links the
// system libprotobuf (3.21). Linked into one process, either LibTorch's protobuf start-up
// resolves into libsentencepiece and crashes, or SentencePiece refuses the newer protobuf.
// Loading the module with RTLD_LOCAL | RTLD_DEEPBIND keeps SentencePiece's symbols out of the
// global scope and makes SentencePiece resolve its own protobuf copy first.
#include "sentencepiece_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <utility>

#include <fmt/format.h>

#ifndef TS_SENTENCEPIECE_MODULE_NAME
#define TS_SENTENCEPIECE_MODULE_NAME "libts_sentencepiece.so"
#endif

// The sanitizer runtimes (ASan, and TSan as well: the check is in their common dlopen interceptor)
// refuse RTLD_DEEPBIND (it would bypass their malloc interceptors), so sanitizer builds load the
// module without it. Limitation: in such builds SentencePiece may bind to LibTorch's libprotobuf
// and crash in processes that also load LibTorch (ts_core, the apps) once it parses a model;
// the LibTorch-free ts_text tests and fuzz targets are unaffected.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TS_SPM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TS_SPM_ASAN 1
#endif
#endif

namespace ts::spm {

namespace {

constexpr const char* kEnvVar = "TS_SENTENCEPIECE_MODULE";

#ifdef TS_SPM_ASAN
constexpr int kDlopenFlags = RTLD_NOW | RTLD_LOCAL;
#else
constexpr int kDlopenFlags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif

std::string last_dl_error() {
  const char* error = dlerror();
  return error != nullptr ? error : "unknown dlopen error";
}

template <typename Fn>
Fn resolve(void* library, const std::string& path, const char* name) {
  dlerror();  // clear
  void* symbol = dlsym(library, name);
  if (symbol == nullptr) {
    throw std::runtime_error(fmt::format("SentencePiece module {}: no symbol {}: {}", path, name, last_dl_error()));
  }
  return reinterpret_cast<Fn>(symbol);
}

std::filesystem::path executable_dir() {
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : exe.parent_path();
}

/// A buffer allocated by the module, released through the module.
class Buffer {
 public:
  Buffer(void* data, TsSpmFreeFn free) : data_(data), free_(free) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { free_(data_); }

 private:
  void* data_;
  TsSpmFreeFn free_;
};

/// Throws SentencePieceError with the module's message (releasing it) when `status` != 0.
void check(const SentencePieceApi& api, int status, char* error) {
  if (status == 0) return;
  const Buffer owned(error, api.free);
  throw SentencePieceError(error != nullptr ? error : "SentencePiece failed (no message)");
}

/// Tries each candidate in order; on total failure throws naming each and why it failed.
SentencePieceModule open_first(const std::vector<std::string>& candidates) {
  std::string tried;
  for (const auto& path : candidates) {
    std::error_code error;
    if (path.find('/') != std::string::npos && !std::filesystem::exists(path, error)) {
      tried += fmt::format("\n  {}: not found", path);
      continue;
    }
    try {
      return SentencePieceModule::open(path);
    } catch (const std::runtime_error& e) {
      tried += fmt::format("\n  {}", e.what());
    }
  }
  throw std::runtime_error(
      fmt::format("bpe/unigram tokenizers are unavailable: could not load the SentencePiece module "
                  "({}). Looked in:{}\nSet {} to the module's path to override.",
                  TS_SENTENCEPIECE_MODULE_NAME, tried, kEnvVar));
}

/// Hands the caller's sentences to the module's C callback, keeping exceptions on our side.
struct SentenceTrampoline {
  const SentenceSource& source;
  std::string current;
  std::exception_ptr failure;

  static int next(void* context, const char** data, size_t* size) noexcept {
    auto& self = *static_cast<SentenceTrampoline*>(context);
    try {
      if (self.failure || !self.source(self.current)) return 0;
    } catch (...) {
      self.failure = std::current_exception();
      return 0;
    }
    *data = self.current.data();
    *size = self.current.size();
    return 1;
  }
};

}  // namespace

// ------------------------------------------------------------------ SentencePieceModel

SentencePieceModel::SentencePieceModel(const SentencePieceApi& api, Handle handle)
    : api_(api), handle_(std::move(handle)) {}

std::vector<std::string> SentencePieceModel::encode(std::string_view text) const {
  char* joined = nullptr;
  size_t* sizes = nullptr;
  size_t count = 0;
  char* error = nullptr;
  const int status = api_.encode(handle_.get(), text.data(), text.size(), &joined, &sizes, &count, &error);
  check(api_, status, error);
  const Buffer owned_joined(joined, api_.free);
  const Buffer owned_sizes(sizes, api_.free);
  std::vector<std::string> pieces;
  pieces.reserve(count);
  for (size_t i = 0, offset = 0; i < count; offset += sizes[i], ++i) {
    pieces.emplace_back(joined + offset, sizes[i]);
  }
  return pieces;
}

std::string SentencePieceModel::decode(const std::vector<std::string>& pieces) const {
  std::vector<const char*> data;
  std::vector<size_t> sizes;
  data.reserve(pieces.size());
  sizes.reserve(pieces.size());
  for (const auto& piece : pieces) {
    data.push_back(piece.data());
    sizes.push_back(piece.size());
  }
  char* text = nullptr;
  size_t size = 0;
  char* error = nullptr;
  const int status = api_.decode(handle_.get(), data.data(), sizes.data(), pieces.size(), &text, &size, &error);
  check(api_, status, error);
  const Buffer owned(text, api_.free);
  return std::string(text, size);
}

// ------------------------------------------------------------------ SentencePieceModule

SentencePieceModule SentencePieceModule::open(const std::string& path) {
  void* library = dlopen(path.c_str(), kDlopenFlags);
  if (library == nullptr) {
    throw std::runtime_error(fmt::format("SentencePiece module {}: dlopen failed: {}", path, last_dl_error()));
  }
  // From here on the library stays loaded: SentencePiece's protobuf copy has static state that
  // must never be torn down while the process runs.
  const auto version = resolve<TsSpmApiVersionFn>(library, path, "ts_spm_api_version")();
  if (version != TS_SPM_API_VERSION) {
    throw std::runtime_error(
        fmt::format("SentencePiece module {}: API version {}, expected {}", path, version, TS_SPM_API_VERSION));
  }
  SentencePieceModule module;
  module.path_ = path;
  module.api_.free = resolve<TsSpmFreeFn>(library, path, "ts_spm_free");
  module.api_.train = resolve<TsSpmTrainFn>(library, path, "ts_spm_train");
  module.api_.load = resolve<TsSpmLoadFn>(library, path, "ts_spm_load");
  module.api_.model_free = resolve<TsSpmModelFreeFn>(library, path, "ts_spm_model_free");
  module.api_.encode = resolve<TsSpmEncodeFn>(library, path, "ts_spm_encode");
  module.api_.decode = resolve<TsSpmDecodeFn>(library, path, "ts_spm_decode");
  return module;
}

std::string SentencePieceModule::train(const SentenceSource& source,
                                       const std::unordered_map<std::string, std::string>& options) const {
  std::vector<const char*> keys;
  std::vector<const char*> values;
  for (const auto& [key, value] : options) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  SentenceTrampoline trampoline{source, {}, nullptr};
  char* model = nullptr;
  size_t size = 0;
  char* error = nullptr;
  const int status = api_.train(&SentenceTrampoline::next, &trampoline, keys.data(), values.data(), keys.size(), &model,
                                &size, &error);
  const Buffer owned(model, api_.free);
  if (trampoline.failure) {
    api_.free(error);
    std::rethrow_exception(trampoline.failure);
  }
  check(api_, status, error);
  return std::string(model, size);
}

SentencePieceModel SentencePieceModule::load(std::string_view model) const {
  char* error = nullptr;
  TsSpmModel* handle = api_.load(model.data(), model.size(), &error);
  check(api_, handle == nullptr ? 1 : 0, error);
  return SentencePieceModel(api_, SentencePieceModel::Handle(handle, api_.model_free));
}

// ------------------------------------------------------------------ lookup

std::vector<std::string> sentencepiece_module_candidates() {
  if (const char* path = std::getenv(kEnvVar); path != nullptr && *path != '\0') return {path};
  std::vector<std::string> candidates;
  // Next to the binary first: an installed or unpacked package uses its own module even when the
  // build tree it was made from still exists. From the build tree these do not exist.
  if (const auto dir = executable_dir(); !dir.empty()) {
    candidates.push_back((dir / TS_SENTENCEPIECE_MODULE_NAME).string());
    candidates.push_back((dir / ".." / "lib" / "transformer-studio" / TS_SENTENCEPIECE_MODULE_NAME).string());
  }
#ifdef TS_SENTENCEPIECE_MODULE_PATH
  candidates.emplace_back(TS_SENTENCEPIECE_MODULE_PATH);
#endif
#ifdef TS_SENTENCEPIECE_INSTALL_DIR
  candidates.push_back(std::string(TS_SENTENCEPIECE_INSTALL_DIR) + "/" + TS_SENTENCEPIECE_MODULE_NAME);
#endif
  return candidates;
}

const SentencePieceModule& sentencepiece_module() {
  static std::once_flag once;
  static std::optional<SentencePieceModule> module;
  static std::string failure;
  std::call_once(once, [] {
    try {
      module = open_first(sentencepiece_module_candidates());
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  if (!module) throw std::runtime_error(failure);
  return *module;
}

}  // namespace ts::spm
