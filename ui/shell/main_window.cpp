// SPDX-License-Identifier: GPL-3.0-or-later
#include "shell/main_window.h"

#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QStatusBar>
#include <QTabBar>
#include <QTimer>

#include "anatomy/anatomy_panel.h"
#include "attention/attention_panel.h"
#include "beam_search/beam_tree_view.h"
#include "compare/compare_panel.h"
#include "compare/confidence_view.h"
#include "configuration/config_panel.h"
#include "dataset/dataset_panel.h"
#include "services/device_info.h"
#include "history/history_panel.h"
#include "language_model/lm_window.h"
#include "attention_over_training/probe_panel.h"
#include "shell/studio_state.h"
#include "services/training_controller.h"
#include "training/training_panel.h"
#include "translate/translate_panel.h"
#include "services/translation_service.h"
#include "ts/licence.h"
#include "widgets/screen_fit.h"

namespace ts::ui {

MainWindow::MainWindow(const QString& database, QWidget* parent) : QMainWindow(parent) {
  setWindowIcon(QIcon(QStringLiteral(":/icons/transformer-studio.svg")));
  setAcceptDrops(true);
  setDockNestingEnabled(true);
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks | QMainWindow::AllowNestedDocks);

  state_ = new StudioState(this);
  if (!database.isEmpty()) state_->setDatabasePath(database);
  controller_ = new TrainingController(this);
  translation_ = new TranslationService(this);

  dataset_ = new DatasetPanel(state_, this);
  config_ = new ConfigPanel(state_, this);
  training_ = new TrainingPanel(state_, controller_, this);
  translate_ = new TranslatePanel(state_, translation_, controller_, this);
  history_ = new HistoryPanel(state_, translation_, this);
  compare_ = new ComparePanel(state_, this);
  anatomy_ = new AnatomyPanel(state_, this);
  anatomy_->setTranslationService(translation_);
  attention_ = new AttentionPanel(translation_, this);
  attention_->followDevSplit(state_);
  beam_ = new BeamTreeView(translation_, this);
  probe_ = new ProbePanel(state_, controller_, this);

  createDocks();
  createMenus();
  createStatusBar();
  default_state_ = saveState();

  QSettings settings;
  // The window is sized when it is first shown (showEvent): before that the docks' layouts claim
  // more height than they need, and a 1280 x 800 window came out 932 pixels tall.
  saved_geometry_ = settings.value(QStringLiteral("window/geometry")).toByteArray();
  restored_state_ = settings.value(QStringLiteral("window/state")).toByteArray();
  restoreState(restored_state_);

