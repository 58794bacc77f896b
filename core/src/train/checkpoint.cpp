// Checkpoint files (see ts/train/checkpoint.h).
#include "ts/train/checkpoint.h"

#include "ts/store/sha256.h"
#include "ts/text/files.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

namespace ts {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw CheckpointError(path + ": " + what); }

void write_all(int fd, std::string_view data, const std::string& path) {
  std::size_t done = 0;
  while (done < data.size()) {
    const auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, std::string("cannot write: ") + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
}

// Writes `path` atomically: `write_body(fd)` fills a temp file in the same directory, then fsync,
// rename over the target, fsync the directory. A failure removes the temp file.
void write_atomically(const std::string& path, const std::function<void(int)>& write_body) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, std::string("cannot create: ") + std::strerror(errno));
  try {
    write_body(fd);
    if (::fsync(fd) != 0) fail(path, std::string("fsync failed: ") + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail(path, "cannot rename into place: " + reason);
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

constexpr const char* kMagic = "TRANSFORMER-STUDIO-CHECKPOINT";
constexpr int kEnvelopeVersion = 1;

void check_is_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) fail(path, "checkpoint not found (moved or deleted?)");
  // A FIFO would block the reader forever, a device could stream without end.
  if (const auto kind = special_file_kind(path); !kind.empty()) fail(path, "is " + kind + ", not a checkpoint file");
}

CheckpointHeader parse_header(const std::string& path, std::istream& in) {
  std::string line;
  line.reserve(128);
  char c = 0;
  while (line.size() < 160 && in.get(c) && c != '\n') line += c;
  std::istringstream fields(line);
  std::string magic, sha;
  int version = 0;
  std::uint64_t bytes = 0;
  if (c != '\n' || !(fields >> magic >> version >> sha >> bytes) || magic != kMagic)
    fail(path, "not a Transformer Studio checkpoint (unknown file format)");
  if (version != kEnvelopeVersion) fail(path, "checkpoint envelope version " + std::to_string(version) + " is not supported");
  if (sha.size() != 64) fail(path, "damaged checkpoint header");
  return {sha, bytes, line.size() + 1};
}

// Reads the payload and verifies size and checksum; only then may LibTorch parse it.
std::string read_verified_payload(const std::string& path) {
  check_is_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  const auto header = parse_header(path, in);
  const auto size = fs::file_size(path);
  if (size != header.header_bytes + header.payload_bytes)
    fail(path, "truncated or damaged checkpoint: expected " + std::to_string(header.header_bytes + header.payload_bytes) +
                   " bytes, found " + std::to_string(size));
  std::string payload(header.payload_bytes, '\0');
  if (!in.read(payload.data(), static_cast<std::streamsize>(payload.size()))) fail(path, "cannot read the checkpoint");
  if (sha256_hex(payload) != header.sha256) fail(path, "corrupted checkpoint: SHA-256 mismatch");
  return payload;
}

void open_archive(const std::string& path, torch::serialize::InputArchive& archive, const c10::optional<at::Device>& device) {
  std::istringstream payload(read_verified_payload(path));
  try {
    archive.load_from(payload, device);
  } catch (const std::exception& e) {
    fail(path, std::string("unreadable checkpoint: ") + e.what());
  }
}

CheckpointMeta meta_from_archive(torch::serialize::InputArchive& archive, const std::string& path) {
  c10::IValue value;
  if (!archive.try_read("meta", value) || !value.isString()) fail(path, "not a Transformer Studio checkpoint (no metadata)");
  try {
    const auto j = nlohmann::json::parse(value.toStringRef());
    CheckpointMeta meta;
    if (j.value("kind", "") == "lm") fail(path, "is a language-model checkpoint: use lm-generate");
    if (!j.at("format").is_number_integer()) fail(path, "damaged checkpoint metadata: format is not an integer");
    meta.format = j.at("format").get<std::int64_t>();
    if (meta.format != 1) fail(path, "checkpoint format " + std::to_string(meta.format) + " is newer than this program");
    meta.config = ExperimentConfig::from_json(j.at("config"));
    meta.position = TrainingPosition::from_json(j.at("position"));
    meta.corpus_path = j.value("corpus", "");
    meta.pipeline = j.at("pipeline");
    meta.metrics = j.value("metrics", nlohmann::json::object());
    return meta;
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    fail(path, std::string("damaged checkpoint metadata: ") + e.what());
  }
}

}  // namespace

nlohmann::json TrainingPosition::to_json() const {
  return {{"step", step}, {"epoch", epoch}, {"batch_in_epoch", batch_in_epoch}, {"tokens_seen", tokens_seen},
          {"elapsed_seconds", elapsed_seconds}, {"best_metric", best_metric}, {"has_best", has_best},
          {"bad_validations", bad_validations}};
}

namespace {
// Typed reads of the position: get<std::int64_t>() on a float would truncate 1.5 silently and is
// undefined behaviour for 1e300 (UBSan, tests/fuzz/fuzz_checkpoint), and a checksum only proves
// the file is intact, not that its metadata is sane.
std::int64_t position_integer(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)))
    throw std::invalid_argument(std::string("position.") + key + ": expected an integer, got " +
                                v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return v.get<std::int64_t>();
}
double position_number(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_number())
    throw std::invalid_argument(std::string("position.") + key + ": expected a number, got " +
                                v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return v.get<double>();
}
}  // namespace

