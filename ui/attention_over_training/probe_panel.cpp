// SPDX-License-Identifier: GPL-3.0-or-later
// ProbePanel: its layout and wiring, the frames it holds (added live from validations, kept in
// step order), the view of the frame shown (heatmap, step line, the chart's series and marker) and
// the replay. The probe sentence is in probe_panel_sentence.cpp, the frame data in
// probe_panel_frames.cpp, loading a past run and the export in probe_panel_io.cpp.
#include "attention_over_training/probe_panel.h"
#include "widgets/widget_lifetime.h"

#include <algorithm>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyle>
#include <QTimer>
#include <QVBoxLayout>

#include "attention_over_training/probe_alignment_chart.h"
#include "widgets/attention_heatmap.h"
#include "shell/studio_state.h"
#include "services/training_controller.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

namespace {

constexpr int kFrameMs = 600;  // replay speed: slow enough to see each alignment

}  // namespace

ProbePanel::ProbePanel(StudioState* state, TrainingController* controller, QWidget* parent)
    : QWidget(parent), state_(state), controller_(controller) {
  qRegisterMetaType<ts::ValidationResult>();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);

  // The probe sentence: what the trainer translates at every validation.
  auto* sentence_row = new QHBoxLayout;
  auto* sentence_label = new QLabel(tr("Probe sentence:"), this);
  sentence_ = new QLineEdit(this);
  sentence_->setObjectName(QStringLiteral("probeSentence"));
  sentence_->setPlaceholderText(tr("A source sentence to translate at every validation (train.probe)"));
  sentence_->setClearButtonEnabled(true);
  sentence_->setToolTip(
      tr("Press Enter to apply. The trainer translates this sentence at every validation and "
         "records its cross-attention, so you can replay how the alignment forms."));
  sentence_label->setBuddy(sentence_);
  pick_ = new QPushButton(tr("Use a dev sentence"), this);
  pick_->setObjectName(QStringLiteral("probePick"));
  pick_->setToolTip(
      tr("Pick a sentence of 6 to 12 words from the dev split of the current corpus (held out from "
         "training, so the model never sees it while learning)"));
  sentence_row->addWidget(sentence_label);
  sentence_row->addWidget(sentence_, 1);
  sentence_row->addWidget(pick_);
  layout->addLayout(sentence_row);

  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("probeStatus"));
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::PlainText);
  status_->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(status_);

  stack_ = new QStackedWidget(this);
  empty_text_ = tr("Set a probe sentence and train: its attention is captured at every validation.");
  empty_ = new QLabel(empty_text_, this);
  empty_->setObjectName(QStringLiteral("probeEmpty"));
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  empty_->setMargin(16);
  empty_->setForegroundRole(QPalette::PlaceholderText);
  stack_->addWidget(empty_);

  auto* content = new QWidget(this);
  auto* v = new QVBoxLayout(content);
  v->setContentsMargins(0, 0, 0, 0);
  auto* replay = new QHBoxLayout;
  play_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaPlay), tr("Play"), content);
  play_->setObjectName(QStringLiteral("probePlay"));
  play_->setToolTip(tr("Replay the validations one after another"));
  slider_ = new QSlider(Qt::Horizontal, content);
  slider_->setObjectName(QStringLiteral("probeSlider"));
  slider_->setTickPosition(QSlider::TicksBelow);
  slider_->setPageStep(1);
  slider_->setToolTip(tr("Validation to show (arrow keys step through them)"));
  replay->addWidget(play_);
  replay->addWidget(slider_, 1);
  v->addLayout(replay);
  step_ = new QLabel(content);
  step_->setObjectName(QStringLiteral("probeStep"));
  step_->setTextFormat(Qt::PlainText);
  step_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  step_->setWordWrap(true);
  v->addWidget(step_);

  auto* choices = new QHBoxLayout;
  layer_ = new QComboBox(content);
  layer_->setObjectName(QStringLiteral("probeLayer"));
  layer_->setToolTip(tr("Decoder layer whose cross-attention is shown"));
  head_ = new QComboBox(content);
  head_->setObjectName(QStringLiteral("probeHead"));
  head_->setToolTip(tr("Attention head, or the average of all heads of the layer"));
  export_ = new QPushButton(tr("Export frames…"), content);
  export_->setObjectName(QStringLiteral("probeExport"));
  export_->setToolTip(tr("Save every captured frame (tokens and weights of all layers and heads) as JSON"));
  auto* layer_label = new QLabel(tr("Layer:"), content);
  layer_label->setBuddy(layer_);
  auto* head_label = new QLabel(tr("Head:"), content);
  head_label->setBuddy(head_);
  choices->addWidget(layer_label);
  choices->addWidget(layer_);
  choices->addWidget(head_label);
  choices->addWidget(head_);
  choices->addStretch(1);
  choices->addWidget(export_);
  v->addLayout(choices);

  auto* splitter = new QSplitter(Qt::Vertical, content);
  heatmap_ = new AttentionHeatmap(splitter);
  heatmap_->setObjectName(QStringLiteral("probeHeatmap"));
  heatmap_->setAxisTitles(tr("output (translation at this step)"), tr("input (probe sentence)"));
  heatmap_->setMinimumHeight(200);
  chart_ = new ProbeAlignmentChart(splitter);
  splitter->addWidget(heatmap_);
  splitter->addWidget(chart_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);
  splitter->setChildrenCollapsible(false);
  v->addWidget(splitter, 1);
  stack_->addWidget(content);
  layout->addWidget(stack_, 1);

  timer_ = new QTimer(this);
  timer_->setInterval(kFrameMs);
  load_watcher_ = new QFutureWatcher<LoadResult>(this);

  connect(sentence_, &QLineEdit::editingFinished, this, &ProbePanel::applyProbe);
  connect(pick_, &QPushButton::clicked, this, &ProbePanel::pickDevSentence);
  connect(play_, &QPushButton::clicked, this, &ProbePanel::togglePlay);
  connect(timer_, &QTimer::timeout, this, &ProbePanel::advance);
  connect(slider_, &QSlider::valueChanged, this, [this] {
    showFrame();
    Q_EMIT currentFrameChanged(currentFrame());
  });
  connect(layer_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
    showFrame();
    updateChart();
  });
  connect(head_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
    showFrame();
    updateChart();
  });
  connect(export_, &QPushButton::clicked, this, &ProbePanel::exportClicked);
  connect(load_watcher_, &QFutureWatcher<LoadResult>::finished, this, &ProbePanel::onRunLoaded);

  if (state_) connect(state_, &StudioState::configChanged, this, &ProbePanel::followConfig);
  if (controller_) {
    connect(controller_, &TrainingController::validated, this, &ProbePanel::addValidation);
    connect(controller_, &TrainingController::started, this, [this] {
      empty_->setText(empty_text_);
      replay_note_.clear();
      clearFrames();
    });
    connect(controller_, &TrainingController::stateChanged, this, [this](TrainingController::State s) {
      // The run takes the configuration when it starts: later edits apply to the next run.
      if (s == TrainingController::State::Preparing && !running_ && state_)
        running_probe_ = QString::fromStdString(state_->config().train.probe);
      running_ = s != TrainingController::State::Idle;
      updateStatus();
    });
    running_ = controller_->isRunning();
    if (running_ && state_) running_probe_ = QString::fromStdString(state_->config().train.probe);
  }
  followConfig();
  setFrames({}, -1);
}

