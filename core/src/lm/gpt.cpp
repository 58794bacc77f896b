// Language models (see ts/lm/gpt.h).
#include "ts/lm/gpt.h"

#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include "ts/model/attention.h"
#include "ts/model/transformer.h"

namespace ts {

// ---------------------------------------------------------------- configuration

namespace {

// One accessor per key keeps to_json, from_json and set in step.
struct Field {
  std::function<nlohmann::json(const LmConfig&)> get;
  std::function<void(LmConfig&, const nlohmann::json&)> put;  // throws std::invalid_argument with what is expected
};

template <class T>
Field integer(T LmConfig::*member) {
  return {[member](const LmConfig& c) { return nlohmann::json(c.*member); },
          [member](LmConfig& c, const nlohmann::json& v) {
            if (!v.is_number_integer()) throw std::invalid_argument("expected an integer");
            c.*member = v.get<T>();
          }};
}
Field number(double LmConfig::*member) {
  return {[member](const LmConfig& c) { return nlohmann::json(c.*member); },
          [member](LmConfig& c, const nlohmann::json& v) {
            if (!v.is_number()) throw std::invalid_argument("expected a number");
            c.*member = v.get<double>();
          }};
}
Field text(std::string LmConfig::*member) {
  return {[member](const LmConfig& c) { return nlohmann::json(c.*member); },
          [member](LmConfig& c, const nlohmann::json& v) {
            if (!v.is_string()) throw std::invalid_argument("expected a string");
            c.*member = v.get<std::string>();
          }};
}

const std::map<std::string, Field>& fields() {
  static const std::map<std::string, Field> f = {
      {"preset", text(&LmConfig::preset)},         {"kind", text(&LmConfig::kind)},
      {"n_layer", integer(&LmConfig::n_layer)},     {"n_head", integer(&LmConfig::n_head)},
      {"n_embd", integer(&LmConfig::n_embd)},       {"block_size", integer(&LmConfig::block_size)},
      {"dropout", number(&LmConfig::dropout)},      {"batch_size", integer(&LmConfig::batch_size)},
      {"lr", number(&LmConfig::lr)},                {"weight_decay", number(&LmConfig::weight_decay)},
      {"max_steps", integer(&LmConfig::max_steps)}, {"max_minutes", number(&LmConfig::max_minutes)},
      {"eval_interval", integer(&LmConfig::eval_interval)}, {"eval_iters", integer(&LmConfig::eval_iters)},
      {"seed", integer(&LmConfig::seed)},           {"tokenizer", text(&LmConfig::tokenizer)},
      {"vocab_size", integer(&LmConfig::vocab_size)}, {"threads", integer(&LmConfig::threads)},
      {"device", text(&LmConfig::device)},          {"precision", text(&LmConfig::precision)}};
  return f;
}

std::string key_list() {
  std::string out;
  for (const auto& [key, field] : fields()) out += (out.empty() ? "" : ", ") + key;
  return out;
}

void put(LmConfig& c, const std::string& key, const nlohmann::json& value) {
  const auto it = fields().find(key);
  if (it == fields().end()) throw ConfigError(fmt::format("{}: unknown key (known: {})", key, key_list()));
  try {
    it->second.put(c, value);
  } catch (const std::exception& e) {
    throw ConfigError(fmt::format("{}: {}, got {}", key, e.what(), value.dump()));
  }
}

}  // namespace

nlohmann::json LmConfig::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, field] : fields()) j[key] = field.get(*this);
  return j;
}

LmConfig LmConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw ConfigError("language-model config: expected a JSON object");
  LmConfig c;
  for (auto it = j.begin(); it != j.end(); ++it) put(c, it.key(), it.value());
  return c;
}

void LmConfig::set(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw ConfigError(fmt::format("--set {}: expected key=value", assignment));
  const auto key = assignment.substr(0, eq), raw = assignment.substr(eq + 1);
  nlohmann::json value = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = raw;  // a bare word: a string
  put(*this, key, value);
}

