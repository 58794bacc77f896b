// SPDX-License-Identifier: GPL-3.0-or-later
// The Translate panel's decoding options: the mode (greedy, beam search, sampling), then only the
// knobs that mode uses (beam width, n-best, length penalty; temperature, top-k, top-p, seed), the
// weight format, and a Defaults button. They follow the configuration's decode section when it
// changes.
#pragma once

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
  QWidget* sample_row_ = nullptr;
  QHash<QWidget*, QLabel*> option_labels_;
  DecodeConfig applied_defaults_;
};

}  // namespace ts::ui
