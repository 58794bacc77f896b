// SPDX-License-Identifier: GPL-3.0-or-later
// ONNX export (see ts/onnx/onnx_export.h): the encoder and decoder-step graphs written node by node
// with ONNX's protobuf classes, each block mirroring its LibTorch counterpart in
// core/src/model/transformer.cpp and attention.cpp. Built without ONNX (TS_HAVE_ONNX undefined),
// only the refusals are left.
#include "ts/onnx/onnx_export.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#ifdef TS_HAVE_ONNX
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#endif

#include "ts/lm/lm_export.h"
#include "ts/store/atomic_file.h"
#include "ts/text/vocab.h"
#include "ts/train/checkpoint.h"

namespace ts {

namespace fs = std::filesystem;

namespace {

constexpr const char* kEncoderFile = "encoder.onnx";
constexpr const char* kDecoderFile = "decoder_step.onnx";

constexpr const char* kNoOnnx =
    "this build of Transformer Studio has no ONNX support (it was built without ONNX's C++ library, the "
    "Debian package libonnx-dev): export without --format onnx, or rebuild with libonnx-dev installed";

// One file of the folder, written atomically like the others (failures as CheckpointError).
void write_graph_file(const fs::path& path, std::string_view bytes) {
  try {
    write_file_atomically(path.string(), bytes);
  } catch (const FileWriteError& e) {
    throw CheckpointError(e.what());
  }
}

std::string describe(const OnnxValue& v) {
  std::string shape;
  for (const auto& d : v.shape) shape += (shape.empty() ? "" : ", ") + d;
  return fmt::format("`{}` {} [{}]", v.name, v.type, shape);
}

// The README section on the graphs, their signatures listed from the graphs themselves.
std::string readme_section(const OnnxGraphs& graphs) {
  std::string text =
      "\n## ONNX\n\n"
      "`encoder.onnx` and `decoder_step.onnx` compute the model in fp32 (ONNX opset " +
      std::to_string(kOnnxOpset) +
      "): the encoder runs once\nper batch of sentences, the decoder step once per generated token, with the "
      "self-attention keys and values\nof the earlier steps passed back in. Greedy and beam search in ONNX Runtime: "
      "examples/onnx/translate.js\nin the Transformer Studio sources; docs/export.md (\"ONNX\") describes the "
      "graphs.\n";
  for (const auto* g : {&graphs.encoder, &graphs.decoder_step}) {
    text += "\n`" + g->file + "` inputs:\n";
    for (const auto& v : g->inputs) text += "- " + describe(v) + ": " + v.doc + "\n";
    text += "\noutputs:\n";
    for (const auto& v : g->outputs) text += "- " + describe(v) + ": " + v.doc + "\n";
  }
  return text;
}

}  // namespace

#ifdef TS_HAVE_ONNX

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "ONNX raw_data is little-endian: tensors are copied as they are");

// A protobuf message cannot exceed 2 GB; the weights are inside the graph, with room for the rest.
constexpr std::uint64_t kMaxWeightBytes = (1ULL << 31) - (64ULL << 20);

using Attribute = onnx::AttributeProto;

Attribute attr(const std::string& name, std::int64_t value) {
  Attribute a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

Attribute attr(const std::string& name, float value) {
  Attribute a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
  return a;
}

Attribute attr(const std::string& name, const std::vector<std::int64_t>& values) {
  Attribute a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (auto v : values) a.add_ints(v);
  return a;
}

std::string type_name(int elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT:
      return "float";
    case onnx::TensorProto::INT64:
      return "int64";
    case onnx::TensorProto::BOOL:
      return "bool";
    default:
      return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elem_type));
  }
}

OnnxValue read_value(const onnx::ValueInfoProto& v) {
  OnnxValue out;
  out.name = v.name();
  out.doc = v.doc_string();
  const auto& tensor = v.type().tensor_type();
  out.type = type_name(tensor.elem_type());
  for (const auto& d : tensor.shape().dim())
    out.shape.push_back(d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param());
  return out;
}

