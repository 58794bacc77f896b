// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/model/transformer.h"

#include <gtest/gtest.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cmath>

#include "test_utils.h"
#include "ts/model/size.h"
#include "ts/text/vocab.h"

namespace ts {
namespace {

ModelConfig small_model(bool pre_norm, const std::string& positions) {
  ModelConfig c;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.d_model = 16;
  c.heads = 4;
  c.d_ff = 32;
  c.dropout = 0.0;
  c.pre_norm = pre_norm;
  c.positions = parse_positions(positions);
  c.max_positions = 32;
  return c;
}

class TransformerVariants : public ::testing::TestWithParam<std::tuple<bool, std::string>> {};

TEST_P(TransformerVariants, IncrementalDecodingMatchesTheFullPass) {
  torch::NoGradGuard no_grad;
  at::manual_seed(1);
  auto [pre_norm, positions] = GetParam();
  auto model = build_model(small_model(pre_norm, positions), 20, 24, Vocab::kPad, false);
  model->eval();
  auto src = at::tensor({5, 6, 7, 3, 8, 9, 3, 0}, at::kLong).view({2, 4});
  auto tgt = at::tensor({2, 10, 11, 12, 2, 13, 14, 15}, at::kLong).view({2, 4});
  auto logits = model->forward(src, tgt);          // [2, 4, 24]
  logits.select(2, Vocab::kPad).fill_(-INFINITY);  // step() never proposes PAD or BOS
  logits.select(2, Vocab::kBos).fill_(-INFINITY);
  auto full = at::log_softmax(logits, -1);
  auto mask = padding_mask(src, Vocab::kPad);
  auto state = model->start(model->encode(src, mask), mask, false);
  for (int t = 0; t < 4; ++t) {
    auto step = model->step(state, tgt.select(1, t));
    EXPECT_TRUE(test::tensors_near(step, full.select(1, t), 1e-4)) << "step " << t;
  }
}

// The decoder on the real target rows only (training's path on a CPU) gives decode()'s rows, and the
// same gradients for every parameter, with right-padded targets of three lengths.
TEST_P(TransformerVariants, DecodingTheRealRowsGivesTheWholeBatchsRowsAndGradients) {
  at::manual_seed(2);
  auto [pre_norm, positions] = GetParam();
  auto model = build_model(small_model(pre_norm, positions), 20, 24, Vocab::kPad, false);
  model->train();  // dropout 0: training mode, deterministic
  const auto src = at::tensor({5, 6, 7, 3, 8, 9, 3, 0, 4, 3, 0, 0}, at::kLong).view({3, 4});
  const auto tgt_in = at::tensor({2, 10, 11, 12, 13, 2, 13, 0, 0, 0, 2, 16, 17, 0, 0}, at::kLong).view({3, 5});
  const auto tgt_out = at::tensor({10, 11, 12, 13, 3, 13, 3, 0, 0, 0, 16, 17, 3, 0, 0}, at::kLong).view({3, 5});
  const auto rows = RealRows::of(tgt_out, Vocab::kPad);
  ASSERT_EQ(rows.count(), 10);
  const auto mask = padding_mask(src, Vocab::kPad);
  // A fixed random weighting of the outputs, so every output element gets its own gradient.
  const auto weights = at::randn({10, 16});
  const auto gradients = [&](const at::Tensor& out) {
    model->zero_grad();
    (out * weights).sum().backward();
    std::vector<at::Tensor> g;
    for (const auto& p : model->parameters()) g.push_back(p.grad().defined() ? p.grad().clone() : at::zeros_like(p));
    return g;
  };
  const auto whole = rows.gather(model->decode(tgt_in, model->encode(src, mask), mask));
  const auto whole_grads = gradients(whole);
  const auto ours = model->decode_rows(tgt_in, model->encode(src, mask), mask, rows);
  ASSERT_EQ(ours.sizes(), whole.sizes());
  EXPECT_TRUE(test::tensors_near(ours, whole, 1e-5));
  const auto our_grads = gradients(ours);
  for (std::size_t i = 0; i < our_grads.size(); ++i)
    EXPECT_TRUE(test::tensors_near(our_grads[i], whole_grads[i], 1e-4)) << "parameter " << i;
  // The padded rows are really left out: the scatter puts zeros where they were.
  const auto scattered = rows.scatter(ours);
  EXPECT_EQ(scattered.sizes(), (std::vector<std::int64_t>{3, 5, 16}));
  EXPECT_EQ(scattered[1][3].abs().sum().item<float>(), 0.0f);
  EXPECT_TRUE(test::tensors_near(rows.gather(scattered), ours, 0.0));
}

INSTANTIATE_TEST_SUITE_P(Model, TransformerVariants,
                         ::testing::Combine(::testing::Bool(), ::testing::Values("sinusoidal", "learned")));

// LibTorch's fused attention (what a GPU gets with LibTorch 2.x; forced here on the CPU) against the
// explicit products: the same logits and the same gradients, with padding and the causal mask.
TEST(Transformer, FusedAttentionGivesTheExplicitLogitsAndGradients) {
  if (!fused_attention_available())
    GTEST_SKIP() << "this LibTorch has no scaled_dot_product_attention (2.0 and later have)";
  at::manual_seed(3);
  auto model = build_model(small_model(true, "sinusoidal"), 20, 24, Vocab::kPad, false);
  model->train();
  const auto src = at::tensor({5, 6, 7, 3, 8, 9, 3, 0, 11, 3, 0, 0}, at::kLong).view({3, 4});
  const auto tgt = at::tensor({2, 10, 11, 12, 2, 13, 14, 15, 2, 16, 0, 0}, at::kLong).view({3, 4});
  const auto run = [&](AttentionKernel kernel) {
    model->set_attention_kernel(kernel);
    model->zero_grad();
    const auto logits = model->forward(src, tgt);
    (logits * at::linspace(-1, 1, logits.size(-1))).sum().backward();
    std::vector<at::Tensor> grads;
    for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
    return std::make_pair(logits.detach(), grads);
  };
  const auto [explicit_logits, explicit_grads] = run(AttentionKernel::kExplicit);
  const auto [fused_logits, fused_grads] = run(AttentionKernel::kFused);
  EXPECT_TRUE(test::tensors_near(fused_logits, explicit_logits, 1e-4));
  ASSERT_EQ(fused_grads.size(), explicit_grads.size());
  for (std::size_t i = 0; i < fused_grads.size(); ++i)
    EXPECT_TRUE(at::allclose(fused_grads[i], explicit_grads[i], 1e-4, 1e-5)) << "parameter " << i;
  // Recording needs the weights: a fused model records as the explicit one does.
  torch::NoGradGuard no_grad;
  model->eval();
  model->set_record_attention(true);
  model->forward(src, tgt);
  ASSERT_TRUE(model->recorded_attention().cross.front().defined());
}

TEST(Transformer, RecordsAttentionOfEveryKindLayerAndHead) {
  torch::NoGradGuard no_grad;
  auto model = build_model(small_model(false, "sinusoidal"), 20, 24, Vocab::kPad, false);
  model->eval();
  model->set_record_attention(true);
  auto src = at::tensor({5, 6, 7, 3, 8, 9, 3, 0}, at::kLong).view({2, 4});
  auto tgt = at::tensor({2, 10, 11, 2, 13, 14}, at::kLong).view({2, 3});
  model->forward(src, tgt);
  auto maps = model->recorded_attention();
  ASSERT_EQ(maps.encoder_self.size(), 2u);
  ASSERT_EQ(maps.cross.size(), 2u);
  EXPECT_EQ(maps.encoder_self[0].sizes(), (at::IntArrayRef{2, 4, 4, 4}));
  EXPECT_EQ(maps.decoder_self[1].sizes(), (at::IntArrayRef{2, 4, 3, 3}));
  EXPECT_EQ(maps.cross[1].sizes(), (at::IntArrayRef{2, 4, 3, 4}));
  for (const auto* list : {&maps.encoder_self, &maps.decoder_self, &maps.cross})
    for (const auto& m : *list) EXPECT_TRUE(at::allclose(m.sum(-1), at::ones(m.sizes().slice(0, 3)), 1e-5, 1e-5));
  // Causality: decoder self-attention puts no weight on later positions.
  EXPECT_EQ(maps.decoder_self[0].triu(1).abs().sum().item<float>(), 0.0f);
}

TEST(Transformer, TyingAndSharingRemoveParameters) {
  auto base = small_model(true, "sinusoidal");
  auto untied = build_model(base, 30, 30, Vocab::kPad, true);
  base.tie_output = true;
  auto tied = build_model(base, 30, 30, Vocab::kPad, true);
  base.share_embeddings = true;
  auto shared = build_model(base, 30, 30, Vocab::kPad, true);
  EXPECT_EQ(untied->parameter_count() - tied->parameter_count(), 30 * 16);
  EXPECT_EQ(tied->parameter_count() - shared->parameter_count(), 30 * 16);
}

TEST(Transformer, RejectsImpossibleConfigurations) {
  auto c = small_model(false, "sinusoidal");
  c.heads = 3;  // does not divide 16
  EXPECT_THROW(build_model(c, 10, 10, Vocab::kPad, false), ConfigError);
  c = small_model(false, "sinusoidal");
  c.share_embeddings = true;
  EXPECT_THROW(build_model(c, 10, 10, Vocab::kPad, false), ConfigError);  // needs a shared vocabulary
  EXPECT_THROW(build_model(c, 10, 12, Vocab::kPad, true), ConfigError);   // sizes differ
}

TEST(Transformer, RefusesSequencesLongerThanLearnedPositions) {
  torch::NoGradGuard no_grad;
  auto model = build_model(small_model(false, "learned"), 10, 10, Vocab::kPad, false);
  auto src = at::full({1, 40}, 5, at::kLong);
  EXPECT_THROW(model->forward(src, at::full({1, 2}, 5, at::kLong)), std::invalid_argument);
}

TEST(Transformer, SinusoidalTableMatchesTheFormula) {
  auto table = sinusoidal_table(50, 8);
  EXPECT_NEAR(table[0][0].item<float>(), 0.0, 1e-6);
  EXPECT_NEAR(table[0][1].item<float>(), 1.0, 1e-6);
  EXPECT_NEAR(table[7][2].item<float>(), std::sin(7 / std::pow(10000.0, 2.0 / 8)), 1e-5);
  EXPECT_NEAR(table[7][3].item<float>(), std::cos(7 / std::pow(10000.0, 2.0 / 8)), 1e-5);
}

TEST(ModelSize, ParameterFormulaMatchesTheBuiltModelForEveryVariant) {
  for (const bool pre_norm : {false, true})
    for (const std::string positions : {"sinusoidal", "learned"})
      for (const bool tie : {false, true})
        for (const bool share : {false, true}) {
          auto config = small_model(pre_norm, positions);
          config.encoder_layers = 3;  // unequal stacks
          config.tie_output = tie;
          config.share_embeddings = share;
          const std::int64_t src = share ? 24 : 20, tgt = 24;
          auto model = build_model(config, src, tgt, Vocab::kPad, share);
          EXPECT_EQ(parameter_count(config, static_cast<double>(src), static_cast<double>(tgt)),
                    static_cast<double>(model->parameter_count()))
              << "pre_norm " << pre_norm << " positions " << positions << " tie " << tie << " share " << share;
        }
}

// The linear part of forward_flops, counted from the built model's own weight matrices: each one
// multiplies every position it is applied to (the encoder's and the cross-attention's keys and
// values the source positions, the rest of the decoder and the output projection the target's).
TEST(ModelSize, ForwardFlopsCountEveryWeightMatrixOfTheBuiltModel) {
  auto config = small_model(false, "sinusoidal");
  config.encoder_layers = 3;  // unequal stacks
  const std::int64_t src_vocab = 20, tgt_vocab = 24;
  auto model = build_model(config, src_vocab, tgt_vocab, Vocab::kPad, false);
  const double S = 7, T = 5, D = config.d_model;
  double linear = 0;
  int matrices = 0;
  for (const auto& p : model->named_parameters()) {
    const auto& name = p.key();
    if (p.value().dim() != 2 || name.find("embed") != std::string::npos) continue;
    const bool on_source = name.rfind("encoder.", 0) == 0 || name.find("cross_attention.kv") != std::string::npos;
    linear += 2 * static_cast<double>(p.value().numel()) * (on_source ? S : T);
    ++matrices;
  }
  EXPECT_EQ(matrices, 3 * 4 + 2 * 7 + 1);  // qkv, out, fc1, fc2; qkv, out, q, kv, out, fc1, fc2; output
  const double attention =
      config.encoder_layers * 4 * S * S * D + config.decoder_layers * (4 * T * T * D + 4 * T * S * D);
  EXPECT_DOUBLE_EQ(forward_flops(config, static_cast<double>(tgt_vocab), S, T), linear + attention);
  // A longer source costs the encoder and the cross-attention more, the output projection nothing.
  EXPECT_GT(forward_flops(config, tgt_vocab, 2 * S, T), forward_flops(config, tgt_vocab, S, T));
  EXPECT_DOUBLE_EQ(forward_flops(config, 2.0 * tgt_vocab, S, T) - forward_flops(config, tgt_vocab, S, T),
                   2 * T * D * tgt_vocab);
}

TEST(CopyModel, SnapshotDecodesLikeTheOriginalAndIsIndependent) {
  torch::NoGradGuard no_grad;
  at::manual_seed(3);
  auto model = build_model(small_model(false, "learned"), 20, 24, Vocab::kPad, false);
  model->eval();
  auto copy = copy_model(model, at::Device(at::kCPU));
  auto src = at::tensor({5, 6, 7, 3}, at::kLong).view({1, 4});
  auto tgt = at::tensor({2, 10, 11}, at::kLong).view({1, 3});
  EXPECT_TRUE(test::tensors_near(model->forward(src, tgt), copy->forward(src, tgt)));
  for (auto& p : model->parameters()) p.add_(1.0);  // training goes on: the copy must not change
  EXPECT_FALSE(test::tensors_near(model->forward(src, tgt), copy->forward(src, tgt)));
}

}  // namespace
}  // namespace ts
