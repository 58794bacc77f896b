// SPDX-License-Identifier: GPL-3.0-or-later
// SHA-256 digests (OpenSSL), as lowercase hex.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace ts {

/// Digest of `data`.
std::string sha256_hex(std::string_view data);
/// Incremental digest, for data written in pieces (a checkpoint streamed to disk).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, std::size_t size);
  /// The digest of everything passed to update(); call once.
  std::string hex();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Digest of a file's bytes; throws std::runtime_error naming the file when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace ts