// Adds nodes, constants and weights to one graph. Values are named "<scope>/<what>" after the
// module they belong to (encoder.0.self_attention/scores), so a graph viewer reads like the model.
class GraphWriter {
 public:
  explicit GraphWriter(onnx::GraphProto& graph) : graph_(graph) {}

  /// A graph input: its name is taken before any node names a value.
  void input(const std::string& name, int elem_type, const std::vector<std::string>& shape, const std::string& doc) {
    if (!names_.insert(name).second) throw std::logic_error("ONNX export: the input name " + name + " is taken");
    declare(graph_.add_input(), name, elem_type, shape, doc);
  }
  /// A graph output: a value a node computed under exactly this name.
  void output(const std::string& name, int elem_type, const std::vector<std::string>& shape, const std::string& doc) {
    if (names_.count(name) == 0) throw std::logic_error("ONNX export: no value named " + name);
    declare(graph_.add_output(), name, elem_type, shape, doc);
  }

  /// A tensor stored in the graph under `name` (a weight or a constant), once however often it is used.
  std::string initializer(const std::string& name, const at::Tensor& values) {
    if (!initializers_.insert(name).second) return name;
    const bool integer = values.scalar_type() == at::kLong;
    const auto t = values.detach().to(at::kCPU, integer ? at::kLong : at::kFloat).contiguous();
    weight_bytes_ += t.nbytes();
    if (weight_bytes_ > kMaxWeightBytes)
      throw CheckpointError(
          fmt::format("the model's weights are more than the 2 GB one ONNX file can hold with its "
                      "graph ({:.2f} GB and counting)",
                      static_cast<double>(weight_bytes_) / 1e9));
    auto* init = graph_.add_initializer();
    init->set_name(name);
    init->set_data_type(integer ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT);
    for (auto d : t.sizes()) init->add_dims(d);
    init->set_raw_data(std::string(static_cast<const char*>(t.data_ptr()), t.nbytes()));
    return name;
  }
  std::string ints(const std::string& name, const std::vector<std::int64_t>& values) {
    return initializer(name, at::tensor(values, at::kLong));
  }
  std::string scalar(const std::string& name, float value) {
    return initializer(name, at::scalar_tensor(value, at::kFloat));
  }

  /// One node; its outputs are named `scope/what` (made unique). Returns the outputs' names.
  std::vector<std::string> node(const std::string& op, const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs,
                                const std::vector<Attribute>& attributes = {}) {
    auto* n = graph_.add_node();
    n->set_op_type(op);
    for (const auto& i : inputs) n->add_input(i);
    std::vector<std::string> names;
    for (const auto& o : outputs) {
      names.push_back(unique(o));
      n->add_output(names.back());
    }
    n->set_name(names.front() + ":" + op);
    for (const auto& a : attributes) *n->add_attribute() = a;
    return names;
  }
  /// A node with one output.
  std::string op(const std::string& op_type, const std::vector<std::string>& inputs, const std::string& output,
                 const std::vector<Attribute>& attributes = {}) {
    return node(op_type, inputs, {output}, attributes).front();
  }

 private:
  void declare(onnx::ValueInfoProto* v, const std::string& name, int elem_type, const std::vector<std::string>& shape,
               const std::string& doc) {
    v->set_name(name);
    v->set_doc_string(doc);
    auto* tensor = v->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elem_type);
    auto* dims = tensor->mutable_shape();
    for (const auto& d : shape) {
      auto* dim = dims->add_dim();
      if (!d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; }))
        dim->set_dim_value(std::stoll(d));
      else
        dim->set_dim_param(d);
    }
  }
  std::string unique(const std::string& name) {
    if (names_.insert(name).second) return name;
    for (int i = 2;; ++i)
      if (const auto candidate = fmt::format("{}_{}", name, i); names_.insert(candidate).second) return candidate;
  }

  onnx::GraphProto& graph_;
  std::set<std::string> names_, initializers_;
  std::uint64_t weight_bytes_ = 0;
};

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kInt64 = onnx::TensorProto::INT64;

