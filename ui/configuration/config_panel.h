// SPDX-License-Identifier: GPL-3.0-or-later
// The Configuration panel: presets (with what `auto` chose for the corpus and why), every
// hyperparameter with a tooltip (what it does, its default), problems flagged live, parameter count
// and estimated memory, device and threads, save/load as JSON. Its definition is spread over
// config_panel*.cpp by part (the private section says which holds what); the size estimate is
// SizeEstimateBox.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <QMap>
#include <QStringList>
#include <QWidget>

#include <nlohmann/json.hpp>

class QComboBox;
class QFrame;
class QLabel;
class QPushButton;
class QScrollArea;
class QToolButton;
class QVBoxLayout;

namespace ts {
struct AutoFit;  // ts/train/auto_fit.h
}

namespace ts::ui {

class ElidingToolButton;
class RecipeNotes;
class SizeEstimateBox;
class StudioState;
struct ConfigField;

class ConfigPanel : public QWidget {
  Q_OBJECT
 public:
  ConfigPanel(StudioState* state, QWidget* parent = nullptr);
  ~ConfigPanel() override;

  /// The problems shown in the panel: ExperimentConfig::problems() plus the checks that need this
  /// machine or the corpus (CUDA present, OpenCC present, split sizes against the corpus, learned
  /// positions shorter than data.max_len). Training should not start while there are any.
  QStringList problems() const { return problems_; }
  bool hasProblems() const { return !problems_.isEmpty(); }

  /// Writes the configuration as JSON (what `transformer-studio-cli train --config` reads).
  /// Returns false and fills `error` (naming the file) when it cannot be written.
  bool saveConfig(const QString& path, QString* error = nullptr);
  /// Reads a JSON configuration and makes it current. Returns false and fills `error` (naming the
  /// file and, for a bad key, the key); the configuration is then unchanged.
  bool loadConfig(const QString& path, QString* error = nullptr);

  /// The vocabulary sizes behind the live size estimate (specials included): counted in the
  /// corpus in the background for word/char tokenizers, the subword vocabulary size for bpe/unigram.
  std::int64_t sourceVocabEstimate() const;
  std::int64_t targetVocabEstimate() const;
  /// Mean padded tokens per sentence in the corpus, for batches counted in sentences.
  double averageSentenceTokens() const;
  /// True while the corpus is being counted (the estimate then uses rough defaults).
  bool isCountingVocabulary() const;
  /// The `auto` recipe as a run fitted it (TrainingController::recipeFitted): the recipe box says
  /// what that run measured and chose, not the estimate made before it started.
  void showRunsFit(std::shared_ptr<const AutoFit> fit);
  /// True while the `auto` recipe is being fitted to the current inputs (a run started now would
  /// train the preset as it stood before the fit).
  bool isFittingRecipe() const;

 Q_SIGNALS:
  void problemsChanged(bool hasProblems);
  /// A fit of the `auto` recipe arrived (it may have changed the configuration and started another).
  void recipeFitChanged();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  struct Editor {
    const ConfigField* field = nullptr;
    QWidget* widget = nullptr;  // objectName "field.<key>"
    QLabel* label = nullptr;    // "label.<key>"
    QLabel* error = nullptr;    // "error.<key>", shown when an edit is refused
    QLabel* hint = nullptr;     // "hint.<key>", derived facts (pairs in the dev set, head size)
    double minimum = 0, maximum = 0;
    QString tooltip;  // what it does, default, range
  };
  struct Section {
    ElidingToolButton* header = nullptr;  // its title and a summary, cut to the dock's width
    QWidget* body = nullptr;
    QString title;
  };

  // config_panel.cpp: the layout, and the refresh that follows every change of the state.
  void buildUi();
  void refresh();
  void applyColours();

  // config_panel_presets.cpp: the preset chooser, Reset to preset, and the JSON files.
  void buildPresetArea(QVBoxLayout* layout);
  void refreshPreset();
  void showFileStatus(const QString& text, bool error);

  // config_panel_form.cpp: the form of fields, by collapsible section.
  QScrollArea* buildFields();
  QWidget* buildSection(const QString& group);
  QWidget* createEditor(Editor& editor);
  void onEdited(Editor& editor);
  void showEditorValue(Editor& editor, const nlohmann::json& value);
  void refreshHints();
  void refreshSections();
  void setSectionExpanded(const QString& group, bool expanded);
  void clearFieldErrors();

  // config_panel_problems.cpp: the problems box, and the fields its problems name.
  QFrame* buildProblemsBox();
  void refreshProblems();

  StudioState* state_;
  std::vector<Editor> editors_;
  QMap<QString, Section> sections_;
  QStringList problems_;
  QStringList notes_;
  QMap<QString, QStringList> flagged_;  // field key -> the problems that name it
  bool updating_ = false;

  QComboBox* preset_combo_ = nullptr;
  QPushButton* reset_button_ = nullptr;
  QLabel* preset_description_ = nullptr;
  RecipeNotes* recipe_ = nullptr;  // `auto`: chosen for an opened corpus, fitted, and why
  QLabel* preset_status_ = nullptr;
  QLabel* file_status_ = nullptr;
  SizeEstimateBox* size_ = nullptr;  // parameters and memory, with the vocabulary counted in the background
  QFrame* problems_box_ = nullptr;
  QLabel* problems_label_ = nullptr;
  QScrollArea* scroll_ = nullptr;
};

}  // namespace ts::ui
