// SPDX-License-Identifier: GPL-3.0-or-later
// The checkpoint file format (ts/train/checkpoint.h): a header line over a safetensors payload,
// loaded as data only. Version-1 files (LibTorch archives) are refused and converted on request
// by upgrade_legacy_checkpoint, with identical weights, optimizer state and translations.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/optim/adam.h>
#include <torch/serialize/output-archive.h>

#include "test_utils.h"
#include "ts/decode/translator.h"
#include "ts/store/sha256.h"
#include "ts/train/checkpoint.h"
#include "ts/train/legacy_checkpoint.h"
#include "ts/train/trainer.h"

namespace ts {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string message_of(const std::function<void()>& f) { return test::message_of<CheckpointError>(f); }

struct Trained {
  ExperimentConfig config;
  PreparedData data;
  std::string checkpoint;
};

Trained train_tiny(const test::TempDir& dir, int steps = 15) {
  Trained t{test::tiny_config(), {}, ""};
  t.config.train.max_steps = steps;
  t.data = test::tiny_data(t.config);
  t.checkpoint = Trainer(t.config, t.data, {dir.str(), "tiny-deu.txt", "", nullptr}).run().last_checkpoint;
  return t;
}

TEST(CheckpointFormat, IsAHeaderLineOverASafetensorsPayload) {
  test::TempDir dir;
  const auto trained = train_tiny(dir);
  const auto bytes = read_all(trained.checkpoint);
  const auto newline = bytes.find('\n');
  ASSERT_NE(newline, std::string::npos);
  std::istringstream header(bytes.substr(0, newline));
  std::string magic, sha;
  int version = 0;
  std::uint64_t size = 0;
  header >> magic >> version >> sha >> size;
  EXPECT_EQ(magic, "TRANSFORMER-STUDIO-CHECKPOINT");
  EXPECT_EQ(version, 2);
  const auto payload = bytes.substr(newline + 1);
  EXPECT_EQ(payload.size(), size);
  EXPECT_EQ(sha256_hex(payload), sha);
  // Any safetensors reader can open the payload: metadata, weights, Adam moments and RNG.
  const SafetensorsReader reader(payload, "payload");
  const auto meta = nlohmann::json::parse(reader.metadata().at("transformer-studio"));
  EXPECT_EQ(meta["position"]["step"], 15);
  auto loaded = load_checkpoint(trained.checkpoint, at::Device(at::kCPU));
  std::size_t weights = 0;
  for (const auto& item : loaded.model->named_parameters()) {
    ++weights;
    EXPECT_TRUE(at::equal(reader.tensor("model." + item.key()), item.value())) << item.key();
  }
  std::size_t moments = 0;
  for (const auto& [name, entry] : reader.entries())
    if (name.rfind("optimizer.", 0) == 0 && name.find(".exp_avg_sq") != std::string::npos) ++moments;
  EXPECT_EQ(moments, weights);
  EXPECT_TRUE(reader.contains("rng.cpu"));
}

// Linux file names are bytes: a corpus whose path is not UTF-8 (here Latin-1) used to fail every
// checkpoint save with nlohmann's type_error 316.
TEST(CheckpointFormat, ACorpusPathThatIsNotUtf8IsKeptWithReplacementCharacters) {
  test::TempDir dir;
  auto config = test::tiny_config();
  config.train.max_steps = 2;
  const auto data = test::tiny_data(config);
  const auto summary = Trainer(config, data,
                               {dir.str(),
                                "/data/Stra\xdf"
                                "e-deu.txt",
                                "", nullptr})
                           .run();
  ASSERT_EQ(summary.status, RunStatus::kFinished) << summary.message;
  ASSERT_FALSE(summary.last_checkpoint.empty());
  EXPECT_EQ(read_checkpoint_meta(summary.last_checkpoint).corpus_path,
            "/data/Stra\xef\xbf\xbd"
            "e-deu.txt");
}

SafetensorsReader payload_of(const std::string& path) {
  const auto bytes = read_all(path);
  return SafetensorsReader(bytes.substr(bytes.find('\n') + 1), path);
}

// Rewrites `from` as `to` with its tensors passed through `edit` (under a correct checksum).
void rewrite(const std::string& from, const std::string& to, const std::function<void(NamedTensors&)>& edit) {
  const auto reader = payload_of(from);
  NamedTensors tensors;
  for (const auto& [name, entry] : reader.entries()) tensors.emplace_back(name, reader.tensor(name));
  edit(tensors);
  write_checkpoint_file(to, nlohmann::json::parse(reader.metadata().at("transformer-studio")), tensors);
}

TEST(CheckpointFormat, TensorsThatDoNotFitTheModelAreRefusedByName) {
  test::TempDir dir;
  const auto trained = train_tiny(dir, 2);
  const auto load = [&](const std::string& path) {
    return message_of([&] { load_checkpoint(path, at::Device(at::kCPU)); });
  };
  const auto original = payload_of(trained.checkpoint);
  std::string weight;  // a weight matrix
  for (const auto& [name, entry] : original.entries())
    if (name.rfind("model.", 0) == 0 && entry.dtype == at::kFloat && entry.shape.size() == 2) weight = name;
  ASSERT_FALSE(weight.empty());

  rewrite(trained.checkpoint, dir.file("missing.ckpt"), [&](NamedTensors& t) {
    t.erase(std::find_if(t.begin(), t.end(), [&](const auto& e) { return e.first == weight; }));
  });
  auto m = load(dir.file("missing.ckpt"));
  EXPECT_NE(m.find("missing.ckpt: lacks the weights " + weight), std::string::npos) << m;

  rewrite(trained.checkpoint, dir.file("extra.ckpt"),
          [](NamedTensors& t) { t.emplace_back("model.extra.weight", at::ones({2})); });
  m = load(dir.file("extra.ckpt"));
  EXPECT_NE(m.find("holds a tensor the model does not have: model.extra.weight"), std::string::npos) << m;

  rewrite(trained.checkpoint, dir.file("double.ckpt"), [&](NamedTensors& t) {
    for (auto& [name, tensor] : t)
      if (name == weight) tensor = tensor.to(at::kDouble);
  });
  m = load(dir.file("double.ckpt"));
  EXPECT_NE(m.find(weight + " is Double"), std::string::npos) << m;
  EXPECT_NE(m.find("Float ["), std::string::npos) << m;

  // Optimizer state for a parameter the model does not have, and a moment of the wrong shape.
  const auto resume = [&](const std::string& path) {
    return message_of([&] {
      auto loaded = load_checkpoint(path, at::Device(at::kCPU));
      torch::optim::Adam adam(loaded.model->parameters(), torch::optim::AdamOptions(1e-3));
      load_training_state(path, adam, false);
    });
  };
  rewrite(trained.checkpoint, dir.file("opt-extra.ckpt"),
          [](NamedTensors& t) { t.emplace_back("optimizer.9999.step", at::scalar_tensor(1, at::kLong)); });
  m = resume(dir.file("opt-extra.ckpt"));
  EXPECT_NE(m.find("optimizer state \"optimizer.9999.step\" for a parameter the model does not have"),
            std::string::npos)
      << m;
  rewrite(trained.checkpoint, dir.file("opt-shape.ckpt"), [](NamedTensors& t) {
    for (auto& [name, tensor] : t)
      if (name == "optimizer.0.exp_avg") tensor = at::zeros({1});
  });
  m = resume(dir.file("opt-shape.ckpt"));
  EXPECT_NE(m.find("optimizer state optimizer.0.exp_avg is Float [1]"), std::string::npos) << m;
  EXPECT_EQ(resume(trained.checkpoint), "no error");
}

// The 0.1 writer, kept here to make version-1 files: a LibTorch archive under a version-1 header.
void write_version1(const std::string& path, const LoadedModel& loaded, torch::optim::Optimizer& optimizer,
                    const nlohmann::json& meta) {
  torch::serialize::OutputArchive archive, model_archive, optimizer_archive;
  archive.write("meta", c10::IValue(meta.dump()));
  loaded.model->save(model_archive);
  archive.write("model", model_archive);
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("rng", at::detail::getDefaultCPUGenerator().get_state());
  std::string payload;
  archive.save_to([&](const void* d, std::size_t n) -> std::size_t {
    payload.append(static_cast<const char*>(d), n);
    return n;
  });
  std::ofstream(path, std::ios::binary) << "TRANSFORMER-STUDIO-CHECKPOINT 1 " << sha256_hex(payload) << " "
                                        << payload.size() << "\n"
                                        << payload;
}

TEST(CheckpointFormat, Version1IsRefusedAndUpgradedOnRequestToIdenticalTranslations) {
  test::TempDir dir;
  const auto trained = train_tiny(dir, 30);
  auto loaded = load_checkpoint(trained.checkpoint, at::Device(at::kCPU));
  torch::optim::Adam adam(loaded.model->parameters(), torch::optim::AdamOptions(1e-3));
  load_training_state(trained.checkpoint, adam, false);
  const auto meta = nlohmann::json::parse(payload_of(trained.checkpoint).metadata().at("transformer-studio"));
  const auto old_path = dir.file("old.ckpt");
  write_version1(old_path, loaded, adam, meta);

  const auto m = message_of([&] { load_checkpoint(old_path, at::Device(at::kCPU)); });
  EXPECT_NE(m.find("old.ckpt: was written by Transformer Studio 0.1"), std::string::npos) << m;
  EXPECT_NE(m.find("transformer-studio-cli upgrade-checkpoint " + old_path), std::string::npos) << m;

  const auto new_path = dir.file("upgraded.ckpt");
  const auto summary = upgrade_legacy_checkpoint(old_path, new_path);
  EXPECT_NE(summary.find("translation model"), std::string::npos) << summary;
  auto upgraded = load_checkpoint(new_path, at::Device(at::kCPU));
  EXPECT_EQ(upgraded.meta.position.step, 30);
  for (const auto& item : loaded.model->named_parameters())
    EXPECT_TRUE(at::equal(item.value(), upgraded.model->named_parameters()[item.key()])) << item.key();
  torch::optim::Adam adam2(upgraded.model->parameters(), torch::optim::AdamOptions(1e-3));
  load_training_state(new_path, adam2, false);
  const auto a = payload_of(trained.checkpoint), b = payload_of(new_path);
  for (const auto& [name, entry] : a.entries()) {
    if (name.rfind("optimizer.", 0) == 0) {
      EXPECT_TRUE(at::equal(a.tensor(name), b.tensor(name))) << name;
    }
  }
  Translator before(loaded.model, loaded.pipeline), after(upgraded.model, upgraded.pipeline);
  for (const auto& pair : trained.data.text.train)
    EXPECT_EQ(before.translate(pair.src, DecodeConfig{}).text, after.translate(pair.src, DecodeConfig{}).text);
  // Upgrading in place works, and a current file has nothing to upgrade.
  upgrade_legacy_checkpoint(old_path, old_path);
  EXPECT_NO_THROW(load_checkpoint(old_path, at::Device(at::kCPU)));
  EXPECT_NE(message_of([&] { upgrade_legacy_checkpoint(new_path, dir.file("x.ckpt")); }).find("nothing to upgrade"),
            std::string::npos);
}

}  // namespace
}  // namespace ts
