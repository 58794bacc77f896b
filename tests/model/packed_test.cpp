// SPDX-License-Identifier: GPL-3.0-or-later
// Packed weights for CPU decoding: every kernel against LibTorch, the storage formats' rounding, and
// the packed decoder step against TransformerImpl::step (log-probabilities, caches, attention).
#include "ts/model/packed_transformer.h"

#include <gtest/gtest.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/optim/adam.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "test_utils.h"
#include "ts/host/amx_tiles.h"
#include "ts/host/vector_rates.h"
#include "ts/model/transformer.h"
#include "ts/text/vocab.h"
#include "ts/train/optimizer.h"

namespace ts {
namespace {

const WeightFormat kFormats[] = {WeightFormat::kFloat32, WeightFormat::kBFloat16, WeightFormat::kInt8};

// The layer of weight w [out, in] and bias b [out] (undefined: none).
// Packed for `isa` (by default the one apply() without an instruction set uses).
PackedLinear pack(const at::Tensor& w, const at::Tensor& b, WeightFormat format, Isa isa = best_isa()) {
  const auto wc = w.to(at::kFloat).contiguous();
  const auto bc = b.defined() ? b.to(at::kFloat).contiguous() : at::Tensor();
  return PackedLinear(wc.data_ptr<float>(), w.size(0), w.size(1), bc.defined() ? bc.data_ptr<float>() : nullptr, format,
                      isa);
}

// The weights the packed layer really holds, as a tensor [out, in].
at::Tensor unpacked(const PackedLinear& layer) {
  return at::tensor(layer.unpacked_weight()).view({layer.out_features(), layer.in_features()});
}

// y = x W^T + b in double precision, from the weights the packed layer really holds.
at::Tensor reference(const PackedLinear& layer, const at::Tensor& x, const at::Tensor& bias) {
  auto w = unpacked(layer).to(at::kDouble);
  auto y = at::matmul(x.to(at::kDouble), w.t());
  if (bias.defined()) y = y + bias.to(at::kDouble);
  return y.to(at::kFloat);
}

// The inputs as the VNNI kernel rounds them: each row to int8 in its own scale, max |x| / 127, to nearest
// even (the current rounding mode), in float as the kernel computes it.
at::Tensor rounded_to_int8_rows(const at::Tensor& x) {
  auto out = x.to(at::kFloat).contiguous().clone();
  float* p = out.data_ptr<float>();
  const auto rows = out.size(0), in = out.size(1);
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = p + r * in;
    float max = 0;
    for (std::int64_t i = 0; i < in; ++i) max = std::max(max, std::fabs(row[i]));
    const float inv = max > 0 ? 127.0F / max : 0.0F, scale = max / 127.0F;
    for (std::int64_t i = 0; i < in; ++i) row[i] = std::clamp(std::nearbyint(row[i] * inv), -127.0F, 127.0F) * scale;
  }
  return out;
}

// Whether apply(isa) multiplies int8 weights by int8 inputs (a layer packed for an AVX-512 kernel).
bool rounds_to_int8(const PackedLinear& layer, Isa isa) {
  return layer.format() == WeightFormat::kInt8 &&
         (isa == Isa::kAvx512 || isa == Isa::kAvx512Bf16 || isa == Isa::kAmx) && int8_dot_products_available();
}

// Whether apply(isa) multiplies bf16 weights by the inputs rounded to bf16 (dot products or tiles).
bool rounds_to_bf16(const PackedLinear& layer, Isa isa) {
  return layer.format() == WeightFormat::kBFloat16 && (isa == Isa::kAvx512Bf16 || isa == Isa::kAmx);
}

// What `isa` computes: Isa::kAvx512Bf16 and Isa::kAmx multiply bf16 weights by the inputs rounded to
// bf16 (to nearest even, as LibTorch converts); the AVX-512 kernels on a CPU with VNNI multiply int8
// weights by the inputs rounded to int8.
at::Tensor reference(const PackedLinear& layer, const at::Tensor& x, const at::Tensor& bias, Isa isa) {
  if (rounds_to_int8(layer, isa)) return reference(layer, rounded_to_int8_rows(x), bias);
  const bool rounds_inputs = rounds_to_bf16(layer, isa);
  return reference(layer, rounds_inputs ? x.to(at::kBFloat16).to(at::kFloat) : x, bias);
}

at::Tensor apply(const PackedLinear& layer, const at::Tensor& x, Isa isa) {
  auto y = at::empty({x.size(0), layer.out_features()}, at::kFloat);
  layer.apply(x.contiguous().data_ptr<float>(), x.size(0), y.data_ptr<float>(), isa);
  return y;
}

TEST(PackedLinear, EveryKernelEqualsTheReferenceForEveryFormatRowCountAndOddSize) {
  at::manual_seed(3);
  // 45 and 37 are not multiples of any vector width: the scalar tails run too.
  for (auto [out, in] : {std::pair<std::int64_t, std::int64_t>{37, 45}, {70, 64}, {5, 16}}) {
    const auto w = at::randn({out, in}), b = at::randn({out});
    for (const auto format : kFormats) {
      // 1..8 in one group, then a second group; past 32 a second band of AMX tiles.
      for (const std::int64_t rows : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 33, 40}) {
        const auto x = at::randn({rows, in});
        // Every kernel this CPU has, whether or not best_isa() chose it, each on a layer packed for it.
        for (const auto isa : supported_isas()) {
          const auto layer = pack(w, b, format, isa);
          const auto y = apply(layer, x, isa);
          EXPECT_TRUE(test::tensors_near(y, reference(layer, x, b, isa), 1e-4))
              << weight_format_name(format) << " " << isa_name(isa) << " " << out << "x" << in << " rows " << rows;
          if (rounds_to_bf16(layer, isa) || rounds_to_int8(layer, isa)) {
            // the inputs really were rounded
            EXPECT_FALSE(test::tensors_near(y, reference(layer, x, b), 1e-5)) << out << "x" << in << " rows " << rows;
          }
        }
      }
    }
  }
}