  connect(state_, &StudioState::corpusChanged, this, &MainWindow::updateTitle);
  connect(state_, &StudioState::directionChanged, this, &MainWindow::updateTitle);
  connect(state_, &StudioState::recentFilesChanged, this, &MainWindow::updateRecentMenu);
  connect(state_, &StudioState::corpusLoading, this, [this](const QString& path) {
    status_label_->setText(tr("Reading %1…").arg(QFileInfo(path).fileName()));
    busy_->show();
  });
  connect(state_, &StudioState::corpusChanged, this, [this] {
    busy_->hide();
    const auto& c = *state_->corpus();
    status_label_->setText(tr("%1: %L2 pairs")
                               .arg(state_->isDemo() ? tr("demo corpus") : QFileInfo(state_->corpusPath()).fileName())
                               .arg(static_cast<qulonglong>(c.pairs.size())));
  });
  connect(state_, &StudioState::corpusFailed, this, [this](const QString& path, const QString& message) {
    busy_->hide();
    status_label_->setText(tr("Could not open %1").arg(QFileInfo(path).fileName()));
    showError(tr("Cannot open corpus"), message);
  });
  connect(controller_, &TrainingController::failed, this,
          [this](const QString& message) { showError(tr("Training failed"), message); });
  connect(controller_, &TrainingController::finished, this, [this](const ts::TrainingSummary& s) {
    status_label_->setText(tr("Training %1 at step %2: %3")
                               .arg(QString::fromLatin1(run_status_name(s.status)))
                               .arg(s.steps)
                               .arg(QString::fromStdString(s.message)));
    if (s.status == RunStatus::kFailed) showError(tr("Training failed"), QString::fromStdString(s.message));
  });
  // A locked run history at the end of a run: say that the app waits for it, and how it ended.
  connect(controller_, &TrainingController::historyWaiting, this,
          [this](const QString& summary, const QString& words, bool) {
            status_label_->setText(summary);
            status_label_->setToolTip(words);
          });
  connect(controller_, &TrainingController::stateChanged, this, [this](TrainingController::State st) {
    updateTitle();
    if (st == TrainingController::State::Idle && close_when_stopped_) QTimer::singleShot(0, this, &QWidget::close);
  });
  connect(controller_, &TrainingController::snapshotReady, translation_, &TranslationService::setSnapshot);
  connect(controller_, &TrainingController::recipeFitted, config_, &ConfigPanel::showRunsFit);
  connect(controller_, &TrainingController::runRecorded, history_, &HistoryPanel::refresh);
  connect(controller_, &TrainingController::finished, history_, &HistoryPanel::refresh);
  connect(controller_, &TrainingController::finished, compare_, &ComparePanel::refreshRuns);
  connect(compare_, &ComparePanel::openSentence, this, &MainWindow::openSentence);
  connect(history_, &HistoryPanel::checkpointRequested, this, [this] { showPanel(translate_); });
  connect(history_, &HistoryPanel::languageModelCheckpointRequested, this, [this](const QString& path) {
    languageModelWindow()->openCheckpoint(path);
    showLanguageModelWindow();
  });
  connect(history_, &HistoryPanel::probeReplayRequested, this, [this](qint64 run_id) {
    probe_->loadRun(state_->databasePath(), run_id);
    showPanel(probe_);
  });
  // The beam view decodes with the configuration's beam settings when asked to.
  // The beam tree's width and options: the loaded checkpoint's decode section, else the configuration's
  // (the Translate panel follows the same rule, so both panels start from one beam width).
  const auto beam_defaults = [this] {
    const auto& model = translation_->model();
    beam_->setDecodeDefaults(model.decode ? *model.decode : state_->config().decode);
  };
  beam_defaults();
  connect(state_, &StudioState::configChanged, this, beam_defaults);
  connect(translation_, &TranslationService::modelChanged, this, beam_defaults);
  connect(translation_, &TranslationService::loadFailed, this, [this](const QString& path, const QString& message) {
    showError(tr("Cannot load checkpoint"), message.contains(path) ? message : path + QStringLiteral(": ") + message);
  });
  connect(translation_, &TranslationService::modelExported, this,
          [this](const QString& folder, const QString& summary) {
            busy_->hide();
            status_label_->setText(tr("Exported to %1 (%2)").arg(folder, summary));
            Q_EMIT modelExported(folder, summary);
          });
  connect(translation_, &TranslationService::exportFailed, this, [this](const QString& folder, const QString& message) {
    busy_->hide();
    status_label_->setText(tr("Export failed"));
    Q_EMIT exportFailed(folder, message);
    if (isVisible()) showError(tr("Export failed"), message);
  });
  updateTitle();
  updateRecentMenu();
}

MainWindow::~MainWindow() = default;

QDockWidget* MainWindow::addPanel(QWidget* panel, const QString& title, const QString& object_name) {
  auto* dock = new QDockWidget(title, this);
  dock->setObjectName(object_name);  // saveState() needs stable names
  dock->setWidget(panel);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                    QDockWidget::DockWidgetClosable);
  docks_ << dock;
  return dock;
}