// Builds the two graphs of one model. Each function below names the LibTorch code it follows.
class OnnxBuilder {
 public:
  explicit OnnxBuilder(Transformer& model) : model_(model), c_(model->config()) {
    for (const auto& p : model->named_parameters()) weights_[p.key()] = p.value();
    for (const auto& b : model->named_buffers()) weights_[b.key()] = b.value();
    d_ = c_.d_model;
    heads_ = c_.heads;
    head_dim_ = d_ / heads_;
    src_table_ = "src_embed.weight";
    tgt_table_ = c_.share_embeddings ? src_table_ : "tgt_embed.weight";
    output_weight_ = c_.tie_output ? tgt_table_ : "output_weight";
    positions_ = model->learned_positions() ? "positions.weight" : "sinusoid";
  }

  onnx::ModelProto encoder() {
    auto m = new_model("transformer-studio-encoder",
                       "Encodes padded source sentences once: the encoder output, the source padding mask and every "
                       "decoder layer's cross-attention keys and values (TransformerImpl::encode and start).");
    GraphWriter g(*m.mutable_graph());
    g.input("src_tokens", kInt64, {"batch", "src_len"},
            "source token ids (config.json pipeline.src_vocab), each row ending with </s> (3), padded with <pad> (0)");
    const std::string src = "src_tokens";
    const auto batch = g.op("Shape", {src}, "batch", {attr("start", std::int64_t{0}), attr("end", std::int64_t{1})});
    const auto length = g.op("Shape", {src}, "src_len", {attr("start", std::int64_t{1}), attr("end", std::int64_t{2})});

    // padding_mask (attention.cpp): -inf where a key is <pad>, 0 elsewhere, [B, 1, 1, S].
    const auto pad_id = g.initializer("pad_id", at::scalar_tensor(model_->pad_id(), at::kLong));
    const auto is_pad = g.op("Equal", {src, pad_id}, "is_pad");
    const auto mask = g.op(
        "Where", {is_pad, g.scalar("minus_infinity", -std::numeric_limits<float>::infinity()), g.scalar("zero", 0.0F)},
        "pad_mask");
    const auto src_mask = g.op("Unsqueeze", {mask, g.ints("axes_1_2", {1, 2})}, "src_pad_mask");

    // embed (transformer.cpp): embedding × √d (with scale_embeddings) + the first S position vectors.
    auto x3 = embed(g, src_table_, src, "src");
    x3 = g.op("Add",
              {x3, g.op("Slice",
                        {g.initializer(positions_, param(positions_)), g.ints("zero_1d", {0}), length,
                         g.ints("zero_1d", {0})},
                        "src/positions")},
              "src/embedded");
    // The layers work on rows [B·S, D] (Gemm takes the weights as stored, [out, in]); attention
    // reshapes to [B, S, H, K] with the batch size of this call.
    const auto row_shape = g.ints("rows_d_model", {-1, d_});
    auto x = g.op("Reshape", {x3, row_shape}, "src/rows");
    const auto heads_shape = g.op("Concat", {batch, g.ints("minus1_heads_head_dim", {-1, heads_, head_dim_})},
                                  "heads_shape", {attr("axis", std::int64_t{0})});
    for (int i = 0; i < c_.encoder_layers; ++i) {
      const auto scope = fmt::format("encoder.{}", i);
      // EncoderLayerImpl::forward: self-attention, then the feed-forward, each a residual sublayer.
      x = residual(g, x, scope + ".norm1", [&](const std::string& y) {
        return self_attention(g, y, scope + ".self_attention", heads_shape, src_mask);
      });
      x = residual(g, x, scope + ".norm2", [&](const std::string& y) { return feed_forward(g, y, scope + ".ff"); });
    }
    if (c_.pre_norm) x = layer_norm(g, x, "encoder_norm");
    const auto memory = g.op("Reshape", {x, g.op("Shape", {x3}, "src/shape")}, "memory");
    g.output(memory, kFloat, {"batch", "src_len", std::to_string(d_)},
             "the encoder output (TransformerImpl::encode), for inspection: the decoder step reads "
             "cross_k_N/cross_v_N");
    g.output(src_mask, kFloat, {"batch", "1", "1", "src_len"},
             "0 where a source token is attended to, -inf on <pad>: pass it to every decoder step");
    for (int i = 0; i < c_.decoder_layers; ++i) {
      // TransformerImpl::start: each decoder layer's cross-attention keys and values, projected once.
      const auto module = fmt::format("decoder.{}.cross_attention", i);
      const auto kv = linear(g, x, module + ".kv", module + "/kv");
      const auto parts =
          g.node("Split", {kv}, {module + "/k_rows", module + "/v_rows"}, {attr("axis", std::int64_t{1})});
      for (std::size_t part = 0; part < 2; ++part) {
        const auto name = fmt::format("cross_{}_{}", part == 0 ? "k" : "v", i);
        g.output(split_heads(g, parts[part], heads_shape, {0, 2, 1, 3}, name), kFloat,
                 {"batch", std::to_string(heads_), "src_len", std::to_string(head_dim_)},
                 fmt::format("decoder layer {}'s cross-attention {} (fixed for the sentence)", i,
                             part == 0 ? "keys" : "values"));
      }
    }
    check(m, kEncoderFile);
    return m;
  }