std::vector<std::string> LmConfig::problems() const {
  std::vector<std::string> p;
  if (kind != "gpt" && kind != "bigram") p.push_back(fmt::format("kind: \"{}\" is not gpt or bigram", kind));
  if (n_layer < 1) p.push_back("n_layer: must be at least 1");
  if (n_head < 1) p.push_back("n_head: must be at least 1");
  if (n_embd < 1) p.push_back("n_embd: must be at least 1");
  else if (n_head >= 1 && n_embd % n_head != 0)
    p.push_back(fmt::format("n_embd: {} is not divisible by n_head {}", n_embd, n_head));
  if (block_size < 1) p.push_back("block_size: must be at least 1");
  if (!(dropout >= 0 && dropout < 1)) p.push_back("dropout: must be in [0, 1)");
  if (batch_size < 1) p.push_back("batch_size: must be at least 1");
  if (!(lr > 0)) p.push_back("lr: must be positive");
  if (!(weight_decay >= 0)) p.push_back("weight_decay: must not be negative");
  if (max_steps < 0) p.push_back("max_steps: must not be negative");
  if (!(max_minutes >= 0)) p.push_back("max_minutes: must not be negative");
  if (eval_interval < 1) p.push_back("eval_interval: must be at least 1");
  if (eval_iters < 1) p.push_back("eval_iters: must be at least 1");
  if (tokenizer != "char" && tokenizer != "bpe" && tokenizer != "unigram")
    p.push_back(fmt::format("tokenizer: \"{}\" is not char, bpe or unigram", tokenizer));
  if (vocab_size < 16) p.push_back("vocab_size: must be at least 16");
  if (threads < 0) p.push_back("threads: must not be negative");
  if (device != "auto" && device != "cpu" && device != "cuda")
    p.push_back(fmt::format("device: \"{}\" is not auto, cpu or cuda", device));
  // No fp16 here: that needs the dynamic loss scaling of the translation trainer, which this loop lacks.
  if (precision != "fp32" && precision != "bf16")
    p.push_back(fmt::format("precision: \"{}\" is not fp32 or bf16", precision));
  return p;
}

void LmConfig::validate() const {
  const auto p = problems();
  if (p.empty()) return;
  std::string message = "invalid language-model config:";
  for (const auto& line : p) message += "\n  " + line;
  throw ConfigError(message);
}

LmConfig lm_preset(const std::string& name) {
  LmConfig c;  // the defaults are the tutorial's small GPT
  c.preset = name;
  if (name == "shakespeare-char") return c;
  if (name == "shakespeare-char-large") {
    c.batch_size = 64;
    c.block_size = 256;
    c.n_layer = 6;
    c.n_head = 6;
    c.n_embd = 384;
    c.dropout = 0.2;
    c.lr = 3e-4;
    return c;
  }
  if (name == "bigram") {
    c.kind = "bigram";  // the small preset's data settings; the tutorial's bigram lr
    c.lr = 1e-2;
    return c;
  }
  std::string names;
  for (const auto& n : lm_preset_names()) names += (names.empty() ? "" : ", ") + n;
  throw ConfigError(fmt::format("unknown language-model preset \"{}\" (known: {})", name, names));
}

std::vector<std::string> lm_preset_names() { return {"shakespeare-char", "shakespeare-char-large", "bigram"}; }

// ---------------------------------------------------------------- models

at::Tensor LanguageModelImpl::loss(const at::Tensor& idx, const at::Tensor& targets) {
  const auto logits = forward(idx);
  return at::nll_loss(at::log_softmax(logits.reshape({-1, logits.size(-1)}), -1, at::kFloat), targets.reshape({-1}));
}

std::int64_t LanguageModelImpl::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

namespace {

void check_length(std::int64_t end, std::int64_t block_size) {
  if (end > block_size)
    throw std::invalid_argument(fmt::format("context of {} tokens exceeds the block size {}", end, block_size));
}

// Each token's logits for the next one are a row of the table: no context beyond the last token.
class BigramImpl : public LanguageModelImpl {
 public:
  BigramImpl(const LmConfig& c, std::int64_t vocab) : LanguageModelImpl(c, vocab) {
    table_ = register_module("table", torch::nn::Embedding(vocab, vocab));
  }
  at::Tensor forward(const at::Tensor& idx) override { return table_->forward(idx); }
  at::Tensor feed(LmCache& cache, const at::Tensor& idx) override {
    check_length(cache.length + idx.size(1), config_.block_size);
    cache.length += idx.size(1);
    return table_->forward(idx);
  }

 private:
  torch::nn::Embedding table_{nullptr};
};

torch::nn::LayerNorm layer_norm(std::int64_t d) { return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}).eps(1e-5)); }

