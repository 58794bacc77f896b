// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target: the checkpoint loader (ts/train/checkpoint.h) and the safetensors reader under it
// (ts/model/safetensors.h): read_checkpoint_header, read_checkpoint_meta and load_checkpoint on
// hostile files. Only ts::CheckpointError (ts::SafetensorsError for selector 4) may escape, as
// documented; anything else, a crash or a sanitizer report is a bug.
//
// The input is written to one temp file (created once, rewritten per input). The selector byte
// picks what the rest of the input is:
//   0, 1 (and 5..255): the whole file, as is: header checks, size and SHA-256 refusals;
//   2: the metadata JSON text, stored in a safetensors payload under a correct header: what a
//      checkpoint with a valid checksum but hostile metadata does to the meta readers
//      (ExperimentConfig, TrainingPosition, format and kind checks);
//   3: a payload under a correct header (size and SHA-256 fixed up): the safetensors parser, then
//      the model rebuilt from the metadata and the tensors copied in (load_checkpoint);
//   4: the bytes as a bare safetensors buffer (as an exported model.safetensors): every tensor read.
// Version 1 payloads (LibTorch archives) are no longer parsed at all: the seed
// known-libtorch-segv-payload, which crashed LibTorch's reader, is now refused by its header.
//
// TS_FUZZ_WRITE_SEEDS=DIR writes the seed corpus (a real small checkpoint envelope, a truncated one, one
// with a flipped byte, a plain zip, a metadata seed) into DIR and exits.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "fuzz_util.h"
#include "ts/model/safetensors.h"
#include "ts/store/sha256.h"
#include "ts/text/tokenizer.h"
#include "ts/text/vocab.h"
#include "ts/train/checkpoint.h"
#include "ts/train/data.h"
#include <ATen/ATen.h>

namespace {

const std::string& temp_path() {
  static const std::string path = "/tmp/ts-fuzz-checkpoint-" + std::to_string(::getpid()) + ".ckpt";
  return path;
}

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  TS_FUZZ_CHECK(out.good(), "cannot write " + path);
}

std::string header_for(std::string_view payload) {
  return "TRANSFORMER-STUDIO-CHECKPOINT 2 " + ts::sha256_hex(std::string(payload)) + " " +
         std::to_string(payload.size()) + "\n";
}

std::string safetensors_bytes(const ts::NamedTensors& tensors, const std::map<std::string, std::string>& metadata) {
  std::string bytes;
  ts::write_safetensors(tensors, metadata, [&bytes](const void* data, std::size_t size) {
    bytes.append(static_cast<const char*>(data), size);
  });
  return bytes;
}

// A payload holding only the metadata `meta`, under a correct header; empty when `meta` cannot be
// written (not UTF-8: write_safetensors refuses it, and invalid headers are selector 4's job).
std::string file_with_meta(std::string_view meta) {
  std::string payload;
  try {
    payload = safetensors_bytes({}, {{"transformer-studio", std::string(meta)}});
  } catch (const ts::SafetensorsError&) {
    return {};
  }
  return header_for(payload) + payload;
}

void check_file(const std::string& bytes) {
  const std::string& path = temp_path();
  write_file(path, bytes);
  bool header_ok = false;
  try {
    const ts::CheckpointHeader header = ts::read_checkpoint_header(path);
    TS_FUZZ_CHECK(header.sha256.size() == 64, "a header's SHA-256 has 64 characters");
    TS_FUZZ_CHECK(header.header_bytes > 0 && header.header_bytes <= bytes.size(), "header size within the file");
    header_ok = true;
  } catch (const ts::CheckpointError& e) {
    TS_FUZZ_CHECK(std::string(e.what()).find(path) != std::string::npos, "CheckpointError names the file");
  }
  try {
    const ts::CheckpointMeta meta = ts::read_checkpoint_meta(path);
    TS_FUZZ_CHECK(header_ok, "read_checkpoint_meta accepted a file whose header was refused");
    TS_FUZZ_CHECK(meta.format == 1, "only format 1 is accepted");
    (void)meta.config.problems();
    (void)meta.position.to_json();
  } catch (const ts::CheckpointError& e) {
    TS_FUZZ_CHECK(std::string(e.what()).find(path) != std::string::npos, "CheckpointError names the file");
  }
  if (!header_ok) return;
  try {
    const ts::LoadedModel loaded = ts::load_checkpoint(path, at::Device(at::kCPU));
    TS_FUZZ_CHECK(loaded.model, "a loaded checkpoint has a model");
  } catch (const ts::CheckpointError& e) {
    TS_FUZZ_CHECK(std::string(e.what()).find(path) != std::string::npos, "CheckpointError names the file");
  }
}