  onnx::ModelProto decoder_step() {
    auto m = new_model("transformer-studio-decoder-step",
                       "One decoding step for every row of a batch: the log-probabilities of the next target token and "
                       "the self-attention keys and values with this step appended (TransformerImpl::step).");
    GraphWriter g(*m.mutable_graph());
    const std::string heads = std::to_string(heads_), head_dim = std::to_string(head_dim_);
    g.input("tokens", kInt64, {"batch"},
            "each row's last target token: <s> (2) at step 0, then the token chosen before");
    g.input("step", kInt64, {},
            "the position of `tokens`: 0 for <s>, then 1, 2, ... (the number of tokens in self_k_N); below the "
            "model's max_length (config.json)");
    g.input("src_pad_mask", kFloat, {"batch", "1", "1", "src_len"}, "the encoder's src_pad_mask, rows as `tokens`");
    for (int i = 0; i < c_.decoder_layers; ++i)
      for (const char* kv : {"k", "v"})
        g.input(fmt::format("cross_{}_{}", kv, i), kFloat, {"batch", heads, "src_len", head_dim},
                fmt::format("the encoder's cross_{}_{}, rows as `tokens`", kv, i));
    for (int i = 0; i < c_.decoder_layers; ++i)
      for (const char* kv : {"k", "v"})
        g.input(fmt::format("self_{}_{}", kv, i), kFloat, {"batch", heads, "past_len", head_dim},
                fmt::format("decoder layer {}'s self-attention {} of the earlier steps: new_self_{}_{} of the step "
                            "before, [batch, {}, 0, {}] at step 0",
                            i, kv[0] == 'k' ? "keys" : "values", kv, i, heads, head_dim));

    // TransformerImpl::step: the token's embedding (× √d) plus the vector of position `step`.
    auto y = embed(g, tgt_table_, "tokens", "tgt");
    const auto position = g.op("Gather", {g.initializer(positions_, param(positions_)), "step"}, "tgt/position");
    y = g.op("Add", {y, position}, "tgt/embedded");
    // One row per hypothesis: [B, D]; heads are [B, H, 1, K].
    const auto heads_shape = g.ints("minus1_heads_1_head_dim", {-1, heads_, 1, head_dim_});
    for (int i = 0; i < c_.decoder_layers; ++i) {
      const auto scope = fmt::format("decoder.{}", i);
      // DecoderLayerImpl::step: self-attention over the cache with this step appended.
      y = residual(g, y, scope + ".norm1", [&](const std::string& h) {
        const auto module = scope + ".self_attention";
        const auto qkv = linear(g, h, module + ".qkv", module + "/qkv");
        const auto parts = g.node("Split", {qkv}, {module + "/q_row", module + "/k_row", module + "/v_row"},
                                  {attr("axis", std::int64_t{1})});
        const auto q = g.op("Reshape", {parts[0], heads_shape}, module + "/q");
        std::string cache[2];
        for (int part = 0; part < 2; ++part) {
          const char* kv = part == 0 ? "k" : "v";
          const auto now = g.op("Reshape", {parts[static_cast<std::size_t>(part) + 1], heads_shape}, module + "/" + kv);
          const auto name = fmt::format("new_self_{}_{}", kv, i);
          cache[part] = g.op("Concat", {fmt::format("self_{}_{}", kv, i), now}, name, {attr("axis", std::int64_t{2})});
          g.output(name, kFloat, {"batch", heads, "past_len_plus_1", head_dim},
                   fmt::format("self_{}_{} with this step appended: the next step's self_{}_{}", kv, i, kv, i));
        }
        // Every cached position is in the past: no mask.
        return attend(g, q, cache[0], cache[1], "", module);
      });
      // Cross-attention over the encoder's keys and values, hiding the source padding.
      y = residual(g, y, scope + ".norm2", [&](const std::string& h) {
        const auto module = scope + ".cross_attention";
        const auto q = g.op("Reshape", {linear(g, h, module + ".q", module + "/q_row"), heads_shape}, module + "/q");
        return attend(g, q, fmt::format("cross_k_{}", i), fmt::format("cross_v_{}", i), "src_pad_mask", module);
      });
      y = residual(g, y, scope + ".norm3", [&](const std::string& h) { return feed_forward(g, h, scope + ".ff"); });
    }
    if (c_.pre_norm) y = layer_norm(g, y, "decoder_norm");
    // project: output_weight · h + output_bias, then <pad> and <s> are never produced (-inf).
    const auto logits = g.op(
        "Gemm",
        {y, g.initializer(output_weight_, param(output_weight_)), g.initializer("output_bias", param("output_bias"))},
        "logits", {attr("transB", std::int64_t{1})});
    auto never = at::zeros({model_->tgt_vocab_size()}, at::kFloat);
    never[model_->pad_id()] = -std::numeric_limits<float>::infinity();
    never[Vocab::kBos] = -std::numeric_limits<float>::infinity();
    const auto allowed = g.op("Add", {logits, g.initializer("never_produced", never)}, "logits_allowed");
    g.op("LogSoftmax", {allowed}, "log_probs", {attr("axis", std::int64_t{-1})});
    g.output("log_probs", kFloat, {"batch", std::to_string(model_->tgt_vocab_size())},
             "log-probabilities of the next token (config.json pipeline.tgt_vocab); -inf for <pad> (0) and <s> (2)");
    check(m, kDecoderFile);
    return m;
  }

