// SPDX-License-Identifier: GPL-3.0-or-later
// The translator file: writing and reading (see ts/infer/translator_file.h).
#include "ts/infer/translator_file.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

namespace ts {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'T', 'S', 'X', 'L', 'A', 'T', 'E', '1'};
constexpr std::size_t kAlign = 64;
constexpr std::int64_t kExactInFloat = std::int64_t{1} << 24;  // every integer below is exact in fp32
constexpr const char* kCandidates = "shortlist.candidates";
constexpr const char* kFrequent = "shortlist.frequent";

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

std::size_t aligned(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

bool little_endian() {
  const std::uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

nlohmann::json stamp_json(const CheckpointStamp& s) { return {{"size", s.size}, {"modified_ns", s.modified_ns}}; }

CheckpointStamp stamp_from_json(const nlohmann::json& j) {
  CheckpointStamp s;
  s.size = j.at("size").get<std::uintmax_t>();
  s.modified_ns = j.at("modified_ns").get<std::int64_t>();
  return s;
}

std::vector<float> ids_as_floats(const std::vector<std::int64_t>& ids) {
  std::vector<float> out(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) out[i] = static_cast<float>(ids[i]);
  return out;
}

// Token ids back from their fp32 form; refuses a value that is not a whole number in range.
std::vector<std::int64_t> floats_as_ids(const std::string& path, const std::string& name, const WeightView& view) {
  std::size_t n = 1;
  for (auto d : view.shape) n *= static_cast<std::size_t>(d);
  std::vector<std::int64_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float v = view.data[i];
    if (!(std::fabs(v) < static_cast<float>(kExactInFloat)) || std::nearbyint(v) != v)
      fail(path, "tensor \"" + name + "\" holds " + fmt::format("{}", v) + ", not a token id");
    out[i] = static_cast<std::int64_t>(v);
  }
  return out;
}

nlohmann::json decode_json(const DecodeConfig& d) {
  return {{"mode", decode_mode_name(d.mode)},
          {"beam", d.beam},
          {"length_penalty", d.length_penalty},
          {"nbest", d.nbest},
          {"max_len_a", d.max_len_a},
          {"max_len_b", d.max_len_b},
          {"weights", decode_weights_name(d.weights)},
          {"shortlist", d.shortlist}};
}

// A Fletcher-style checksum of the tensor bytes (32-bit words, two running 64-bit sums): any flipped
// bit changes it, and it runs at memory speed. The checkpoint the file comes from is verified by
// SHA-256; this file is a cache of it, and a damaged cache must not translate silently wrong.
std::string checksum(const char* bytes, std::size_t n) {
  std::uint64_t a = 0, b = 0;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    std::uint32_t w = 0;
    std::memcpy(&w, bytes + i, 4);
    a += w;
    b += a;
  }
  for (; i < n; ++i) {
    a += static_cast<unsigned char>(bytes[i]);
    b += a;
  }
  return fmt::format("{:016x}{:016x}", a, b);
}

DecodeConfig decode_from_json(const nlohmann::json& j) {
  DecodeConfig d;
  d.mode = parse_decode_mode(j.at("mode").get<std::string>());
  d.beam = j.at("beam").get<int>();
  d.length_penalty = j.at("length_penalty").get<double>();
  d.nbest = j.at("nbest").get<int>();
  d.max_len_a = j.at("max_len_a").get<int>();
  d.max_len_b = j.at("max_len_b").get<int>();
  d.weights = parse_decode_weights(j.at("weights").get<std::string>());
  d.shortlist = j.at("shortlist").get<bool>();
  return d;
}

}  // namespace

std::string translator_file_for(const std::string& checkpoint) {
  if (fs::is_directory(checkpoint)) return (fs::path(checkpoint) / "model.translator").string();
  return checkpoint + ".translator";
}

CheckpointStamp CheckpointStamp::of(const std::string& path) {
  std::error_code error;
  CheckpointStamp s;
  const auto target = fs::is_directory(path, error) ? fs::path(path) / "model.safetensors" : fs::path(path);
  s.size = fs::file_size(target, error);
  if (error) return {};
  const auto time = fs::last_write_time(target, error);
  if (error) return {};
  s.modified_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
  return s;
}

