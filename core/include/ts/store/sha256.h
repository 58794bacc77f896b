// SHA-256 digests (OpenSSL), as lowercase hex.
#pragma once

#include <string>
#include <string_view>

namespace ts {

/// Digest of `data`.
std::string sha256_hex(std::string_view data);
/// Digest of a file's bytes; throws std::runtime_error naming the file when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace ts
