// SPDX-License-Identifier: GPL-3.0-or-later
// The ONNX graphs of a model: ONNX's checker and shape inference accept them for every architecture the
// configuration allows and every preset, their inputs and outputs are the documented ones, `export --format
// onnx` writes them beside the folder, and what cannot be exported says why. What they compute is held to
// LibTorch in ONNX Runtime by tests/cli/onnx_test.sh.
#include "ts/onnx/onnx_export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_utils.h"
#include "ts/train/checkpoint.h"
#include "ts/text/vocab.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

#define SKIP_WITHOUT_ONNX() \
  if (!onnx_export_available()) GTEST_SKIP() << "this build has no ONNX library (libonnx-dev)"

std::string signature(const OnnxValue& v) {
  std::string shape;
  for (const auto& d : v.shape) shape += (shape.empty() ? "" : ",") + d;
  return v.name + " " + v.type + " [" + shape + "]";
}

std::vector<std::string> signatures(const std::vector<OnnxValue>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) out.push_back(signature(v));
  return out;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

ModelConfig small(int layers = 2) {
  ModelConfig c;
  c.encoder_layers = layers;
  c.decoder_layers = layers;
  c.d_model = 16;
  c.heads = 4;
  c.d_ff = 24;
  c.max_positions = 40;
  return c;
}

TEST(OnnxExport, GraphsPassOnnxChecksWithTheDocumentedInputsAndOutputs) {
  SKIP_WITHOUT_ONNX();
  auto model = build_model(small(), 30, 25, Vocab::kPad, false);
  const auto graphs = build_onnx_graphs(model);
  const auto encoder = inspect_onnx_graph(graphs.encoder.bytes, "encoder.onnx");
  const auto decoder = inspect_onnx_graph(graphs.decoder_step.bytes, "decoder_step.onnx");
  for (const auto* g : {&encoder, &decoder}) {
    EXPECT_EQ(g->opset, kOnnxOpset);
    EXPECT_EQ(g->ir_version, kOnnxIrVersion);
    EXPECT_EQ(g->metadata.at("heads"), "4");
    EXPECT_EQ(g->metadata.at("max_length"), "1024");  // sinusoidal: the table's rows
  }
  EXPECT_EQ(signatures(encoder.inputs), (std::vector<std::string>{"src_tokens int64 [batch,src_len]"}));
  EXPECT_EQ(signatures(encoder.outputs),
            (std::vector<std::string>{"memory float [batch,src_len,16]", "src_pad_mask float [batch,1,1,src_len]",
                                      "cross_k_0 float [batch,4,src_len,4]", "cross_v_0 float [batch,4,src_len,4]",
                                      "cross_k_1 float [batch,4,src_len,4]", "cross_v_1 float [batch,4,src_len,4]"}));
  EXPECT_EQ(signatures(decoder.inputs),
            (std::vector<std::string>{"tokens int64 [batch]", "step int64 []", "src_pad_mask float [batch,1,1,src_len]",
                                      "cross_k_0 float [batch,4,src_len,4]", "cross_v_0 float [batch,4,src_len,4]",
                                      "cross_k_1 float [batch,4,src_len,4]", "cross_v_1 float [batch,4,src_len,4]",
                                      "self_k_0 float [batch,4,past_len,4]", "self_v_0 float [batch,4,past_len,4]",
                                      "self_k_1 float [batch,4,past_len,4]", "self_v_1 float [batch,4,past_len,4]"}));
  EXPECT_EQ(signatures(decoder.outputs),
            (std::vector<std::string>{"new_self_k_0 float [batch,4,past_len_plus_1,4]",
                                      "new_self_v_0 float [batch,4,past_len_plus_1,4]",
                                      "new_self_k_1 float [batch,4,past_len_plus_1,4]",
                                      "new_self_v_1 float [batch,4,past_len_plus_1,4]", "log_probs float [batch,25]"}));
  // Every input and output says what it is; the graph's own lists are what build_onnx_graphs reported.
  for (const auto* values : {&encoder.inputs, &encoder.outputs, &decoder.inputs, &decoder.outputs})
    for (const auto& v : *values) EXPECT_FALSE(v.doc.empty()) << v.name;
  EXPECT_EQ(signatures(graphs.decoder_step.outputs), signatures(decoder.outputs));
  // The weights keep their names in model.safetensors; the encoder holds no decoder weights but the
  // cross-attention keys and values, and the decoder none of the encoder's.
  EXPECT_TRUE(has(encoder.initializers, "encoder.1.self_attention.qkv.weight"));
  EXPECT_TRUE(has(encoder.initializers, "decoder.1.cross_attention.kv.weight"));
  EXPECT_FALSE(has(encoder.initializers, "decoder.0.cross_attention.q.weight"));
  EXPECT_FALSE(has(encoder.initializers, "tgt_embed.weight"));
  EXPECT_TRUE(has(decoder.initializers, "decoder.1.cross_attention.q.weight"));
  EXPECT_FALSE(has(decoder.initializers, "decoder.1.cross_attention.kv.weight"));
  EXPECT_FALSE(has(decoder.initializers, "src_embed.weight"));
  EXPECT_TRUE(has(decoder.initializers, "output_weight"));
  // Post-LN: no final norms; LayerNormalization is opset 17's operator.
  EXPECT_FALSE(has(encoder.initializers, "encoder_norm.weight"));
  EXPECT_TRUE(has(encoder.op_types, "LayerNormalization"));
  EXPECT_TRUE(has(decoder.op_types, "LogSoftmax"));
}

