// SPDX-License-Identifier: GPL-3.0-or-later
// The `auto` recipe fitted to a corpus, direction, budget and machine (measured), and refitted keeping a
// person's own edits: what a training session, the CLI and the app's Configuration panel use.
#pragma once

#include <string>
#include <vector>

#include "ts/text/corpus.h"
#include "ts/train/config.h"

namespace ts {

class DataParallel;

/// The budget the recipe is sized for when a run has none ("until I stop it").
inline constexpr double kFitMinutesWithoutBudget = 20;

/// One fit of the `auto` preset.
struct AutoFit {
  std::string key;                   // auto_fit_key() of the inputs it was fitted for
  ExperimentConfig config;           // preset "auto", fitted; device, threads and budget as in the inputs
  std::vector<std::string> reasons;  // one sentence per choice, in the recipe's order
  std::string machine;               // MachineProfile::describe() of the machine it was fitted for
  bool measured = false;             // fitted to this machine's measured throughput (else constants)
  std::string error;                 // why the recipe failed (config is then the plain preset)
  double budget_target_tokens = 0;   // RecipeChoice's: target tokens the budget buys at the estimated speed
  double estimated_passes = 0;       // and the passes over the training pairs it estimated from characters
  bool ok() const { return error.empty(); }
};

/// What a fit depends on: the corpus (this very one), the direction, and train.budget_minutes,
/// train.device, train.threads, train.precision and train.shard_batch of `config`. Equal keys give
/// equal fits.
std::string auto_fit_key(const Corpus& corpus, const Direction& direction, const ExperimentConfig& config);

/// Fits the `auto` preset to `corpus` in `direction` for the budget, device and threads of `config`
/// (ts::auto_recipe with ts::MachineProfile::detect, and the throughput this process measured for
/// those settings if it has: ts::cached_reference_throughput; with `measure`, measuring it first if
/// not, which takes a few seconds: the training thread does). A budget of 0 is sized as for
/// kFitMinutesWithoutBudget minutes and stays 0 in the result. It walks the corpus once (about 50 ms
/// for 170k pairs): call it off a GUI thread. Never throws; a failure is in AutoFit::error.
/// `given_speed` > 0 (train --machine-speed): the reference model's target tokens/s to size the
/// recipe by instead of any timing (MachineProfile::speed_given); precision auto still times its products.
/// `parallel` (a connected data-parallel group; every rank calls it): the whole group's throughput is
/// measured instead (ts::measure_data_parallel_machine), so that every rank fits the same recipe to what the
/// ranks train together; `given_speed` still wins.
AutoFit fit_auto(const Corpus& corpus, const Direction& direction, const ExperimentConfig& config, bool measure = false,
                 double given_speed = 0, DataParallel* parallel = nullptr);

/// True when `config` is the plain `auto` preset as StudioState::applyPreset gives it (just chosen
/// or reset, not fitted yet).
bool is_plain_auto(const ExperimentConfig& config);

/// `current` (preset auto) moved onto a new fit: the fit's values, except where the person edited
/// `current` (the keys where it differs from what it was made from: the plain preset, or
/// `previous_fit` when given and closer) and the fit's inputs (device, threads, budget), which stay
/// `current`'s.
ExperimentConfig refit_auto(const ExperimentConfig& current, const ExperimentConfig& fit,
                            const ExperimentConfig* previous_fit = nullptr);

}  // namespace ts