TrainingPosition TrainingPosition::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("position: expected an object");
  TrainingPosition p;
  p.step = position_integer(j, "step");
  p.epoch = position_integer(j, "epoch");
  p.batch_in_epoch = position_integer(j, "batch_in_epoch");
  p.tokens_seen = position_integer(j, "tokens_seen");
  p.elapsed_seconds = position_number(j, "elapsed_seconds");
  p.best_metric = position_number(j, "best_metric");
  if (!j.at("has_best").is_boolean()) throw std::invalid_argument("position.has_best: expected true or false");
  p.has_best = j.at("has_best").get<bool>();
  p.bad_validations = position_integer(j, "bad_validations");
  return p;
}

CheckpointHeader read_checkpoint_header(const std::string& path) {
  check_is_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  return parse_header(path, in);
}

CheckpointHeader save_checkpoint(const std::string& path, const CheckpointMeta& meta, Transformer& model,
                                 torch::optim::Optimizer* optimizer) {
  const nlohmann::json j = {{"format", meta.format}, {"config", meta.config.to_json()},
                            {"position", meta.position.to_json()}, {"corpus", meta.corpus_path},
                            {"pipeline", meta.pipeline}, {"metrics", meta.metrics}};
  torch::serialize::OutputArchive archive;
  archive.write("meta", c10::IValue(j.dump()));
  torch::serialize::OutputArchive model_archive;
  model->save(model_archive);
  archive.write("model", model_archive);
  if (optimizer) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    archive.write("rng", generator.get_state());
  }
  return write_checkpoint_archive(path, archive);
}

CheckpointHeader write_checkpoint_archive(const std::string& path, torch::serialize::OutputArchive& archive) {
  // The archive is streamed into the file while it is hashed, so no copy of it (hundreds of MB for
  // a large vocabulary with its Adam state) is held in memory. The header goes first in the file but
  // needs the digest and size: a fixed-width placeholder is written, then overwritten at the end
  // (the size is zero-padded to 20 digits; readers parse it as a number).
  const auto header_line = [](const std::string& sha, std::uint64_t bytes) {
    return fmt::format("{} {} {} {:020d}\n", kMagic, kEnvelopeVersion, sha, bytes);
  };
  CheckpointHeader header{std::string(64, '0'), 0, 0};
  write_atomically(path, [&](int fd) {
    const auto placeholder = header_line(header.sha256, 0);
    write_all(fd, placeholder, path);
    Sha256 digest;
    archive.save_to([&](const void* data, std::size_t size) -> std::size_t {
      write_all(fd, std::string_view(static_cast<const char*>(data), size), path);
      digest.update(data, size);
      header.payload_bytes += size;
      return size;
    });
    header.sha256 = digest.hex();
    const auto line = header_line(header.sha256, header.payload_bytes);
    header.header_bytes = line.size();
    if (::pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size()))
      fail(path, std::string("cannot write the header: ") + std::strerror(errno));
  });
  return header;
}

void read_checkpoint_archive(const std::string& path, torch::serialize::InputArchive& archive, const at::Device& device) {
  open_archive(path, archive, device);
}

CheckpointMeta read_checkpoint_meta(const std::string& path) {
  torch::serialize::InputArchive archive;
  open_archive(path, archive, at::Device(at::kCPU));
  return meta_from_archive(archive, path);
}

void load_module_checked(torch::nn::Module& module, torch::serialize::InputArchive& archive, const std::string& path) {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> expected;
  for (const auto& item : module.named_parameters()) expected.emplace_back(item.key(), item.value().sizes().vec());
  for (const auto& item : module.named_buffers()) expected.emplace_back(item.key(), item.value().sizes().vec());
  module.load(archive);
  // LibTorch takes every tensor as the file has it (Tensor::set_), whatever its shape.
  auto now = module.named_parameters();
  auto buffers = module.named_buffers();
  for (const auto& [name, shape] : expected) {
    const auto* t = now.find(name);
    if (!t) t = buffers.find(name);
    if (t && t->sizes().vec() != shape)
      fail(path, fmt::format("the weights do not fit the model its metadata describes (another vocabulary or "
                             "configuration?): {} has shape [{}] in the file, [{}] expected",
                             name, fmt::join(t->sizes().vec(), ", "), fmt::join(shape, ", ")));
  }
}

LoadedModel load_checkpoint(const std::string& path, const at::Device& device) {
  torch::serialize::InputArchive archive;
  open_archive(path, archive, device);
  LoadedModel loaded;
  loaded.meta = meta_from_archive(archive, path);
  try {
    loaded.pipeline = TextPipeline::from_json(loaded.meta.pipeline);
    loaded.model = build_model(loaded.meta.config.model, static_cast<std::int64_t>(loaded.pipeline.src_vocab->size()),
                               static_cast<std::int64_t>(loaded.pipeline.tgt_vocab->size()), Vocab::kPad,
                               loaded.pipeline.shared_vocab);
    loaded.model->to(device);
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    load_module_checked(*loaded.model, model_archive, path);
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    fail(path, std::string("cannot rebuild the model: ") + e.what());
  }
  return loaded;
}

void load_training_state(const std::string& path, torch::optim::Optimizer& optimizer, bool restore_rng) {
  torch::serialize::InputArchive archive;
  const auto device = optimizer.param_groups().front().params().front().device();
  open_archive(path, archive, device);
  torch::serialize::InputArchive optimizer_archive;
  if (!archive.try_read("optimizer", optimizer_archive)) fail(path, "holds no optimizer state (a model-only export?)");
  optimizer.load(optimizer_archive);
  if (restore_rng) {
    at::Tensor state;
    if (!archive.try_read("rng", state)) fail(path, "holds no RNG state");
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state.to(at::kCPU));
  }
}

}  // namespace ts
