// SPDX-License-Identifier: GPL-3.0-or-later
// A translation model as two ONNX graphs, written beside a model folder's files so that any ONNX
// runtime (ONNX Runtime on servers, phones and in browsers, OpenVINO, TensorRT) translates with it:
//
//   encoder.onnx       src_tokens [batch, src_len] int64, padded with <pad> (0)
//                      -> memory [batch, src_len, d_model], src_pad_mask [batch, 1, 1, src_len],
//                         cross_k_N, cross_v_N [batch, heads, src_len, head_dim] per decoder layer N
//   decoder_step.onnx  tokens [batch] int64, step [] int64, src_pad_mask, cross_k_N, cross_v_N,
//                      self_k_N, self_v_N [batch, heads, past_len, head_dim] (past_len may be 0)
//                      -> log_probs [batch, tgt_vocab], new_self_k_N, new_self_v_N [.., past_len + 1, ..]
//
// They compute what TransformerImpl::encode, start and step compute (ts/model/transformer.h): the
// encoder runs once, the decoder one token per hypothesis and step with its self-attention keys and
// values passed back in, so greedy and beam search run in the caller's loop at the cost of ours.
// fp32, opset 17 (LayerNormalization), every weight under its name in model.safetensors. The graphs
// are built with ONNX's own C++ library (Debian: libonnx-dev) and pass its checker and shape
// inference before they are written. ONNX is an optional dependency: a build without it has
// onnx_export_available() false and refuses ONNX exports by saying so. docs/export.md ("ONNX")
// documents the graphs; examples/onnx/translate.js runs them in ONNX Runtime.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ts/model/transformer.h"
#include "ts/train/model_export.h"

namespace ts {

/// The ONNX operator set the graphs use: 17 is the first with LayerNormalization, and ONNX Runtime
/// (1.14 and later, also onnxruntime-web), OpenVINO and TensorRT 8.6 run it.
constexpr int kOnnxOpset = 17;
/// The IR version written: 8, the one that came with opset 17 (ONNX 1.12), whatever ONNX library
/// builds the graphs (Debian 13's 1.17 would write 10, which runtimes before ONNX Runtime 1.16 refuse).
constexpr int kOnnxIrVersion = 8;

/// False when this build has no ONNX library: every export below then refuses with a message that says so.
bool onnx_export_available();

/// One input or output of a graph: its name, element type ("int64", "float") and dimensions, each a
/// number or the name of a dynamic axis ("batch", "src_len", "past_len").
struct OnnxValue {
  std::string name, type;
  std::vector<std::string> shape;
  std::string doc;
};

/// A serialized ModelProto and what it declares.
struct OnnxGraph {
  std::string file;   // "encoder.onnx" or "decoder_step.onnx"
  std::string bytes;  // the ModelProto, serialized
  std::vector<OnnxValue> inputs, outputs;
};

struct OnnxGraphs {
  OnnxGraph encoder, decoder_step;
};

/// Builds both graphs for `model` (its weights as fp32, whatever device they are on) and checks
/// them with ONNX's checker and shape inference. Throws CheckpointError when this build has no
/// ONNX, or when the model cannot be written as ONNX (a graph over the 2 GB a protobuf can hold).
OnnxGraphs build_onnx_graphs(Transformer& model);

/// What a serialized graph declares, read back through ONNX's own parser after its checker and
/// shape inference accepted it (tests and `export` use it). Throws CheckpointError naming `what`
/// when the bytes are no valid model.
struct OnnxGraphInfo {
  std::int64_t ir_version = 0, opset = 0;
  std::vector<OnnxValue> inputs, outputs;
  std::vector<std::string> op_types;  // each operator once, sorted
  std::vector<std::string> initializers;
  std::map<std::string, std::string> metadata;
  std::size_t nodes = 0;
};
OnnxGraphInfo inspect_onnx_graph(const std::string& bytes, const std::string& what);

/// How `export` writes a model: "folder" (model.safetensors, config.json, tokenizers; the default)
/// or "onnx" (the same folder with encoder.onnx and decoder_step.onnx beside).
enum class ExportFormat { kFolder, kOnnx };
/// "folder" or "onnx"; anything else is a std::invalid_argument naming both.
ExportFormat parse_export_format(const std::string& name);

/// Exports the model of `checkpoint` (a checkpoint file or model folder, either kind for kFolder)
/// into `dir` as export_any_model does, and for kOnnx writes the graphs beside (translation models
/// only) with a README section on them. Graphs an earlier export left in `dir` are replaced, or
/// removed when this export writes none (they would not fit the new weights). Nothing is written
/// when an ONNX export is refused (no ONNX in this build, a language model). Throws CheckpointError.
ExportSummary export_model_as(const std::string& checkpoint, const std::string& dir, ExportFormat format);

}  // namespace ts
