// SPDX-License-Identifier: GPL-3.0-or-later
// Text generation (see ts/lm/generate.h).
#include "ts/lm/generate.h"

#include <limits>
#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <fmt/format.h>

#include "ts/decode/search.h"
#include "ts/model/mode_guard.h"

namespace ts {
namespace {

at::Tensor row_tensor(const std::vector<std::int64_t>& ids, std::size_t from, const at::Device& device) {
  std::vector<std::int64_t> window(ids.begin() + static_cast<std::ptrdiff_t>(from), ids.end());
  return at::tensor(window, at::TensorOptions().dtype(at::kLong)).to(device).unsqueeze(0);  // [1, T]
}

}  // namespace

GenerateResult generate(LanguageModel& model, const std::vector<std::int64_t>& prompt, const GenerateOptions& options,
                        const std::function<void(std::int64_t)>& on_token) {
  if (prompt.empty()) throw std::invalid_argument("generate: the prompt is empty");
  if (options.length < 0) throw std::invalid_argument("generate: the length must not be negative");
  if (options.temperature < 0) throw std::invalid_argument("generate: the temperature must not be negative");
  if (options.top_k < 0) throw std::invalid_argument("generate: top_k must not be negative");
  if (!(options.top_p > 0 && options.top_p <= 1)) throw std::invalid_argument("generate: top_p must be in (0, 1]");
  for (const auto id : prompt)
    if (id < 0 || id >= model->vocab_size())
      throw std::invalid_argument(
          fmt::format("generate: token id {} is outside the vocabulary of {}", id, model->vocab_size()));
  const EvalModeGuard eval(*model);
  at::NoGradGuard no_grad;
  const auto params = model->parameters();
  const auto device = params.empty() ? at::Device(at::kCPU) : params.front().device();
  const auto block = static_cast<std::size_t>(model->block_size());
  auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  const auto suppress = at::tensor(options.suppress, at::TensorOptions().dtype(at::kLong));

  GenerateResult result;
  std::vector<std::int64_t> context = prompt;
  LmCache cache;
  // Logits for the next token after the last `block` tokens of the context, with a fresh cache:
  // learned positions shift when the window slides, so cached keys/values are no longer valid.
  const auto refill = [&] {
    cache = LmCache{};
    const auto from = context.size() > block ? context.size() - block : 0;
    const auto logits = model->feed(cache, row_tensor(context, from, device));
    return logits.select(1, logits.size(1) - 1);  // [1, V]
  };
  auto logits = refill();
  for (std::int64_t i = 0; i < options.length; ++i) {
    std::int64_t next = 0;
    auto scores = logits.to(at::kCPU, at::kFloat);
    if (suppress.numel() > 0) scores = scores.index_fill(1, suppress, -std::numeric_limits<float>::infinity());
    const auto log_probs = at::log_softmax(scores, -1);
    if (options.temperature <= 0)
      next = log_probs.argmax(-1).item<std::int64_t>();
    else
      next =
          sample_tokens(log_probs, options.temperature, options.top_k, options.top_p, generator).item<std::int64_t>();
    result.ids.push_back(next);
    context.push_back(next);
    if (on_token) on_token(next);
    if (i + 1 == options.length) break;
    if (static_cast<std::size_t>(cache.length) < block) {
      const auto out = model->feed(cache, at::full({1, 1}, next, at::TensorOptions().dtype(at::kLong).device(device)));
      logits = out.select(1, 0);
    } else {
      logits = refill();
    }
  }
  if (options.record_attention) {
    const auto from = context.size() > block ? context.size() - block : 0;
    model->set_record_attention(true);
    model->forward(row_tensor(context, from, device));
    result.attention = model->recorded_attention();
    model->set_record_attention(false);
    result.attention_ids.assign(context.begin() + static_cast<std::ptrdiff_t>(from), context.end());
  }
  return result;
}

GenerateResult generate_text(LanguageModel& model, const LmCodec& codec, const std::string& prompt,
                             const GenerateOptions& options, const std::function<void(const std::string&)>& on_text) {
  std::vector<std::int64_t> ids;
  try {
    ids = codec.encode(prompt, /*strict=*/true);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("prompt: ") + e.what());
  }
  if (ids.empty()) {  // start from a newline, as the tutorial starts from token 0 ("\n")
    if (!codec.vocab().contains("\n"))
      throw std::invalid_argument("prompt: empty, and the model knows no newline to start from");
    ids.push_back(codec.vocab().id("\n"));
  }
  auto with_suppressed = options;
  for (std::int64_t id = 0; id < 4 && id < model->vocab_size(); ++id) with_suppressed.suppress.push_back(id);
  std::string emitted;
  std::vector<std::int64_t> generated;
  auto result = generate(model, ids, with_suppressed, [&](std::int64_t id) {
    generated.push_back(id);
    if (!on_text) return;
    if (codec.kind() == LmTokenizer::kChar) {
      on_text(id < 4 ? std::string() : codec.vocab().token(id));
      return;
    }
    // SentencePiece: decode what was generated so far and hand on what is new.
    auto text = codec.decode(generated);
    if (text.size() > emitted.size() && text.compare(0, emitted.size(), emitted) == 0) {
      on_text(text.substr(emitted.size()));
      emitted = std::move(text);
    }
  });
  result.text = codec.decode(result.ids);
  if (on_text && codec.kind() != LmTokenizer::kChar && result.text.size() > emitted.size() &&
      result.text.compare(0, emitted.size(), emitted) == 0)
    on_text(result.text.substr(emitted.size()));
  return result;
}

}  // namespace ts
