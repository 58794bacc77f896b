// SPDX-License-Identifier: GPL-3.0-or-later
// The Configuration panel's preset chooser and files (part of ConfigPanel, config_panel.h): the
// preset row with Reset to preset and Load…/Save…, the description and status of the preset in
// force (what differs from it, in bold), and the configuration written and read as JSON.
#include "configuration/config_panel.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFont>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSaveFile>
#include <QSettings>
#include <QVBoxLayout>

#include "configuration/config_fields.h"
#include "configuration/config_panel_util.h"
#include "configuration/recipe_notes.h"
#include "ts/train/auto_fit.h"
#include "shell/studio_state.h"

namespace ts::ui {

using namespace config_util;

// ------------------------------------------------------------------------------------- preset row

void ConfigPanel::buildPresetArea(QVBoxLayout* layout) {
  // Preset row: chooser, reset, file buttons.
  auto* preset_row = new QHBoxLayout;
  auto* preset_label = new QLabel(tr("&Preset:"), this);
  preset_combo_ = new QComboBox(this);
  preset_combo_->setObjectName(QStringLiteral("presetCombo"));
  preset_combo_->setPlaceholderText(tr("custom"));
  preset_combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  for (const auto& name : preset_names()) {
    const QString n = QString::fromStdString(name);
    preset_combo_->addItem(n, n);
    preset_combo_->setItemData(preset_combo_->count() - 1, QString::fromStdString(preset_description(name)),
                               Qt::ToolTipRole);
  }
  preset_combo_->setToolTip(
      tr("Start from the settings of a seed tutorial, the built-in demo or the tiny test model. "
         "Device and thread choices are kept."));
  preset_label->setBuddy(preset_combo_);
  reset_button_ = new QPushButton(tr("&Reset to preset"), this);
  reset_button_->setObjectName(QStringLiteral("resetPresetButton"));
  reset_button_->setToolTip(tr("Undo every change made since the preset was chosen (device and threads are kept)."));
  auto* load_button = new QPushButton(tr("&Load…"), this);
  load_button->setObjectName(QStringLiteral("loadConfigButton"));
  load_button->setToolTip(
      tr("Read a configuration from a JSON file (as written by Save… or used by "
         "transformer-studio-cli train --config)."));
  auto* save_button = new QPushButton(tr("&Save…"), this);
  save_button->setObjectName(QStringLiteral("saveConfigButton"));
  save_button->setToolTip(
      tr("Write this configuration as JSON, for later or for transformer-studio-cli train --config."));
  preset_row->addWidget(preset_label);
  preset_row->addWidget(preset_combo_);
  preset_row->addWidget(reset_button_);
  preset_row->addStretch(1);
  preset_row->addWidget(load_button);
  preset_row->addWidget(save_button);
  layout->addLayout(preset_row);

  preset_description_ = small_label(this, QStringLiteral("presetDescription"));
  preset_status_ = small_label(this, QStringLiteral("presetStatus"));
  file_status_ = small_label(this, QStringLiteral("fileStatus"));
  file_status_->hide();
  layout->addWidget(preset_description_);
  recipe_ = new RecipeNotes(state_, this);  // under the description, shown while the preset is `auto`
  layout->addWidget(recipe_);
  layout->addWidget(preset_status_);
  layout->addWidget(file_status_);

  connect(preset_combo_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (updating_ || index < 0) return;
    clearFieldErrors();
    recipe_->notePresetChosen();  // corpora opened later keep this choice (no switch to auto)
    state_->applyPreset(preset_combo_->itemData(index).toString());
  });
  // Choosing the current preset again from the list resets to it.
  connect(preset_combo_, &QComboBox::activated, this, [this](int index) {
    if (index >= 0 && reset_button_->isEnabled() &&
        preset_combo_->itemData(index).toString() == QString::fromStdString(state_->config().preset))
      reset_button_->click();
  });
  connect(reset_button_, &QPushButton::clicked, this, [this] {
    clearFieldErrors();
    if (state_->config().preset == "auto" && recipe_->resetToFit()) return;  // back to what auto chose
    state_->applyPreset(QString::fromStdString(state_->config().preset));
  });
  // A new fit changes what the configuration is compared with.
  connect(recipe_, &RecipeNotes::fitChanged, this, [this] {
    const bool was = updating_;
    updating_ = true;
    refreshPreset();
    updating_ = was;
    Q_EMIT recipeFitChanged();
  });
  connect(save_button, &QPushButton::clicked, this, [this] {
    QSettings settings;
    const QString dir = settings.value(QStringLiteral("configPanel/lastDir"), QDir::homePath()).toString();
    const QString name = QString::fromStdString(state_->config().preset) + QStringLiteral(".json");
    QString path = QFileDialog::getSaveFileName(this, tr("Save configuration"), QDir(dir).filePath(name),
                                                tr("JSON files (*.json);;All files (*)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
    settings.setValue(QStringLiteral("configPanel/lastDir"), QFileInfo(path).absolutePath());
    saveConfig(path);
  });
  connect(load_button, &QPushButton::clicked, this, [this] {
    QSettings settings;
    const QString dir = settings.value(QStringLiteral("configPanel/lastDir"), QDir::homePath()).toString();
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Load configuration"), dir, tr("JSON files (*.json);;All files (*)"));
    if (path.isEmpty()) return;
    settings.setValue(QStringLiteral("configPanel/lastDir"), QFileInfo(path).absolutePath());
    loadConfig(path);
  });
}

void ConfigPanel::refreshPreset() {
  const ExperimentConfig& c = state_->config();
  const QString name = QString::fromStdString(c.preset);
  const int index = preset_combo_->findData(name);
  {
    const QSignalBlocker blocker(preset_combo_);
    preset_combo_->setCurrentIndex(index);  // -1 shows the "custom" placeholder
  }
  QStringList changed;
  nlohmann::json base;
  // `auto` fitted: changes are counted from what the recipe chose for these inputs.
  const auto fit = index >= 0 && c.preset == "auto" ? recipe_->currentFit() : nullptr;
  const bool fitted = fit && fit->ok();
  if (index >= 0) {
    ExperimentConfig p = fitted ? fit->config : preset(c.preset);
    p.train.device = c.train.device;  // applyPreset keeps these, so they are not changes
    p.train.threads = c.train.threads;
    p.train.budget_minutes = c.train.budget_minutes;
    if (!fitted) p.train.precision = c.train.precision;  // the fit chooses the precision
    base = p.to_json();
  }
  const nlohmann::json now = c.to_json();
  for (auto& e : editors_) {
    QString tip = e.tooltip;
    bool differs = false;
    if (index >= 0) {
      const nlohmann::json was = config_value(base, e.field->key);
      differs = was != config_value(now, e.field->key);
      if (differs) {
        changed << e.field->key;
        tip += QStringLiteral("<p>%1</p>")
                   .arg(tr("Preset \u201c%1\u201d: %2").arg(name, display_value(was)).toHtmlEscaped());
      }
    }
    for (const QString& problem : flagged_.value(e.field->key))
      tip += QStringLiteral("<p style='color:%1'>\u26a0 %2</p>")
                 .arg(warning_colour(palette()).name(), problem.toHtmlEscaped());
    e.label->setToolTip(tip);
    e.widget->setToolTip(tip);
    QFont f = e.label->font();
    f.setBold(differs);
    e.label->setFont(f);
  }

  preset_description_->setText(index >= 0
                                   ? QString::fromStdString(preset_description(c.preset))
                                   : tr("Settings not based on a preset (from a file or edited from defaults)."));
  if (index < 0) {
    preset_status_->setText(tr("custom"));
  } else if (changed.isEmpty() && c.preset == "auto") {
    preset_status_->setText(fitted ? tr("Preset \u201cauto\u201d as fitted to this corpus, direction, budget and "
                                        "machine.")
                                   : tr("Preset \u201cauto\u201d, not fitted yet."));
  } else if (changed.isEmpty()) {
    preset_status_->setText(tr("Preset \u201c%1\u201d as published.").arg(name));
  } else {
    QStringList shown = changed.mid(0, 4);
    QString list = shown.join(QStringLiteral(", "));
    if (changed.size() > shown.size()) list += tr(" and %1 more").arg(changed.size() - shown.size());
    preset_status_->setText(
        changed.size() == 1
            ? tr("custom (from %1): 1 change, in bold below: %2").arg(name, list)
            : tr("custom (from %1): %2 changes, in bold below: %3").arg(name).arg(changed.size()).arg(list));
  }
  reset_button_->setEnabled(index >= 0 && !changed.isEmpty());
}

// ------------------------------------------------------------------------------------------ files

void ConfigPanel::showFileStatus(const QString& text, bool error) {
  file_status_->setText(text);
  if (error)
    set_text_colour(file_status_, error_colour(palette()));
  else
    file_status_->setPalette(QPalette());
  file_status_->setVisible(!text.isEmpty());
}

bool ConfigPanel::saveConfig(const QString& path, QString* error) {
  const QByteArray bytes = QByteArray::fromStdString(state_->config().to_json().dump(2) + "\n");
  QSaveFile file(path);  // written to a temporary file and renamed: never a half-written config
  QString message;
  if (!file.open(QIODevice::WriteOnly))
    message = tr("%1: cannot be written (%2)").arg(path, file.errorString());
  else if (file.write(bytes) != bytes.size() || !file.commit())
    message = tr("%1: cannot be written (%2)").arg(path, file.errorString());
  if (!message.isEmpty()) {
    showFileStatus(message, true);
    if (error) *error = message;
    return false;
  }
  showFileStatus(tr("Saved to %1").arg(QDir::toNativeSeparators(path)), false);
  return true;
}

bool ConfigPanel::loadConfig(const QString& path, QString* error) {
  QString message;
  try {
    ExperimentConfig loaded = load_config_file(QFile::encodeName(path).toStdString());
    clearFieldErrors();
    state_->setConfig(loaded);
    showFileStatus(tr("Loaded %1").arg(QDir::toNativeSeparators(path)), false);
    return true;
  } catch (const std::exception& e) {
    message = QString::fromStdString(e.what());
  }
  if (!message.contains(QFileInfo(path).fileName())) message = path + QStringLiteral(": ") + message;
  showFileStatus(message, true);
  if (error) *error = message;
  return false;
}

}  // namespace ts::ui
