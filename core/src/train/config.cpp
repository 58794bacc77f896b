// SPDX-License-Identifier: GPL-3.0-or-later
// Experiment configuration: strict JSON round trip, overrides, validation and presets.
#include "ts/train/config.h"

#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "ts/model/fp16_products.h"
#include "ts/text/utf8.h"

namespace ts {
namespace {

using nlohmann::json;

// A value as JSON text for an error message. Strings that are not valid UTF-8 (possible in JSON
// built in code; the parser refuses them) would make plain dump() throw instead of the message.
std::string shown(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Each section lists its fields once; the same list drives writing, reading and overrides.
template <class V>
void visit(DataConfig& c, V& v) {
  v("src_tokenizer", c.src_tokenizer);
  v("tgt_tokenizer", c.tgt_tokenizer);
  v("shared_vocab", c.shared_vocab);
  v("cjk_chars", c.cjk_chars);
  v("min_freq", c.min_freq);
  v("max_vocab", c.max_vocab);
  v("dev", c.dev);
  v("test", c.test);
  v("max_len", c.max_len);
  v("split_seed", c.split_seed);
  v("split", c.split);
}

template <class V>
void visit(ModelConfig& c, V& v) {
  v("encoder_layers", c.encoder_layers);
  v("decoder_layers", c.decoder_layers);
  v("d_model", c.d_model);
  v("heads", c.heads);
  v("d_ff", c.d_ff);
  v("dropout", c.dropout);
  v("pre_norm", c.pre_norm);
  v("positions", c.positions);
  v("max_positions", c.max_positions);
  v("scale_embeddings", c.scale_embeddings);
  v("tie_output", c.tie_output);
  v("share_embeddings", c.share_embeddings);
}

template <class V>
void visit(TrainConfig& c, V& v) {
  v("optimizer", c.optimizer);
  v("lr", c.lr);
  v("schedule", c.schedule);
  v("warmup", c.warmup);
  v("adam_beta1", c.adam_beta1);
  v("adam_beta2", c.adam_beta2);
  v("adam_eps", c.adam_eps);
  v("weight_decay", c.weight_decay);
  v("label_smoothing", c.label_smoothing);
  v("clip_norm", c.clip_norm);
  v("on_nonfinite", c.on_nonfinite);
  v("accumulate", c.accumulate);
  v("batch_tokens", c.batch_tokens);
  v("batch_sentences", c.batch_sentences);
  v("max_steps", c.max_steps);
  v("max_epochs", c.max_epochs);
  v("max_minutes", c.max_minutes);
  v("budget_minutes", c.budget_minutes);
  v("budget_validations", c.budget_validations);
  v("ema", c.ema);
  v("validate_every", c.validate_every);
  v("dev_max_sentences", c.dev_max_sentences);
  v("samples", c.samples);
  v("probe", c.probe);
  v("best_metric", c.best_metric);
  v("patience", c.patience);
  v("keep_last", c.keep_last);
  v("seed", c.seed);
  v("device", c.device);
  v("threads", c.threads);
  v("shard_batch", c.shard_batch);
  v("precision", c.precision);
}

template <class V>
void visit(DecodeConfig& c, V& v) {
  v("mode", c.mode);
  v("beam", c.beam);
  v("length_penalty", c.length_penalty);
  v("nbest", c.nbest);
  v("temperature", c.temperature);
  v("top_k", c.top_k);
  v("top_p", c.top_p);
  v("max_len_a", c.max_len_a);
  v("max_len_b", c.max_len_b);
  v("seed", c.seed);
  v("weights", c.weights);
  v("shortlist", c.shortlist);
}

struct Writer {
  json& out;
  void operator()(const char* key, TokenizerConfig& value) { out[key] = value.to_json(); }
  void operator()(const char* key, SplitMethod& value) { out[key] = split_method_name(value); }
  void operator()(const char* key, DecodeMode& value) { out[key] = decode_mode_name(value); }
  void operator()(const char* key, LrSchedule& value) { out[key] = lr_schedule_name(value); }
  void operator()(const char* key, Optimizer& value) { out[key] = optimizer_name(value); }
  void operator()(const char* key, Positions& value) { out[key] = positions_name(value); }
  void operator()(const char* key, BestMetric& value) { out[key] = best_metric_name(value); }
  void operator()(const char* key, DeviceChoice& value) { out[key] = device_choice_name(value); }
  void operator()(const char* key, Precision& value) { out[key] = precision_name(value); }
  void operator()(const char* key, NonFinitePolicy& value) { out[key] = non_finite_policy_name(value); }
  void operator()(const char* key, DecodeWeights& value) { out[key] = decode_weights_name(value); }
  template <class T>
  void operator()(const char* key, T& value) {
    out[key] = value;
  }
};

// Reads one JSON value into a typed field, with the full key path in every error.
struct Reader {
  const json& in;
  std::string section;
  std::set<std::string> seen;

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ConfigError(section + "." + key + ": " + what);
  }
  bool take(const char* key) {
    seen.insert(key);
    return in.contains(key);
  }
  void operator()(const char* key, TokenizerConfig& value) {
    if (!take(key)) return;
    try {
      value = TokenizerConfig::from_json(in.at(key));
    } catch (const std::exception& e) {
      fail(key, e.what());
    }
  }
  void operator()(const char* key, bool& value) {
    if (!take(key)) return;
    if (!in.at(key).is_boolean()) fail(key, "expected true or false, got " + shown(in.at(key)));
    value = in.at(key).get<bool>();
  }
  void operator()(const char* key, int& value) {
    if (!take(key)) return;
    const json& j = in.at(key);
    if (!j.is_number_integer()) fail(key, "expected an integer, got " + shown(j));
    // get<int>() would wrap silently (4294967552 -> 256; found by tests/fuzz/fuzz_config).
    const bool fits = j.is_number_unsigned()
                          ? j.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<int>::max())
                          : j.get<std::int64_t>() >= std::numeric_limits<int>::min() &&
                                j.get<std::int64_t>() <= std::numeric_limits<int>::max();
    if (!fits)
      fail(key, "expected an integer from " + std::to_string(std::numeric_limits<int>::min()) + " to " +
                    std::to_string(std::numeric_limits<int>::max()) + ", got " + shown(j));
    value = j.get<int>();
  }
  void operator()(const char* key, std::uint64_t& value) {
    if (!take(key)) return;
    const json& j = in.at(key);
    // Unsigned JSON numbers above INT64_MAX are valid here (get<long long>() saw them as negative).
    if (!j.is_number_integer() || (!j.is_number_unsigned() && j.get<std::int64_t>() < 0))
      fail(key, "expected a non-negative integer, got " + shown(j));
    value = j.get<std::uint64_t>();
  }
  void operator()(const char* key, double& value) {
    if (!take(key)) return;
    if (!in.at(key).is_number()) fail(key, "expected a number, got " + shown(in.at(key)));
    value = in.at(key).get<double>();
  }
  void operator()(const char* key, std::string& value) {
    if (!take(key)) return;
    if (!in.at(key).is_string()) fail(key, "expected a string, got " + shown(in.at(key)));
    // Kept strings must be writable again: to_json().dump() (checkpoints, the run history) throws
    // on invalid UTF-8.
    if (!is_valid_utf8(in.at(key).get_ref<const std::string&>()))
      fail(key, "not valid UTF-8, got " + shown(in.at(key)));
    value = in.at(key).get<std::string>();
  }
  void operator()(const char* key, SplitMethod& value) {
    if (!take(key)) return;
    std::string name;
    (*this)(key, name);
    try {
      value = parse_split_method(name);
    } catch (const std::invalid_argument& e) {
      fail(key, e.what());
    }
  }
  void operator()(const char* key, DecodeMode& value) { choice(key, value, parse_decode_mode, "greedy, beam, sample"); }
  void operator()(const char* key, LrSchedule& value) {
    choice(key, value, parse_lr_schedule, "noam, constant, linear, cosine");
  }
  void operator()(const char* key, NonFinitePolicy& value) {
    choice(key, value, parse_non_finite_policy, "stop, skip");
  }
  void operator()(const char* key, Optimizer& value) { choice(key, value, parse_optimizer, "adam, adamw"); }
  void operator()(const char* key, Positions& value) { choice(key, value, parse_positions, "sinusoidal, learned"); }
  void operator()(const char* key, BestMetric& value) { choice(key, value, parse_best_metric, "bleu, loss"); }
  void operator()(const char* key, DeviceChoice& value) { choice(key, value, parse_device_choice, "auto, cpu, cuda"); }
  void operator()(const char* key, Precision& value) { choice(key, value, parse_precision, "fp32, bf16, fp16, auto"); }
  void operator()(const char* key, DecodeWeights& value) {
    choice(key, value, parse_decode_weights, "fp32, bf16, int8, libtorch");
  }
  // A closed set, by name; the name is quoted as JSON, so a NUL or control byte in it cannot cut the
  // message (a C string) short (found by tests/fuzz/fuzz_config).
  template <class Enum, class Parse>
  void choice(const char* key, Enum& value, Parse parse, const char* allowed) {
    if (!take(key)) return;
    std::string name;
    (*this)(key, name);
    try {
      value = parse(name);
    } catch (const std::invalid_argument&) {
      throw ConfigError(section + "." + key + " " + json(name).dump() + " is not one of " + allowed);
    }
  }
  void reject_unknown() const {
    for (const auto& item : in.items())
      if (!seen.count(item.key())) fail(item.key(), "unknown key");
  }
};

template <class Section>
json section_to_json(Section section) {
  json out = json::object();
  Writer w{out};
  visit(section, w);
  return out;
}

template <class Section>
void section_from_json(const json& j, const std::string& name, Section& s) {
  if (!j.is_object()) throw ConfigError(name + ": expected an object");
  Reader r{j, name, {}};
  visit(s, r);
  r.reject_unknown();
}

}  // namespace