void MainWindow::createDocks() {
  auto* dataset = addPanel(dataset_, tr("Dataset"), QStringLiteral("dock.dataset"));
  auto* config = addPanel(config_, tr("Configuration"), QStringLiteral("dock.config"));
  auto* training = addPanel(training_, tr("Training"), QStringLiteral("dock.training"));
  auto* translate = addPanel(translate_, tr("Translate"), QStringLiteral("dock.translate"));
  auto* history = addPanel(history_, tr("Run history"), QStringLiteral("dock.history"));
  auto* compare = addPanel(compare_, tr("Compare"), QStringLiteral("dock.compare"));
  auto* anatomy = addPanel(anatomy_, tr("Model anatomy"), QStringLiteral("dock.anatomy"));
  auto* attention = addPanel(attention_, tr("Attention"), QStringLiteral("dock.attention"));
  auto* beam = addPanel(beam_, tr("Beam search"), QStringLiteral("dock.beam"));
  auto* probe = addPanel(probe_, tr("Attention over training"), QStringLiteral("dock.probe"));
  addDockWidget(Qt::LeftDockWidgetArea, dataset);
  addDockWidget(Qt::LeftDockWidgetArea, config);
  tabifyDockWidget(dataset, config);
  addDockWidget(Qt::RightDockWidgetArea, training);
  addDockWidget(Qt::RightDockWidgetArea, translate);
  addDockWidget(Qt::RightDockWidgetArea, history);
  tabifyDockWidget(training, translate);
  tabifyDockWidget(training, history);
  tabifyDockWidget(history, compare);
  tabifyDockWidget(training, attention);
  tabifyDockWidget(training, probe);
  tabifyDockWidget(training, beam);
  tabifyDockWidget(training, anatomy);
  resizeDocks({dataset, training}, {560, 880}, Qt::Horizontal);
  dataset->raise();
  training->raise();
}

QDockWidget* MainWindow::dockOf(QWidget* panel) const {
  for (auto* dock : docks_)
    if (dock->widget() == panel) return dock;
  return nullptr;
}

void MainWindow::showPanel(QWidget* panel) {
  if (auto* dock = dockOf(panel)) {
    dock->show();
    dock->raise();
  }
}

void MainWindow::resetLayout() {
  restoreState(default_state_);
  if (isVisible()) applyDefaultDockWidths();
}

// The left docks (Dataset, Configuration) take about two fifths of the window, the right ones the
// rest. Left to itself Qt split the width by the panels' minimum widths, and once the right panels
// asked for less, their tab titles came out elided ("Trai…", "Com…").
void MainWindow::applyDefaultDockWidths() {
  const int left = width() * 2 / 5;
  resizeDocks({dockOf(dataset_), dockOf(training_)}, {left, width() - left}, Qt::Horizontal);
}

