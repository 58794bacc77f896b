// SPDX-License-Identifier: GPL-3.0-or-later
// Embedding lookups whose table gradient is kept as rows during training (ts/model/embedding_rows.h).
#include "ts/model/embedding_rows.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/custom_function.h>

namespace ts {

namespace {

thread_local EmbeddingRowGradients* innermost = nullptr;
std::atomic<std::uint64_t> next_id{1};

// out[r] = table[tokens[r]] · scale, row by row (scale as float: the bits of at::embedding(...) * scale).
at::Tensor lookup_rows(const at::Tensor& table, const at::Tensor& flat_tokens, float scale) {
  const std::int64_t vocab = table.size(0), d = table.size(1), n = flat_tokens.size(0);
  auto out = at::empty({n, d}, table.options());
  const float* w = table.data_ptr<float>();
  const std::int64_t* t = flat_tokens.data_ptr<std::int64_t>();
  float* o = out.data_ptr<float>();
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t token = t[r];
    if (token < 0 || token >= vocab)
      throw std::out_of_range("embedding lookup: token " + std::to_string(token) + " outside the table's " +
                              std::to_string(vocab) + " rows");
    const float* src = w + token * d;
    float* dst = o + r * d;
    if (scale == 1.0f) {
      std::memcpy(dst, src, static_cast<std::size_t>(d) * sizeof(float));
    } else {
      for (std::int64_t j = 0; j < d; ++j) dst[j] = src[j] * scale;
    }
  }
  return out;
}

// grad_table[tokens[r]] += rows[r] · scale, in row order.
void add_rows(float* grad_table, std::int64_t vocab, const at::Tensor& tokens, const at::Tensor& rows, float scale) {
  const std::int64_t n = rows.size(0), d = rows.size(1);
  const std::int64_t* t = tokens.data_ptr<std::int64_t>();
  const float* g = rows.data_ptr<float>();
  for (std::int64_t r = 0; r < n; ++r) {
    if (t[r] < 0 || t[r] >= vocab) throw std::out_of_range("embedding gradient: token outside the table");
    float* dst = grad_table + t[r] * d;
    const float* src = g + r * d;
    if (scale == 1.0f) {
      for (std::int64_t j = 0; j < d; ++j) dst[j] += src[j];
    } else {
      for (std::int64_t j = 0; j < d; ++j) dst[j] += src[j] * scale;
    }
  }
}

struct EmbeddingRows : public torch::autograd::Function<EmbeddingRows> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& table_in, const at::Tensor& tokens,
                            double scale, std::int64_t scope) {
    const auto table = table_in.contiguous();
    const auto flat = tokens.reshape({-1}).contiguous();
    auto out = lookup_rows(table, flat, static_cast<float>(scale));
    ctx->save_for_backward({table_in, flat});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["scope"] = scope;
    auto shape = tokens.sizes().vec();
    shape.push_back(table.size(1));
    return out.view(shape);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &table = saved[0], &flat = saved[1];
    const double scale = ctx->saved_data["scale"].toDouble();
    const auto scope = static_cast<std::uint64_t>(ctx->saved_data["scope"].toInt());
    const std::int64_t vocab = table.size(0);
    const auto rows = grads[0].reshape({flat.size(0), -1}).contiguous();
    const auto none = at::Tensor();
    if (!ctx->needs_input_grad(0)) return {none, none, none, none};
    auto* sink = EmbeddingRowGradients::current();
    if (sink && sink->id() == scope) {
      sink->record(table, flat, rows, scale);
      return {none, none, none, none};
    }
    auto dense = at::zeros({vocab, rows.size(1)}, rows.options());
    add_rows(dense.data_ptr<float>(), vocab, flat, rows, static_cast<float>(scale));
    return {dense, none, none, none};
  }
};

}  // namespace

EmbeddingRowGradients::EmbeddingRowGradients() : id_(next_id.fetch_add(1)), outer_(innermost) { innermost = this; }

EmbeddingRowGradients::~EmbeddingRowGradients() { innermost = outer_; }

EmbeddingRowGradients* EmbeddingRowGradients::current() { return innermost; }

void EmbeddingRowGradients::record(const at::Tensor& table, const at::Tensor& tokens, const at::Tensor& rows,
                                   double scale) {
  const std::lock_guard<std::mutex> lock(mutex_);
  records_.push_back({table, tokens, rows, scale});
}

std::size_t EmbeddingRowGradients::pending() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return records_.size();
}

void EmbeddingRowGradients::add_to(const std::vector<at::Tensor>& parameters, std::vector<at::Tensor>& grads) {
  if (grads.size() != parameters.size())
    throw std::logic_error("EmbeddingRowGradients::add_to: one gradient per parameter");
  std::vector<Record> records;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    records.swap(records_);
  }
  for (const auto& record : records) {
    const auto it = std::find_if(parameters.begin(), parameters.end(), [&](const at::Tensor& p) {
      return p.unsafeGetTensorImpl() == record.table.unsafeGetTensorImpl();
    });
    if (it == parameters.end())
      throw std::logic_error("EmbeddingRowGradients::add_to: a recorded table is not among the parameters");
    const auto index = static_cast<std::size_t>(it - parameters.begin());
    auto& grad = grads[index];
    if (!grad.defined()) grad = at::zeros_like(record.table, at::MemoryFormat::Contiguous);
    // Added to in place only where nothing else holds it or its memory (autograd may hand one
    // tensor, or views of one, to two parameters).
    bool shared = grad.use_count() > 1 || !grad.is_contiguous();
    for (std::size_t j = 0; j < grads.size() && !shared; ++j)
      shared = j != index && grads[j].defined() &&
               grads[j].storage().unsafeGetStorageImpl() == grad.storage().unsafeGetStorageImpl();
    if (shared) grad = grad.clone(at::MemoryFormat::Contiguous);
    if (grad.scalar_type() != at::kFloat || !grad.device().is_cpu() || grad.sizes() != record.table.sizes())
      throw std::logic_error(
          "EmbeddingRowGradients::add_to: the table's gradient is not an fp32 CPU tensor of its size");
    add_rows(grad.data_ptr<float>(), grad.size(0), record.tokens, record.rows, static_cast<float>(record.scale));
  }
}

void EmbeddingRowGradients::add_to_grads(const std::vector<at::Tensor>& parameters) {
  if (pending() == 0) return;
  std::vector<at::Tensor> grads;  // moved out of the parameters, so that each is held once
  grads.reserve(parameters.size());
  for (const auto& p : parameters) grads.push_back(std::move(p.mutable_grad()));
  try {
    add_to(parameters, grads);
  } catch (...) {
    for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i].mutable_grad() = std::move(grads[i]);
    throw;
  }
  for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i].mutable_grad() = std::move(grads[i]);
}

at::Tensor embedding_lookup(const at::Tensor& table, const at::Tensor& tokens, double scale) {
  auto* sink = EmbeddingRowGradients::current();
  if (sink && at::GradMode::is_enabled() && table.requires_grad() && table.device().is_cpu() &&
      table.scalar_type() == at::kFloat && table.dim() == 2 && tokens.scalar_type() == at::kLong &&
      tokens.device().is_cpu())
    return EmbeddingRows::apply(table, tokens, scale, static_cast<std::int64_t>(sink->id()));
  auto x = at::embedding(table, tokens);
  return scale == 1.0 ? x : x * scale;
}

}  // namespace ts