TEST(OnnxExport, EveryArchitectureTheConfigurationAllowsExports) {
  SKIP_WITHOUT_ONNX();
  for (int flags = 0; flags < 32; ++flags) {
    auto c = small(1);
    c.pre_norm = flags & 1;
    c.positions = flags & 2 ? Positions::kLearned : Positions::kSinusoidal;
    c.scale_embeddings = flags & 4;
    c.tie_output = flags & 8;
    c.share_embeddings = flags & 16;
    const std::int64_t tgt_vocab = c.share_embeddings ? 30 : 27;  // shared embeddings need one vocabulary
    auto model = build_model(c, 30, tgt_vocab, Vocab::kPad, c.share_embeddings);
    SCOPED_TRACE("pre_norm " + std::to_string(c.pre_norm) + ", " + positions_name(c.positions) + ", scale " +
                 std::to_string(c.scale_embeddings) + ", tie " + std::to_string(c.tie_output) + ", share " +
                 std::to_string(c.share_embeddings));
    const auto graphs = build_onnx_graphs(model);
    const auto encoder = inspect_onnx_graph(graphs.encoder.bytes, "encoder.onnx");
    const auto decoder = inspect_onnx_graph(graphs.decoder_step.bytes, "decoder_step.onnx");
    EXPECT_EQ(has(encoder.initializers, "encoder_norm.weight"), c.pre_norm);
    EXPECT_EQ(has(decoder.initializers, "decoder_norm.weight"), c.pre_norm);
    EXPECT_EQ(has(encoder.initializers, "positions.weight"), c.positions == Positions::kLearned);
    EXPECT_EQ(has(decoder.initializers, "sinusoid"), c.positions == Positions::kSinusoidal);
    EXPECT_EQ(has(encoder.initializers, "embed_scale"), c.scale_embeddings);
    EXPECT_EQ(has(decoder.initializers, "output_weight"), !c.tie_output);
    // Shared embeddings: the one table is src_embed, also in the decoder graph.
    EXPECT_EQ(has(decoder.initializers, "src_embed.weight"), c.share_embeddings);
    EXPECT_EQ(decoder.metadata.at("max_length"), c.positions == Positions::kLearned ? "40" : "1024");
  }
}

TEST(OnnxExport, ModelsOfEveryPresetExport) {
  SKIP_WITHOUT_ONNX();
  for (const auto& name : preset_names()) {
    SCOPED_TRACE(name);
    const auto config = preset(name);
    const bool shared = config.data.shared_vocab || config.model.share_embeddings;
    auto model = build_model(config.model, 40, shared ? 40 : 35, Vocab::kPad, shared);
    const auto graphs = build_onnx_graphs(model);
    EXPECT_EQ(inspect_onnx_graph(graphs.decoder_step.bytes, "decoder_step.onnx").outputs.back().name, "log_probs");
    EXPECT_EQ(inspect_onnx_graph(graphs.encoder.bytes, "encoder.onnx").outputs.size(),
              2 + 2 * static_cast<std::size_t>(config.model.decoder_layers));
  }
}

