// SPDX-License-Identifier: GPL-3.0-or-later
// What LibTorch computes for a model folder, for tests/cli/onnx_test.sh to hold the ONNX graphs to:
//
//   ts_onnx_reference FOLDER SENTENCES OUT.json [STEPS]
//
// For each line of SENTENCES: its source ids (Translator::encode), and its text through each side's tokenizer
// and back (the source's tokens detokenised, and the target side's ids decoded as translations are). Then, all
// sentences as one padded batch on LibTorch's own operations (not the packed weights): the encoder output,
// the source mask, every decoder layer's cross-attention keys and values, and STEPS (default 6) greedy decoder
// steps: the tokens fed and the log-probabilities, and the self-attention caches after the last step. Tensors
// are {"shape": [...], "data": [...]} with -inf as null.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/autograd/grad_mode.h>

#include "ts/decode/translator.h"
#include "ts/model/errors.h"
#include "ts/text/vocab.h"
#include "ts/train/checkpoint.h"

namespace {

nlohmann::json tensor_json(const at::Tensor& t) {
  const auto values = t.detach().to(at::kCPU, at::kFloat).contiguous();
  return {{"shape", values.sizes().vec()},
          {"data", std::vector<float>(values.data_ptr<float>(), values.data_ptr<float>() + values.numel())}};
}

int run(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: ts_onnx_reference FOLDER SENTENCES OUT.json [STEPS]\n";
    return 2;
  }
  const int steps = argc > 4 ? std::atoi(argv[4]) : 6;
  at::set_num_threads(1);
  torch::NoGradGuard no_grad;
  auto loaded = ts::load_checkpoint(argv[1], at::Device(at::kCPU));
  auto& model = loaded.model;
  const auto& pipeline = loaded.pipeline;
  ts::Translator translator(model, pipeline);

  std::ifstream in(argv[2]);
  std::vector<std::vector<std::int64_t>> sources;
  nlohmann::json out, sentences = nlohmann::json::array();
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    sources.push_back(translator.encode(line));
    const auto target_ids = pipeline.tgt_vocab->encode(pipeline.tgt_tokenizer->tokenize(line));
    sentences.push_back({{"text", line},
                         {"ids", sources.back()},
                         {"src_round_trip", pipeline.src_tokenizer->detokenize(pipeline.src_tokenizer->tokenize(line))},
                         {"tgt_round_trip", pipeline.decode_target(target_ids)}});
  }
  out["sentences"] = sentences;

  std::size_t width = 1;
  for (const auto& s : sources) width = std::max(width, s.size());
  const auto rows = static_cast<std::int64_t>(sources.size());
  auto src = at::full({rows, static_cast<std::int64_t>(width)}, ts::Vocab::kPad, at::kLong);
  for (std::int64_t b = 0; b < rows; ++b) {
    const auto& ids = sources[static_cast<std::size_t>(b)];
    src[b].slice(0, 0, static_cast<std::int64_t>(ids.size())).copy_(at::tensor(ids, at::kLong));
  }
  const auto* src_ids = src.data_ptr<std::int64_t>();
  out["src_tokens"] = {{"shape", src.sizes().vec()},
                       {"data", std::vector<std::int64_t>(src_ids, src_ids + src.numel())}};

  const auto mask = ts::padding_mask(src, model->pad_id());
  const auto memory = model->encode(src, mask);
  auto state = model->start(memory, mask, false);  // LibTorch's operations: no packed weights
  out["memory"] = tensor_json(memory);
  out["src_pad_mask"] = tensor_json(mask);
  for (std::size_t i = 0; i < state.cross_k.size(); ++i) {
    out["cross_k_" + std::to_string(i)] = tensor_json(state.cross_k[i]);
    out["cross_v_" + std::to_string(i)] = tensor_json(state.cross_v[i]);
  }
  auto tokens = at::full({src.size(0)}, ts::Vocab::kBos, at::kLong);
  nlohmann::json trace = nlohmann::json::array();
  for (int t = 0; t < steps; ++t) {
    const auto log_probs = model->step(state, tokens);
    const auto* fed = tokens.data_ptr<std::int64_t>();
    trace.push_back(
        {{"tokens", std::vector<std::int64_t>(fed, fed + tokens.numel())}, {"log_probs", tensor_json(log_probs)}});
    tokens = log_probs.argmax(-1);
  }
  out["steps"] = trace;
  for (std::size_t i = 0; i < state.self_k.size(); ++i) {
    out["self_k_" + std::to_string(i)] = tensor_json(state.self_k[i]);
    out["self_v_" + std::to_string(i)] = tensor_json(state.self_v[i]);
  }
  std::ofstream file(argv[3]);
  file << out.dump() << "\n";
  return file ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ts_onnx_reference: " << ts::error_message(e) << "\n";
    return 1;
  }
}
