// SPDX-License-Identifier: GPL-3.0-or-later
// safetensors reading and writing (see ts/model/safetensors.h).
#include "ts/model/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "ts/text/files.h"

namespace ts {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors stores little-endian bytes");

constexpr std::uint64_t kMaxHeaderBytes = 100u << 20;  // the format's own limit

struct DtypeName {
  at::ScalarType type;
  const char* name;
};
constexpr DtypeName kDtypes[] = {
    {at::kDouble, "F64"}, {at::kFloat, "F32"}, {at::kHalf, "F16"}, {at::kBFloat16, "BF16"}, {at::kLong, "I64"},
    {at::kInt, "I32"},    {at::kShort, "I16"}, {at::kChar, "I8"},  {at::kByte, "U8"},       {at::kBool, "BOOL"}};

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw SafetensorsError(origin + ": " + what);
}

std::string quoted(const std::string& name) {
  return nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string safetensors_dtype_name(at::ScalarType type) {
  for (const auto& d : kDtypes)
    if (d.type == type) return d.name;
  throw SafetensorsError(std::string("safetensors has no name for dtype ") + c10::toString(type));
}

std::uint64_t write_safetensors(const NamedTensors& tensors, const std::map<std::string, std::string>& metadata,
                                const ByteSink& sink) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  std::set<std::string> seen;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__" || !seen.insert(name).second)
      throw SafetensorsError("tensor name \"" + name + "\" is used twice");
    const std::uint64_t bytes = static_cast<std::uint64_t>(t.numel()) * t.element_size();
    header[name] = {{"dtype", safetensors_dtype_name(t.scalar_type())},
                    {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::type_error&) {  // 316: a string that is not valid UTF-8
    throw SafetensorsError("cannot write safetensors: the metadata or a tensor name is not valid UTF-8");
  }
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');  // the data section starts 8-byte aligned
  const std::uint64_t length = text.size();
  sink(&length, sizeof length);
  sink(text.data(), text.size());
  for (const auto& [name, t] : tensors) {
    if (t.numel() == 0) continue;
    const auto cpu = t.detach().to(at::kCPU).contiguous();
    sink(cpu.data_ptr(), static_cast<std::size_t>(cpu.numel()) * cpu.element_size());
  }
  return sizeof length + length + offset;
}

void write_safetensors_file(const std::string& path, const NamedTensors& tensors,
                            const std::map<std::string, std::string>& metadata) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw SafetensorsError(path + ": cannot create: " + std::strerror(errno));
  write_safetensors(tensors, metadata, [&](const void* data, std::size_t size) {
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  });
  out.flush();
  if (!out) throw SafetensorsError(path + ": cannot write: " + std::strerror(errno));
}

