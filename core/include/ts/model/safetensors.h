// SPDX-License-Identifier: GPL-3.0-or-later
// The safetensors format (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length, a JSON header naming each tensor's dtype, shape and byte range, then the raw
// bytes. It is data only: reading it runs no code and allocates nothing the header has not been
// checked to fit. Checkpoint payloads and exported models are written in it, so any safetensors
// reader (Python's `safetensors`, or twenty lines of `struct` and `torch.frombuffer`) can open them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ATen/Tensor.h>

namespace ts {

class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Named tensors in the order they are written.
using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

/// Receives the bytes of a file being written, in order.
using ByteSink = std::function<void(const void* data, std::size_t size)>;

/// Writes `tensors` (any device; copied to the CPU one at a time) and string `metadata` as a
/// safetensors stream. Throws SafetensorsError for a dtype the format has no name for or a
/// repeated name. Returns the number of bytes written.
std::uint64_t write_safetensors(const NamedTensors& tensors, const std::map<std::string, std::string>& metadata,
                                const ByteSink& sink);

/// Writes a safetensors file (not atomically; for exports into a fresh folder).
void write_safetensors_file(const std::string& path, const NamedTensors& tensors,
                            const std::map<std::string, std::string>& metadata);

/// A parsed and validated safetensors buffer. Construction checks everything a hostile file could
/// get wrong (header length, JSON, dtype names, shapes, byte ranges that overflow, overlap, leave
/// holes or run past the end, booleans that are not 0 or 1) and throws SafetensorsError naming
/// `origin` (a path, for messages) and the tensor. Tensors are copied out, so the result does not
/// depend on the buffer's alignment.
class SafetensorsReader {
 public:
  struct Entry {
    at::ScalarType dtype;
    std::vector<std::int64_t> shape;
    std::uint64_t begin = 0, end = 0;  // within the data section
  };

  SafetensorsReader(std::string bytes, std::string origin);
  static SafetensorsReader from_file(const std::string& path);

  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::map<std::string, Entry>& entries() const { return entries_; }
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  /// A fresh CPU tensor with the stored values; throws SafetensorsError when `name` is missing.
  at::Tensor tensor(const std::string& name) const;
  const std::string& origin() const { return origin_; }

 private:
  std::string bytes_;
  std::string origin_;
  std::size_t data_start_ = 0;
  std::map<std::string, std::string> metadata_;
  std::map<std::string, Entry> entries_;
};

/// The format's name for a dtype ("F32", "BF16", ...); throws SafetensorsError for others.
std::string safetensors_dtype_name(at::ScalarType type);

}  // namespace ts
