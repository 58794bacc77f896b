// SPDX-License-Identifier: GPL-3.0-or-later
// The safetensors reader and writer (ts/model/safetensors.h): exact round trips, the byte layout
// other readers expect, and every structural lie a hostile header can tell refused by name.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>
#include <string>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "ts/model/safetensors.h"

namespace ts {
namespace {

std::string to_bytes(const NamedTensors& tensors, const std::map<std::string, std::string>& metadata = {}) {
  std::string bytes;
  const auto n = write_safetensors(tensors, metadata,
                                   [&](const void* d, std::size_t s) { bytes.append(static_cast<const char*>(d), s); });
  EXPECT_EQ(n, bytes.size());
  return bytes;
}

// A buffer with a hand-written header and `data` bytes after it.
std::string crafted(const std::string& header, const std::string& data) {
  const std::uint64_t n = header.size();
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &n, 8);
  return bytes + header + data;
}

std::string refusal(const std::string& bytes) {
  try {
    SafetensorsReader reader(bytes, "hostile.safetensors");
    for (const auto& [name, entry] : reader.entries()) (void)reader.tensor(name);
  } catch (const SafetensorsError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Safetensors, RoundTripsEveryDtypeShapeAndTheMetadata) {
  const NamedTensors tensors = {
      {"f32", at::randn({3, 4})},
      {"f64", at::randn({2}, at::kDouble)},
      {"f16", at::randn({5}).to(at::kHalf)},
      {"bf16", at::randn({2, 2, 2}).to(at::kBFloat16)},
      {"i64", at::arange(-3, 4, at::kLong)},
      {"i32", at::arange(7, at::kInt)},
      {"i16", at::arange(3, at::kShort)},
      {"i8", at::arange(-2, 2, at::kChar)},
      {"u8", at::arange(250, 256, at::kByte)},
      {"bool", at::tensor({1, 0, 1}, at::kByte).to(at::kBool)},
      {"scalar", at::scalar_tensor(42, at::kLong)},
      {"empty", at::empty({0, 5})},
      {"strided", at::randn({4, 6}).t()},  // not contiguous: written in logical order
  };
  const SafetensorsReader reader(to_bytes(tensors, {{"kind", "test"}, {"ünïcode", "ok"}}), "mem");
  EXPECT_EQ(reader.metadata().at("kind"), "test");
  EXPECT_EQ(reader.metadata().at("ünïcode"), "ok");
  ASSERT_EQ(reader.entries().size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    const auto back = reader.tensor(name);
    EXPECT_EQ(back.scalar_type(), t.scalar_type()) << name;
    EXPECT_EQ(back.sizes(), t.sizes()) << name;
    EXPECT_TRUE(at::equal(back, t)) << name;
  }
  EXPECT_THROW(reader.tensor("missing"), SafetensorsError);
}

TEST(Safetensors, LayoutIsTheFormatsOwn) {
  const auto bytes = to_bytes({{"a", at::ones({2, 3})}, {"b", at::zeros({4}, at::kLong)}}, {{"m", "v"}});
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u) << "the data section starts 8-byte aligned";
  const auto header = nlohmann::json::parse(bytes.substr(8, n));
  EXPECT_EQ(header["__metadata__"]["m"], "v");
  EXPECT_EQ(header["a"]["dtype"], "F32");
  EXPECT_EQ(header["a"]["shape"], nlohmann::json({2, 3}));
  EXPECT_EQ(header["a"]["data_offsets"], nlohmann::json({0, 24}));
  EXPECT_EQ(header["b"]["dtype"], "I64");
  EXPECT_EQ(header["b"]["data_offsets"], nlohmann::json({24, 56}));
  EXPECT_EQ(bytes.size(), 8 + n + 56);
  float first = 0;
  std::memcpy(&first, bytes.data() + 8 + n, 4);
  EXPECT_EQ(first, 1.0f);
}

TEST(Safetensors, HostileHeadersAreRefusedByName) {
  const std::string f32x2(8, '\0');
  const struct {
    std::string bytes;
    std::string expected;
  } cases[] = {
      {"abc", "shorter than its 8-byte header length"},
      {crafted("{}", "").substr(0, 9), "claims 2 bytes"},
      {crafted("{\"a\":", ""), "damaged safetensors header"},
      {crafted("[1,2]", ""), "not a JSON object"},
      {crafted(R"({"a":{"dtype":"F8","shape":[2],"data_offsets":[0,8]}})", f32x2), "unsupported dtype"},
      {crafted(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", f32x2), "its shape needs 12 bytes"},
      {crafted(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", f32x2), "outside the 8 data bytes"},
      {crafted(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", f32x2), "outside"},
      {crafted(
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
           f32x2),
       "share bytes"},
      {crafted(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", f32x2), "unindexed bytes"},
      {crafted(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", f32x2), "4 bytes no tensor uses"},
      {crafted(R"({"a":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", std::string("\x01\x02", 2)),
       "neither 0 nor 1"},
      {crafted(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", f32x2), "non-negative integers"},
      {crafted(R"({"a":{"dtype":"F32","shape":[1099511627776,1099511627776,1099511627776],"data_offsets":[0,8]}})",
               f32x2),
       "more bytes than the file holds"},
      {crafted(R"({"a":{"dtype":"F32","shape":[2]}})", f32x2), "lacks dtype, shape or data_offsets"},
      {crafted(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0.5,8]}})", f32x2), "two non-negative integers"},
      {crafted(R"({"__metadata__":{"k":1}})", ""), "is not a string"},
  };
  for (const auto& c : cases) {
    const auto message = refusal(c.bytes);
    EXPECT_EQ(message.rfind("hostile.safetensors: ", 0), 0u) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << "expected \"" << c.expected << "\", got: " << message;
  }
  // And a well-formed crafted buffer is accepted, so the cases above fail for their own reason.
  EXPECT_EQ(refusal(crafted(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", f32x2)), "accepted");
}

TEST(Safetensors, WritingRefusesRepeatedNames) {
  EXPECT_THROW(to_bytes({{"a", at::ones({1})}, {"a", at::ones({1})}}), SafetensorsError);
  EXPECT_THROW(to_bytes({{"__metadata__", at::ones({1})}}), SafetensorsError);
}

// Found by fuzz_checkpoint: metadata that is not UTF-8 escaped as nlohmann's type_error 316.
TEST(Safetensors, WritingRefusesTextThatIsNotUtf8WithItsOwnError) {
  const std::string latin1 =
      "Stra\xdf"
      "e";  // Latin-1, not UTF-8
  for (const auto& write : std::vector<std::function<void()>>{[&] {
                                                                to_bytes({}, {{"note", latin1}});
                                                              },
                                                              [&] {
                                                                to_bytes({{latin1, at::ones({1})}});
                                                              }}) {
    try {
      write();
      ADD_FAILURE() << "wrote invalid UTF-8";
    } catch (const SafetensorsError& e) {
      EXPECT_NE(std::string(e.what()).find("not valid UTF-8"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(to_bytes({}, {{"note",
                                 "Stra\xc3\x9f"
                                 "e"}}));
}

}  // namespace
}  // namespace ts