 private:
  onnx::ModelProto new_model(const std::string& name, const std::string& doc) {
    onnx::ModelProto m;
    m.set_ir_version(kOnnxIrVersion);
    m.set_producer_name("transformer-studio");
    m.set_producer_version(TS_ONNX_PRODUCER_VERSION);
    m.set_domain("org.transformer-studio");
    m.set_model_version(1);
    m.set_doc_string(doc + " See docs/export.md (\"ONNX\").");
    auto* opset = m.add_opset_import();
    opset->set_domain("");
    opset->set_version(kOnnxOpset);
    const std::pair<const char*, std::string> metadata[] = {
        {"architecture", fmt::format("{}+{} layers, d_model {}, {} heads, d_ff {}, {}, {} positions", c_.encoder_layers,
                                     c_.decoder_layers, c_.d_model, c_.heads, c_.d_ff,
                                     c_.pre_norm ? "pre-LN" : "post-LN", positions_name(c_.positions))},
        {"decoder_layers", std::to_string(c_.decoder_layers)},
        {"heads", std::to_string(heads_)},
        {"head_dim", std::to_string(head_dim_)},
        {"max_length", std::to_string(model_->max_length())},
        {"src_vocab_size", std::to_string(model_->src_vocab_size())},
        {"tgt_vocab_size", std::to_string(model_->tgt_vocab_size())},
        {"special_ids",
         fmt::format("pad {}, unk {}, bos {}, eos {}", Vocab::kPad, Vocab::kUnk, Vocab::kBos, Vocab::kEos)}};
    for (const auto& [key, value] : metadata) {
      auto* p = m.add_metadata_props();
      p->set_key(key);
      p->set_value(value);
    }
    m.mutable_graph()->set_name(name);
    return m;
  }