ProbePanel::~ProbePanel() {
  disconnect_children(this);  // the sentence box's editingFinished, sent as ~QWidget moves the focus
  timer_->stop();
  load_watcher_->waitForFinished();  // the worker only reads the store; this is short
}

// ---- frames and the view of one -------------------------------------------------------------

void ProbePanel::addValidation(const ts::ValidationResult& result) {
  Frame f;
  if (!parseFrame(result.probe, result.step, &f)) return;  // validations without a probe carry nothing to show
  QVector<Frame> frames = frames_;
  const int current = currentFrame();
  const bool follow = frames.isEmpty() || current == frames.size() - 1;  // watching live: move on
  const qint64 current_step = current >= 0 ? frames[current].step : -1;
  auto it = std::lower_bound(frames.begin(), frames.end(), f.step, [](const Frame& a, qint64 s) { return a.step < s; });
  if (it != frames.end() && it->step == f.step)
    *it = std::move(f);  // a resumed run validating again
  else
    frames.insert(it, std::move(f));
  int next = frames.size() - 1;
  if (!follow)
    for (int i = 0; i < frames.size(); ++i)
      if (frames[i].step == current_step) next = i;
  setFrames(std::move(frames), next);
}

void ProbePanel::clearFrames() { setFrames({}, -1); }

void ProbePanel::setFrames(QVector<Frame> frames, int current) {
  frames_ = std::move(frames);
  if (frames_.size() < 2) pause();
  {
    const QSignalBlocker block(slider_);
    slider_->setRange(0, std::max(0, static_cast<int>(frames_.size()) - 1));
    slider_->setValue(std::clamp(current, 0, std::max(0, static_cast<int>(frames_.size()) - 1)));
  }
  stack_->setCurrentIndex(frames_.isEmpty() ? 0 : 1);
  updateCombos();
  updateChart();
  showFrame();
  updateEnabled();
  Q_EMIT framesChanged(frames_.size());
  Q_EMIT currentFrameChanged(currentFrame());
}