void MainWindow::createMenus() {
  auto* file = menuBar()->addMenu(tr("&File"));
  auto* open = file->addAction(tr("&Open Corpus…"), this, &MainWindow::openDialog);
  open->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  file->addAction(tr("Use the &Demo Corpus"), state_, &StudioState::loadDemoCorpus);
  file->addSeparator();
  auto* language_model = file->addAction(tr("New &Language Model…"), this, &MainWindow::showLanguageModelWindow);
  language_model->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N));
  language_model->setToolTip(tr("Train a character-level GPT on any text and generate from it."));
  file->addSeparator();
  auto* load_checkpoint = file->addAction(tr("&Load Checkpoint…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load checkpoint"), state_->runsDirectory(),
                                                      tr("Checkpoints (*.ckpt);;All files (*)"));
    if (path.isEmpty()) return;
    translation_->loadCheckpoint(path);
    showPanel(translate_);
  });
  load_checkpoint->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  auto* import_folder = file->addAction(tr("&Import Model Folder…"), this, [this] {
    const QString dir =
        QFileDialog::getExistingDirectory(this, tr("Import an exported model folder"), state_->runsDirectory());
    if (dir.isEmpty()) return;
    translation_->loadCheckpoint(dir);
    showPanel(translate_);
  });
  import_folder->setToolTip(tr("Open a folder written by Export Model (model.safetensors and config.json)."));
  auto* export_model = file->addAction(tr("&Export Model…"), this, &MainWindow::exportDialog);
  export_model->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  export_model->setToolTip(
      tr("Write a checkpoint's model as safetensors weights, a JSON config and its "
         "tokenizers, for PyTorch and other tools; optionally with ONNX graphs for "
         "ONNX Runtime."));
  file->addSeparator();
  auto* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  quit->setMenuRole(QAction::QuitRole);

  auto* train = menuBar()->addMenu(tr("&Training"));
  auto* start = train->addAction(tr("&Start"), this, [this] {
    showPanel(training_);
    training_->start();
  });
  start->setShortcut(QKeySequence(Qt::Key_F5));
  auto* pause = train->addAction(tr("&Pause / Resume"), this, [this] {
    if (controller_->state() == TrainingController::State::Paused)
      controller_->resume();
    else
      controller_->pause();
  });
  pause->setShortcut(QKeySequence(Qt::Key_F6));
  auto* stop = train->addAction(tr("S&top"), controller_, &TrainingController::stop);
  stop->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
  const auto update_actions = [this, start, pause, stop] {
    const auto s = controller_->state();
    start->setEnabled(s == TrainingController::State::Idle);
    pause->setEnabled(s == TrainingController::State::Training || s == TrainingController::State::Paused);
    stop->setEnabled(s != TrainingController::State::Idle && s != TrainingController::State::Stopping);
  };
  connect(controller_, &TrainingController::stateChanged, this, update_actions);
  update_actions();

  auto* view = menuBar()->addMenu(tr("&View"));
  for (auto* dock : docks_) view->addAction(dock->toggleViewAction());
  view->addSeparator();
  view->addAction(tr("&Reset Layout"), this, &MainWindow::resetLayout);
  auto* full = view->addAction(tr("&Full Screen"), this, [this] { isFullScreen() ? showNormal() : showFullScreen(); });
  full->setShortcut(QKeySequence::FullScreen);

  auto* help = menuBar()->addMenu(tr("&Help"));
  auto* about = help->addAction(tr("&About Transformer Studio"), this, &MainWindow::showAbout);
  about->setMenuRole(QAction::AboutRole);
  help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::createStatusBar() {
  status_label_ = new QLabel(this);
  status_label_->setObjectName(QStringLiteral("statusMessage"));
  busy_ = new QProgressBar(this);
  busy_->setRange(0, 0);  // indeterminate: reading a corpus has no useful fraction (< 1 s for 170k pairs)
  busy_->setMaximumWidth(160);
  busy_->hide();
  statusBar()->addWidget(status_label_, 1);
  statusBar()->addPermanentWidget(busy_);
  statusBar()->addPermanentWidget(
      new QLabel(tr("LibTorch %1 · %2").arg(libtorch_version(), default_device_description()), this));
  connect(translation_, &TranslationService::busyChanged, this, [this](bool busy) { busy_->setVisible(busy); });
}

void MainWindow::updateRecentMenu() {
  recent_menu_->clear();
  const auto files = state_->recentFiles();
  for (int i = 0; i < files.size(); ++i) {
    const QString path = files[i];
    auto* action = recent_menu_->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(path), this,
                                           [this, path] { openCorpus(path); });
    action->setEnabled(QFileInfo::exists(path));
  }
  if (files.isEmpty()) recent_menu_->addAction(tr("(none)"))->setEnabled(false);
  recent_menu_->addSeparator();
  recent_menu_->addAction(tr("&Clear"), this, [this] {
    QSettings().remove(QStringLiteral("recentFiles"));
    updateRecentMenu();
  });
}

void MainWindow::updateTitle() {
  const QString corpus = state_->isDemo() ? tr("demo corpus") : QFileInfo(state_->corpusPath()).fileName();
  const auto& d = state_->direction();
  QString title = QStringLiteral("%1 (%2→%3) — Transformer Studio")
                      .arg(corpus, QString::fromStdString(d.src_code), QString::fromStdString(d.tgt_code));
  if (controller_->state() == TrainingController::State::Training) title.prepend(tr("[training] "));
  if (controller_->state() == TrainingController::State::Paused) title.prepend(tr("[paused] "));
  setWindowTitle(title);
}

void MainWindow::openDialog() {
  const QString start = state_->isDemo() ? QDir::homePath() : QFileInfo(state_->corpusPath()).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open parallel corpus"), start,
                                                    tr("Tatoeba/Anki corpora (*.txt *.tsv);;All files (*)"));
  if (!path.isEmpty()) openCorpus(path);
}