// Pre-LN block: x + drop(attn(ln1(x))), then x + drop(ff(ln2(x))). Attention goes through
// project_self/attend rather than forward() so that the keys and values can be cached.
class GptBlockImpl : public torch::nn::Module {
 public:
  explicit GptBlockImpl(const LmConfig& c) {
    attention = register_module("attention", MultiHeadAttention(c.n_embd, c.n_head, c.dropout, /*self_attention=*/true));
    ff_ = register_module("ff", FeedForward(c.n_embd, 4 * c.n_embd, c.dropout));
    norm1_ = register_module("norm1", layer_norm(c.n_embd));
    norm2_ = register_module("norm2", layer_norm(c.n_embd));
    dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
  }
  // x [B, T, D] at positions offset..; k/v: this layer's cache (appended to when `cache`).
  at::Tensor forward(const at::Tensor& x, at::Tensor* k_cache, at::Tensor* v_cache, const at::Tensor& mask) {
    auto [q, k, v] = attention->project_self(norm1_->forward(x));
    if (k_cache) {
      k = k_cache->defined() ? at::cat({*k_cache, k}, 2) : k;
      v = v_cache->defined() ? at::cat({*v_cache, v}, 2) : v;
      *k_cache = k;
      *v_cache = v;
    }
    auto h = x + fast_dropout(dropout_, attention->attend(q, k, v, mask));
    return h + fast_dropout(dropout_, ff_->forward(norm2_->forward(h)));
  }
  MultiHeadAttention attention{nullptr};

 private:
  FeedForward ff_{nullptr};
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(GptBlock);

class GptImpl : public LanguageModelImpl {
 public:
  GptImpl(const LmConfig& c, std::int64_t vocab) : LanguageModelImpl(c, vocab) {
    token_embed_ = register_module("token_embed", torch::nn::Embedding(vocab, c.n_embd));
    position_embed_ = register_module("position_embed", torch::nn::Embedding(c.block_size, c.n_embd));
    dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
    auto list = register_module("blocks", torch::nn::ModuleList());
    for (int i = 0; i < c.n_layer; ++i) {
      blocks_.emplace_back(c);
      list->push_back(blocks_.back());
    }
    norm_ = register_module("norm", layer_norm(c.n_embd));
    head_ = register_module("head", torch::nn::Linear(c.n_embd, vocab));
    // GPT-2's initialisation, as in the tutorial: N(0, 0.02) weights, zero biases.
    torch::NoGradGuard no_grad;
    for (auto& item : named_parameters()) {
      if (item.key().find("norm") != std::string::npos) continue;
      auto& p = item.value();
      if (p.dim() > 1) torch::nn::init::normal_(p, 0.0, 0.02);
      else p.zero_();
    }
  }

  at::Tensor forward(const at::Tensor& idx) override { return run(idx, nullptr); }
  at::Tensor feed(LmCache& cache, const at::Tensor& idx) override { return run(idx, &cache); }

  void set_record_attention(bool on) override {
    for (auto& b : blocks_) b->attention->set_record(on);
  }
  std::vector<at::Tensor> recorded_attention() const override {
    std::vector<at::Tensor> maps;
    for (const auto& b : blocks_) maps.push_back(b->attention->last_weights());
    return maps;
  }

 private:
  at::Tensor run(const at::Tensor& idx, LmCache* cache) {
    const auto offset = cache ? cache->length : 0;
    const auto T = idx.size(1), end = offset + T;
    check_length(end, config_.block_size);
    auto positions = at::arange(offset, end, idx.options().dtype(at::kLong));
    auto x = fast_dropout(dropout_, token_embed_->forward(idx) + position_embed_->forward(positions));
    // Query i (position offset + i) sees keys 0..offset + i: rows offset.. of the full causal mask.
    // One new token sees every cached key, so it needs no mask.
    const auto mask = T > 1 ? causal_mask(end, x.options()).slice(2, offset, end) : at::Tensor();
    if (cache) {
      cache->k.resize(blocks_.size());
      cache->v.resize(blocks_.size());
    }
    for (std::size_t i = 0; i < blocks_.size(); ++i)
      x = blocks_[i]->forward(x, cache ? &cache->k[i] : nullptr, cache ? &cache->v[i] : nullptr, mask);
    if (cache) cache->length = end;
    return linear(head_, norm_->forward(x));
  }

  torch::nn::Embedding token_embed_{nullptr}, position_embed_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  std::vector<GptBlock> blocks_;
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear head_{nullptr};
};

}  // namespace

LanguageModel build_language_model(const LmConfig& config, std::int64_t vocab_size) {
  config.validate();
  if (vocab_size < 1) throw ConfigError("language model: the vocabulary is empty");
  if (config.kind == "bigram") return std::make_shared<BigramImpl>(config, vocab_size);
  return std::make_shared<GptImpl>(config, vocab_size);
}

}  // namespace ts