void check_safetensors(std::string_view bytes) {
  try {
    const ts::SafetensorsReader reader{std::string(bytes), "fuzz.safetensors"};
    for (const auto& [name, entry] : reader.entries()) {
      const at::Tensor t = reader.tensor(name);
      TS_FUZZ_CHECK(t.sizes().vec() == entry.shape, "a tensor has the shape its header gives");
      TS_FUZZ_CHECK(static_cast<std::uint64_t>(t.numel()) * t.element_size() == entry.end - entry.begin,
                    "a tensor's bytes match its range");
    }
  } catch (const ts::SafetensorsError& e) {
    TS_FUZZ_CHECK(std::string(e.what()).rfind("fuzz.safetensors: ", 0) == 0, "SafetensorsError names the file");
  }
}

// ------------------------------------------------------------------ seeds

std::string seed_meta_json() {
  ts::ExperimentConfig config = ts::preset("tiny");
  ts::TextPipeline pipeline;
  pipeline.direction = {"en", "de", true};
  pipeline.src_language = {"en", "English"};
  pipeline.tgt_language = {"de", "German"};
  ts::TokenizerConfig word;
  pipeline.src_tokenizer = ts::make_tokenizer(word);
  pipeline.tgt_tokenizer = ts::make_tokenizer(word);
  pipeline.src_vocab = std::make_shared<ts::Vocab>(ts::Vocab::build({{"a", "small", "dog"}}));
  pipeline.tgt_vocab = std::make_shared<ts::Vocab>(ts::Vocab::build({{"ein", "kleiner", "hund"}}));
  ts::TrainingPosition position;
  position.step = 12;
  position.tokens_seen = 345;
  const nlohmann::json j = {{"format", 1},
                            {"config", config.to_json()},
                            {"position", position.to_json()},
                            {"corpus", "made-up.txt"},
                            {"pipeline", pipeline.to_json()},
                            {"metrics", {{"bleu", 1.5}}}};
  return j.dump();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_seed(const std::string& dir, const std::string& name, char selector, const std::string& body) {
  write_file(dir + "/" + name, std::string(1, selector) + body);
}

int write_seeds(const std::string& dir) {
  const std::string meta = seed_meta_json();
  // A real checkpoint envelope, written by the project's own writer (write_checkpoint_file, as
  // save_checkpoint does) with real metadata and one small tensor as "model.weight". (A full
  // save_checkpoint of the smallest model is ~40 KB: over the seed-size budget.)
  const ts::NamedTensors tensors = {{"model.weight", at::arange(6, at::kFloat).reshape({2, 3})},
                                    {"optimizer.0.step", at::scalar_tensor(3, at::kLong)},
                                    {"rng.cpu", at::zeros({16}, at::kByte)}};
  const std::string path = dir + "/real.ckpt.tmp";
  ts::write_checkpoint_file(path, nlohmann::json::parse(meta), tensors);
  const std::string real = read_file(path);
  std::remove(path.c_str());
  write_seed(dir, "real_checkpoint", 0, real);
  write_seed(dir, "truncated_checkpoint", 0, real.substr(0, real.size() * 2 / 3));
  std::string flipped = real;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x20);
  write_seed(dir, "flipped_byte_checkpoint", 1, flipped);
  // A plain zip, as torch.save would write it (local file header, then junk). The literal is split:
  // "\x00a..." would read as the one hex escape \x00a.
  write_seed(dir, "plain_zip", 0,
             std::string("PK\x03\x04\x14\x00\x00\x00\x00\x00"
                         "archive/data.pkl",
                         26));
  const std::string payload = safetensors_bytes(tensors, {{"transformer-studio", meta}});
  write_seed(dir, "payload_real", 3, payload);
  write_seed(dir, "safetensors_real", 4, payload);
  write_seed(dir, "safetensors_bf16_bool", 4,
             safetensors_bytes({{"b", at::ones({2, 2}, at::kBFloat16)},
                                {"m", at::ones({3}, at::kBool)},
                                {"s", at::scalar_tensor(1.5, at::kDouble)},
                                {"e", at::empty({0, 4})}},
                               {}));
  write_seed(dir, "header_only", 0, header_for("x").substr(0, 96) + "\n");
  write_seed(dir, "meta_json", 2, meta);
  write_seed(dir, "meta_lm_kind", 2, R"({"kind":"lm","format":1})");
  write_seed(dir, "meta_position", 2,
             R"({"format":1,"config":{},"position":{"step":1,"epoch":0,"batch_in_epoch":0,"tokens_seen":0,)"
             R"("elapsed_seconds":0.5,"best_metric":0,"has_best":false,"bad_validations":0},"pipeline":{}})");
  std::printf("seeds written to %s\n", dir.c_str());
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("TS_FUZZ_WRITE_SEEDS")) std::exit(write_seeds(dir));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ts::fuzz::Input input(data, size);
  switch (input.selector) {
    case 2:
      check_file(file_with_meta(input.rest));
      break;
    case 3:
      check_file(header_for(input.rest) + std::string(input.rest));
      break;
    case 4:
      check_safetensors(input.rest);
      break;
    default:
      check_file(std::string(input.rest));
      break;
  }
  return 0;
}
