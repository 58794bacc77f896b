// SPDX-License-Identifier: GPL-3.0-or-later
// The table behind the Configuration panel: one row per hyperparameter of ExperimentConfig (key,
// label, editor kind, range, help). The panel builds its form from it, so a key is never forgotten,
// and a test checks the table against ExperimentConfig().to_json() so a key added to core later
// without a row here fails.
#pragma once

#include <functional>
#include <vector>

#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

#include "ts/train/config.h"

namespace ts::ui {

enum class FieldKind {
  Integer,  // int: QSpinBox
  Seed,     // std::uint64_t: a digits-only line edit (beyond QSpinBox's int range)
  Real,     // double: a spin box showing %g, so 1e-9 and 1000 both read well
  Toggle,   // bool: QCheckBox
  Choice,   // string from a fixed list: QComboBox
  Text,     // free text (e.g. the probe sentence): QLineEdit
};

/// How the arrows / PageUp change a real value.
enum class StepMode {
  Linear,           // += step
  Multiply,         // *= step (learning rates, epsilons: orders of magnitude matter)
  FractionOrCount,  // data.dev/test: 0.05 steps below 1 (a fraction), 100 steps from 1 up (pairs)
};

struct ConfigField {
  QString key;       // full key as in --set: "model.d_model", "data.src_tokenizer.kind"
  QString group;     // the panel section: data, src_tokenizer, tgt_tokenizer, model, train, compute, decode
  QString subgroup;  // heading inside the section ("" = none)
  QString label;
  FieldKind kind = FieldKind::Integer;
  double minimum = 0;
  double maximum = 0;
  double step = 1;
  StepMode step_mode = StepMode::Linear;
  QStringList choices;  // Choice: allowed values (train.device is filled by the panel from the machine)
  QString special;      // text shown at the minimum instead of the number ("no limit"); "" = none
  QString help;         // what it does (the tooltip adds the default and the range)
  /// When set and false for a config, the field has no effect there and is greyed out.
  std::function<bool(const ExperimentConfig&)> relevant;
  QString irrelevant_note;  // why it is greyed out ("only for bpe/unigram")
};

/// Every field, in display order.
const std::vector<ConfigField>& config_fields();
/// The field for a key, or nullptr.
const ConfigField* find_config_field(const QString& key);

/// Leaf keys of a config JSON, dotted ("data.src_tokenizer.kind"); the top-level "preset" is left
/// out (the preset chooser edits it).
QStringList flatten_config_keys(const nlohmann::json& config);
/// The value at a dotted key, or null when absent.
nlohmann::json config_value(const nlohmann::json& config, const QString& key);
/// A value as shown to people: on/off for booleans, %g for reals, the text for strings.
QString display_value(const nlohmann::json& value);
/// The JSON text for `section.key=<text>` assignments: strings quoted, numbers exact.
QString assignment_value(const nlohmann::json& value);
/// The tooltip: label and key, what it does, the default (from a default-constructed
/// ExperimentConfig) and the allowed range or values.
QString field_tooltip(const ConfigField& field);
/// Display label for a section ("Source tokenizer").
QString group_title(const QString& group);
/// The sections in display order.
QStringList config_groups();

}  // namespace ts::ui