// AMX tiles: a row's outputs are the same bits whatever rows share the call (batched translation gives
// what one sentence at a time gives), a shortlist's layer keeps them, and a layer packed without the
// tiles refuses them.
TEST(PackedLinear, AmxTilesGiveEachRowItsOwnBitsWhateverTheOtherRows) {
  if (!amx::available()) GTEST_SKIP() << "this CPU has no AMX tiles (or Linux did not let this process use them)";
  EXPECT_EQ(best_isa(), Isa::kAmx);
  at::manual_seed(9);
  const std::int64_t out = 53, in = 70;  // neither a multiple of 16 nor of 32
  const auto w = at::randn({out, in}), b = at::randn({out}), x = at::randn({45, in});
  const auto layer = pack(w, b, WeightFormat::kBFloat16, Isa::kAmx);
  const auto all = apply(layer, x, Isa::kAmx);
  EXPECT_TRUE(test::tensors_near(all, reference(layer, x, b, Isa::kAmx), 1e-4));
  for (const std::int64_t r : {0, 15, 16, 31, 32, 44}) {
    EXPECT_TRUE(at::equal(apply(layer, x.slice(0, r, r + 1), Isa::kAmx), all.slice(0, r, r + 1))) << "row " << r;
    EXPECT_TRUE(at::equal(apply(layer, x.slice(0, 0, r + 1), Isa::kAmx), all.slice(0, 0, r + 1))) << "rows " << r + 1;
  }
  const std::vector<std::int64_t> kept{52, 0, 17, 16};
  const auto ys = apply(layer.select_outputs(kept), x, Isa::kAmx);
  for (std::size_t k = 0; k < kept.size(); ++k)
    EXPECT_TRUE(at::equal(ys.select(1, static_cast<std::int64_t>(k)), all.select(1, kept[k]))) << kept[k];
  EXPECT_THROW(apply(pack(w, b, WeightFormat::kBFloat16, Isa::kAvx512), x, Isa::kAmx), std::invalid_argument);
}

