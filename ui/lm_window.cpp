// SPDX-License-Identifier: GPL-3.0-or-later
#include "lm_window.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDoubleSpinBox>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextEdit>
#include <QTimer>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "attention_heatmap.h"
#include "lm_service.h"
#include "plot_style.h"
#include "studio_state.h"
#include "training_controller.h"

namespace ts::ui {

QString visible_token(const QString& token) {
  QString out;
  for (const QChar c : token) {
    if (c == QLatin1Char('\n')) out += QStringLiteral("⏎");
    else if (c == QLatin1Char(' ')) out += QStringLiteral("␣");
    else if (c == QLatin1Char('\t')) out += QStringLiteral("⇥");
    else if (c.category() == QChar::Other_Control) out += QStringLiteral("U+%1").arg(c.unicode(), 4, 16, QLatin1Char('0')).toUpper();
    else out += c;
  }
  return out;
}

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
QString number(qint64 n) { return QLocale().toString(n); }

// One row of the configuration form per LmConfig key. A key missing here is still trained with
// (the form just does not show it); the UI test checks the table covers LmConfig::to_json().
struct FieldSpec {
  const char* key;
  const char* label;
  char kind;  // 'i' integer, 'r' real, 'c' choice
  double min, max, step;
  int decimals;
  const char* choices;  // '|'-separated for 'c'
  const char* tip;
};

const FieldSpec kFields[] = {
    {"kind", "Model", 'c', 0, 0, 0, 0, "gpt|bigram",
     "gpt: a decoder-only Transformer. bigram: a table of next-token logits, the baseline every model must beat."},
    {"tokenizer", "Tokenizer", 'c', 0, 0, 0, 0, "char|bpe|unigram",
     "char: one token per character, as in the tutorial. bpe/unigram: SentencePiece subwords trained on the text."},
    {"vocab_size", "Subword vocabulary", 'i', 16, 100000, 100, 0, nullptr, "Vocabulary size for bpe/unigram (ignored for char)."},
    {"n_layer", "Layers", 'i', 1, 64, 1, 0, nullptr, "Transformer blocks."},
    {"n_head", "Heads", 'i', 1, 64, 1, 0, nullptr, "Attention heads per block; must divide the embedding size."},
    {"n_embd", "Embedding size", 'i', 4, 8192, 16, 0, nullptr, "Width of the model (n_embd)."},
    {"block_size", "Context (tokens)", 'i', 2, 8192, 8, 0, nullptr, "The longest context the model sees (block_size)."},
    {"dropout", "Dropout", 'r', 0, 0.9, 0.05, 2, nullptr, "Dropout after attention, feed-forward and embeddings."},
    {"batch_size", "Batch size", 'i', 1, 8192, 4, 0, nullptr, "Random windows per step."},
    {"lr", "Learning rate", 'r', 1e-6, 1, 1e-4, 6, nullptr, "AdamW's learning rate."},
    {"weight_decay", "Weight decay", 'r', 0, 1, 0.01, 3, nullptr, "AdamW's decoupled weight decay."},
    {"max_steps", "Steps", 'i', 1, 100000000, 500, 0, nullptr, "Training steps (iterations)."},
    {"max_minutes", "Time limit (min)", 'r', 0, 1e6, 1, 1, nullptr, "Stop after this many minutes of training; 0 = no limit."},
    {"eval_interval", "Estimate every", 'i', 1, 100000000, 100, 0, nullptr,
     "Estimate the train and val loss every N steps (and at the end), as the tutorial does."},
    {"eval_iters", "Batches per estimate", 'i', 1, 1000000, 10, 0, nullptr, "Batches averaged per split and estimate."},
    {"seed", "Seed", 'i', 0, 2147483647, 1, 0, nullptr, "Seeds the weights, the batches and dropout: the same seed trains the same model."},
    {"device", "Device", 'c', 0, 0, 0, 0, "auto|cpu|cuda", "auto: the GPU when there is one."},
    {"threads", "Threads", 'i', 0, 1024, 1, 0, nullptr, "CPU threads; 0 = every core."},
    {"precision", "Precision", 'c', 0, 0, 0, 0, "fp32|bf16", "bf16 autocasts the forward pass (fast on CPUs with AMX and on GPUs)."},
};

}  // namespace

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

  auto* chart_and_tabs = new QSplitter(Qt::Vertical);
  chart_and_tabs->addWidget(buildChart());
  tabs_ = new QTabWidget;
  tabs_->setObjectName(QStringLiteral("lmTabs"));
  tabs_->addTab(buildGenerate(), tr("Generate"));
  tabs_->addTab(buildAttention(), tr("Attention"));
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
  resize(1320, 860);

  connect(service_, &LmService::textInspected, this, &LmWindow::showText);
  connect(service_, &LmService::textFailed, this, &LmWindow::showTextError);
  connect(service_, &LmService::modelChanged, this, [this](const QString& label) {
    model_label_->setText(label);
    top_k_->setMaximum(std::max(0, service_->modelVocabulary()));
    updateButtons();
  });
  connect(service_, &LmService::modelFailed, this, [this](const QString& path, const QString& message) {
    generation_status_->setText(tr("Cannot load %1: %2").arg(path, message));
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
  connect(service_, &LmService::piece, this, [this](const QString& text) {
    QTextCursor cursor(output_->document());
    cursor.movePosition(QTextCursor::End);
    cursor.insertText(text, QTextCharFormat());
    output_->setTextCursor(cursor);
    output_->ensureCursorVisible();
  });
  connect(service_, &LmService::generationFinished, this, &LmWindow::onGenerationFinished);
  connect(service_, &LmService::generationFailed, this, [this](const QString& message) {
    generation_status_->setText(message);
    log(message);
    updateButtons();
  });

  connect(controller_, &TrainingController::stateChanged, this, &LmWindow::updateButtons);
  connect(controller_, &TrainingController::logLine, this, &LmWindow::log);
  // A locked run history at the end of a run: the window says that it waits, and how that ended.
  connect(controller_, &TrainingController::historyWaiting, this,
          [this](const QString& line) { statusBar()->showMessage(TrainingController::historyWaitSummary(line)); });
  connect(controller_, &TrainingController::started, this, &LmWindow::onStarted);
  connect(controller_, &TrainingController::progress, this, &LmWindow::onProgress);
  connect(controller_, &TrainingController::validated, this, &LmWindow::onValidated);
  connect(controller_, &TrainingController::finished, this, &LmWindow::onFinished);
  connect(controller_, &TrainingController::failed, this, &LmWindow::onFailed);
  connect(controller_, &TrainingController::checkpointSaved, this, [this](const ts::CheckpointEvent& c) {
    if (c.kind == "best") log(tr("best checkpoint: %1 (step %2)").arg(q(c.path)).arg(c.step));
  });
  connect(controller_, &TrainingController::lmSnapshotReady, this, [this](const LmModelSnapshot& s) {
    service_->setModel(s);
    if (generate_on_snapshot_) {
      generate_on_snapshot_ = false;
      startGeneration();
    }
  });
  configToForm();
  updateEstimate();
  updateButtons();
}

LmWindow::~LmWindow() = default;

// ---------------------------------------------------------------- layout

QWidget* LmWindow::buildSetup() {
  auto* column = new QWidget;
  auto* layout = new QVBoxLayout(column);

  auto* text_box = new QGroupBox(tr("Text"));
  auto* text_layout = new QVBoxLayout(text_box);
  auto* open = new QPushButton(tr("Open text…"));
  open->setObjectName(QStringLiteral("lmOpenText"));
  open->setToolTip(tr("Any UTF-8 text file: a book, your notes. It is split 90/10 into train and val, in order."));
  connect(open, &QPushButton::clicked, this, &LmWindow::chooseText);
  text_path_ = new QLabel(tr("No text open."));
  text_path_->setObjectName(QStringLiteral("lmTextPath"));
  text_path_->setWordWrap(true);
  text_path_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  text_summary_ = new QLabel;
  text_summary_->setObjectName(QStringLiteral("lmTextSummary"));
  text_summary_->setWordWrap(true);
  text_error_ = new QLabel;
  text_error_->setObjectName(QStringLiteral("lmTextError"));
  text_error_->setWordWrap(true);
  text_error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  text_error_->setVisible(false);
  vocab_table_ = new QTableWidget(0, 3);
  vocab_table_->setObjectName(QStringLiteral("lmVocabulary"));
  vocab_table_->setHorizontalHeaderLabels({tr("Token"), tr("Count"), tr("Share")});
  vocab_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  vocab_table_->verticalHeader()->setVisible(false);
  vocab_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  vocab_table_->setMinimumHeight(140);
  vocab_table_->setToolTip(tr("The text's vocabulary, most frequent first (⏎ newline, ␣ space, ⇥ tab)."));
  text_layout->addWidget(open);
  text_layout->addWidget(text_path_);
  text_layout->addWidget(text_error_);
  text_layout->addWidget(text_summary_);
  text_layout->addWidget(vocab_table_, 1);
  layout->addWidget(text_box, 2);

  auto* model_box = new QGroupBox(tr("Model and training"));
  auto* model_layout = new QVBoxLayout(model_box);
  preset_ = new QComboBox;
  preset_->setObjectName(QStringLiteral("lmPreset"));
  for (const auto& name : lm_preset_names()) preset_->addItem(q(name));
  preset_->setToolTip(tr("shakespeare-char: the tutorial's model (4 layers, 4 heads, 64 wide, context 32, 5,000 steps). "
                         "shakespeare-char-large: 6 layers, 6 heads, 384 wide, context 256. bigram: the baseline."));
  connect(preset_, &QComboBox::textActivated, this, [this](const QString& name) { applyPreset(name); });
  auto* fields = new QWidget;
  form_ = new QFormLayout(fields);
  form_->setContentsMargins(0, 0, 0, 0);
  for (const auto& f : kFields) {
    const QString key = QString::fromLatin1(f.key);
    QWidget* editor = nullptr;
    if (f.kind == 'c') {
      auto* box = new QComboBox;
      box->addItems(QString::fromLatin1(f.choices).split(QLatin1Char('|')));
      connect(box, &QComboBox::currentTextChanged, this, [this, key](const QString& v) { fieldEdited(key, v); });
      editor = box;
    } else if (f.kind == 'i') {
      auto* box = new QSpinBox;
      box->setRange(static_cast<int>(f.min), static_cast<int>(f.max));
      box->setSingleStep(static_cast<int>(f.step));
      box->setGroupSeparatorShown(true);
      connect(box, QOverload<int>::of(&QSpinBox::valueChanged), this, [this, key](int v) { fieldEdited(key, QString::number(v)); });
      editor = box;
    } else {
      auto* box = new QDoubleSpinBox;
      box->setDecimals(f.decimals);
      box->setRange(f.min, f.max);
      box->setSingleStep(f.step);
      connect(box, QOverload<double>::of(&QDoubleSpinBox::valueChanged), this,
              [this, key](double v) { fieldEdited(key, QString::number(v, 'g', 10)); });
      editor = box;
    }
    editor->setObjectName(QStringLiteral("lm_") + key);
    editor->setToolTip(tr(f.tip));
    editor->setProperty("configKey", key);
    editors_ << editor;
    form_->addRow(tr(f.label), editor);
  }
  auto* fields_scroll = new QScrollArea;
  fields_scroll->setWidget(fields);
  fields_scroll->setWidgetResizable(true);
  fields_scroll->setFrameShape(QFrame::NoFrame);
  estimate_ = new QLabel;
  estimate_->setObjectName(QStringLiteral("lmEstimate"));
  estimate_->setWordWrap(true);
  problems_ = new QLabel;
  problems_->setObjectName(QStringLiteral("lmProblems"));
  problems_->setWordWrap(true);
  problems_->setVisible(false);
  auto* preset_row = new QHBoxLayout;
  preset_row->addWidget(new QLabel(tr("Preset")));
  preset_row->addWidget(preset_, 1);
  model_layout->addLayout(preset_row);
  model_layout->addWidget(fields_scroll, 1);
  model_layout->addWidget(estimate_);
  model_layout->addWidget(problems_);
  layout->addWidget(model_box, 3);

  auto* run_box = new QGroupBox(tr("Run"));
  auto* run_layout = new QVBoxLayout(run_box);
  auto* buttons = new QHBoxLayout;
  train_ = new QPushButton(tr("Train"));
  train_->setObjectName(QStringLiteral("lmTrain"));
  pause_ = new QPushButton(tr("Pause"));
  pause_->setObjectName(QStringLiteral("lmPause"));
  stop_ = new QPushButton(tr("Stop"));
  stop_->setObjectName(QStringLiteral("lmStop"));
  stop_->setToolTip(tr("Stops after the current step and writes a checkpoint."));
  connect(train_, &QPushButton::clicked, this, [this] { startTraining(); });
  connect(pause_, &QPushButton::clicked, this, [this] {
    if (controller_->state() == TrainingController::State::Paused) controller_->resume();
    else controller_->pause();
  });
  connect(stop_, &QPushButton::clicked, controller_, &TrainingController::stop);
  buttons->addWidget(train_);
  buttons->addWidget(pause_);
  buttons->addWidget(stop_);
  progress_ = new QProgressBar;
  progress_->setObjectName(QStringLiteral("lmProgress"));
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  progress_->setFormat(QStringLiteral("%p%"));
  run_status_ = new QLabel(tr("Not trained yet."));
  run_status_->setObjectName(QStringLiteral("lmRunStatus"));
  run_status_->setWordWrap(true);
  run_status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  run_layout->addLayout(buttons);
  run_layout->addWidget(progress_);
  run_layout->addWidget(run_status_);
  layout->addWidget(run_box);

  auto* scroll = new QScrollArea;
  scroll->setWidget(column);
  scroll->setWidgetResizable(true);
  scroll->setMinimumWidth(340);
  return scroll;
}

QWidget* LmWindow::buildChart() {
  plot_ = new QCustomPlot;
  plot_->setObjectName(QStringLiteral("lmLossPlot"));
  style_plot(plot_);
  plot_->xAxis->setLabel(tr("step"));
  plot_->yAxis->setLabel(tr("loss (nats per token)"));
  plot_->legend->setVisible(true);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  plot_->setMinimumHeight(260);
  baseline_line_ = new QCPItemStraightLine(plot_);
  baseline_line_->setPen(QPen(palette().color(QPalette::WindowText), 1.5, Qt::DashDotLine));
  baseline_line_->setVisible(false);
  baseline_text_ = new QCPItemText(plot_);
  baseline_text_->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
  baseline_text_->position->setTypeY(QCPItemPosition::ptPlotCoords);
  baseline_text_->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
  baseline_text_->setColor(palette().color(QPalette::WindowText));
  baseline_text_->setVisible(false);

  auto* box = new QWidget;
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  auto* title = new QLabel(tr("<b>Loss</b> — thin: every step; solid: train estimate; dashed: val estimate; "
                              "dash-dot: the bigram table"));
  title->setWordWrap(true);
  auto* clear = new QPushButton(tr("Clear chart"));
  clear->setObjectName(QStringLiteral("lmClearChart"));
  clear->setToolTip(tr("Removes the curves of earlier runs (the running one stays)."));
  connect(clear, &QPushButton::clicked, this, &LmWindow::clearChart);
  auto* save = new QPushButton(tr("Save image…"));
  connect(save, &QPushButton::clicked, this, [this] {
    const auto path = QFileDialog::getSaveFileName(this, tr("Save chart"), QStringLiteral("lm-loss.png"),
                                                   tr("Images (*.png *.pdf *.jpg)"));
    QString error;
    if (!path.isEmpty() && !export_plot(plot_, path, &error)) statusBar()->showMessage(error);
  });
  bar->addWidget(title, 1);
  bar->addWidget(clear);
  bar->addWidget(save);
  layout->addLayout(bar);
  layout->addWidget(plot_, 1);
  return box;
}

QWidget* LmWindow::buildGenerate() {
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  auto* model_row = new QHBoxLayout;
  model_label_ = new QLabel(tr("No model yet: train one, or open a language-model checkpoint."));
  model_label_->setObjectName(QStringLiteral("lmModelLabel"));
  auto* open = new QPushButton(tr("Open checkpoint…"));
  connect(open, &QPushButton::clicked, this, &LmWindow::chooseCheckpoint);
  model_row->addWidget(new QLabel(tr("Model:")));
  model_row->addWidget(model_label_, 1);
  model_row->addWidget(open);
  layout->addLayout(model_row);

  auto* params = new QHBoxLayout;
  length_ = new QSpinBox;
  length_->setObjectName(QStringLiteral("lmLength"));
  length_->setRange(1, 1000000);
  length_->setValue(500);
  length_->setToolTip(tr("Tokens to generate."));
  temperature_ = new QDoubleSpinBox;
  temperature_->setObjectName(QStringLiteral("lmTemperature"));
  temperature_->setRange(0, 5);
  temperature_->setSingleStep(0.1);
  temperature_->setValue(1.0);
  temperature_->setToolTip(tr("Divides the logits: below 1 more predictable, above 1 more varied; 0 = always the likeliest token."));
  top_k_ = new QSpinBox;
  top_k_->setObjectName(QStringLiteral("lmTopK"));
  top_k_->setRange(0, 0);
  top_k_->setSpecialValueText(tr("off"));
  top_k_->setToolTip(tr("Sample only among the k likeliest tokens; off = all."));
  top_p_ = new QDoubleSpinBox;
  top_p_->setObjectName(QStringLiteral("lmTopP"));
  top_p_->setRange(0.01, 1.0);
  top_p_->setSingleStep(0.05);
  top_p_->setValue(1.0);
  top_p_->setToolTip(tr("Nucleus sampling: the smallest set of tokens whose probability reaches p; 1 = off."));
  seed_ = new QSpinBox;
  seed_->setObjectName(QStringLiteral("lmSeed"));
  seed_->setRange(0, std::numeric_limits<int>::max());
  seed_->setValue(1337);
  seed_->setToolTip(tr("The same seed, model and settings give the same text."));
  const auto add = [params](const QString& label, QWidget* w) {
    params->addWidget(new QLabel(label));
    params->addWidget(w);
  };
  add(tr("Length"), length_);
  add(tr("Temperature"), temperature_);
  add(tr("Top-k"), top_k_);
  add(tr("Top-p"), top_p_);
  add(tr("Seed"), seed_);
  params->addStretch(1);
  layout->addLayout(params);

  auto* prompt_row = new QHBoxLayout;
  prompt_ = new QLineEdit;
  prompt_->setObjectName(QStringLiteral("lmPrompt"));
  prompt_->setPlaceholderText(tr("Prompt (empty: start from a new line)"));
  connect(prompt_, &QLineEdit::returnPressed, this, &LmWindow::generate);
  generate_ = new QPushButton(tr("Generate"));
  generate_->setObjectName(QStringLiteral("lmGenerate"));
  generate_->setToolTip(tr("While training, the latest weights are taken first."));
  connect(generate_, &QPushButton::clicked, this, &LmWindow::generate);
  stop_generation_ = new QPushButton(tr("Stop"));
  stop_generation_->setObjectName(QStringLiteral("lmStopGeneration"));
  connect(stop_generation_, &QPushButton::clicked, service_, &LmService::stop);
  prompt_row->addWidget(prompt_, 1);
  prompt_row->addWidget(generate_);
  prompt_row->addWidget(stop_generation_);
  layout->addLayout(prompt_row);

  output_ = new QTextEdit;
  output_->setObjectName(QStringLiteral("lmOutput"));
  output_->setReadOnly(true);
  output_->setPlaceholderText(tr("Generated text streams in here, token by token."));
  layout->addWidget(output_, 1);
  generation_status_ = new QLabel;
  generation_status_->setObjectName(QStringLiteral("lmGenerationStatus"));
  generation_status_->setWordWrap(true);
  layout->addWidget(generation_status_);
  return page;
}

QWidget* LmWindow::buildAttention() {
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  auto* row = new QHBoxLayout;
  layer_ = new QComboBox;
  layer_->setObjectName(QStringLiteral("lmAttentionLayer"));
  head_ = new QComboBox;
  head_->setObjectName(QStringLiteral("lmAttentionHead"));
  connect(layer_, QOverload<int>::of(&QComboBox::currentIndexChanged), this, &LmWindow::showAttention);
  connect(head_, QOverload<int>::of(&QComboBox::currentIndexChanged), this, &LmWindow::showAttention);
  row->addWidget(new QLabel(tr("Layer")));
  row->addWidget(layer_);
  row->addWidget(new QLabel(tr("Head")));
  row->addWidget(head_);
  row->addStretch(1);
  layout->addLayout(row);
  attention_info_ = new QLabel(tr("Generate some text to see where each position looks."));
  attention_info_->setObjectName(QStringLiteral("lmAttentionInfo"));
  attention_info_->setWordWrap(true);
  layout->addWidget(attention_info_);
  heatmap_ = new AttentionHeatmap;
  heatmap_->setObjectName(QStringLiteral("lmAttentionMap"));
  heatmap_->setAxisTitles(tr("position (reads)"), tr("earlier position (attended to)"));
  heatmap_->clear(tr("No generation yet."));
  layout->addWidget(heatmap_, 1);
  return page;
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
  export_action->setToolTip(tr("Write a checkpoint's language model as a folder other tools read: model.safetensors, "
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
  text_error_->setVisible(false);
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
  text_error_->setVisible(false);
  text_path_->setText(QDir::toNativeSeparators(info.path));
  text_path_->setToolTip(info.path);
  text_summary_->setText(
      tr("%1 characters · %2 lines · %3<br>vocabulary <b>%4</b> tokens (%5) · train %6 / val %7 tokens<br>"
         "bigram table on val: <b>%8</b> nats/token · knowing nothing: %9")
          .arg(number(info.chars), number(info.lines), format_bytes(static_cast<double>(info.bytes)))
          .arg(info.vocab_size)
          .arg(info.tokenizer, number(info.train_tokens), number(info.val_tokens))
          .arg(info.bigram_loss, 0, 'f', 3)
          .arg(info.uniform_loss, 0, 'f', 3));
  const double total = static_cast<double>(info.train_tokens + info.val_tokens);
  vocab_table_->setRowCount(info.tokens.size());
  for (int i = 0; i < info.tokens.size(); ++i) {
    const auto& [token, count] = info.tokens[i];
    auto* t = new QTableWidgetItem(visible_token(token));
    t->setToolTip(token.size() == 1 ? QStringLiteral("U+%1").arg(token.at(0).unicode(), 4, 16, QLatin1Char('0')).toUpper() : token);
    auto* c = new QTableWidgetItem(number(count));
    c->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    auto* s = new QTableWidgetItem(QStringLiteral("%1%").arg(100.0 * static_cast<double>(count) / std::max(1.0, total), 0, 'f', 2));
    s->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    vocab_table_->setItem(i, 0, t);
    vocab_table_->setItem(i, 1, c);
    vocab_table_->setItem(i, 2, s);
  }
  setWindowTitle(tr("%1 — Language model — Transformer Studio").arg(QFileInfo(info.path).fileName()));
  statusBar()->showMessage(tr("%1: %2 characters, vocabulary %3.").arg(QFileInfo(info.path).fileName(), number(info.chars)).arg(info.vocab_size));
  updateBaseline();
  updateEstimate();
  updateButtons();
  Q_EMIT textReady();
}

void LmWindow::showTextError(const QString& path, const QString& message) {
  pending_text_.clear();
  text_error_->setText(QStringLiteral("⚠ ") + message);
  text_error_->setVisible(true);
  statusBar()->showMessage(tr("Cannot use %1").arg(QFileInfo(path).fileName()));
  log(message);
  updateButtons();
  Q_EMIT textReady();
}

// ---------------------------------------------------------------- configuration

void LmWindow::configToForm() {
  filling_form_ = true;
  const auto j = config_.to_json();
  for (auto* editor : editors_) {
    const auto key = editor->property("configKey").toString().toStdString();
    if (!j.contains(key)) continue;
    const auto& v = j.at(key);
    if (auto* box = qobject_cast<QComboBox*>(editor)) box->setCurrentText(q(v.get<std::string>()));
    else if (auto* spin = qobject_cast<QSpinBox*>(editor)) spin->setValue(static_cast<int>(v.get<double>()));
    else if (auto* real = qobject_cast<QDoubleSpinBox*>(editor)) real->setValue(v.get<double>());
  }
  const int preset = preset_->findText(q(config_.preset));
  if (preset >= 0) preset_->setCurrentIndex(preset);
  filling_form_ = false;
}

void LmWindow::fieldEdited(const QString& key, const QString& value) {
  if (filling_form_) return;
  QString error;
  if (!applySetting(key + QLatin1Char('=') + value, &error)) problems_->setText(error), problems_->setVisible(true);
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
                          (changed.tokenizer != "char" && changed.vocab_size != config_.vocab_size);
  config_ = changed;
  configToForm();
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
  configToForm();
  updateEstimate();
  return true;
}

void LmWindow::updateEstimate() {
  const auto problems = config_.problems();
  QStringList lines;
  for (const auto& p : problems) lines << q(p);
  problems_->setText(lines.isEmpty() ? QString() : QStringLiteral("⚠ ") + lines.join(QStringLiteral("\n⚠ ")));
  problems_->setVisible(!lines.isEmpty());
  if (!problems.empty()) {
    estimate_->clear();
  } else if (hasText()) {
    const auto params = config_.parameter_estimate(info_.vocab_size);
    estimate_->setText(tr("%1 parameters · %2 tokens per step · %3 steps ≈ %4 passes over the training text")
                           .arg(number(params), number(static_cast<qint64>(config_.batch_size) * config_.block_size),
                                number(config_.max_steps))
                           .arg(static_cast<double>(config_.max_steps) * config_.batch_size * config_.block_size /
                                    std::max<double>(1.0, static_cast<double>(info_.train_tokens)),
                                0, 'f', 1));
  } else {
    estimate_->setText(tr("Open a text to see the model's size."));
  }
  updateButtons();
}

// ---------------------------------------------------------------- training

bool LmWindow::startTraining() {
  if (!hasText()) {
    run_status_->setText(tr("Open a text file first."));
    return false;
  }
  if (controller_->isRunning()) return false;
  LmTrainingRequest request;
  request.config = config_;
  request.text_path = info_.path;
  request.database = database_;
  request.resume_checkpoint = resume_checkpoint_;
  request.out_dir = !resume_checkpoint_.isEmpty()
                        ? QFileInfo(resume_checkpoint_).absolutePath()
                        : QDir(runs_directory_).filePath(QStringLiteral("lm-%1-%2")
                                                             .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")))
                                                             .arg(++run_counter_));
  if (!controller_->startLanguageModel(request)) return false;
  resume_checkpoint_.clear();
  // A new set of curves for this run, in the next colour.
  Curve c;
  c.label = QStringLiteral("%1 · %2").arg(curves_.size() + 1).arg(q(config_.kind == "bigram" ? "bigram" : config_.preset));
  const QColor color = series_color(curves_.size());
  QColor faint = color;
  faint.setAlpha(70);
  c.step = plot_->addGraph();
  c.step->setPen(QPen(faint, 1));
  c.step->setName(c.label + tr(" · step"));
  c.step->removeFromLegend();
  c.train = plot_->addGraph();
  c.train->setPen(QPen(color, 2));
  c.train->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
  c.train->setName(c.label + tr(" · train"));
  c.val = plot_->addGraph();
  c.val->setPen(QPen(color, 2, Qt::DashLine));
  c.val->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, 6));
  c.val->setName(c.label + tr(" · val"));
  curves_ << c;
  progress_->setValue(0);
  run_status_->setText(tr("Preparing…"));
  log(tr("training %1 on %2").arg(c.label, info_.path));
  plot_->replot();
  return true;
}

void LmWindow::onStarted() {
  run_status_->setText(tr("Training…"));
  updateButtons();
}

void LmWindow::onProgress(const QVector<ts::TrainingProgress>& steps) {
  if (curves_.isEmpty() || steps.isEmpty()) return;
  for (const auto& p : steps) curves_.back().step->addData(static_cast<double>(p.step), p.loss);
  const auto& p = steps.back();
  if (p.fraction >= 0) progress_->setValue(static_cast<int>(std::lround(p.fraction * 1000)));
  run_status_->setText(tr("step %1 / %2 · loss %3 · %4 tokens/s%5")
                           .arg(number(p.step), number(config_.max_steps))
                           .arg(p.smoothed_loss, 0, 'f', 3)
                           .arg(number(static_cast<qint64>(p.tokens_per_s)))
                           .arg(p.eta_s >= 0 ? tr(" · %1 left").arg(format_duration(p.eta_s)) : QString()));
  plot_->rescaleAxes();
  updateBaseline();
}

void LmWindow::onValidated(const ts::ValidationResult& v) {
  if (curves_.isEmpty()) return;
  if (v.train_loss >= 0) curves_.back().train->addData(static_cast<double>(v.step), v.train_loss);
  curves_.back().val->addData(static_cast<double>(v.step), v.loss);
  log(tr("step %1: train loss %2, val loss %3%4")
          .arg(v.step)
          .arg(v.train_loss, 0, 'f', 4)
          .arg(v.loss, 0, 'f', 4)
          .arg(v.improved ? tr(" (best)") : QString()));
  plot_->rescaleAxes();
  updateBaseline();
}

void LmWindow::onFinished(const ts::TrainingSummary& s) {
  QString text = tr("%1 at step %2: %3.").arg(q(s.status)).arg(number(s.steps)).arg(q(s.message));
  if (s.validated)
    text += tr(" Last estimate: train %1, val %2 (bigram table %3).")
                .arg(s.last_validation.train_loss, 0, 'f', 3)
                .arg(s.last_validation.loss, 0, 'f', 3)
                .arg(info_.bigram_loss, 0, 'f', 3);
  if (!s.best_checkpoint.empty()) text += tr(" Best checkpoint: %1").arg(q(s.best_checkpoint));
  run_status_->setText(text);
  log(text);
  if (s.status == "finished") progress_->setValue(progress_->maximum());
  statusBar()->showMessage(tr("Training %1.").arg(q(s.status)));
  updateButtons();
  if (close_when_stopped_) {
    close_when_stopped_ = false;
    QMetaObject::invokeMethod(this, &QWidget::close, Qt::QueuedConnection);
  }
}

void LmWindow::onFailed(const QString& message) {
  run_status_->setText(QStringLiteral("⚠ ") + message);
  log(message);
  statusBar()->showMessage(tr("Training could not run."));
  // A run that never started leaves no curves behind.
  if (!curves_.isEmpty() && curves_.back().step->dataCount() == 0 && curves_.back().val->dataCount() == 0) {
    const auto c = curves_.takeLast();
    plot_->removeGraph(c.step);
    plot_->removeGraph(c.train);
    plot_->removeGraph(c.val);
    plot_->replot();
  }
  updateButtons();
  if (close_when_stopped_) {
    close_when_stopped_ = false;
    QMetaObject::invokeMethod(this, &QWidget::close, Qt::QueuedConnection);
  }
}

void LmWindow::chooseResume() {
  const auto path = QFileDialog::getOpenFileName(this, tr("Resume training from"), runs_directory_, tr("Checkpoints (*.ckpt)"));
  if (path.isEmpty()) return;
  resumeFrom(path);
}

void LmWindow::resumeFrom(const QString& checkpoint) {
  // The metadata is read (and the file's hash checked) on a worker thread; the weights load on the
  // training thread when the run starts.
  run_status_->setText(tr("Reading %1…").arg(checkpoint));
  service_->inspectCheckpoint(checkpoint);
}

void LmWindow::showResumable(const LmCheckpointInfo& info) {
  config_ = info.config;
  configToForm();
  resume_checkpoint_ = info.path;
  resume_text_ = info.text_path;
  QString text = tr("The next run continues %1 from step %2 (set Steps beyond it).").arg(QFileInfo(info.path).fileName()).arg(info.step);
  if (info.text_path != info_.path) {
    if (QFileInfo(info.text_path).isFile()) {
      pending_text_ = info.text_path;
      service_->inspectText(info.text_path, config_);  // the checkpoint's own tokenizer is used when training
    } else {
      text += tr(" Its text %1 is gone: open it again.").arg(info.text_path);
    }
  }
  run_status_->setText(text);
  log(text);
  updateEstimate();
  Q_EMIT resumeReady();
}

// ---------------------------------------------------------------- chart

void LmWindow::updateBaseline() {
  const double b = baseline();
  const bool show = std::isfinite(b);
  baseline_line_->setVisible(show);
  baseline_text_->setVisible(show);
  if (show) {
    baseline_line_->point1->setCoords(0, b);
    baseline_line_->point2->setCoords(1, b);
    baseline_text_->position->setCoords(0.01, b);
    baseline_text_->setText(tr("bigram table %1").arg(b, 0, 'f', 3));
    auto range = plot_->yAxis->range();
    if (plot_->graphCount() == 0 || !std::any_of(curves_.begin(), curves_.end(), [](const Curve& c) { return c.step->dataCount() > 0; }))
      range = QCPRange(b * 0.8, info_.uniform_loss * 1.05);
    range.expand(b * 0.95);
    range.expand(b * 1.05);
    plot_->yAxis->setRange(range);
    if (plot_->xAxis->range().upper <= 1) plot_->xAxis->setRange(0, std::max<double>(1, config_.max_steps));
  }
  plot_->replot();
}

double LmWindow::baseline() const { return hasText() ? info_.bigram_loss : std::numeric_limits<double>::quiet_NaN(); }

void LmWindow::clearChart() {
  const int keep = controller_->isRunning() ? 1 : 0;
  while (curves_.size() > keep) {
    const auto c = curves_.takeFirst();
    plot_->removeGraph(c.step);
    plot_->removeGraph(c.train);
    plot_->removeGraph(c.val);
  }
  plot_->rescaleAxes();
  updateBaseline();
}

QString LmWindow::curveLabel(int run) const { return run >= 0 && run < curves_.size() ? curves_[run].label : QString(); }

QVector<QPointF> LmWindow::curvePoints(int run, const QString& series) const {
  QVector<QPointF> points;
  if (run < 0 || run >= curves_.size()) return points;
  const auto& c = curves_[run];
  QCPGraph* g = series == QLatin1String("step") ? c.step : series == QLatin1String("train") ? c.train : c.val;
  for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) points << QPointF(it->key, it->value);
  return points;
}

