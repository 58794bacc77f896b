// SPDX-License-Identifier: GPL-3.0-or-later
// The Translate panel's decoding options: the mode (greedy, beam search, sampling), then only the
// knobs that mode uses (beam width, n-best, length penalty; temperature, top-k, top-p, seed), the
// weight format, and a Defaults button. They start from the loaded checkpoint's own decode section
// (the `auto` recipe writes beam search there), or, for the model being trained, follow the
// configuration's when it changes.
#pragma once

#include <optional>

#include <QGroupBox>
#include <QHash>

#include "ts/decode/decode_config.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace ts::ui {

class StudioState;

class TranslateOptionsBox : public QGroupBox {
  Q_OBJECT
 public:
  explicit TranslateOptionsBox(StudioState* state, QWidget* parent = nullptr);

  /// The configuration's decode section with the options as set here.
  DecodeConfig decodeConfig() const;
  /// Sets every option from `d` (and remembers it as the defaults in use).
  void applyDefaults(const DecodeConfig& d);
  /// The decode section of the model now translating: a checkpoint's own (its options are applied,
  /// and Defaults returns to them), or none for the model being trained (the configuration's rule).
  void setModelDecode(const std::optional<DecodeConfig>& d);
  /// The defaults in force: the checkpoint's decode section, else the configuration's.
  DecodeConfig defaults() const;

 private:
  void updateModeOptions();

  StudioState* state_;

  QComboBox* mode_ = nullptr;
  QComboBox* weights_ = nullptr;
  QSpinBox* beam_ = nullptr;
  QSpinBox* nbest_ = nullptr;
  QDoubleSpinBox* length_penalty_ = nullptr;
  QDoubleSpinBox* temperature_ = nullptr;
  QSpinBox* top_k_ = nullptr;
  QDoubleSpinBox* top_p_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QHash<QWidget*, QLabel*> option_labels_;
  DecodeConfig applied_defaults_;
  std::optional<DecodeConfig> model_decode_;
};

}  // namespace ts::ui