const char* lr_schedule_name(LrSchedule schedule) {
  switch (schedule) {
    case LrSchedule::kNoam:
      return "noam";
    case LrSchedule::kConstant:
      return "constant";
    case LrSchedule::kLinear:
      return "linear";
    case LrSchedule::kCosine:
      return "cosine";
  }
  return "noam";
}

LrSchedule parse_lr_schedule(const std::string& name) {
  for (auto schedule : {LrSchedule::kNoam, LrSchedule::kConstant, LrSchedule::kLinear, LrSchedule::kCosine})
    if (name == lr_schedule_name(schedule)) return schedule;
  throw std::invalid_argument("unknown learning-rate schedule \"" + name +
                              "\" (expected noam, constant, linear or cosine)");
}

const char* optimizer_name(Optimizer optimizer) { return optimizer == Optimizer::kAdamW ? "adamw" : "adam"; }

Optimizer parse_optimizer(const std::string& name) {
  for (auto optimizer : {Optimizer::kAdam, Optimizer::kAdamW})
    if (name == optimizer_name(optimizer)) return optimizer;
  throw std::invalid_argument("unknown optimizer \"" + name + "\" (expected adam or adamw)");
}

const char* best_metric_name(BestMetric metric) { return metric == BestMetric::kLoss ? "loss" : "bleu"; }

