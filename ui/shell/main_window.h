// SPDX-License-Identifier: GPL-3.0-or-later
// The main window: dockable panels (Dataset, Configuration, Training, Translate, Run history, Compare, Model anatomy)
// that the user can rearrange, with the layout restored next time; menus with standard shortcuts,
// recent files, drag-and-drop of corpus files, a status bar, and a close that never loses a run.
#pragma once

#include <QMainWindow>
#include <QPointer>

class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;

namespace ts::ui {

class StudioState;
class TrainingController;
class TranslationService;
class DatasetPanel;
class ConfigPanel;
class TrainingPanel;
class TranslatePanel;
class HistoryPanel;
class ComparePanel;
class AnatomyPanel;
class AttentionPanel;
class BeamTreeView;
class ProbePanel;
class LmWindow;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  /// `database` overrides the run history's location (tests, --db); empty = the default.
  explicit MainWindow(const QString& database = QString(), QWidget* parent = nullptr);
  ~MainWindow() override;

  StudioState* state() const { return state_; }
  TrainingController* controller() const { return controller_; }
  TranslationService* translation() const { return translation_; }
  DatasetPanel* datasetPanel() const { return dataset_; }
  ConfigPanel* configPanel() const { return config_; }
  TrainingPanel* trainingPanel() const { return training_; }
  TranslatePanel* translatePanel() const { return translate_; }
  HistoryPanel* historyPanel() const { return history_; }
  ComparePanel* comparePanel() const { return compare_; }
  AnatomyPanel* anatomyPanel() const { return anatomy_; }
  AttentionPanel* attentionPanel() const { return attention_; }
  BeamTreeView* beamTreeView() const { return beam_; }
  ProbePanel* probePanel() const { return probe_; }
  /// The dock holding a panel (to raise it or grab it).
  QDockWidget* dockOf(QWidget* panel) const;

  /// Reads a corpus in the background (progress in the status bar; errors in a message box).
  void openCorpus(const QString& path);
  /// Shows the panel's dock and brings it to the front.
  void showPanel(QWidget* panel);
  /// Puts the docks back where a first start puts them.
  void resetLayout();
  /// The left docks about two fifths of the window's width, the right ones the rest (the default
  /// layout's proportions, for the window's present size).
  void applyDefaultDockWidths();
  /// True when the docks are as the person left them last time (not the default layout).
  bool hasSavedLayout() const { return !restored_state_.isEmpty(); }
  /// The language-model window (File ▸ New language model), created on first use.
  LmWindow* languageModelWindow();
  /// Shows the language-model window and brings it to the front.
  void showLanguageModelWindow();
  /// Writes the model of `checkpoint` as a folder (model.safetensors, config.json; see
  /// ts/train/model_export.h), with `onnx` also its ONNX graphs (ts/onnx/onnx_export.h), in the
  /// background; ends with modelExported or exportFailed.
  void exportModel(const QString& checkpoint, const QString& folder, bool onnx = false);

 Q_SIGNALS:
  void modelExported(const QString& folder, const QString& summary);
  void exportFailed(const QString& folder, const QString& message);

 protected:
  void showEvent(QShowEvent* event) override;
  void closeEvent(QCloseEvent* event) override;
  /// A dock tab bar the window makes (tabified docks) shows every title whole (see showWholeTabTitles).
  void childEvent(QChildEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void createDocks();
  void createMenus();
  void createStatusBar();
  void updateRecentMenu();
  void updateTitle();
  void openDialog();
  void exportDialog();
  void showAbout();
  void showError(const QString& title, const QString& message);
  /// Shows `source` translated by `checkpoint` (loaded first when another model is loaded) in the
  /// Attention and Beam search panels: beam search with attention, which both listen to.
  void openSentence(const QString& source, const QString& checkpoint);
  QDockWidget* addPanel(QWidget* panel, const QString& title, const QString& object_name);

  StudioState* state_;
  TrainingController* controller_;
  TranslationService* translation_;
  DatasetPanel* dataset_;
  ConfigPanel* config_;
  TrainingPanel* training_;
  TranslatePanel* translate_;
  HistoryPanel* history_;
  ComparePanel* compare_;
  AnatomyPanel* anatomy_;
  AttentionPanel* attention_;
  BeamTreeView* beam_;
  ProbePanel* probe_;
  QPointer<LmWindow> lm_window_;
  QList<QDockWidget*> docks_;
  QMenu* recent_menu_ = nullptr;
  QLabel* status_label_ = nullptr;
  QProgressBar* busy_ = nullptr;
  QByteArray default_state_;
  QByteArray saved_geometry_;  // the last session's window geometry, restored at the first show
  bool sized_ = false;         // the first show has sized the window (later sizes are the person's)
  QByteArray restored_state_;  // the dock layout saved last time (empty: the default layout)
  bool close_when_stopped_ = false;
};

}  // namespace ts::ui