TEST(PackedLinear, UsesBf16DotProductsOnlyWhereTheyOutrunFp32MultiplyAdds) {
  const auto isas = supported_isas();
  if (isas.back() != Isa::kAvx512Bf16) {
    EXPECT_EQ(best_isa(), isas.back());  // nothing to choose between
    return;
  }
  EXPECT_EQ(best_isa() == Isa::kAvx512Bf16, bf16_dot_products_pay(vector_rates()))
      << describe_vector_rates(vector_rates());
  if (best_isa() != Isa::kAvx512Bf16) {
    EXPECT_EQ(best_isa(), Isa::kAvx512);
  }
  // A layer packed for the default kernel has the dot products' copy of its bf16 weights only if it uses them.
  at::manual_seed(6);
  const auto w = at::randn({20, 30}), x = at::randn({3, 30});
  const auto layer = pack(w, {}, WeightFormat::kBFloat16);
  if (best_isa() == Isa::kAvx512Bf16) {
    EXPECT_NO_THROW(apply(layer, x, Isa::kAvx512Bf16));
  } else {
    EXPECT_THROW(apply(layer, x, Isa::kAvx512Bf16), std::invalid_argument);
    EXPECT_TRUE(test::tensors_near(apply(layer, x, best_isa()), reference(layer, x, {}), 1e-4));
  }
}