BestMetric parse_best_metric(const std::string& name) {
  for (auto metric : {BestMetric::kBleu, BestMetric::kLoss})
    if (name == best_metric_name(metric)) return metric;
  throw std::invalid_argument("unknown best-checkpoint metric \"" + name + "\" (expected bleu or loss)");
}

json ExperimentConfig::to_json() const {
  return {{"preset", preset},
          {"data", section_to_json(data)},
          {"model", section_to_json(model)},
          {"train", section_to_json(train)},
          {"decode", section_to_json(decode)}};
}

ExperimentConfig ExperimentConfig::from_json(const json& j) {
  if (!j.is_object()) throw ConfigError("config: expected a JSON object");
  ExperimentConfig c;
  if (j.contains("preset")) {
    if (!j.at("preset").is_string()) throw ConfigError("preset: expected a string");
    const std::string name = j.at("preset").get<std::string>();
    if (name != "custom") c = ts::preset(name);
  }
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    if (key == "preset") continue;
    if (key == "data")
      section_from_json(item.value(), key, c.data);
    else if (key == "model")
      section_from_json(item.value(), key, c.model);
    else if (key == "train")
      section_from_json(item.value(), key, c.train);
    else if (key == "decode")
      section_from_json(item.value(), key, c.decode);
    else
      throw ConfigError(key + ": unknown section (expected data, model, train, decode)");
  }
  return c;
}

