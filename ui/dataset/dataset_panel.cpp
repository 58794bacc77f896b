// SPDX-License-Identifier: GPL-3.0-or-later
// The Dataset panel's frame: construction and layout, following StudioState (corpus loading,
// loaded or failed, direction and configuration changes), the preview's tokenizers, and the status
// line. Its boxes are built and filled in dataset_panel_corpus.cpp, dataset_panel_tokenizers.cpp,
// pair_preview.cpp and dataset_panel_statistics.cpp.
#include "dataset/dataset_panel.h"
#include "widgets/widget_lifetime.h"

#include <utility>

#include <QColor>
#include <QFileInfo>
#include <QFont>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QScrollArea>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>

#include "dataset/dataset_analysis.h"
#include "dataset/length_histogram.h"
#include "dataset/pair_preview.h"
#include "dataset/side_tokenizer.h"
#include "shell/studio_state.h"

namespace ts::ui {

using dataset::build_tokenizer;
using dataset::side_tokenizer;
using dataset::SideTokenizer;

DatasetPanel::DatasetPanel(StudioState* state, QWidget* parent) : QWidget(parent), state_(state) {
  model_ = new DatasetPreviewModel(this);
  analysis_timer_ = new QTimer(this);
  analysis_timer_->setSingleShot(true);
  analysis_timer_->setInterval(0);
  connect(analysis_timer_, &QTimer::timeout, this, &DatasetPanel::startAnalysis);

  buildUi();

  connect(state_, &StudioState::corpusLoading, this, &DatasetPanel::onCorpusLoading);
  connect(state_, &StudioState::corpusChanged, this, &DatasetPanel::onCorpusChanged);
  connect(state_, &StudioState::corpusFailed, this, &DatasetPanel::onCorpusFailed);
  connect(state_, &StudioState::directionChanged, this, &DatasetPanel::onDirectionChanged);
  connect(state_, &StudioState::configChanged, this, &DatasetPanel::onConfigChanged);

  loading_ = state_->isLoading();
  showCorpusInfo();
  showDirection();
  showConfigValues();
  showSplit();
  rebuildPreview();
  scheduleAnalysis();
  updateStatus();
}

DatasetPanel::~DatasetPanel() {
  disconnect_children(this);  // the split boxes' editingFinished, sent as ~QWidget moves the focus
  // The statistics job checks for cancellation every 1% of the corpus, so this wait is short; the
  // jobs only touch their own copies, but none should outlive the panel that started it (the
  // search waits in ~PairPreview).
  if (analysis_) {
    analysis_->cancel();
    analysis_->waitForFinished();
  }
}

void DatasetPanel::buildUi() {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  auto* scroll = new QScrollArea(this);
  scroll->setObjectName(QStringLiteral("datasetScroll"));
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  outer->addWidget(scroll);
  auto* content = new QWidget(scroll);
  scroll->setWidget(content);
  auto* layout = new QVBoxLayout(content);

  // Status: reading the file, computing statistics.
  auto* status_row = new QHBoxLayout;
  status_ = new QLabel(content);
  status_->setObjectName(QStringLiteral("datasetStatus"));
  progress_ = new QProgressBar(content);
  progress_->setObjectName(QStringLiteral("datasetProgress"));
  progress_->setMaximumWidth(180);
  progress_->setTextVisible(false);
  status_row->addWidget(status_, 1);
  status_row->addWidget(progress_);
  layout->addLayout(status_row);

  error_ = new QLabel(content);
  error_->setObjectName(QStringLiteral("datasetError"));
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->setFrameShape(QFrame::StyledPanel);
  error_->setMargin(6);
  error_->hide();
  layout->addWidget(error_);

  layout->addWidget(buildCorpusBox(content));
  layout->addWidget(buildTokenizerBox(content));

  // Preview and histograms share a splitter so either can be given the room.
  auto* splitter = new QSplitter(Qt::Vertical, content);
  splitter->setObjectName(QStringLiteral("datasetSplitter"));
  splitter->setChildrenCollapsible(false);
  preview_ = new PairPreview(state_, model_, splitter);

  auto* lengths = new QGroupBox(tr("Sentence lengths"), splitter);
  auto* plots = new QHBoxLayout(lengths);
  const QFont title_font(font().family(), font().pointSize());
  const QColor title_color = palette().color(QPalette::WindowText);
  src_plot_ = new LengthHistogram(QStringLiteral("datasetSourceHistogram"), 0, title_font, title_color, lengths);
  plots->addWidget(src_plot_, 1);
  tgt_plot_ = new LengthHistogram(QStringLiteral("datasetTargetHistogram"), 1, title_font, title_color, lengths);
  plots->addWidget(tgt_plot_, 1);
  splitter->addWidget(preview_);
  splitter->addWidget(lengths);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  layout->addWidget(splitter, 1);
}

// ------------------------------------------------------------------ state changes

void DatasetPanel::onCorpusLoading(const QString& path) {
  loading_ = true;
  error_->hide();
  status_->setText(tr("Reading %1…").arg(QFileInfo(path).fileName()));
  updateStatus();
}

void DatasetPanel::onCorpusChanged() {
  loading_ = state_->isLoading();
  error_->hide();
  preview_->clearSearch();
  showCorpusInfo();
  showDirection();
  showConfigValues();  // the side labels name the new languages
  showSplit();
  rebuildPreview();
  clearAnalysis();
  scheduleAnalysis();
  updateStatus();
}

void DatasetPanel::onCorpusFailed(const QString& path, const QString& message) {
  loading_ = state_->isLoading();
  const QString text = message.contains(path) || message.contains(QFileInfo(path).fileName())
                           ? message
                           : QStringLiteral("%1: %2").arg(path, message);
  error_->setText(tr("<b>Could not open %1</b><br>%2<br>The corpus shown below is still in use.")
                      .arg(QFileInfo(path).fileName().toHtmlEscaped(), text.toHtmlEscaped()));
  error_->show();
  updateStatus();
}

void DatasetPanel::onDirectionChanged() {
  showDirection();
  showConfigValues();  // the side labels name the languages
  rebuildPreview();
  scheduleAnalysis();
}

void DatasetPanel::onConfigChanged() {
  showConfigValues();
  showSplit();
  rebuildPreview();
  scheduleAnalysis();
}

// ------------------------------------------------------------------ preview and status

void DatasetPanel::rebuildPreview() {
  const auto corpus = state_->corpus();
  const bool ens = state_->direction().english_is_source;
  const DataConfig& data = state_->config().data;
  const SideTokenizer src = side_tokenizer(data, true, ens ? corpus->english : corpus->other);
  const SideTokenizer tgt = side_tokenizer(data, false, ens ? corpus->other : corpus->english);
  QString src_problem, tgt_problem;
  auto src_tok = build_tokenizer(src.config, &src_problem);
  auto tgt_tok = build_tokenizer(tgt.config, &tgt_problem);
  preview_->setCorpus(corpus, ens, std::move(src_tok), std::move(tgt_tok));  // also says how many pairs it shows
  // E.g. Chinese conversion (t2s) in a build without OpenCC: shown here, before training refuses it.
  for (const QString& problem : {src_problem, tgt_problem}) {
    if (problem.isEmpty() || tokenizer_note_->text().contains(problem)) continue;
    tokenizer_note_->setText(tokenizer_note_->text().isEmpty() ? problem
                                                               : tokenizer_note_->text() + QLatin1Char('\n') + problem);
    tokenizer_note_->show();
  }
}

void DatasetPanel::updateStatus() {
  if (loading_) {
    progress_->setRange(0, 0);  // the reader reports no progress: a busy indicator
    progress_->show();
    status_->show();
    return;
  }
  if (isAnalysing()) {
    status_->setText(tr("Counting tokens and building vocabularies…"));
    progress_->setRange(0, 100);
    if (!analysis_) progress_->setValue(0);
    progress_->show();
    status_->show();
    return;
  }
  progress_->hide();
  status_->hide();
}

}  // namespace ts::ui