  const at::Tensor& param(const std::string& name) const {
    const auto it = weights_.find(name);
    if (it == weights_.end()) throw CheckpointError("ONNX export: the model has no tensor " + name);
    return it->second;
  }

  // Linear layer `module` (weight [out, in], bias [out]) on rows x [N, in]: Gemm with transB.
  std::string linear(GraphWriter& g, const std::string& x, const std::string& module, const std::string& out) {
    return g.op("Gemm",
                {x, g.initializer(module + ".weight", param(module + ".weight")),
                 g.initializer(module + ".bias", param(module + ".bias"))},
                out, {attr("transB", std::int64_t{1})});
  }

  // LayerNorm (eps 1e-6) over the last axis.
  std::string layer_norm(GraphWriter& g, const std::string& x, const std::string& module) {
    return g.op("LayerNormalization",
                {x, g.initializer(module + ".weight", param(module + ".weight")),
                 g.initializer(module + ".bias", param(module + ".bias"))},
                module + "/out", {attr("axis", std::int64_t{-1}), attr("epsilon", 1e-6F)});
  }

  // residual (transformer.cpp): pre-LN x + f(norm(x)), post-LN norm(x + f(x)).
  std::string residual(GraphWriter& g, const std::string& x, const std::string& norm,
                       const std::function<std::string(const std::string&)>& f) {
    const auto scope = norm.substr(0, norm.rfind('.'));
    if (c_.pre_norm) return g.op("Add", {x, f(layer_norm(g, x, norm))}, scope + "/residual");
    return layer_norm(g, g.op("Add", {x, f(x)}, scope + "/residual"), norm);
  }

  // FeedForwardImpl::forward: fc2(relu(fc1(x))).
  std::string feed_forward(GraphWriter& g, const std::string& x, const std::string& module) {
    const auto hidden = g.op("Relu", {linear(g, x, module + ".fc1", module + "/fc1")}, module + "/relu");
    return linear(g, hidden, module + ".fc2", module + "/fc2");
  }

  // Embedding lookup × √d_model (TransformerImpl::embed, without the positions).
  std::string embed(GraphWriter& g, const std::string& table, const std::string& tokens, const std::string& side) {
    auto x = g.op("Gather", {g.initializer(table, param(table)), tokens}, side + "/embedding");
    if (!c_.scale_embeddings) return x;
    const auto scale = g.scalar("embed_scale", static_cast<float>(std::sqrt(static_cast<double>(d_))));
    return g.op("Mul", {x, scale}, side + "/scaled");
  }

  // MultiHeadAttentionImpl::split_heads on rows [B·T, D]: [B, T, H, K], then transposed by `perm`.
  std::string split_heads(GraphWriter& g, const std::string& rows, const std::string& heads_shape,
                          const std::vector<std::int64_t>& perm, const std::string& out) {
    return g.op("Transpose", {g.op("Reshape", {rows, heads_shape}, out + "_split")}, out, {attr("perm", perm)});
  }