ExperimentConfig ExperimentConfig::from_saved_json(const json& j) {
  auto c = from_json(j);
  const bool says_split =
      j.is_object() && j.contains("data") && j.at("data").is_object() && j.at("data").contains("split");
  if (!says_split) c.data.split = SplitMethod::kShuffledPairs;  // saved before grouped splits existed
  return c;
}

void ExperimentConfig::set(const std::string& assignment) {
  // Bare words become JSON strings as they are: bytes that are not UTF-8 would be kept and make
  // every later to_json().dump() throw (found by tests/fuzz/fuzz_config).
  if (!is_valid_utf8(assignment)) throw ConfigError("--set " + shown(json(assignment)) + ": not valid UTF-8");
  const auto eq = assignment.find('=');
  const auto dot = assignment.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot > eq)
    throw ConfigError("--set " + shown(json(assignment)) + ": expected section.key=value, e.g. train.lr=0.5");
  const std::string section = assignment.substr(0, dot);
  const std::string key = assignment.substr(dot + 1, eq - dot - 1);
  const std::string text = assignment.substr(eq + 1);
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = text;  // bare words are strings
  // Nested keys (data.src_tokenizer.kind=bpe) patch the nested object.
  json patch = to_json();
  if (!patch.contains(section)) throw ConfigError(section + ": unknown section (expected data, model, train, decode)");
  json* target = &patch[section];
  std::string rest = key;
  for (auto d = rest.find('.'); d != std::string::npos; d = rest.find('.')) {
    const std::string part = rest.substr(0, d);
    if (!target->contains(part)) throw ConfigError(section + "." + key + ": unknown key");
    target = &(*target)[part];
    rest = rest.substr(d + 1);
  }
  if (!target->contains(rest)) throw ConfigError(section + "." + key + ": unknown key");
  (*target)[rest] = value;
  patch["preset"] = "custom";
  const std::string keep = preset;
  *this = from_json(patch);
  preset = keep;
}