void ProbePanel::updateCombos() {
  int layers = 0, heads = 0;
  for (const auto& f : frames_) {
    layers = std::max(layers, f.layers);
    heads = std::max(heads, f.heads);
  }
  const QSignalBlocker block_layer(layer_), block_head(head_);
  if (layer_->count() != layers) {
    const int keep = layer_->currentIndex();
    layer_->clear();
    for (int l = 0; l < layers; ++l) layer_->addItem(tr("Layer %1").arg(l + 1));
    // The last decoder layer by default: its cross-attention usually aligns most clearly.
    layer_->setCurrentIndex(keep >= 0 && keep < layers ? keep : layers - 1);
  }
  if (head_->count() != heads + 1) {
    const int keep = head_->currentIndex();
    head_->clear();
    head_->addItem(tr("Average of heads"));
    for (int h = 0; h < heads; ++h) head_->addItem(tr("Head %1").arg(h + 1));
    head_->setCurrentIndex(keep >= 0 && keep <= heads ? keep : 0);
  }
}

int ProbePanel::currentFrame() const { return frames_.isEmpty() ? -1 : slider_->value(); }

void ProbePanel::setCurrentFrame(int index) {
  if (frames_.isEmpty()) return;
  slider_->setValue(std::clamp(index, 0, static_cast<int>(frames_.size()) - 1));
}

int ProbePanel::layer() const { return layer_->currentIndex(); }

int ProbePanel::head() const { return head_->currentIndex() - 1; }

bool ProbePanel::isPlaying() const { return timer_->isActive(); }

double ProbePanel::markerStep() const { return chart_->markerStep(); }

void ProbePanel::showFrame() {
  const int i = currentFrame();
  if (i < 0) {
    step_->clear();
    heatmap_->clear(tr("No frame captured yet."));
    chart_->hideMarker();
    return;
  }
  const Frame& f = frames_[i];
  // Sentences isolated: an Arabic one keeps its direction and its final stop inside the English line.
  step_->setText(tr("step %L1 — %2").arg(f.step).arg(f.text.isEmpty() ? tr("(empty translation)") : isolated(f.text)));
  step_->setToolTip(tr("Validation %1 of %2 · probe: %3").arg(i + 1).arg(frames_.size()).arg(isolated(f.source)));
  const auto m = matrix(f, layer(), head());
  if (m.isEmpty())
    heatmap_->clear(tr("Layer %1 was not recorded at step %L2.").arg(layer() + 1).arg(f.step));
  else
    heatmap_->setMatrix(f.target_tokens, f.source_tokens, m);
  chart_->showMarker(static_cast<double>(f.step));
}

void ProbePanel::updateChart() {
  QVector<double> steps, sharp, entropy;
  for (const auto& f : frames_) {
    const auto m = matrix(f, layer(), head());
    if (m.isEmpty()) continue;
    steps << static_cast<double>(f.step);
    sharp << sharpness(m);
    entropy << normalizedEntropy(m);
  }
  chart_->setSeries(steps, sharp, entropy);
}

void ProbePanel::updateEnabled() {
  const bool any = !frames_.isEmpty();
  play_->setEnabled(frames_.size() > 1);
  slider_->setEnabled(frames_.size() > 1);
  layer_->setEnabled(any && layer_->count() > 1);
  head_->setEnabled(any);
  export_->setEnabled(any);
}

// ---- replay ---------------------------------------------------------------------------------

void ProbePanel::play() {
  if (frames_.size() < 2) return;
  if (currentFrame() >= frames_.size() - 1) setCurrentFrame(0);  // at the end: replay from the start
  timer_->start();
  play_->setText(tr("Pause"));
  play_->setIcon(style()->standardIcon(QStyle::SP_MediaPause));
}

void ProbePanel::pause() {
  timer_->stop();
  play_->setText(tr("Play"));
  play_->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
}

void ProbePanel::togglePlay() {
  if (isPlaying())
    pause();
  else
    play();
}

void ProbePanel::advance() {
  const int i = currentFrame();
  if (i < 0 || i >= frames_.size() - 1) {
    pause();
    return;
  }
  setCurrentFrame(i + 1);
  if (i + 1 >= frames_.size() - 1) pause();
}

}  // namespace ts::ui