SafetensorsReader::SafetensorsReader(std::string bytes, std::string origin)
    : bytes_(std::move(bytes)), origin_(std::move(origin)) {
  if (bytes_.size() < 8) fail(origin_, "not a safetensors file (shorter than its 8-byte header length)");
  std::uint64_t length = 0;
  std::memcpy(&length, bytes_.data(), 8);
  if (length > kMaxHeaderBytes || length > bytes_.size() - 8)
    fail(origin_, "damaged safetensors header: it claims " + std::to_string(length) + " bytes, the file has " +
                      std::to_string(bytes_.size() - 8) + " after the length");
  data_start_ = 8 + static_cast<std::size_t>(length);
  const std::uint64_t data_size = bytes_.size() - data_start_;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(std::string_view(bytes_).substr(8, static_cast<std::size_t>(length)));
  } catch (const std::exception& e) {
    fail(origin_, std::string("damaged safetensors header: ") + e.what());
  }
  if (!header.is_object()) fail(origin_, "damaged safetensors header: not a JSON object");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) fail(origin_, "safetensors __metadata__ is not an object");
      for (const auto& [key, v] : value.items()) {
        if (!v.is_string()) fail(origin_, "safetensors metadata " + quoted(key) + " is not a string");
        metadata_[key] = v.get<std::string>();
      }
      continue;
    }
    const auto where = "tensor " + quoted(name);
    if (!value.is_object() || !value.contains("dtype") || !value.contains("shape") || !value.contains("data_offsets"))
      fail(origin_, where + " lacks dtype, shape or data_offsets");
    const auto& dtype = value["dtype"];
    const auto* known = dtype.is_string()
                            ? std::find_if(std::begin(kDtypes), std::end(kDtypes),
                                           [&](const DtypeName& d) { return dtype.get<std::string>() == d.name; })
                            : std::end(kDtypes);
    if (known == std::end(kDtypes))
      fail(origin_,
           where + " has an unsupported dtype " + dtype.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    Entry entry;
    entry.dtype = known->type;
    const auto& shape = value["shape"];
    if (!shape.is_array() || shape.size() > 16) fail(origin_, where + ": shape must be a list of at most 16 sizes");
    // The element count is bounded by the data section, so the product is checked as it grows.
    std::uint64_t count = 1;
    for (const auto& d : shape) {
      if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<std::int64_t>() >= 0))
        fail(origin_, where + ": shape sizes must be non-negative integers");
      const auto n = d.get<std::uint64_t>();
      if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(origin_, where + ": shape size too large");
      entry.shape.push_back(static_cast<std::int64_t>(n));
      if (n != 0 && count > data_size / n)
        count = data_size + 1;  // saturate: more than the file holds
      else
        count *= n;
    }
    const auto& offsets = value["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
      fail(origin_, where + ": data_offsets must be two non-negative integers");
    entry.begin = offsets[0].get<std::uint64_t>();
    entry.end = offsets[1].get<std::uint64_t>();
    if (entry.begin > entry.end || entry.end > data_size)
      fail(origin_, where + ": byte range [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) +
                        ") lies outside the " + std::to_string(data_size) + " data bytes (truncated file?)");
    const std::uint64_t element = c10::elementSize(entry.dtype);
    if (count > data_size || count * element != entry.end - entry.begin)
      fail(origin_, where + ": its shape needs " +
                        (count > data_size ? std::string("more bytes than the file holds")
                                           : std::to_string(count * element) + " bytes") +
                        ", its byte range holds " + std::to_string(entry.end - entry.begin));
    if (entry.dtype == at::kBool)
      for (auto i = entry.begin; i < entry.end; ++i)
        if (static_cast<unsigned char>(bytes_[data_start_ + i]) > 1)
          fail(origin_, where + ": a boolean that is neither 0 nor 1");
    ranges.emplace_back(entry.begin, entry.end);
    entries_.emplace(name, std::move(entry));
  }
  // The byte buffer must be covered exactly: no overlaps (two tensors sharing bytes) and no holes.
  std::sort(ranges.begin(), ranges.end());
  std::uint64_t covered = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin != covered)
      fail(origin_, begin < covered ? "two tensors share bytes" : "the data section has unindexed bytes");
    covered = end;
  }
  if (covered != data_size)
    fail(origin_, "the data section has " + std::to_string(data_size - covered) + " bytes no tensor uses");
}

SafetensorsReader SafetensorsReader::from_file(const std::string& path) {
  if (const auto kind = special_file_kind(path); !kind.empty())
    throw SafetensorsError(path + ": is " + kind + ", not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SafetensorsError(path + ": cannot open: " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return SafetensorsReader(std::move(bytes), path);
}

at::Tensor SafetensorsReader::tensor(const std::string& name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) fail(origin_, "has no tensor " + quoted(name));
  const auto& e = it->second;
  auto t = at::empty(e.shape, at::TensorOptions().dtype(e.dtype));
  if (e.end > e.begin) std::memcpy(t.data_ptr(), bytes_.data() + data_start_ + e.begin, e.end - e.begin);
  return t;
}

}  // namespace ts
