// SPDX-License-Identifier: GPL-3.0-or-later
// The `auto` recipe fitted and refitted (see ts/train/auto_fit.h).
#include "ts/train/auto_fit.h"

#include <cstdint>
#include <exception>
#include <utility>

#include <nlohmann/json.hpp>

#include "ts/model/errors.h"
#include "ts/train/auto_recipe.h"
#include "ts/train/calibration.h"

namespace ts {

namespace {

using Json = nlohmann::json;

// The inputs of a fit are the person's choices, never the recipe's.
void copy_inputs(ExperimentConfig& to, const ExperimentConfig& from) {
  to.train.device = from.train.device;
  to.train.threads = from.train.threads;
  to.train.budget_minutes = from.train.budget_minutes;
}

// The plain preset as StudioState::applyPreset makes it from `current`.
ExperimentConfig plain_auto(const ExperimentConfig& current) {
  ExperimentConfig p = preset("auto");
  copy_inputs(p, current);
  p.train.precision = current.train.precision;
  return p;
}

// Leaves of `a` (a config as JSON; `b` has the same keys) whose value differs in `b`, as JSON
// pointers ("/train/lr"). The top-level "preset" is not a setting.
void differences(const Json& a, const Json& b, const std::string& prefix, std::vector<Json::json_pointer>& out) {
  for (const auto& item : a.items()) {
    if (prefix.empty() && item.key() == "preset") continue;
    const std::string path = prefix + "/" + item.key();
    const auto it = b.is_object() ? b.find(item.key()) : b.end();
    if (item.value().is_object() && b.is_object() && it != b.end() && it->is_object()) {
      differences(item.value(), *it, path, out);
    } else if (!b.is_object() || it == b.end() || *it != item.value()) {
      out.emplace_back(path);
    }
  }
}

std::vector<Json::json_pointer> differences(const Json& a, const Json& b) {
  std::vector<Json::json_pointer> out;
  differences(a, b, {}, out);
  return out;
}

}  // namespace

std::string auto_fit_key(const Corpus& corpus, const Direction& direction, const ExperimentConfig& config) {
  return std::to_string(reinterpret_cast<std::uintptr_t>(&corpus)) + '|' + corpus.path + '|' +
         std::to_string(corpus.pairs.size()) + '|' + direction.str() + (direction.english_is_source ? "|en|" : "|xx|") +
         Json(config.train.budget_minutes).dump() + '|' + device_choice_name(config.train.device) + '|' +
         std::to_string(config.train.threads) + '|' + precision_name(config.train.precision) +
         (config.train.shard_batch ? "|shares" : "|whole");
}

AutoFit fit_auto(const Corpus& corpus, const Direction& direction, const ExperimentConfig& config, bool measure,
                 double given_speed, DataParallel* parallel) {
  AutoFit out;
  out.key = auto_fit_key(corpus, direction, config);
  const double budget = config.train.budget_minutes;
  try {
    const auto speed = SpeedSettings::of(config.train);
    MachineProfile machine;
    if (given_speed > 0) {
      machine = given_machine(speed, given_speed);
    } else if (parallel) {
      machine = measure_data_parallel_machine(speed, *parallel);
    } else if (measure) {
      machine = measure_machine(speed);
    } else {
      machine = MachineProfile::detect(speed.device, speed.threads);
      const auto cached = cached_reference_throughput(speed, auto_batch_tokens(machine));
      machine.measured_tokens_per_second = cached.tokens_per_second;
      machine.measured_seconds = cached.seconds;
    }
    machine.precision = config.train.precision;  // what the measurement ran at, and what training will
    out.measured = machine.measured_tokens_per_second > 0;
    out.machine = machine.describe();
    RecipeChoice choice = auto_recipe(corpus, direction, budget > 0 ? budget : kFitMinutesWithoutBudget, machine);
    out.config = std::move(choice.config);
    out.reasons = std::move(choice.reasons);
    out.budget_target_tokens = choice.budget_target_tokens;
    out.estimated_passes = choice.estimated_passes;
    if (budget <= 0)
      out.reasons.push_back("No time budget (\u201cuntil I stop it\u201d): the recipe is sized as for " +
                            ts::minutes_text(kFitMinutesWithoutBudget) +
                            ", the learning rate has no deadline to decay to, and the run goes on until you "
                            "stop it or one of its own limits is reached.");
  } catch (const std::exception& e) {
    out.error = error_message(e);
    out.reasons.clear();
    try {
      out.config = preset("auto");
    } catch (const std::exception&) {
      out.config = config;
    }
  }
  out.config.preset = "auto";
  copy_inputs(out.config, config);
  return out;
}

bool is_plain_auto(const ExperimentConfig& config) {
  if (config.preset != "auto") return false;
  try {
    return plain_auto(config).to_json() == config.to_json();
  } catch (const std::exception&) {
    return false;  // a build whose core has no `auto` preset
  }
}

ExperimentConfig refit_auto(const ExperimentConfig& current, const ExperimentConfig& fit,
                            const ExperimentConfig* previous_fit) {
  const Json now = current.to_json();
  std::vector<Json::json_pointer> edits;
  try {
    edits = differences(now, plain_auto(current).to_json());
  } catch (const std::exception&) {
    edits = differences(now, fit.to_json());  // no plain preset to compare with: keep what differs from the fit
  }
  if (previous_fit) {
    ExperimentConfig base = *previous_fit;
    copy_inputs(base, current);
    auto from_previous = differences(now, base.to_json());
    // The configuration came from whichever it is closer to: right after a fit was applied, every
    // value the recipe chose differs from the plain preset, but none from that fit.
    if (from_previous.size() < edits.size()) edits = std::move(from_previous);
  }
  Json out = fit.to_json();
  for (const auto& pointer : edits) out[pointer] = now[pointer];
  out["preset"] = "auto";
  ExperimentConfig result = ExperimentConfig::from_json(out);
  copy_inputs(result, current);
  return result;
}

}  // namespace ts