// A tiny model saved as a checkpoint, as training would leave it.
std::string tiny_checkpoint(const test::TempDir& dir) {
  const auto config = test::tiny_config();
  const auto data = test::tiny_data(config);
  auto model =
      build_model(config.model, static_cast<std::int64_t>(data.pipeline.src_vocab->size()),
                  static_cast<std::int64_t>(data.pipeline.tgt_vocab->size()), Vocab::kPad, data.pipeline.shared_vocab);
  CheckpointMeta meta;
  meta.config = config;
  meta.pipeline = data.pipeline.to_json();
  const auto path = dir.file("tiny.ckpt");
  save_checkpoint(path, meta, model, nullptr);
  return path;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(OnnxExport, ExportWritesTheGraphsBesideTheFolderAndAFolderExportRemovesThem) {
  SKIP_WITHOUT_ONNX();
  test::TempDir dir;
  const auto checkpoint = tiny_checkpoint(dir);
  const auto out = fs::path(dir.file("model"));
  const auto summary = export_model_as(checkpoint, out.string(), ExportFormat::kOnnx);
  for (const char* file : {"model.safetensors", "config.json", "README.md", "encoder.onnx", "decoder_step.onnx"}) {
    EXPECT_TRUE(fs::is_regular_file(out / file)) << file;
    EXPECT_TRUE(has(summary.files, (out / file).string())) << file;
  }
  std::uintmax_t bytes = 0;
  for (const auto& f : summary.files) bytes += fs::file_size(f);
  EXPECT_EQ(summary.bytes, bytes);
  // The files are the graphs, checked again as read back; the README lists their inputs.
  EXPECT_EQ(inspect_onnx_graph(read_file(out / "encoder.onnx"), "encoder.onnx").inputs.at(0).name, "src_tokens");
  EXPECT_EQ(inspect_onnx_graph(read_file(out / "decoder_step.onnx"), "decoder_step.onnx").inputs.at(1).name, "step");
  const auto readme = read_file(out / "README.md");
  EXPECT_NE(readme.find("## ONNX"), std::string::npos);
  EXPECT_NE(readme.find("`self_k_0` float [batch, 2, past_len, 16]"), std::string::npos) << readme;
  // The folder still loads as before.
  EXPECT_NO_THROW(load_checkpoint(out.string(), at::Device(at::kCPU)));
  // Exporting the folder again without ONNX leaves no graph that the new weights might not fit.
  export_model_as(checkpoint, out.string(), ExportFormat::kFolder);
  EXPECT_FALSE(fs::exists(out / "encoder.onnx"));
  EXPECT_FALSE(fs::exists(out / "decoder_step.onnx"));
  EXPECT_TRUE(fs::is_regular_file(out / "model.safetensors"));
}

TEST(OnnxExport, WhatCannotBeExportedSaysWhyAndWritesNothing) {
  test::TempDir dir;
  EXPECT_EQ(test::message_of<std::invalid_argument>([] { parse_export_format("tflite"); }),
            "unknown export format \"tflite\" (folder or onnx)");
  // A language model's folder (only its config.json is read before the refusal).
  const auto lm = fs::path(dir.file("lm"));
  fs::create_directories(lm);
  std::ofstream(lm / "config.json") << R"({"format": "transformer-studio-model", "version": 1, "kind": "lm"})";
  std::ofstream(lm / "model.safetensors") << "unused";
  const auto out = dir.file("out");
  const auto message =
      test::message_of<CheckpointError>([&] { export_model_as(lm.string(), out, ExportFormat::kOnnx); });
  if (onnx_export_available()) {
    EXPECT_EQ(message, lm.string() +
                           ": holds a language model: ONNX export is for translation models (export the "
                           "folder without --format onnx)");
  } else {
    EXPECT_NE(message.find("this build of Transformer Studio has no ONNX support"), std::string::npos) << message;
    EXPECT_NE(message.find("libonnx-dev"), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST(OnnxExport, ABuildWithoutOnnxSaysSoForEveryOnnxFunction) {
  if (onnx_export_available()) GTEST_SKIP() << "this build has ONNX: the refusals are the other build's";
  auto model = build_model(small(1), 30, 25, Vocab::kPad, false);
  const auto message = test::message_of<CheckpointError>([&] { build_onnx_graphs(model); });
  EXPECT_NE(message.find("has no ONNX support"), std::string::npos) << message;
}

}  // namespace
}  // namespace ts