void MainWindow::openCorpus(const QString& path) {
  if (controller_->isRunning()) {
    showError(tr("Training in progress"), tr("Stop the current training before opening another corpus."));
    return;
  }
  state_->loadCorpus(path);
  showPanel(dataset_);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls() && event->mimeData()->urls().first().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (urls.isEmpty() || !urls.first().isLocalFile()) return;
  const QString path = urls.first().toLocalFile();
  event->acceptProposedAction();
  if (path.endsWith(QLatin1String(".ckpt"))) {
    translation_->loadCheckpoint(path);
    showPanel(translate_);
  } else {
    openCorpus(path);
  }
}

LmWindow* MainWindow::languageModelWindow() {
  if (!lm_window_) {
    lm_window_ = new LmWindow(state_->databasePath(), state_->runsDirectory(), this);
    lm_window_->setWindowFlag(Qt::Window);
    // Language-model runs land in the same history.
    connect(lm_window_->controller(), &TrainingController::runRecorded, history_, &HistoryPanel::refresh);
    connect(lm_window_->controller(), &TrainingController::finished, history_, [this] { history_->refresh(); });
    connect(lm_window_->controller(), &TrainingController::stateChanged, this, [this](TrainingController::State st) {
      if (st == TrainingController::State::Idle && close_when_stopped_) QTimer::singleShot(0, this, &QWidget::close);
    });
  }
  return lm_window_;
}

void MainWindow::showLanguageModelWindow() {
  auto* w = languageModelWindow();
  w->show();
  w->raise();
  w->activateWindow();
}

// Eight panels share the right dock area: at 1280 x 800 Qt elided every title of its tab bar to a few
// letters ("Trai…", "Comp…", "Attenti…"). The bars the window makes for tabified docks keep whole
// titles and scroll (arrows at the end) when they do not all fit.
void MainWindow::childEvent(QChildEvent* event) {
  QMainWindow::childEvent(event);
  if (event->type() != QEvent::ChildPolished) return;
  if (auto* bar = qobject_cast<QTabBar*>(event->child())) {
    bar->setElideMode(Qt::ElideNone);
    bar->setUsesScrollButtons(true);
  }
}

void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  if (sized_) return;
  sized_ = true;
  // Last time's size and place, or 1440 x 900 where the screen has room for it (a 1280 x 800
  // laptop gets its whole screen, not a window past its edges).
  if (!saved_geometry_.isEmpty() && restoreGeometry(saved_geometry_)) return;
  resize(size_for_screen(*this, QSize(1440, 900)));
  if (restored_state_.isEmpty()) applyDefaultDockWidths();  // a saved layout keeps its own widths
}

void MainWindow::closeEvent(QCloseEvent* event) {
  auto* lm = lm_window_ ? lm_window_->controller() : nullptr;
  if (controller_->isRunning() || (lm && lm->isRunning())) {
    if (!close_when_stopped_) {
      const auto answer = QMessageBox::question(
          this, tr("Training in progress"),
          tr("A model is training. Stop it, save a checkpoint and close?\n\nThe run stays in the history and can be resumed."),
          QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Yes);
      if (answer != QMessageBox::Yes) {
        event->ignore();
        return;
      }
      close_when_stopped_ = true;
      status_label_->setText(tr("Stopping training and saving a checkpoint…"));
      controller_->stop();
      if (lm) lm->stop();
    }
    event->ignore();  // closes when the controller reports Idle
    return;
  }
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState());
  event->accept();
}

void MainWindow::showError(const QString& title, const QString& message) {
  status_label_->setText(title);
  auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setObjectName(QStringLiteral("errorBox"));
  box->open();  // window-modal, does not spin a nested event loop
}