// AVX-512 VNNI: each row of inputs is rounded in its own scale (a row of zeros gives the bias, a row 2^20
// times larger the same outputs, 2^20 times larger), and a row that is not finite gives NaN as fp32 would.
TEST(PackedLinear, Int8DotProductsRoundEachRowInItsOwnScale) {
  if (!int8_dot_products_available()) GTEST_SKIP() << "this CPU has no AVX-512 VNNI";
  at::manual_seed(8);
  const std::int64_t out = 40, in = 70;  // neither a multiple of 16 nor of 4
  const auto w = at::randn({out, in}), b = at::randn({out});
  const auto layer = pack(w, b, WeightFormat::kInt8, Isa::kAvx512);
  auto x = at::randn({4, in});
  x[1].zero_();
  x[2] = x[0] * 1048576.0;
  const auto y = apply(layer, x, Isa::kAvx512);
  EXPECT_TRUE(test::tensors_near(y, reference(layer, x, b, Isa::kAvx512), 1e-4));
  EXPECT_TRUE(at::equal(y[1], b));
  EXPECT_TRUE(test::tensors_near((y[2] - b) / 1048576.0, y[0] - b, 1e-4));
  // Close to the fp32 product of the same int8 weights: about a hundredth of a row's scale.
  const auto exact = reference(layer, x, b);
  EXPECT_LT(((y - exact).abs().max() / exact.abs().max()).item<float>(), 0.02F);
  x[3][5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(at::isnan(apply(layer, x, Isa::kAvx512)[3]).all().item<bool>());
  // Packed for AVX2 it has no groups of four: the widening kernels, inputs as they are.
  const auto widened = pack(w, b, WeightFormat::kInt8, Isa::kAvx2);
  x[3][5] = 0.5F;
  EXPECT_TRUE(test::tensors_near(apply(widened, x, Isa::kAvx512), reference(widened, x, b), 1e-4));
  // A shortlist's layer keeps them.
  const auto some = layer.select_outputs({39, 0, 17});
  const auto all = apply(layer, x, Isa::kAvx512), ys = apply(some, x, Isa::kAvx512);
  const std::int64_t kept[] = {39, 0, 17};
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(at::equal(ys.select(1, k), all.select(1, kept[k]))) << kept[k];
}

TEST(PackedLinear, LargeProductsEqualTheReference) {
  at::manual_seed(4);
  const auto w = at::randn({1030, 256}), b = at::randn({1030}), x = at::randn({5, 256});
  for (const auto format : kFormats) {
    const auto layer = pack(w, b, format);
    EXPECT_TRUE(test::tensors_near(apply(layer, x, best_isa()), reference(layer, x, b, best_isa()), 1e-3))
        << weight_format_name(format);
  }
}

TEST(PackedLinear, StorageFormatsRoundAsDocumented) {
  at::manual_seed(5);
  const auto w = at::randn({8, 40});
  EXPECT_TRUE(at::equal(unpacked(pack(w, {}, WeightFormat::kFloat32)), w));
  // bf16 keeps 8 significant bits: relative error at most 2^-8 (round to nearest).
  const auto bf16 = unpacked(pack(w, {}, WeightFormat::kBFloat16));
  EXPECT_LE(((bf16 - w).abs() / w.abs()).max().item<float>(), std::ldexp(1.0F, -8));
  EXPECT_FALSE(at::equal(bf16, w));
  // int8: one scale per row, max |w| / 127, so the error is at most half a step.
  const auto int8 = unpacked(pack(w, {}, WeightFormat::kInt8));
  const auto step = std::get<0>(w.abs().max(1, true)) / 127;
  EXPECT_TRUE(((int8 - w).abs() <= step / 2 + 1e-7).all().item<bool>());
  EXPECT_FALSE(at::equal(int8, w));
  // Ties go to even; a NaN stays a NaN; a row of zeros stays zero.
  const auto special = at::tensor({1.0F + std::ldexp(1.0F, -8), 1.0F + 3 * std::ldexp(1.0F, -8),
                                   std::numeric_limits<float>::quiet_NaN(), 0.0F})
                           .view({1, 4});
  const auto s = unpacked(pack(special, {}, WeightFormat::kBFloat16));
  EXPECT_EQ(s[0][0].item<float>(), 1.0F);
  EXPECT_EQ(s[0][1].item<float>(), 1.0F + 4 * std::ldexp(1.0F, -8));
  EXPECT_TRUE(std::isnan(s[0][2].item<float>()));
  EXPECT_TRUE(at::equal(unpacked(pack(at::zeros({2, 3}), {}, WeightFormat::kInt8)), at::zeros({2, 3})));
}

TEST(PackedLinear, Int8RefusesWeightsThatAreNotFiniteAndFormatsParseByName) {
  auto w = at::ones({2, 4});
  w[1][2] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(pack(w, {}, WeightFormat::kInt8), std::invalid_argument);
  EXPECT_NO_THROW(pack(w, {}, WeightFormat::kBFloat16));
  for (const auto format : kFormats) EXPECT_EQ(parse_weight_format(weight_format_name(format)), format);
  EXPECT_THROW(parse_weight_format("fp16"), std::invalid_argument);
}

ModelConfig small_model(bool pre_norm, const std::string& positions, bool tie) {
  ModelConfig c;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.d_model = 32;
  c.heads = 4;
  c.d_ff = 48;
  c.dropout = 0.1;  // eval mode: no effect
  c.pre_norm = pre_norm;
  c.positions = parse_positions(positions);
  c.max_positions = 32;
  c.tie_output = tie;
  return c;
}

// A packed cache shaped like LibTorch's `like`.
at::Tensor as_tensor(const std::vector<float>& values, const at::Tensor& like) {
  return at::tensor(values).view(like.sizes());
}
at::Tensor as_tensor(const FloatScratch& values, const at::Tensor& like) {
  return as_tensor(std::vector<float>(values.data(), values.data() + values.size()), like);
}

// Translates a 2-row batch (the second source padded) twice, on LibTorch's ops and on packed weights:
// the encoder pass with its attention, the cross-attention keys and values, then `steps` decoder
// steps, reordering the rows between steps as beam search does. Returns the largest difference seen
// in any of them (log-probabilities, caches, recorded attention).
float largest_step_difference(Transformer& model, WeightFormat format, int steps) {
  auto src = at::tensor({5, 6, 7, 3, 8, 9, 3, 0}, at::kLong).view({2, 4});
  auto mask = padding_mask(src, Vocab::kPad);
  model->set_record_attention(true);
  const auto memory = model->encode(src, mask);
  const auto encoder_maps = model->recorded_attention().encoder_self;
  model->set_record_attention(false);
  auto aten = model->start(memory, mask, true);
  const auto packed_model = model->packed(format);
  EXPECT_TRUE(packed_model);
  if (!packed_model) return INFINITY;
  std::vector<at::Tensor> packed_maps;
  const auto packed_memory = packed_model->encode(src, &packed_maps);
  DecoderState packed;
  packed_model->start(packed, packed_memory, mask, true);
  packed.packed = packed_model;
  float worst = (memory - packed_memory).abs().max().item<float>();
  EXPECT_EQ(packed_maps.size(), encoder_maps.size());
  for (std::size_t l = 0; l < std::min(packed_maps.size(), encoder_maps.size()); ++l)
    worst = std::max(worst, (packed_maps[l] - encoder_maps[l]).abs().max().item<float>());
  for (std::size_t l = 0; l < aten.cross_k.size(); ++l) {
    worst = std::max(
        worst,
        (aten.cross_k[l] - as_tensor(packed.packed_state->cross_k[l], aten.cross_k[l])).abs().max().item<float>());
    worst = std::max(
        worst,
        (aten.cross_v[l] - as_tensor(packed.packed_state->cross_v[l], aten.cross_v[l])).abs().max().item<float>());
  }
  auto tokens = at::full({2}, Vocab::kBos, at::kLong);
  for (int t = 0; t < steps; ++t) {
    const auto a = model->step(aten, tokens), p = model->step(packed, tokens);
    worst = std::max(worst, (a - p).abs().max().item<float>());
    tokens = std::get<1>(a.max(-1));
    if (t == 1) {  // swap the rows, as a beam reorder would
      const auto index = at::tensor({1, 0}, at::kLong);
      aten.reorder(index);
      packed.reorder(index);
    }
  }
  for (std::size_t l = 0; l < aten.self_k.size(); ++l) {
    worst = std::max(
        worst, (aten.self_k[l] - as_tensor(packed.packed_state->self_k[l], aten.self_k[l])).abs().max().item<float>());
    worst = std::max(
        worst, (aten.self_v[l] - as_tensor(packed.packed_state->self_v[l], aten.self_v[l])).abs().max().item<float>());
  }
  for (std::int64_t row = 0; row < 2; ++row) {
    const auto ma = aten.attention(row), mp = packed.attention(row);
    for (std::size_t l = 0; l < ma.cross.size(); ++l) {
      worst = std::max(worst, (ma.cross[l] - mp.cross[l]).abs().max().item<float>());
      worst = std::max(worst, (ma.decoder_self[l] - mp.decoder_self[l]).abs().max().item<float>());
    }
  }
  return worst;
}

class PackedTransformerVariants : public ::testing::TestWithParam<std::tuple<bool, std::string, bool>> {};

TEST_P(PackedTransformerVariants, Fp32StepsEqualLibTorchsThroughReordersWithAttention) {
  torch::NoGradGuard no_grad;
  at::manual_seed(11);
  auto [pre_norm, positions, tie] = GetParam();
  auto model = build_model(small_model(pre_norm, positions, tie), 20, 24, Vocab::kPad, false);
  model->eval();
  EXPECT_LT(largest_step_difference(model, WeightFormat::kFloat32, 6), 1e-4);
}

TEST_P(PackedTransformerVariants, Bf16AndInt8StepsStayCloseButAreReallyQuantised) {
  torch::NoGradGuard no_grad;
  at::manual_seed(12);
  auto [pre_norm, positions, tie] = GetParam();
  auto model = build_model(small_model(pre_norm, positions, tie), 20, 24, Vocab::kPad, false);
  model->eval();
  const float bf16 = largest_step_difference(model, WeightFormat::kBFloat16, 6);
  const float int8 = largest_step_difference(model, WeightFormat::kInt8, 6);
  EXPECT_GT(bf16, 1e-6);
  EXPECT_LT(bf16, 0.05);
  EXPECT_GT(int8, 1e-6);
  EXPECT_LT(int8, 0.1);
}

INSTANTIATE_TEST_SUITE_P(Model, PackedTransformerVariants,
                         ::testing::Combine(::testing::Bool(), ::testing::Values("sinusoidal", "learned"),
                                            ::testing::Bool()));

TEST(PackedTransformer, SharedEmbeddingsPackTheOneTable) {
  torch::NoGradGuard no_grad;
  at::manual_seed(13);
  auto c = small_model(true, "sinusoidal", true);
  c.share_embeddings = true;
  auto model = build_model(c, 24, 24, Vocab::kPad, true);
  model->eval();
  EXPECT_LT(largest_step_difference(model, WeightFormat::kFloat32, 4), 1e-4);
}

TEST(PackedTransformer, IsRepackedAfterWeightsChangeAndDroppedInTrainingMode) {
  at::manual_seed(14);
  auto model = build_model(small_model(true, "sinusoidal", false), 20, 24, Vocab::kPad, false);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto first = model->packed(WeightFormat::kFloat32);
  ASSERT_TRUE(first);
  EXPECT_EQ(model->packed(WeightFormat::kFloat32), first);  // kept while nothing changes
  EXPECT_TRUE(first->current());

  // An in-place update of one weight makes the pack stale; the next one decodes with the new weights.
  model->named_parameters()["decoder.1.ff.fc2.weight"].add_(0.5);
  EXPECT_FALSE(first->current());
  const auto second = model->packed(WeightFormat::kFloat32);
  EXPECT_NE(second, first);
  EXPECT_LT(largest_step_difference(model, WeightFormat::kFloat32, 3), 1e-4);

  // The fused Adam writes through raw pointers and still marks the weights changed.
  {
    torch::AutoGradMode grad(true);
    model->train();
    EXPECT_FALSE(model->packed(WeightFormat::kFloat32));  // never in training mode
    torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-2));
    auto src = at::tensor({5, 6, 3}, at::kLong).view({1, 3});
    auto tgt = at::tensor({2, 7, 8}, at::kLong).view({1, 3});
    model->forward(src, tgt).sum().backward();
    model->eval();
    const auto before = model->packed(WeightFormat::kFloat32);
    ASSERT_TRUE(fused_adam_step(adam));
    EXPECT_FALSE(before->current());
  }
  EXPECT_LT(largest_step_difference(model, WeightFormat::kFloat32, 3), 1e-4);
}