// ---------------------------------------------------------------- generation

void LmWindow::chooseCheckpoint() {
  const auto path = QFileDialog::getOpenFileName(this, tr("Open language-model checkpoint"), runs_directory_, tr("Checkpoints (*.ckpt)"));
  if (!path.isEmpty()) openCheckpoint(path);
}

void LmWindow::chooseModelFolder() {
  const auto dir = QFileDialog::getExistingDirectory(this, tr("Open an exported language-model folder"), runs_directory_);
  if (!dir.isEmpty()) openCheckpoint(dir);
}

void LmWindow::chooseExport() {
  const auto checkpoint = QFileDialog::getOpenFileName(this, tr("Export which language-model checkpoint?"), runs_directory_,
                                                       tr("Checkpoints (*.ckpt)"));
  if (checkpoint.isEmpty()) return;
  const auto folder = QFileDialog::getExistingDirectory(
      this, tr("Export %1 into an empty folder").arg(QFileInfo(checkpoint).fileName()), QFileInfo(checkpoint).absolutePath());
  if (!folder.isEmpty()) exportModel(checkpoint, folder);
}

void LmWindow::exportModel(const QString& checkpoint, const QString& folder) {
  statusBar()->showMessage(tr("Exporting %1…").arg(QFileInfo(checkpoint).fileName()));
  service_->exportModel(checkpoint, folder);
}

