// Checkpoint files (see ts/train/checkpoint.h).
#include "ts/train/checkpoint.h"

#include "ts/store/sha256.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
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
  if (fs::is_directory(path, ec)) fail(path, "is a directory, not a checkpoint file");
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

TrainingPosition TrainingPosition::from_json(const nlohmann::json& j) {
  TrainingPosition p;
  p.step = j.at("step").get<std::int64_t>();
  p.epoch = j.at("epoch").get<std::int64_t>();
  p.batch_in_epoch = j.at("batch_in_epoch").get<std::int64_t>();
  p.tokens_seen = j.at("tokens_seen").get<std::int64_t>();
  p.elapsed_seconds = j.at("elapsed_seconds").get<double>();
  p.best_metric = j.at("best_metric").get<double>();
  p.has_best = j.at("has_best").get<bool>();
  p.bad_validations = j.at("bad_validations").get<std::int64_t>();
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
    loaded.model->load(model_archive);
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