  // MultiHeadAttentionImpl::attend: softmax(q kᵀ / √K + mask) v over heads q [B, H, T, K] and k, v
  // [B, H, S, K] (k given as kᵀ [B, H, K, S] when `k_transposed`); the context back to rows [B·T, D],
  // then the output projection.
  std::string attend(GraphWriter& g, const std::string& q, const std::string& k, const std::string& v,
                     const std::string& mask, const std::string& module, bool k_transposed = false) {
    const auto kt = k_transposed ? k
                                 : g.op("Transpose", {k}, module + "/k_transposed",
                                        {attr("perm", std::vector<std::int64_t>{0, 1, 3, 2})});
    const auto inverse_sqrt =
        g.scalar("inverse_sqrt_head_dim", static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim_))));
    auto scores = g.op("Mul", {g.op("MatMul", {q, kt}, module + "/q_k"), inverse_sqrt}, module + "/scores");
    if (!mask.empty()) scores = g.op("Add", {scores, mask}, module + "/masked_scores");
    const auto weights = g.op("Softmax", {scores}, module + "/weights", {attr("axis", std::int64_t{-1})});
    const auto context = g.op("Transpose", {g.op("MatMul", {weights, v}, module + "/context")}, module + "/context_t",
                              {attr("perm", std::vector<std::int64_t>{0, 2, 1, 3})});
    const auto rows = g.op("Reshape", {context, g.ints("rows_d_model", {-1, d_})}, module + "/context_rows");
    return linear(g, rows, module + ".out", module + "/out");
  }

  // EncoderLayerImpl's self-attention on rows [B·S, D] with the source padding mask.
  std::string self_attention(GraphWriter& g, const std::string& x, const std::string& module,
                             const std::string& heads_shape, const std::string& mask) {
    const auto qkv = linear(g, x, module + ".qkv", module + "/qkv");
    const auto parts = g.node("Split", {qkv}, {module + "/q_rows", module + "/k_rows", module + "/v_rows"},
                              {attr("axis", std::int64_t{1})});
    const auto q = split_heads(g, parts[0], heads_shape, {0, 2, 1, 3}, module + "/q");
    const auto kt = split_heads(g, parts[1], heads_shape, {0, 2, 3, 1}, module + "/k_transposed");  // [B, H, K, S]
    const auto v = split_heads(g, parts[2], heads_shape, {0, 2, 1, 3}, module + "/v");
    return attend(g, q, kt, v, mask, module, /*k_transposed=*/true);
  }

  // The checker and shape inference (strict, types checked) accept the graph, or the export fails.
  void check(onnx::ModelProto& m, const std::string& what) {
    try {
      onnx::checker::check_model(m);
      onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(/*check_type=*/true, /*error_mode=*/1));
    } catch (const std::exception& e) {
      throw CheckpointError(what + ": the graph fails ONNX's checks: " + e.what());
    }
    m.mutable_graph()->clear_value_info();  // inferred shapes of intermediate values: not stored
  }

  Transformer& model_;
  const ModelConfig& c_;
  std::map<std::string, at::Tensor> weights_;
  std::int64_t d_ = 0, heads_ = 0, head_dim_ = 0;
  std::string src_table_, tgt_table_, output_weight_, positions_;
};

OnnxGraph finish(const onnx::ModelProto& m, const std::string& file) {
  OnnxGraph graph;
  graph.file = file;
  for (const auto& v : m.graph().input()) graph.inputs.push_back(read_value(v));
  for (const auto& v : m.graph().output()) graph.outputs.push_back(read_value(v));
  if (!m.SerializeToString(&graph.bytes)) throw CheckpointError(file + ": the graph could not be serialized");
  return graph;
}

}  // namespace

bool onnx_export_available() { return true; }

