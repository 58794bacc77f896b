// SPDX-License-Identifier: GPL-3.0-or-later
// The Configuration panel's frame: its layout and the refresh that follows every change of the
// state. Its parts live beside it: config_panel_presets.cpp (the preset chooser and the JSON files),
// config_panel_form.cpp (the form of fields), config_panel_problems.cpp (the problems found), and
// SizeEstimateBox (size_estimate_box.h: parameters, memory, the vocabulary counted in the corpus).
#include "configuration/config_panel.h"
#include "widgets/widget_lifetime.h"

#include <QEvent>
#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

#include "configuration/config_fields.h"
#include "configuration/config_panel_util.h"
#include "configuration/recipe_notes.h"
#include "configuration/size_estimate_box.h"
#include "shell/studio_state.h"

namespace ts::ui {

using namespace config_util;

// ------------------------------------------------------------------------------------------ setup

ConfigPanel::ConfigPanel(StudioState* state, QWidget* parent) : QWidget(parent), state_(state) {
  buildUi();
  connect(state_, &StudioState::configChanged, this, &ConfigPanel::refresh);
  connect(state_, &StudioState::corpusChanged, this, &ConfigPanel::refresh);
  connect(state_, &StudioState::directionChanged, this, &ConfigPanel::refresh);
  applyColours();
  refresh();
}

ConfigPanel::~ConfigPanel() {
  disconnect_children(this);  // the fields' editingFinished, sent as ~QWidget moves the focus
}

void ConfigPanel::buildUi() {
  auto* layout = new QVBoxLayout(this);
  buildPresetArea(layout);  // chooser, reset, file buttons; the description, `auto`'s reasons, status lines
  size_ = new SizeEstimateBox(state_, this);  // live size estimate
  layout->addWidget(size_);
  layout->addWidget(buildProblemsBox());  // problems, listed live
  layout->addWidget(buildFields(), 1);    // every field, by section, in a scroll area
}

std::int64_t ConfigPanel::sourceVocabEstimate() const { return size_->sourceVocabEstimate(); }
std::int64_t ConfigPanel::targetVocabEstimate() const { return size_->targetVocabEstimate(); }
double ConfigPanel::averageSentenceTokens() const { return size_->averageSentenceTokens(); }
bool ConfigPanel::isCountingVocabulary() const { return size_->isCounting(); }
void ConfigPanel::showRunsFit(std::shared_ptr<const AutoFit> fit) { recipe_->adoptFit(std::move(fit)); }
bool ConfigPanel::isFittingRecipe() const { return recipe_->isFitting(); }

void ConfigPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange && scroll_ && !updating_) {
    applyColours();
    refresh();
  }
}

void ConfigPanel::applyColours() {
  const QPalette p = palette();
  for (auto& e : editors_) {
    set_text_colour(e.error, error_colour(p));
    set_text_colour(e.hint, muted_colour(p));
  }
  set_text_colour(preset_description_, muted_colour(p));
}

// --------------------------------------------------------------------------------------- refresh

void ConfigPanel::refresh() {
  const bool was = updating_;
  updating_ = true;
  const ExperimentConfig& c = state_->config();
  const nlohmann::json j = c.to_json();
  for (auto& e : editors_) {
    showEditorValue(e, config_value(j, e.field->key));
    const bool relevant = !e.field->relevant || e.field->relevant(c);
    e.widget->setEnabled(relevant);
    e.label->setEnabled(relevant);
  }
  refreshProblems();
  refreshPreset();
  refreshHints();
  refreshSections();
  size_->refresh();
  updating_ = was;
  size_->startCounting();
}

}  // namespace ts::ui
