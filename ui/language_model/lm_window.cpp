// SPDX-License-Identifier: GPL-3.0-or-later
// LmWindow: its layout and menus, the wiring of its services, the text, the configuration, the
// chart's baseline, generation and the window's state. The training controls are
// lm_window_training.cpp; the panes are their own widgets (see lm_window.h).
#include "language_model/lm_window.h"

#include <algorithm>
#include <limits>

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTime>
#include <QTimer>
#include <QVBoxLayout>

#include "language_model/lm_attention_view.h"
#include "language_model/lm_config_form.h"
#include "language_model/lm_generate_pane.h"
#include "language_model/lm_loss_chart.h"
#include "language_model/lm_text_pane.h"
#include "language_model/lm_util.h"
#include "services/lm_service.h"
#include "services/training_controller.h"
#include "shell/studio_state.h"
#include "widgets/screen_fit.h"

namespace ts::ui {

namespace {
const QSize kDefaultSize(1320, 860);  // the chart and the setup side by side
}  // namespace

using lm_util::number;
using lm_util::q;

LmWindow::LmWindow(const QString& database, const QString& runs_directory, QWidget* parent)
    : QMainWindow(parent),
      service_(new LmService(this)),
      controller_(new TrainingController(this)),
      database_(database),
      runs_directory_(runs_directory),
      config_(lm_preset("shakespeare-char")) {
  setObjectName(QStringLiteral("lmWindow"));
  setWindowTitle(tr("Language model — Transformer Studio"));
  setAttribute(Qt::WA_DeleteOnClose, false);

  chart_ = new LmLossChart;
  connect(chart_, &LmLossChart::clearRequested, this, &LmWindow::clearChart);
  connect(chart_, &LmLossChart::saveFailed, this, [this](const QString& error) { statusBar()->showMessage(error); });
  auto* chart_and_tabs = new QSplitter(Qt::Vertical);
  chart_and_tabs->addWidget(chart_);
  tabs_ = new QTabWidget;
  tabs_->setObjectName(QStringLiteral("lmTabs"));
  generate_pane_ = new LmGeneratePane;
  connect(generate_pane_, &LmGeneratePane::openCheckpointRequested, this, &LmWindow::chooseCheckpoint);
  connect(generate_pane_, &LmGeneratePane::generateRequested, this, &LmWindow::generate);
  connect(generate_pane_, &LmGeneratePane::stopRequested, service_, &LmService::stop);
  tabs_->addTab(generate_pane_, tr("Generate"));
  attention_view_ = new LmAttentionView(service_);
  tabs_->addTab(attention_view_, tr("Attention"));
  log_ = new QPlainTextEdit;
  log_->setObjectName(QStringLiteral("lmLog"));
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(5000);
  tabs_->addTab(log_, tr("Log"));
  chart_and_tabs->addWidget(tabs_);
  chart_and_tabs->setStretchFactor(0, 3);
  chart_and_tabs->setStretchFactor(1, 2);

  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(buildSetup());
  split->addWidget(chart_and_tabs);
  split->setStretchFactor(1, 1);
  split->setSizes({380, 900});
  setCentralWidget(split);
  buildMenus();
  statusBar()->showMessage(tr("Open a UTF-8 text file to train a language model on (File ▸ Open text…)."));
  resize(kDefaultSize);  // until the first show fits it to its screen

  connect(service_, &LmService::textInspected, this, &LmWindow::showText);
  connect(service_, &LmService::textFailed, this, &LmWindow::showTextError);
  connect(service_, &LmService::modelChanged, this, [this](const QString& label) {
    generate_pane_->setModelLabel(label);
    generate_pane_->setVocabulary(std::max(0, service_->modelVocabulary()));
    updateButtons();
  });
  connect(service_, &LmService::modelFailed, this, [this](const QString& path, const QString& message) {
    generate_pane_->setStatus(tr("Cannot load %1: %2").arg(path, message));
    log(tr("cannot load %1: %2").arg(path, message));
  });
  connect(service_, &LmService::checkpointInspected, this, &LmWindow::showResumable);
  connect(service_, &LmService::checkpointFailed, this, [this](const QString& path, const QString& message) {
    run_status_->setText(QStringLiteral("⚠ ") + message);
    log(tr("cannot resume %1: %2").arg(path, message));
    Q_EMIT resumeReady();
  });
  connect(service_, &LmService::modelExported, this, [this](const QString& folder, const QString& summary) {
    statusBar()->showMessage(tr("Exported to %1 (%2)").arg(folder, summary));
    log(tr("exported to %1 (%2)").arg(folder, summary));
    Q_EMIT modelExported(folder, summary);
  });
  connect(service_, &LmService::exportFailed, this, [this](const QString& folder, const QString& message) {
    statusBar()->showMessage(tr("Export failed: %1").arg(message));
    log(tr("export to %1 failed: %2").arg(folder, message));
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Export failed"), message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("lmExportError"));
    box->open();  // window-modal, without a nested event loop
    Q_EMIT exportFailed(folder, message);
  });
  connect(service_, &LmService::generationStarted, this, &LmWindow::updateButtons);
  connect(service_, &LmService::piece, generate_pane_, &LmGeneratePane::appendPiece);
  connect(service_, &LmService::generationFinished, this, &LmWindow::onGenerationFinished);
  connect(service_, &LmService::generationFailed, this, [this](const QString& message) {
    generate_pane_->setStatus(message);
    log(message);
    updateButtons();
  });

  connect(controller_, &TrainingController::stateChanged, this, &LmWindow::updateButtons);
  connect(controller_, &TrainingController::logLine, this, &LmWindow::log);
  // A locked run history at the end of a run: the window says that it waits, and how that ended.
  connect(controller_, &TrainingController::historyWaiting, this,
          [this](const QString& summary, const QString&, bool) { statusBar()->showMessage(summary); });
  connect(controller_, &TrainingController::started, this, &LmWindow::onStarted);
  connect(controller_, &TrainingController::progress, this, &LmWindow::onProgress);
  connect(controller_, &TrainingController::validated, this, &LmWindow::onValidated);
  connect(controller_, &TrainingController::finished, this, &LmWindow::onFinished);
  connect(controller_, &TrainingController::failed, this, &LmWindow::onFailed);
  connect(controller_, &TrainingController::checkpointSaved, this, [this](const ts::CheckpointEvent& c) {
    if (c.kind == ts::CheckpointKind::kBest) log(tr("best checkpoint: %1 (step %2)").arg(q(c.path)).arg(c.step));
  });
  connect(controller_, &TrainingController::lmSnapshotReady, this, [this](const LmModelSnapshot& s) {
    service_->setModel(s);
    if (generate_on_snapshot_) {
      generate_on_snapshot_ = false;
      startGeneration();
    }
  });
  config_form_->showConfig(config_);
  updateEstimate();
  updateButtons();
}

LmWindow::~LmWindow() = default;

// ---------------------------------------------------------------- layout

QWidget* LmWindow::buildSetup() {
  auto* column = new QWidget;
  auto* layout = new QVBoxLayout(column);
  text_pane_ = new LmTextPane;
  connect(text_pane_, &LmTextPane::openRequested, this, &LmWindow::chooseText);
  layout->addWidget(text_pane_, 2);
  config_form_ = new LmConfigForm;
  connect(config_form_, &LmConfigForm::presetChosen, this, [this](const QString& name) { applyPreset(name); });
  connect(config_form_, &LmConfigForm::fieldEdited, this, &LmWindow::fieldEdited);
  layout->addWidget(config_form_, 3);
  layout->addWidget(buildRunControls());

  auto* scroll = new QScrollArea;
  scroll->setWidget(column);
  scroll->setWidgetResizable(true);
  scroll->setMinimumWidth(340);
  return scroll;
}

void LmWindow::buildMenus() {
  auto* file = menuBar()->addMenu(tr("&File"));
  auto* open = file->addAction(tr("Open &text…"), this, &LmWindow::chooseText);
  open->setShortcut(QKeySequence::Open);
  file->addAction(tr("Open language-model &checkpoint…"), this, &LmWindow::chooseCheckpoint);
  file->addAction(tr("Open exported model &folder…"), this, &LmWindow::chooseModelFolder);
  file->addAction(tr("&Resume training from checkpoint…"), this, &LmWindow::chooseResume);
  file->addSeparator();
  auto* export_action = file->addAction(tr("&Export model…"), this, &LmWindow::chooseExport);
  export_action->setObjectName(QStringLiteral("lmExportModel"));
  export_action->setToolTip(
      tr("Write a checkpoint's language model as a folder other tools read: model.safetensors, "
         "config.json (configuration, vocabulary) and README.md"));
  file->addSeparator();
  auto* close_action = file->addAction(tr("&Close"), this, &QWidget::close);
  close_action->setShortcut(QKeySequence::Close);
  auto* training = menuBar()->addMenu(tr("&Training"));
  training->addAction(tr("&Train"), this, [this] { startTraining(); });
  training->addAction(tr("&Pause / resume"), pause_, &QPushButton::click);
  training->addAction(tr("&Stop"), controller_, &TrainingController::stop);
  training->addSeparator();
  training->addAction(tr("&Generate"), this, &LmWindow::generate);
}

// ---------------------------------------------------------------- text

void LmWindow::chooseText() {
  const auto path = QFileDialog::getOpenFileName(this, tr("Open text"), QString(), tr("Text (*.txt);;All files (*)"));
  if (!path.isEmpty()) openText(path);
}

void LmWindow::openText(const QString& path) {
  pending_text_ = path;
  text_pane_->hideError();
  statusBar()->showMessage(tr("Reading %1…").arg(path));
  log(tr("reading %1").arg(path));
  service_->inspectText(path, config_);
  updateButtons();
}

void LmWindow::showText(const LmTextInfo& info) {
  // A different text than the checkpoint to resume was trained on means a fresh run.
  if (info.path != resume_text_) resume_checkpoint_.clear();
  pending_text_.clear();
  info_ = info;
  text_pane_->showText(info);
  setWindowTitle(tr("%1 — Language model — Transformer Studio").arg(QFileInfo(info.path).fileName()));
  statusBar()->showMessage(tr("%1: %2 characters, vocabulary %3.")
                               .arg(QFileInfo(info.path).fileName(), number(info.chars))
                               .arg(info.vocab_size));
  updateBaseline();
  updateEstimate();
  updateButtons();
  Q_EMIT textReady();
}

void LmWindow::showTextError(const QString& path, const QString& message) {
  pending_text_.clear();
  text_pane_->showError(message);
  statusBar()->showMessage(tr("Cannot use %1").arg(QFileInfo(path).fileName()));
  log(message);
  updateButtons();
  Q_EMIT textReady();
}

// ---------------------------------------------------------------- configuration

void LmWindow::fieldEdited(const QString& key, const QString& value) {
  QString error;
  if (!applySetting(key + QLatin1Char('=') + value, &error)) config_form_->showError(error);
}

bool LmWindow::applySetting(const QString& assignment, QString* error) {
  auto changed = config_;
  try {
    changed.set(assignment.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = q(e.what());
    return false;
  }
  const bool retokenise = changed.tokenizer != config_.tokenizer ||
                          (changed.tokenizer != LmTokenizer::kChar && changed.vocab_size != config_.vocab_size);
  config_ = changed;
  config_form_->showConfig(config_);
  updateEstimate();
  // The vocabulary depends on the tokenizer: read the text again with the new one.
  if (retokenise && hasText()) openText(info_.path);
  return true;
}

bool LmWindow::applyPreset(const QString& name, QString* error) {
  LmConfig preset;
  try {
    preset = lm_preset(name.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = q(e.what());
    return false;
  }
  // Where and how it runs, and how the text is cut, are the user's choices, not the preset's.
  preset.device = config_.device;
  preset.threads = config_.threads;
  preset.precision = config_.precision;
  preset.tokenizer = config_.tokenizer;
  preset.vocab_size = config_.vocab_size;
  config_ = preset;
  config_form_->showConfig(config_);
  updateEstimate();
  return true;
}

void LmWindow::updateEstimate() {
  config_form_->showEstimate(config_, hasText() ? &info_ : nullptr);
  updateButtons();
}

// ---------------------------------------------------------------- chart

void LmWindow::updateBaseline() {
  chart_->showBaseline(baseline(), info_.uniform_loss, static_cast<double>(config_.max_steps));
}

double LmWindow::baseline() const { return hasText() ? info_.bigram_loss : std::numeric_limits<double>::quiet_NaN(); }

void LmWindow::clearChart() {
  chart_->removeRuns(controller_->isRunning());
  updateBaseline();
}

QCustomPlot* LmWindow::lossPlot() const { return chart_->plot(); }

int LmWindow::curveCount() const { return chart_->curveCount(); }

QString LmWindow::curveLabel(int run) const { return chart_->curveLabel(run); }

QVector<QPointF> LmWindow::curvePoints(int run, const QString& series) const {
  return chart_->curvePoints(run, series);
}

// ---------------------------------------------------------------- generation

void LmWindow::chooseCheckpoint() {
  const auto path = QFileDialog::getOpenFileName(this, tr("Open language-model checkpoint"), runs_directory_,
                                                 tr("Checkpoints (*.ckpt)"));
  if (!path.isEmpty()) openCheckpoint(path);
}

void LmWindow::chooseModelFolder() {
  const auto dir =
      QFileDialog::getExistingDirectory(this, tr("Open an exported language-model folder"), runs_directory_);
  if (!dir.isEmpty()) openCheckpoint(dir);
}

void LmWindow::chooseExport() {
  const auto checkpoint = QFileDialog::getOpenFileName(this, tr("Export which language-model checkpoint?"),
                                                       runs_directory_, tr("Checkpoints (*.ckpt)"));
  if (checkpoint.isEmpty()) return;
  const auto folder = QFileDialog::getExistingDirectory(
      this, tr("Export %1 into an empty folder").arg(QFileInfo(checkpoint).fileName()),
      QFileInfo(checkpoint).absolutePath());
  if (!folder.isEmpty()) exportModel(checkpoint, folder);
}

void LmWindow::exportModel(const QString& checkpoint, const QString& folder) {
  statusBar()->showMessage(tr("Exporting %1…").arg(QFileInfo(checkpoint).fileName()));
  service_->exportModel(checkpoint, folder);
}

void LmWindow::openCheckpoint(const QString& path) {
  generate_pane_->setStatus(tr("Loading %1…").arg(path));
  service_->loadCheckpoint(path);
}

void LmWindow::generate() {
  if (service_->isGenerating()) return;
  if (controller_->isRunning() && controller_->state() != TrainingController::State::Preparing) {
    // Generate from the weights as they are now, not from the last snapshot.
    generate_on_snapshot_ = true;
    generate_pane_->setStatus(tr("Taking the latest weights…"));
    controller_->requestSnapshot();
    return;
  }
  startGeneration();
}

void LmWindow::startGeneration() {
  const LmGenerateRequest r = generate_pane_->request();
  generate_pane_->startOutput(r.prompt);
  generate_pane_->setStatus(tr("Generating with %1…").arg(service_->model().label));
  tabs_->setCurrentIndex(0);
  service_->generate(r);
}

void LmWindow::onGenerationFinished(const LmGeneration& g) {
  generate_pane_->showFinished(g);
  attention_view_->setAttention(g.attention);
  updateButtons();
  Q_EMIT generationDone();
}

const LmAttention& LmWindow::attention() const { return attention_view_->attention(); }

AttentionHeatmap* LmWindow::attentionMap() const { return attention_view_->heatmap(); }

QString LmWindow::outputText() const { return generate_pane_->outputText(); }

void LmWindow::setPrompt(const QString& text) { generate_pane_->setPrompt(text); }

// ---------------------------------------------------------------- state

void LmWindow::updateButtons() {
  const auto state = controller_->state();
  const bool running = controller_->isRunning();
  train_->setEnabled(!running && hasText() && pending_text_.isEmpty() && config_.problems().empty());
  train_->setText(resume_checkpoint_.isEmpty() ? tr("Train") : tr("Resume"));
  pause_->setEnabled(state == TrainingController::State::Training || state == TrainingController::State::Paused);
  pause_->setText(state == TrainingController::State::Paused ? tr("Resume") : tr("Pause"));
  stop_->setEnabled(running && state != TrainingController::State::Stopping);
  const bool generating = service_->isGenerating();
  generate_pane_->setButtons(!generating && (service_->hasModel() || running), generating);
  config_form_->setEditable(!running);
}

void LmWindow::log(const QString& line) {
  log_->appendPlainText(QStringLiteral("%1  %2").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")), line));
}

void LmWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  if (sized_) return;
  sized_ = true;
  resize(size_for_screen(*this, kDefaultSize));
}

void LmWindow::closeEvent(QCloseEvent* event) {
  // Closing the window stops its training (a checkpoint is written first) and its generation; the
  // window closes once the run has ended, without blocking the event loop meanwhile. It stays
  // alive hidden: File ▸ New language model shows it again with its chart.
  service_->stop();
  if (controller_->isRunning()) {
    close_when_stopped_ = true;
    controller_->stop();
    run_status_->setText(tr("Stopping: writing a checkpoint, then closing…"));
    event->ignore();
    return;
  }
  event->accept();
}

}  // namespace ts::ui
