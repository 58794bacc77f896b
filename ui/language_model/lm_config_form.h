// SPDX-License-Identifier: GPL-3.0-or-later
// The "Model and training" box of the language-model window: the preset menu, one editor per
// LmConfig key (objectName "lm_<key>"), the model's size estimate and the configuration's
// problems. It shows a configuration and reports edits; the window owns the configuration and
// decides what an edit does (LmWindow::applySetting / applyPreset).
#pragma once

#include <QGroupBox>
#include <QList>

#include "services/lm_types.h"

class QComboBox;
class QFormLayout;
class QLabel;

namespace ts::ui {

class LmConfigForm : public QGroupBox {
  Q_OBJECT
 public:
  explicit LmConfigForm(QWidget* parent = nullptr);

  /// Fills the editors and the preset menu from `config` (without emitting fieldEdited).
  void showConfig(const LmConfig& config);
  /// Shows the configuration's problems, or else its size over the open text (`text`, null when
  /// none is open).
  void showEstimate(const LmConfig& config, const LmTextInfo* text);
  /// Shows why an edit was refused.
  void showError(const QString& error);
  /// The preset menu and the editors are locked while a run trains.
  void setEditable(bool editable);

 Q_SIGNALS:
  /// The user changed an editor: "key=value" as LmConfig::set reads it.
  void fieldEdited(const QString& key, const QString& value);
  /// The user picked a preset from the menu.
  void presetChosen(const QString& name);

 private:
  QComboBox* preset_ = nullptr;
  QFormLayout* form_ = nullptr;
  QList<QWidget*> editors_;  // one per configuration key, objectName "lm_<key>"
  QLabel* estimate_ = nullptr;
  QLabel* problems_ = nullptr;
  bool filling_form_ = false;
};

}  // namespace ts::ui