void LmWindow::openCheckpoint(const QString& path) {
  generation_status_->setText(tr("Loading %1…").arg(path));
  service_->loadCheckpoint(path);
}

void LmWindow::generate() {
  if (service_->isGenerating()) return;
  if (controller_->isRunning() && controller_->state() != TrainingController::State::Preparing) {
    // Generate from the weights as they are now, not from the last snapshot.
    generate_on_snapshot_ = true;
    generation_status_->setText(tr("Taking the latest weights…"));
    controller_->requestSnapshot();
    return;
  }
  startGeneration();
}

void LmWindow::startGeneration() {
  LmGenerateRequest r;
  r.prompt = prompt_->text();
  r.length = length_->value();
  r.temperature = temperature_->value();
  r.top_k = top_k_->value();
  r.top_p = top_p_->value();
  r.seed = static_cast<quint64>(seed_->value());
  output_->clear();
  QTextCharFormat bold;
  bold.setFontWeight(QFont::Bold);
  QTextCursor cursor(output_->document());
  cursor.insertText(r.prompt, bold);
  generation_status_->setText(tr("Generating with %1…").arg(service_->model().label));
  tabs_->setCurrentIndex(0);
  service_->generate(r);
}

void LmWindow::onGenerationFinished(const LmGeneration& g) {
  const double rate = g.seconds > 0 ? static_cast<double>(g.tokens) / g.seconds : 0;
  generation_status_->setText((g.stopped ? tr("Stopped after %1 tokens (%2 s, %3 tokens/s) · %4")
                                         : tr("%1 tokens in %2 s (%3 tokens/s) · %4"))
                                  .arg(number(g.tokens))
                                  .arg(g.seconds, 0, 'f', 2)
                                  .arg(rate, 0, 'f', 0)
                                  .arg(g.model));
  attention_ = g.attention;
  const QSignalBlocker block_layer(layer_), block_head(head_);
  layer_->clear();
  head_->clear();
  for (int l = 0; l < attention_.layers(); ++l) layer_->addItem(tr("layer %1").arg(l + 1));
  for (int h = 0; h < attention_.heads(); ++h) head_->addItem(tr("head %1").arg(h + 1));
  if (attention_.heads() > 1) head_->addItem(tr("mean of heads"));
  showAttention();
  updateButtons();
  Q_EMIT generationDone();
}