WeightLookup TranslatorFile::lookup() const {
  return [this](const std::string& name) -> WeightView {
    const auto it = tensors.find(name);
    return it == tensors.end() ? WeightView{} : it->second;
  };
}

void write_translator_file(const std::string& path, const PackedModelShape& shape, const nlohmann::json& pipeline,
                           const DecodeConfig& decode, const CheckpointStamp& made_from,
                           const std::map<std::string, WeightView>& weights, const LexicalShortlist* shortlist,
                           const CheckpointStamp& shortlist_made_from) {
  if (!little_endian()) fail(path, "translator files are little-endian; this machine is not");
  auto tensors = weights;
  std::vector<float> candidates, frequent;  // the shortlist's tables as fp32, while they are written
  nlohmann::json shortlist_json;
  if (shortlist) {
    if (shortlist->src_vocab() >= kExactInFloat || shortlist->tgt_vocab() >= kExactInFloat)
      fail(path, "cannot carry a shortlist of vocabularies this large (token ids of 2^24 and more)");
    candidates = ids_as_floats(shortlist->candidate_table());
    frequent = ids_as_floats(shortlist->frequent());
    tensors[kCandidates] = {candidates.data(), {shortlist->src_vocab(), shortlist->options().per_source}};
    tensors[kFrequent] = {frequent.data(), {static_cast<std::int64_t>(frequent.size())}};
    shortlist_json = {{"src_vocab", shortlist->src_vocab()},
                      {"tgt_vocab", shortlist->tgt_vocab()},
                      {"frequent", shortlist->options().frequent},
                      {"per_source", shortlist->options().per_source},
                      {"made_from", stamp_json(shortlist_made_from)}};
  }
  nlohmann::json list = nlohmann::json::array();
  std::string data;  // the tensors, each at a multiple of 64 bytes
  for (const auto& [name, view] : tensors) {
    std::size_t n = 1;
    for (auto d : view.shape) n *= static_cast<std::size_t>(d);
    list.push_back({{"name", name}, {"shape", view.shape}, {"offset", data.size()}});
    data.append(reinterpret_cast<const char*>(view.data), n * sizeof(float));
    data.resize(aligned(data.size()), '\0');
  }
  nlohmann::json header = {{"shape",
                            {{"encoder_layers", shape.encoder_layers},
                             {"decoder_layers", shape.decoder_layers},
                             {"d_model", shape.d_model},
                             {"heads", shape.heads},
                             {"d_ff", shape.d_ff},
                             {"src_vocab", shape.src_vocab},
                             {"tgt_vocab", shape.tgt_vocab},
                             {"pad_id", shape.pad_id},
                             {"pre_norm", shape.pre_norm},
                             {"embed_scale", shape.embed_scale}}},
                           {"pipeline", pipeline},
                           {"decode", decode_json(decode)},
                           {"made_from", stamp_json(made_from)},
                           {"checksum", checksum(data.data(), data.size())},
                           {"tensors", list}};
  if (shortlist) header["shortlist"] = shortlist_json;
  const auto text = header.dump();
  const std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) fail(temporary, "cannot write: " + std::string(std::strerror(errno)));
    const std::uint64_t length = text.size();
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(&length), sizeof length);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    const std::string zeros(kAlign, '\0');
    const auto start = sizeof kMagic + sizeof length + text.size();
    out.write(zeros.data(), static_cast<std::streamsize>(aligned(start) - start));
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out.flush()) fail(temporary, "cannot write: " + std::string(std::strerror(errno)));
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, error);
    fail(path, "cannot write: " + error.message());
  }
}