void MainWindow::openSentence(const QString& source, const QString& checkpoint) {
  DecodeConfig decode = state_->config().decode;
  decode.mode = DecodeMode::kBeam;
  decode.nbest = std::max(1, decode.beam);
  const auto translate = [this, source, decode] {
    translation_->translate(source, decode, /*record_attention=*/true);
    showPanel(attention_);
  };
  if (translation_->hasModel() && QFileInfo(translation_->model().checkpoint) == QFileInfo(checkpoint))
    return translate();
  // Translate once the service holds this checkpoint; a failed load says why and translates nothing.
  auto* pending = new QObject(this);
  connect(translation_, &TranslationService::modelChanged, pending,
          [this, pending, checkpoint, translate](const ModelInfo& info) {
            if (QFileInfo(info.checkpoint) != QFileInfo(checkpoint)) return;
            translation_->disconnect(pending);
            pending->deleteLater();
            translate();
          });
  connect(translation_, &TranslationService::loadFailed, pending, [this, pending, checkpoint](const QString& path) {
    if (path != checkpoint) return;
    translation_->disconnect(pending);
    pending->deleteLater();
  });
  translation_->loadCheckpoint(checkpoint);
}

void MainWindow::exportDialog() {
  QString checkpoint = translation_->hasModel() ? translation_->model().checkpoint : QString();
  if (checkpoint.isEmpty() || QFileInfo(checkpoint).isDir())
    checkpoint = QFileDialog::getOpenFileName(this, tr("Export which checkpoint?"), state_->runsDirectory(),
                                              tr("Checkpoints (*.ckpt);;All files (*)"));
  if (checkpoint.isEmpty()) return;
  // The format: the folder alone, or with the ONNX graphs beside (offered when this build can write them).
  bool onnx = false;
  if (TranslationService::onnxExportAvailable()) {
    const QStringList formats = {tr("Model folder: safetensors weights, config.json, tokenizers"),
                                 tr("Model folder and ONNX graphs (encoder.onnx, decoder_step.onnx) for ONNX Runtime")};
    bool ok = false;
    const QString format = QInputDialog::getItem(this, tr("Export Model"), tr("Format:"), formats, 0, false, &ok);
    if (!ok) return;
    onnx = format == formats.at(1);
  }
  const QString folder = QFileDialog::getExistingDirectory(
      this, tr("Export %1 into an empty folder").arg(QFileInfo(checkpoint).fileName()),
      QFileInfo(checkpoint).absolutePath());
  if (!folder.isEmpty()) exportModel(checkpoint, folder, onnx);
}

void MainWindow::exportModel(const QString& checkpoint, const QString& folder, bool onnx) {
  status_label_->setText(onnx ? tr("Exporting %1 with ONNX graphs…").arg(QFileInfo(checkpoint).fileName())
                              : tr("Exporting %1…").arg(QFileInfo(checkpoint).fileName()));
  busy_->show();
  translation_->exportModel(checkpoint, folder, onnx);
}

void MainWindow::showAbout() {
  // The licence and the components: the same list as the CLI's --version (ts/licence.h).
  const auto html = [](std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())).toHtmlEscaped();
  };
  QString components;
  for (const auto& c : third_party_components(Program::desktop))
    components += QStringLiteral("<tr><td>%1&nbsp;</td><td>%2</td></tr>").arg(html(c.name), html(c.licence));
  QMessageBox::about(
      this, tr("About Transformer Studio"),
      tr("<h3>Transformer Studio %1</h3>"
         "<p>Train and explore Transformer translation models.</p>"
         "<p>Qt %2 · LibTorch %3 · %4</p><table>%5</table>"
         "<p>Free software under the GNU General Public License, version 3 or later (%6): you may "
         "change and redistribute it under its terms. There is no warranty.</p>"
         "<p>Third-party components:</p><table>%7</table>"
         "<p>Corpora: the sentence pairs of <a href='https://tatoeba.org'>Tatoeba</a> (CC-BY 2.0 FR), "
         "as packaged for Anki by <a href='https://www.manythings.org/anki/'>manythings.org</a>. "
         "Keep their attribution column when you share data or models derived from them.</p>"
         "<p>The built-in demo corpus is generated by the program.</p>")
          .arg(version_with_commit(), QString::fromLatin1(qVersion()), libtorch_version(), default_device_description(),
               environment_rows_html(), html(kProjectLicence), components));
}

}  // namespace ts::ui
