// SPDX-License-Identifier: GPL-3.0-or-later
// The language-model workspace (File ▸ New language model): open any UTF-8 text, see its size and
// vocabulary, pick a preset (the tutorial's GPT, a larger one, the bigram baseline) and train it
// while train/val loss estimates are drawn next to the bigram table's loss; then generate text
// that streams in token by token, and look at each layer's and head's attention over it.
// Curves of every run trained in the window stay on the chart, so the bigram model and a GPT can
// be compared on one plot.
// The window's parts live beside it: the Text box (lm_text_pane.h), the configuration form
// (lm_config_form.h), the loss chart (lm_loss_chart.h), the Generate tab (lm_generate_pane.h) and
// the Attention tab (lm_attention_view.h); the training controls are lm_window_training.cpp.
#pragma once

#include <QMainWindow>
#include <QPointF>
#include <QVector>

#include "services/lm_types.h"

class QCustomPlot;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace ts {
struct TrainingProgress;
struct ValidationResult;
struct TrainingSummary;
}  // namespace ts

namespace ts::ui {

class AttentionHeatmap;
class LmAttentionView;
class LmConfigForm;
class LmGeneratePane;
class LmLossChart;
class LmService;
class LmTextPane;
class TrainingController;

class LmWindow : public QMainWindow {
  Q_OBJECT
 public:
  /// `database`: the run history LM runs are recorded in (empty = not recorded); `runs_directory`:
  /// where each run's checkpoints go (a new folder per run).
  LmWindow(const QString& database, const QString& runs_directory, QWidget* parent = nullptr);
  ~LmWindow() override;

  /// Reads and checks a text file in the background; the summary or a message naming the problem follows.
  void openText(const QString& path);
  /// Loads an LM checkpoint to generate from.
  void openCheckpoint(const QString& path);
  /// Prepares to continue training an LM checkpoint: its configuration and text are taken over
  /// (read in the background; resumeReady follows) and the next Train resumes it.
  void resumeFrom(const QString& checkpoint);
  /// Replaces the configuration by a preset (keeps device, threads and tokenizer). False for an unknown name.
  bool applyPreset(const QString& name, QString* error = nullptr);
  /// "key=value" as the CLI's lm-train --set. False (configuration unchanged) with the reason.
  bool applySetting(const QString& assignment, QString* error = nullptr);
  const LmConfig& config() const { return config_; }
  /// Starts training the configured model on the open text. False with a message in the window when it cannot.
  bool startTraining();
  /// Generates with the parameters shown (from fresh weights of the model being trained, if any).
  void generate();
  /// Writes the language model of `checkpoint` as a model folder into `folder` on a worker thread
  /// (ts/train/model_export.h); modelExported or exportFailed follows, and the status bar says which.
  void exportModel(const QString& checkpoint, const QString& folder);

  TrainingController* controller() const { return controller_; }
  LmService* service() const { return service_; }
  const LmTextInfo& textInfo() const { return info_; }
  bool hasText() const { return !info_.path.isEmpty(); }

  // What the chart shows (tests and screenshots).
  QCustomPlot* lossPlot() const;
  /// Runs drawn on the chart.
  int curveCount() const;
  QString curveLabel(int run) const;
  /// Points of one run's series: "step" (each step's loss), "train" and "val" (the estimates).
  QVector<QPointF> curvePoints(int run, const QString& series) const;
  /// The bigram table's val loss drawn as a line (NaN when no text is open).
  double baseline() const;
  /// The attention over the last generation, and its view.
  const LmAttention& attention() const;
  AttentionHeatmap* attentionMap() const;
  QTabWidget* tabs() const { return tabs_; }
  /// The generated text shown (prompt included).
  QString outputText() const;
  /// Puts `text` in the Generate tab's prompt box, as typing would.
  void setPrompt(const QString& text);

 Q_SIGNALS:
  void textReady();
  void resumeReady();
  void generationDone();
  void modelExported(const QString& folder, const QString& summary);
  void exportFailed(const QString& folder, const QString& message);

 protected:
  void closeEvent(QCloseEvent* event) override;
  /// The first show sizes the window: 1320 x 860 where the screen has room, else the screen's room.
  void showEvent(QShowEvent* event) override;

 private:
  // lm_window.cpp: layout, menus, the text, the configuration, generation, the window's state.
  QWidget* buildSetup();
  void buildMenus();
  void chooseText();
  void chooseCheckpoint();
  void chooseModelFolder();
  void chooseExport();
  void showText(const LmTextInfo& info);
  void showTextError(const QString& path, const QString& message);
  void fieldEdited(const QString& key, const QString& value);
  void updateEstimate();
  void updateButtons();
  void updateBaseline();
  void clearChart();
  void onGenerationFinished(const LmGeneration& generation);
  void startGeneration();
  void log(const QString& line);
  // lm_window_training.cpp: the Run box, a run's progress on the chart, resuming a checkpoint.
  QWidget* buildRunControls();
  void chooseResume();
  void showResumable(const LmCheckpointInfo& info);
  void onStarted();
  void onProgress(const QVector<ts::TrainingProgress>& steps);
  void onValidated(const ts::ValidationResult& result);
  void onFinished(const ts::TrainingSummary& summary);
  void onFailed(const QString& message);

  LmService* service_;
  TrainingController* controller_;
  QString database_, runs_directory_;
  LmConfig config_;
  LmTextInfo info_;
  QString pending_text_;       // being read
  QString resume_checkpoint_;  // the next run continues from this
  QString resume_text_;        // the text that checkpoint was trained on
  bool generate_on_snapshot_ = false;
  bool close_when_stopped_ = false;
  bool sized_ = false;  // sized for its screen at the first show
  int run_counter_ = 0;

  LmTextPane* text_pane_ = nullptr;
  LmConfigForm* config_form_ = nullptr;
  // Run
  QPushButton* train_ = nullptr;
  QPushButton* pause_ = nullptr;
  QPushButton* stop_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* run_status_ = nullptr;
  LmLossChart* chart_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  LmGeneratePane* generate_pane_ = nullptr;
  LmAttentionView* attention_view_ = nullptr;
  QPlainTextEdit* log_ = nullptr;
};

}  // namespace ts::ui