TEST(PackedTransformer, RefusesTokenIdsOutsideTheVocabulariesAndPositionsBeyondTheTable) {
  torch::NoGradGuard no_grad;
  at::manual_seed(16);
  auto model = build_model(small_model(true, "learned", false), 20, 24, Vocab::kPad, false);
  model->eval();
  const auto packed = model->packed(WeightFormat::kInt8);
  ASSERT_TRUE(packed);
  const auto src = at::tensor({5, 20, 3}, at::kLong).view({1, 3});  // 20 is one past the source vocabulary
  EXPECT_THROW(packed->encode(src, nullptr), std::out_of_range);
  const auto ok = at::tensor({5, 6, 3}, at::kLong).view({1, 3});
  DecoderState state;
  packed->start(state, packed->encode(ok, nullptr), padding_mask(ok, Vocab::kPad), false);
  EXPECT_THROW(packed->step(state, at::tensor({24}, at::kLong)), std::out_of_range);
  EXPECT_THROW(packed->step(state, at::tensor({-1}, at::kLong)), std::out_of_range);
  const auto long_src = at::full({1, 40}, 5, at::kLong);  // 32 learned positions
  EXPECT_THROW(packed->encode(long_src, nullptr), std::invalid_argument);
}

TEST(PackedTransformer, ModelsItCannotPackStayOnLibTorch) {
  at::manual_seed(15);
  auto model = build_model(small_model(true, "sinusoidal", false), 20, 24, Vocab::kPad, false);
  model->eval();
  model->to(at::kDouble);
  EXPECT_FALSE(model->packed(WeightFormat::kFloat32));
}

}  // namespace
}  // namespace ts