void LmWindow::showAttention() {
  if (attention_.layers() == 0) {
    const bool bigram = service_->hasModel() && service_->modelConfig().kind == "bigram";
    heatmap_->clear(bigram ? tr("The bigram model has no attention: each token's next-token scores are one row of its table.")
                           : tr("No attention recorded (the generation was stopped, or none ran yet)."));
    attention_info_->clear();
    return;
  }
  const int layer = std::max(0, layer_->currentIndex());
  const int head = std::max(0, head_->currentIndex());
  const auto& heads = attention_.weights[layer];
  QVector<QVector<double>> values;
  if (head < heads.size()) {
    values = heads[head];
  } else {  // mean of heads
    values = heads[0];
    for (int h = 1; h < heads.size(); ++h)
      for (int r = 0; r < values.size(); ++r)
        for (int c = 0; c < values[r].size(); ++c) values[r][c] += heads[h][r][c];
    for (auto& row : values)
      for (auto& v : row) v /= heads.size();
  }
  heatmap_->setMatrix(attention_.tokens, attention_.tokens, values);
  attention_info_->setText(tr("Causal self-attention over the last %1 tokens of prompt and generated text (the context "
                              "is at most %2). Row: the position reading; column: an earlier position it attends to. "
                              "The output at a row predicts the token after it.")
                               .arg(attention_.tokens.size())
                               .arg(service_->modelConfig().block_size));
}

QString LmWindow::outputText() const { return output_->toPlainText(); }

bool LmWindow::saveScreenshots(const QString& directory, QString* error) {
  QDir().mkpath(directory);
  const int current = tabs_->currentIndex();
  for (const auto& [tab, name] : {std::pair{0, QStringLiteral("lm-generate")}, std::pair{1, QStringLiteral("lm-attention")}}) {
    tabs_->setCurrentIndex(tab);
    QEventLoop loop;  // let the layout and the plots settle before the grab
    QTimer::singleShot(400, &loop, &QEventLoop::quit);
    loop.exec();
    const QString path = QDir(directory).filePath(name + QStringLiteral(".png"));
    if (!grab().save(path)) {
      if (error) *error = tr("%1: could not be written").arg(path);
      return false;
    }
  }
  tabs_->setCurrentIndex(current);
  return true;
}

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
  generate_->setEnabled(!generating && (service_->hasModel() || running));
  stop_generation_->setEnabled(generating);
  preset_->setEnabled(!running);
  for (auto* e : editors_) e->setEnabled(!running);
}

void LmWindow::log(const QString& line) {
  log_->appendPlainText(QStringLiteral("%1  %2").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")), line));
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
