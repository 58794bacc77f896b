// SPDX-License-Identifier: GPL-3.0-or-later
// Language-model configuration (see ts/lm/lm_config.h). No LibTorch here.
#include "ts/lm/lm_config.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "ts/text/utf8.h"

namespace ts {

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
            // get<T>() would wrap out-of-range values silently (4294967297 -> 1).
            const bool fits =
                v.is_number_unsigned()
                    ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                    : v.get<std::int64_t>() >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
                          (std::is_unsigned_v<T> ||
                           v.get<std::int64_t>() <= static_cast<std::int64_t>(std::numeric_limits<T>::max()));
            if (!fits)
              throw std::invalid_argument(fmt::format("expected an integer from {} to {}",
                                                      std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
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
            // Kept strings are written again (checkpoints, the run history): dump() throws on bad UTF-8.
            if (!is_valid_utf8(v.get_ref<const std::string&>())) throw std::invalid_argument("expected UTF-8 text");
            c.*member = v.get<std::string>();
          }};
}
// A closed set, by name (the parse function's std::invalid_argument names the accepted values).
template <class Enum>
Field choice(Enum LmConfig::*member, const char* (*name)(Enum), Enum (*parse)(const std::string&)) {
  return {[member, name](const LmConfig& c) { return nlohmann::json(name(c.*member)); },
          [member, parse](LmConfig& c, const nlohmann::json& v) {
            if (!v.is_string()) throw std::invalid_argument("expected a string");
            if (!is_valid_utf8(v.get_ref<const std::string&>())) throw std::invalid_argument("expected UTF-8 text");
            c.*member = parse(v.get<std::string>());
          }};
}

const std::map<std::string, Field>& fields() {
  static const std::map<std::string, Field> f = {
      {"preset", text(&LmConfig::preset)},
      {"kind", choice(&LmConfig::kind, lm_kind_name, parse_lm_kind)},
      {"n_layer", integer(&LmConfig::n_layer)},
      {"n_head", integer(&LmConfig::n_head)},
      {"n_embd", integer(&LmConfig::n_embd)},
      {"block_size", integer(&LmConfig::block_size)},
      {"dropout", number(&LmConfig::dropout)},
      {"batch_size", integer(&LmConfig::batch_size)},
      {"lr", number(&LmConfig::lr)},
      {"weight_decay", number(&LmConfig::weight_decay)},
      {"max_steps", integer(&LmConfig::max_steps)},
      {"max_minutes", number(&LmConfig::max_minutes)},
      {"eval_interval", integer(&LmConfig::eval_interval)},
      {"eval_iters", integer(&LmConfig::eval_iters)},
      {"seed", integer(&LmConfig::seed)},
      {"tokenizer", choice(&LmConfig::tokenizer, lm_tokenizer_name, parse_lm_tokenizer)},
      {"vocab_size", integer(&LmConfig::vocab_size)},
      {"threads", integer(&LmConfig::threads)},
      {"device", choice(&LmConfig::device, device_choice_name, parse_device_choice)},
      {"precision", choice(&LmConfig::precision, precision_name, parse_precision)}};
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
    throw ConfigError(fmt::format("{}: {}, got {}", key, e.what(),
                                  value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
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
  // A bare word becomes a JSON string as it is: bytes that are not UTF-8 would break every later dump().
  if (!is_valid_utf8(assignment))
    throw ConfigError("--set " +
                      nlohmann::json(assignment).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                      ": not valid UTF-8");
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw ConfigError(fmt::format("--set {}: expected key=value", assignment));
  const auto key = assignment.substr(0, eq), raw = assignment.substr(eq + 1);
  nlohmann::json value = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = raw;  // a bare word: a string
  put(*this, key, value);
}

const char* lm_kind_name(LmKind kind) { return kind == LmKind::kBigram ? "bigram" : "gpt"; }

LmKind parse_lm_kind(const std::string& name) {
  for (auto kind : {LmKind::kGpt, LmKind::kBigram})
    if (name == lm_kind_name(kind)) return kind;
  throw std::invalid_argument("unknown language-model kind \"" + name + "\" (expected gpt or bigram)");
}

const char* lm_tokenizer_name(LmTokenizer tokenizer) {
  switch (tokenizer) {
    case LmTokenizer::kBpe:
      return "bpe";
    case LmTokenizer::kUnigram:
      return "unigram";
    case LmTokenizer::kChar:
      break;
  }
  return "char";
}

LmTokenizer parse_lm_tokenizer(const std::string& name) {
  for (auto tokenizer : {LmTokenizer::kChar, LmTokenizer::kBpe, LmTokenizer::kUnigram})
    if (name == lm_tokenizer_name(tokenizer)) return tokenizer;
  throw std::invalid_argument("unknown tokenizer \"" + name + "\" (expected char, bpe or unigram)");
}

std::vector<std::string> LmConfig::problems() const {
  std::vector<std::string> p;
  if (n_layer < 1) p.push_back("n_layer: must be at least 1");
  if (n_head < 1) p.push_back("n_head: must be at least 1");
  if (n_embd < 1)
    p.push_back("n_embd: must be at least 1");
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
  if (vocab_size < 16) p.push_back("vocab_size: must be at least 16");
  if (threads < 0) p.push_back("threads: must not be negative");
  // No fp16 here: that needs the dynamic loss scaling of the translation trainer, which this loop lacks.
  if (precision != Precision::kFp32 && precision != Precision::kBf16)
    p.push_back(fmt::format("precision: \"{}\" is not fp32 or bf16", precision_name(precision)));
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
    c.kind = LmKind::kBigram;  // the small preset's data settings; the tutorial's bigram lr
    c.lr = 1e-2;
    return c;
  }
  std::string names;
  for (const auto& n : lm_preset_names()) names += (names.empty() ? "" : ", ") + n;
  throw ConfigError(fmt::format("unknown language-model preset \"{}\" (known: {})", name, names));
}

std::vector<std::string> lm_preset_names() { return {"shakespeare-char", "shakespeare-char-large", "bigram"}; }

std::int64_t LmConfig::parameter_estimate(std::int64_t vocab_size) const {
  // In doubles, so absurd sizes cannot overflow (exact below 2^53).
  const double V = static_cast<double>(vocab_size), D = n_embd;
  // Clamped to [0, 9e18] so that the cast is defined even for invalid (negative or absurd) sizes.
  const auto clamp = [](double x) { return static_cast<std::int64_t>(std::clamp(x, 0.0, 9.0e18)); };
  if (kind == LmKind::kBigram) return clamp(V * V);
  // Per block: attention 4 (D x D + D), feed-forward D x 4D + 4D + 4D x D + D, two LayerNorms 2 x 2D.
  const double block = 12 * D * D + 13 * D;
  return clamp(V * D + block_size * D + n_layer * block + 2 * D + D * V + V);
}

}  // namespace ts
