// SPDX-License-Identifier: GPL-3.0-or-later
// Checkpoints that pass the envelope's checks (a correct SHA-256) yet do not fit: weights for
// another vocabulary, or a configuration asking for more memory than there is. They must be
// refused by name before LibTorch is handed mismatched tensors.
#include <gtest/gtest.h>

#include "test_utils.h"
#include "ts/lm/lm_trainer.h"
#include "ts/train/checkpoint.h"
#include "ts/train/trainer.h"

namespace ts {
namespace {

std::string message_of(const std::function<void()>& f) { return test::message_of<CheckpointError>(f); }

TEST(CheckpointMalformed, WeightsForAnotherVocabularyAreRefusedByName) {
  const auto config = test::tiny_config();
  const auto data = test::tiny_data(config);
  const auto src = static_cast<std::int64_t>(data.pipeline.src_vocab->size());
  const auto tgt = static_cast<std::int64_t>(data.pipeline.tgt_vocab->size());
  // The metadata describes this pipeline, but the weights were built for a larger vocabulary.
  auto model = build_model(config.model, src + 7, tgt + 3, Vocab::kPad, data.pipeline.shared_vocab);
  CheckpointMeta meta;
  meta.config = config;
  meta.pipeline = data.pipeline.to_json();
  test::TempDir dir;
  const auto path = dir.file("other-vocab.ckpt");
  save_checkpoint(path, meta, model, nullptr);
  const auto message = message_of([&] { load_checkpoint(path, at::Device(at::kCPU)); });
  EXPECT_NE(message.find("other-vocab.ckpt"), std::string::npos) << message;
  EXPECT_NE(message.find("] in the file"), std::string::npos) << message;
  EXPECT_NE(message.find("] expected"), std::string::npos) << message;  // names the tensor and both shapes
}

TEST(CheckpointMalformed, AConfigurationTooLargeForMemoryIsRefusedBeforeAllocating) {
  const auto config = test::tiny_config();
  const auto data = test::tiny_data(config);
  auto model =
      build_model(config.model, static_cast<std::int64_t>(data.pipeline.src_vocab->size()),
                  static_cast<std::int64_t>(data.pipeline.tgt_vocab->size()), Vocab::kPad, data.pipeline.shared_vocab);
  CheckpointMeta meta;
  meta.config = config;
  meta.config.model.d_model = 1 << 20;  // a tampered configuration: ~10^13 weights
  meta.config.model.d_ff = 1 << 22;
  meta.config.model.heads = 1;
  meta.pipeline = data.pipeline.to_json();
  test::TempDir dir;
  const auto path = dir.file("huge.ckpt");
  save_checkpoint(path, meta, model, nullptr);
  const auto message = message_of([&] { load_checkpoint(path, at::Device(at::kCPU)); });
  EXPECT_NE(message.find("huge.ckpt"), std::string::npos) << message;
  EXPECT_NE(message.find("needs about"), std::string::npos) << message;
}

}  // namespace
}  // namespace ts
