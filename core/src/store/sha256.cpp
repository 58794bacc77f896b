// SPDX-License-Identifier: GPL-3.0-or-later
// SHA-256 via OpenSSL's EVP interface.
#include "ts/store/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <vector>

#include "ts/text/files.h"

namespace ts {
namespace {

using Context = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

Context new_context() {
  Context ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) throw std::runtime_error("SHA-256 unavailable");
  return ctx;
}

std::string finish(EVP_MD_CTX* ctx) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx, digest, &length);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

}  // namespace

struct Sha256::Impl {
  Context ctx = new_context();
};
Sha256::Sha256() : impl_(std::make_unique<Impl>()) {}
Sha256::~Sha256() = default;
void Sha256::update(const void* data, std::size_t size) { EVP_DigestUpdate(impl_->ctx.get(), data, size); }
std::string Sha256::hex() { return finish(impl_->ctx.get()); }

std::string sha256_hex(std::string_view data) {
  auto ctx = new_context();
  EVP_DigestUpdate(ctx.get(), data.data(), data.size());
  return finish(ctx.get());
}

std::string sha256_file(const std::string& path) {
  // A FIFO or a device would be read forever: hash regular files only.
  if (const auto kind = special_file_kind(path); !kind.empty())
    throw std::runtime_error(path + ": it is " + kind + ", not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read (" + std::strerror(errno) + ")");
  auto ctx = new_context();
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw std::runtime_error(path + ": read error");
  return finish(ctx.get());
}

}  // namespace ts