std::vector<std::string> ExperimentConfig::problems() const {
  auto p = model.problems(data.shared_vocab);
  // A learned table has no row beyond max_positions: the longest training pair plus BOS/EOS must fit.
  // In 64 bits: data.max_len + 2 overflows an int for max_len near INT_MAX (undefined behaviour).
  const std::int64_t needed_positions = static_cast<std::int64_t>(data.max_len) + 2;
  if (model.positions == Positions::kLearned && model.max_positions < needed_positions)
    p.push_back("model.max_positions (" + std::to_string(model.max_positions) +
                ") must be at least data.max_len + 2 (" + std::to_string(needed_positions) +
                ") with learned positions");

  const auto& t = train;
  if (t.precision == Precision::kFp16 && t.device == DeviceChoice::kCpu && !fp16_products_available())
    p.push_back(
        "train.precision fp16 needs a CUDA GPU or a CPU with AVX-512 FP16, which this one lacks; use bf16 "
        "or fp32");
  check_positive(p, "train.lr", t.lr);
  check_positive(p, "train.accumulate", t.accumulate);
  if (t.schedule == LrSchedule::kNoam && t.warmup <= 0)
    p.push_back("train.warmup must be positive for the noam schedule");
  if (t.label_smoothing < 0 || t.label_smoothing >= 1) p.push_back("train.label_smoothing must be in [0, 1)");
  if (t.batch_tokens <= 0 && t.batch_sentences <= 0)
    p.push_back("train.batch_tokens or train.batch_sentences must be positive");
  if (t.batch_tokens < 0 || t.batch_sentences < 0 || t.max_steps < 0 || t.max_epochs < 0 || t.max_minutes < 0 ||
      t.validate_every < 0 || t.threads < 0 || t.keep_last < 0 || t.patience < 0 || t.budget_validations < 0)
    p.push_back("train: counts and limits must not be negative");
  // NaN fails every comparison, so the ranges are written to reject it.
  if (!(t.budget_minutes >= 0 && t.budget_minutes <= 525600))
    p.push_back("train.budget_minutes must be between 0 (no budget) and 525600 (a year)");
  if (!(t.ema >= 0 && t.ema < 1))
    p.push_back("train.ema must be in [0, 1) (0 = no weight averaging; Marian uses 1e-4)");

  const auto& d = decode;
  check_positive(p, "decode.beam", d.beam);
  check_positive(p, "decode.nbest", d.nbest);
  check_positive(p, "decode.temperature", d.temperature);
  if (d.top_p <= 0 || d.top_p > 1) p.push_back("decode.top_p must be in (0, 1]");
  if (data.min_freq < 1) p.push_back("data.min_freq must be at least 1");
  if (data.dev < 0 || data.test < 0) p.push_back("data.dev and data.test must not be negative");
  check_positive(p, "data.max_len", data.max_len);
  return p;
}

void ExperimentConfig::validate() const { throw_if_problems(problems()); }

ExperimentConfig load_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open config file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  // Comments (// and /* */) are allowed: the files in resources/configs/ explain every key.
  json j;
  try {
    j = json::parse(buffer.str(), nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 5: ..." -> from "line".
    const std::string what = e.what();
    const auto at = what.find("line ");
    throw ConfigError(path + ": not valid JSON (" + (at == std::string::npos ? what : what.substr(at)) + ")");
  }
  try {
    return ExperimentConfig::from_json(j);
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
}

double parse_budget_minutes(const std::string& text) {
  const auto bad = [&] {
    return ConfigError("budget \"" + text + "\": expected minutes (20) or a duration such as 20m, 90s, 1h30m");
  };
  double minutes = 0;
  std::size_t i = 0, units = 0;
  bool bare = false;
  while (i < text.size()) {
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(text.substr(i), &used);
    } catch (const std::exception&) {
      throw bad();
    }
    // stod accepts "inf", "nan", hex and exponents: only plain decimals are durations.
    for (std::size_t k = i; k < i + used; ++k)
      if (!std::isdigit(static_cast<unsigned char>(text[k])) && text[k] != '.') throw bad();
    i += used;
    const char unit = i < text.size() ? static_cast<char>(std::tolower(static_cast<unsigned char>(text[i]))) : '\0';
    if (unit == 'h')
      minutes += value * 60;
    else if (unit == 'm')
      minutes += value;
    else if (unit == 's')
      minutes += value / 60;
    else if (unit == '\0' && units == 0)
      bare = true, minutes = value;
    else
      throw bad();
    if (unit != '\0') {
      ++i;
      if (i + 2 < text.size() + 1 && text.compare(i, 2, "in") == 0) i += 2;  // "20min"
    }
    ++units;
    if (bare && i < text.size()) throw bad();
  }
  if (units == 0 || !(minutes > 0) || minutes > 525600) throw bad();
  return minutes;
}

std::string minutes_text(double minutes) {
  const auto seconds = static_cast<long long>(std::llround(minutes * 60));
  if (seconds < 60) return fmt::format("{} s", seconds);
  if (seconds < 3600 && seconds % 60 != 0) return fmt::format("{} min {} s", seconds / 60, seconds % 60);
  const long long m = (seconds + 30) / 60;
  if (m < 60) return fmt::format("{} min", m);
  return m % 60 ? fmt::format("{} h {} min", m / 60, m % 60) : fmt::format("{} h", m / 60);
}

}  // namespace ts
