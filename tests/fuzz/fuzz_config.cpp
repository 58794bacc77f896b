// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target: the JSON configuration layer. ts::ExperimentConfig::from_json, problems()/validate()
// and set("section.key=value") (ts/train/config.h); ts::LmConfig::from_json/set (ts/lm/lm_config.h,
// torch-free, linked from ts_core); and the other JSON readers a checkpoint's metadata feeds:
// TokenizerConfig::from_json, tokenizer_from_json and Vocab::from_json.
//
// Input: a selector byte, then either JSON text or (selector bit 0) lines of "section.key=value"
// assignments applied to a preset. Only ConfigError (and std::invalid_argument from the tokenizer
// and vocabulary readers, as documented) may escape; nlohmann parse errors cannot occur (the
// target parses without exceptions). Beyond that: a config that parses keeps every value it was
// given (no silent truncation), writes back to the same JSON, and validate() throws exactly when
// problems() is non-empty.
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "ts/lm/lm_config.h"
#include "ts/text/tokenizer.h"
#include "ts/text/utf8.h"
#include "ts/text/vocab.h"
#include "ts/train/config.h"

namespace {

using nlohmann::json;
using ts::fuzz::escaped;

const char* const kPresets[] = {"custom", "tiny", "demo", "annotated"};

void check_validate(const ts::ExperimentConfig& c) {
  const auto problems = c.problems();
  bool threw = false;
  try {
    c.validate();
  } catch (const ts::ConfigError& e) {
    threw = true;
    for (const auto& p : problems)
      TS_FUZZ_CHECK(std::string(e.what()).find(p) != std::string::npos, "validate() lists every problem");
  }
  TS_FUZZ_CHECK(threw == !problems.empty(), "validate() throws exactly when problems() is non-empty");
}

// Every scalar the input gave is what the config now holds (no silent wrap-around or rounding of
// integers). `given` is the input object for one section, `held` the config's own JSON for it.
void check_values_kept(const json& given, const json& held, const std::string& where) {
  for (const auto& item : given.items()) {
    const json& value = item.value();
    TS_FUZZ_CHECK(held.contains(item.key()), where + "." + item.key() + " accepted but not kept");
    const json& kept = held.at(item.key());
    if (value.is_object()) {
      check_values_kept(value, kept, where + "." + item.key());
    } else if (value.is_number_integer() && kept.is_number_integer()) {
      const bool same = value.is_number_unsigned() == kept.is_number_unsigned()
                            ? value == kept
                            : value.get<long double>() == kept.get<long double>();
      TS_FUZZ_CHECK(same, where + "." + item.key() + ": " + value.dump() + " was read as " + kept.dump());
    } else if (!value.is_number_float()) {  // floats: JSON text may round; integers into doubles too
      TS_FUZZ_CHECK(value == kept, where + "." + item.key() + ": " + value.dump() + " was read as " + kept.dump());
    }
  }
}

void fuzz_experiment_json(const json& j) {
  ts::ExperimentConfig c;
  try {
    c = ts::ExperimentConfig::from_json(j);
  } catch (const ts::ConfigError& e) {
    TS_FUZZ_CHECK(std::string(e.what()).size() > 0, "ConfigError has a message");
    return;
  }
  check_validate(c);
  const json written = c.to_json();
  (void)written.dump();  // checkpoints and the run history store it: must not throw
  for (const char* section : {"data", "model", "train", "decode"}) {
    if (j.contains(section)) check_values_kept(j.at(section), written.at(section), section);
  }
  // Round trip: what to_json writes, from_json reads back to the same config.
  ts::ExperimentConfig again;
  try {
    again = ts::ExperimentConfig::from_json(written);
  } catch (const ts::ConfigError& e) {
    TS_FUZZ_CHECK(false, std::string("to_json output refused by from_json: ") + e.what());
  }
  TS_FUZZ_CHECK(again.to_json() == written, "ExperimentConfig JSON round trip");
}

void fuzz_lm_json(const json& j) {
  ts::LmConfig c;
  try {
    c = ts::LmConfig::from_json(j);
  } catch (const ts::ConfigError&) {
    return;
  }
  const auto problems = c.problems();
  bool threw = false;
  try {
    c.validate();
  } catch (const ts::ConfigError&) {
    threw = true;
  }
  TS_FUZZ_CHECK(threw == !problems.empty(), "LmConfig::validate() throws exactly when problems() is non-empty");
  const json written = c.to_json();
  TS_FUZZ_CHECK(ts::LmConfig::from_json(written).to_json() == written, "LmConfig JSON round trip");
}

void fuzz_other_readers(const json& j) {
  try {
    const ts::Vocab vocab = ts::Vocab::from_json(j);
    TS_FUZZ_CHECK(ts::Vocab::from_json(vocab.to_json()) == vocab, "Vocab JSON round trip");
  } catch (const std::invalid_argument&) {}
  try {
    const auto tok = ts::tokenizer_from_json(j);
    const auto tokens = tok->tokenize("Ein kleiner Test, 42!");
    (void)tok->detokenize(tokens);
    (void)ts::tokenizer_from_json(tok->to_json());
  } catch (const std::invalid_argument&) {}
  if (j.is_object() && j.contains("data") && j.at("data").is_object() && j.at("data").contains("src_tokenizer")) {
    try {
      (void)ts::TokenizerConfig::from_json(j.at("data").at("src_tokenizer"));
    } catch (const std::invalid_argument&) {}
  }
}

// "section.key=value" lines applied in turn; after each accepted one the key holds the value.
void fuzz_assignments(std::string_view text, std::uint8_t selector) {
  ts::ExperimentConfig c;
  try {
    c = ts::preset(kPresets[(selector >> 1) & 3]);
  } catch (const ts::ConfigError&) {}
  ts::LmConfig lm;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string line(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    try {
      c.set(line);
      const std::size_t eq = line.find('='), dot = line.find('.');
      json value = json::parse(line.substr(eq + 1), nullptr, false);
      if (value.is_discarded()) value = line.substr(eq + 1);
      json::json_pointer pointer("/" + line.substr(0, dot));
      for (std::string rest = line.substr(dot + 1, eq - dot - 1);;) {
        const auto d = rest.find('.');
        pointer /= rest.substr(0, d);
        if (d == std::string::npos) break;
        rest = rest.substr(d + 1);
      }
      const json written = c.to_json();
      (void)written.dump();  // checkpoints and the run history store it: must not throw
      const json& kept = written.at(pointer);
      if (value.is_number_integer() && kept.is_number_integer()) {
        TS_FUZZ_CHECK(value.get<long double>() == kept.get<long double>(),
                      "set(\"" + escaped(line) + "\") stored " + kept.dump());
      } else if (!value.is_number_float() && !value.is_object()) {
        TS_FUZZ_CHECK(value == kept, "set(\"" + escaped(line) + "\") stored " + kept.dump());
      }
      check_validate(c);
    } catch (const ts::ConfigError&) {}
    try {
      lm.set(line);
      (void)lm.problems();
    } catch (const ts::ConfigError&) {}
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ts::fuzz::Input input(data, size);
  if (input.selector & 1) {
    fuzz_assignments(input.rest, input.selector);
    return 0;
  }
  const json j = json::parse(input.rest.begin(), input.rest.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  fuzz_experiment_json(j);
  fuzz_lm_json(j);
  fuzz_other_readers(j);
  return 0;
}
