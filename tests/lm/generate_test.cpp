// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/lm/generate.h"

#include <gtest/gtest.h>

#include "lm_test_utils.h"
#include "test_utils.h"

namespace ts {
namespace {

struct Fixture {
  LmData data;
  LanguageModel model;
};

Fixture untrained(int block_size = 16) {
  auto config = test::small_gpt_config();
  config.block_size = block_size;
  Fixture f{prepare_lm_text(test::markov_text(400), "m.txt", config), nullptr};
  f.model = build_language_model(config, static_cast<std::int64_t>(f.data.codec.vocab().size()));
  test::spread_weights(f.model);
  return f;
}

// Greedy decoding the slow way: the whole cropped context through forward() for every token.
std::vector<std::int64_t> naive_greedy(LanguageModel& model, std::vector<std::int64_t> context, std::int64_t length) {
  torch::NoGradGuard no_grad;
  model->eval();
  std::vector<std::int64_t> out;
  const auto block = static_cast<std::size_t>(model->block_size());
  for (std::int64_t i = 0; i < length; ++i) {
    const auto from = context.size() > block ? context.size() - block : 0;
    std::vector<std::int64_t> window(context.begin() + static_cast<std::ptrdiff_t>(from), context.end());
    const auto logits = model->forward(at::tensor(window).unsqueeze(0));
    const auto next = logits[0][logits.size(1) - 1].argmax().item<std::int64_t>();
    out.push_back(next);
    context.push_back(next);
  }
  return out;
}

TEST(Generate, CachedGreedyEqualsTheFullForwardWithACroppedContext) {
  auto f = untrained(8);
  const std::vector<std::int64_t> prompt = {4, 5, 6};
  GenerateOptions options;
  options.length = 30;  // well past the block size of 8: the window slides
  options.temperature = 0;
  std::vector<std::int64_t> streamed;
  const auto result = generate(f.model, prompt, options, [&](std::int64_t id) { streamed.push_back(id); });
  EXPECT_EQ(result.ids, naive_greedy(f.model, prompt, 30));
  EXPECT_EQ(streamed, result.ids);
  // A prompt longer than the block is cropped to it.
  std::vector<std::int64_t> long_prompt = {4, 5, 6, 7, 8, 9, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(generate(f.model, long_prompt, options).ids, naive_greedy(f.model, long_prompt, 30));
}

TEST(Generate, SamplingIsReproducibleFromTheSeed) {
  auto f = untrained();
  GenerateOptions options;
  options.length = 60;
  options.temperature = 1.0;
  options.seed = 42;
  const auto a = generate_text(f.model, f.data.codec, "ab", options);
  const auto b = generate_text(f.model, f.data.codec, "ab", options);
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.text.size(), 60u);  // one character per token
  options.seed = 43;
  EXPECT_NE(generate_text(f.model, f.data.codec, "ab", options).text, a.text);
  // top-p and top-k settings are reproducible too.
  options.top_k = 3;
  options.top_p = 0.9;
  EXPECT_EQ(generate(f.model, {4}, options).ids, generate(f.model, {4}, options).ids);
}

TEST(Generate, TopKOneIsGreedy) {
  auto f = untrained();
  GenerateOptions greedy;
  greedy.length = 40;
  greedy.temperature = 0;
  GenerateOptions top1 = greedy;
  top1.temperature = 1.3;
  top1.top_k = 1;
  top1.seed = 9;
  EXPECT_EQ(generate(f.model, {4, 5}, top1).ids, generate(f.model, {4, 5}, greedy).ids);
}

TEST(Generate, StreamsTextAndChecksThePrompt) {
  auto f = untrained();
  GenerateOptions options;
  options.length = 20;
  options.seed = 1;
  std::string streamed;
  const auto result = generate_text(f.model, f.data.codec, "", options, [&](const std::string& s) { streamed += s; });
  EXPECT_EQ(streamed, result.text);  // an empty prompt starts from a newline
  try {
    generate_text(f.model, f.data.codec, "abz", options);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("prompt: \"z\" is not in the model's vocabulary"), std::string::npos)
        << e.what();
  }
  options.record_attention = true;
  options.length = 30;
  const auto with_maps = generate_text(f.model, f.data.codec, "ab", options);
  ASSERT_EQ(with_maps.attention.size(), 2u);
  EXPECT_EQ(with_maps.attention[0].sizes(), (at::IntArrayRef{1, 2, 16, 16}));  // the last window
  EXPECT_EQ(with_maps.attention_ids.size(), 16u);
}

}  // namespace
}  // namespace ts