OnnxGraphs build_onnx_graphs(Transformer& model) {
  torch::NoGradGuard no_grad;
  OnnxBuilder builder(model);
  OnnxGraphs graphs;
  graphs.encoder = finish(builder.encoder(), kEncoderFile);
  graphs.decoder_step = finish(builder.decoder_step(), kDecoderFile);
  return graphs;
}

OnnxGraphInfo inspect_onnx_graph(const std::string& bytes, const std::string& what) {
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes)) throw CheckpointError(what + ": not an ONNX model");
  try {
    onnx::checker::check_model(m);
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type=*/true, /*error_mode=*/1));
  } catch (const std::exception& e) {
    throw CheckpointError(what + ": fails ONNX's checks: " + e.what());
  }
  OnnxGraphInfo info;
  info.ir_version = m.ir_version();
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") info.opset = o.version();
  for (const auto& v : m.graph().input()) info.inputs.push_back(read_value(v));
  for (const auto& v : m.graph().output()) info.outputs.push_back(read_value(v));
  std::set<std::string> ops;
  for (const auto& n : m.graph().node()) ops.insert(n.op_type());
  info.op_types.assign(ops.begin(), ops.end());
  for (const auto& t : m.graph().initializer()) info.initializers.push_back(t.name());
  for (const auto& p : m.metadata_props()) info.metadata[p.key()] = p.value();
  info.nodes = static_cast<std::size_t>(m.graph().node_size());
  return info;
}

#else  // no ONNX in this build: only the refusals

bool onnx_export_available() { return false; }

OnnxGraphs build_onnx_graphs(Transformer&) { throw CheckpointError(kNoOnnx); }

OnnxGraphInfo inspect_onnx_graph(const std::string&, const std::string&) { throw CheckpointError(kNoOnnx); }

#endif

ExportFormat parse_export_format(const std::string& name) {
  if (name == "folder") return ExportFormat::kFolder;
  if (name == "onnx") return ExportFormat::kOnnx;
  throw std::invalid_argument("unknown export format \"" + name + "\" (folder or onnx)");
}

ExportSummary export_model_as(const std::string& checkpoint, const std::string& dir, ExportFormat format) {
  const fs::path folder(dir);
  if (format == ExportFormat::kFolder) {
    auto summary = export_any_model(checkpoint, dir);
    // Graphs of an earlier export would not compute the new weights: they go.
    for (const char* file : {kEncoderFile, kDecoderFile}) {
      std::error_code ec;
      fs::remove(folder / file, ec);
      if (ec)
        throw CheckpointError((folder / file).string() +
                              ": cannot remove this graph of an earlier export: " + ec.message());
    }
    return summary;
  }
  if (!onnx_export_available()) throw CheckpointError(kNoOnnx);
  if (model_kind(checkpoint) == "lm")
    model_folder::fail(checkpoint,
                       "holds a language model: ONNX export is for translation models (export the folder "
                       "without --format onnx)");
  // The graphs first: a model that cannot be written as ONNX leaves nothing behind.
  OnnxGraphs graphs;
  {
    auto loaded = load_checkpoint(checkpoint, at::Device(at::kCPU));
    graphs = build_onnx_graphs(loaded.model);
  }
  auto summary = export_model(checkpoint, dir);
  for (const auto* g : {&graphs.encoder, &graphs.decoder_step}) write_graph_file(folder / g->file, g->bytes);
  // The README that export_model wrote, with a section on the graphs.
  const auto readme = folder / "README.md";
  std::string text;
  {
    std::ifstream in(readme, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  }
  write_graph_file(readme, text + readme_section(graphs));
  summary.files.push_back((folder / kEncoderFile).string());
  summary.files.push_back((folder / kDecoderFile).string());
  summary.bytes = 0;
  for (const auto& f : summary.files) summary.bytes += fs::file_size(f);
  return summary;
}

}  // namespace ts