TranslatorFile read_translator_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot be read: " + std::string(std::strerror(errno)));
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(in.tellg());
  in.seekg(0);
  char magic[sizeof kMagic] = {};
  std::uint64_t length = 0;
  if (size < sizeof magic + sizeof length || !in.read(magic, sizeof magic) ||
      std::memcmp(magic, kMagic, sizeof magic) != 0)
    fail(path, "is not a translator file");
  if (!little_endian()) fail(path, "translator files are little-endian; this machine is not");
  in.read(reinterpret_cast<char*>(&length), sizeof length);
  const auto start = sizeof magic + sizeof length;
  if (!in || length > size - start) fail(path, "is cut short (its header runs past the end)");
  std::string text(static_cast<std::size_t>(length), '\0');
  in.read(text.data(), static_cast<std::streamsize>(length));
  TranslatorFile file;
  const auto data_start = aligned(start + static_cast<std::size_t>(length));
  const auto data_bytes = size > data_start ? size - data_start : 0;
  try {
    const auto header = nlohmann::json::parse(text);
    const auto& s = header.at("shape");
    file.shape.encoder_layers = s.at("encoder_layers").get<int>();
    file.shape.decoder_layers = s.at("decoder_layers").get<int>();
    file.shape.d_model = s.at("d_model").get<std::int64_t>();
    file.shape.heads = s.at("heads").get<std::int64_t>();
    file.shape.d_ff = s.at("d_ff").get<std::int64_t>();
    file.shape.src_vocab = s.at("src_vocab").get<std::int64_t>();
    file.shape.tgt_vocab = s.at("tgt_vocab").get<std::int64_t>();
    file.shape.pad_id = s.at("pad_id").get<std::int64_t>();
    file.shape.pre_norm = s.at("pre_norm").get<bool>();
    file.shape.embed_scale = s.at("embed_scale").get<float>();
    file.pipeline = header.at("pipeline");
    file.decode = decode_from_json(header.at("decode"));
    file.made_from = stamp_from_json(header.at("made_from"));
    file.data.resize((data_bytes + sizeof(float) - 1) / sizeof(float));
    in.seekg(static_cast<std::streamoff>(data_start));
    if (data_bytes && !in.read(reinterpret_cast<char*>(file.data.data()), static_cast<std::streamsize>(data_bytes)))
      fail(path, "cannot be read to its end");
    for (const auto& t : header.at("tensors")) {
      WeightView view;
      view.shape = t.at("shape").get<std::vector<std::int64_t>>();
      std::size_t n = 1;
      for (auto d : view.shape) {
        if (d < 0) fail(path, "tensor \"" + t.at("name").get<std::string>() + "\" has a negative size");
        n *= static_cast<std::size_t>(d);
      }
      const auto offset = t.at("offset").get<std::size_t>();
      if (offset % sizeof(float) != 0 || offset > data_bytes || n * sizeof(float) > data_bytes - offset)
        fail(path, "is cut short: tensor \"" + t.at("name").get<std::string>() + "\" runs past its end");
      view.data = file.data.data() + offset / sizeof(float);
      file.tensors[t.at("name").get<std::string>()] = std::move(view);
    }
    if (header.at("checksum").get<std::string>() !=
        checksum(reinterpret_cast<const char*>(file.data.data()), data_bytes))
      fail(path, "is damaged: its tensors do not match their checksum");
    if (header.contains("shortlist")) {
      const auto& j = header.at("shortlist");
      auto table = [&](const char* name) {
        const auto it = file.tensors.find(name);
        if (it == file.tensors.end()) fail(path, std::string("names a shortlist but has no tensor \"") + name + "\"");
        auto ids = floats_as_ids(path, name, it->second);
        file.tensors.erase(it);
        return ids;
      };
      ShortlistOptions options;
      options.frequent = j.at("frequent").get<int>();
      options.per_source = j.at("per_source").get<int>();
      auto candidates = table(kCandidates);
      auto frequent = table(kFrequent);
      try {
        file.shortlist = std::make_shared<const LexicalShortlist>(
            LexicalShortlist::from_tables(j.at("src_vocab").get<std::int64_t>(), j.at("tgt_vocab").get<std::int64_t>(),
                                          options, std::move(frequent), std::move(candidates)));
      } catch (const std::invalid_argument& e) {
        fail(path, std::string("has a shortlist that does not fit: ") + e.what());
      }
      if (file.shortlist->src_vocab() != file.shape.src_vocab || file.shortlist->tgt_vocab() != file.shape.tgt_vocab)
        fail(path, "has a shortlist made for other vocabularies than its model's");
      file.shortlist_made_from = stamp_from_json(j.at("made_from"));
    }
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("has a header that does not parse: ") + e.what());
  } catch (const std::invalid_argument& e) {
    fail(path, std::string("has a header that does not parse: ") + e.what());
  }
  return file;
}

}  // namespace ts
