// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe_panel.h"
#include "widget_lifetime.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSlider>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyle>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <qcustomplot.h>

#include "attention_heatmap.h"
#include "plot_style.h"
#include "studio_state.h"
#include "training_controller.h"
#include "ts/store/run_store.h"
#include "ts/train/data.h"

namespace ts::ui {

namespace {

constexpr int kFrameMs = 600;  // replay speed: slow enough to see each alignment

QStringList string_list(const nlohmann::json& j) {
  QStringList out;
  if (!j.is_array()) return out;
  for (const auto& s : j) out << (s.is_string() ? QString::fromStdString(s.get<std::string>()) : QString::fromStdString(s.dump()));
  return out;
}

bool is_cjk(char32_t c) {
  const QChar::Script script = QChar::script(c);
  return script == QChar::Script_Han || script == QChar::Script_Hiragana || script == QChar::Script_Katakana ||
         script == QChar::Script_Hangul;
}

// Length in words; CJK text has no spaces, so its characters count as two thirds of a word each
// (a 6–12 word sentence is then about 9–18 characters).
double word_length(const QString& text) {
  double words = 0;
  for (const QString& chunk : text.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts)) {
    int cjk = 0;
    bool other = false;
    for (char32_t c : chunk.toUcs4()) {
      if (is_cjk(c)) ++cjk;
      else if (QChar::isLetterOrNumber(c)) other = true;
    }
    words += cjk > 0 ? cjk * 2.0 / 3.0 + (other ? 1 : 0) : 1;
  }
  return words;
}

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
  sentence_->setToolTip(tr("Press Enter to apply. The trainer translates this sentence at every validation and "
                           "records its cross-attention, so you can replay how the alignment forms."));
  sentence_label->setBuddy(sentence_);
  pick_ = new QPushButton(tr("Use a dev sentence"), this);
  pick_->setObjectName(QStringLiteral("probePick"));
  pick_->setToolTip(tr("Pick a sentence of 6 to 12 words from the dev split of the current corpus (held out from "
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
  chart_ = new QCustomPlot(splitter);
  chart_->setObjectName(QStringLiteral("probeAlignmentChart"));
  chart_->setMinimumHeight(170);
  chart_->setToolTip(tr("Sharpness: mean over output tokens of their largest attention weight (1 = each looks at "
                        "one input token). Entropy: mean row entropy divided by its maximum (1 = uniform)."));
  style_plot(chart_);
  chart_->setInteractions(QCP::Interactions());  // a summary strip: nothing to drag
  chart_->xAxis->setLabel(tr("step"));
  chart_->yAxis->setRange(0, 1.05);
  chart_->yAxis->setLabel(tr("0 … 1"));
  chart_->legend->setVisible(true);
  QFont legend_font = chart_->legend->font();
  legend_font.setPointSizeF(legend_font.pointSizeF() * 0.85);
  chart_->legend->setFont(legend_font);
  // The legend in a row of its own above the plot, so it never hides the latest points.
  chart_->plotLayout()->insertRow(0);
  chart_->plotLayout()->addElement(0, 0, chart_->legend);
  chart_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  chart_->legend->setBorderPen(Qt::NoPen);
  chart_->plotLayout()->setRowStretchFactor(0, 0.001);
  const QStringList names = {tr("sharpness (mean row max)"), tr("entropy (normalised)")};
  for (int i = 0; i < 2; ++i) {
    auto* g = chart_->addGraph();
    g->setName(names[i]);
    g->setPen(QPen(series_color(i), 2));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
  }
  marker_ = new QCPItemStraightLine(chart_);
  marker_->setPen(QPen(palette().color(QPalette::Highlight), 1.5, Qt::DashLine));
  marker_->setSelectable(false);
  marker_->setVisible(false);
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
  connect(load_watcher_, &QFutureWatcher<LoadResult>::finished, this, [this] {
    const LoadResult r = load_watcher_->result();
    if (!r.error.isEmpty()) {
      empty_->setText(tr("The probe frames of run %1 could not be read: %2").arg(r.run_id).arg(r.error));
      setFrames({}, -1);
      Q_EMIT loadFailed(r.error);
      return;
    }
    empty_->setText(r.frames.isEmpty()
                        ? tr("Run %1 recorded no probe frames: it was trained without a probe sentence (train.probe).")
                              .arg(r.run_id)
                        : empty_text_);
    replay_note_ = r.frames.isEmpty() ? QString()
                   : tr("Replaying run %1: “%2”, %Ln validation(s) from step %3 to %4.", nullptr, r.frames.size())
                         .arg(r.run_id)
                         .arg(r.frames.front().source)
                         .arg(r.frames.front().step)
                         .arg(r.frames.back().step);
    setFrames(r.frames, static_cast<int>(r.frames.size()) - 1);
    updateStatus();
    Q_EMIT runLoaded(r.run_id, static_cast<int>(r.frames.size()));
  });

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

// ---- probe sentence -------------------------------------------------------------------------

void ProbePanel::applyProbe() {
  if (!state_) return;
  const QString text = sentence_->text().trimmed();
  if (text == QString::fromStdString(state_->config().train.probe)) {
    updateStatus();
    return;
  }
  // JSON-quoted so that a sentence such as "42" or "true" stays a string.
  const QString assignment = QStringLiteral("train.probe=") + QString::fromStdString(nlohmann::json(text.toStdString()).dump());
  QString error;
  if (!state_->applySetting(assignment, &error)) {
    status_->setForegroundRole(QPalette::WindowText);
    status_->setText(tr("The probe sentence was not applied: %1").arg(error));
    return;
  }
  updateStatus();
}

void ProbePanel::followConfig() {
  if (!state_) return;
  const QString probe = QString::fromStdString(state_->config().train.probe);
  // Show the value in force, unless the person is typing a new one.
  if (sentence_->text().trimmed() != probe && !(sentence_->hasFocus() && sentence_->isModified())) sentence_->setText(probe);
  updateStatus();
}

void ProbePanel::updateStatus() {
  if (!state_) return;
  status_->setForegroundRole(QPalette::PlaceholderText);
  const auto& train = state_->config().train;
  const QString probe = QString::fromStdString(train.probe);
  const QString when = train.validate_every > 0 ? tr("every validation (every %L1 steps)").arg(train.validate_every)
                                                : tr("every validation (once per epoch)");
  if (!replay_note_.isEmpty() && !running_) {
    status_->setText(replay_note_);
  } else if (running_ && probe != running_probe_) {
    status_->setText(running_probe_.isEmpty()
                         ? tr("Applies from the next training run: the current run captures no probe.")
                         : tr("Applies from the next training run: the current run captures “%1”.").arg(running_probe_));
  } else if (probe.isEmpty()) {
    status_->setText(tr("No probe sentence: training captures no attention. Type one or use a dev sentence."));
  } else {
    status_->setText(running_ ? tr("This run translates the probe at %1 and records its cross-attention.").arg(when)
                              : tr("The next training run will translate it at %1 and record its cross-attention.").arg(when));
  }
}

QString ProbePanel::pickProbeSentence(const Corpus& corpus, const Direction& direction, const DataConfig& data) {
  const auto pairs = oriented_pairs(corpus, direction);
  if (pairs.empty()) return {};
  std::vector<SentencePair> dev;
  try {
    dev = split_corpus(corpus, direction, data).dev;
  } catch (const std::exception&) {
    // A corpus too small to split: any sentence will do.
  }
  const auto& pool = dev.empty() ? pairs : dev;
  // Closest to the 6–12 word range, then closest to 9 words, then first in the split: the same
  // sentence every time for the same corpus and settings.
  std::tuple<double, double, std::size_t> best{std::numeric_limits<double>::max(), 0, 0};
  QString chosen;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    const QString text = QString::fromStdString(pool[i].src).simplified();
    if (text.isEmpty()) continue;
    const double w = word_length(text);
    const double outside = w < 6 ? 6 - w : (w > 12 ? w - 12 : 0);
    const std::tuple<double, double, std::size_t> key{outside, std::abs(w - 9), i};
    if (key < best) {
      best = key;
      chosen = text;
    }
  }
  return chosen;
}

void ProbePanel::pickDevSentence() {
  if (!state_ || !state_->corpus()) {
    status_->setText(tr("Load a corpus first: the sentence is picked from its dev split."));
    return;
  }
  pick_->setEnabled(false);
  auto* watcher = new QFutureWatcher<QString>(this);
  connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher] {
    watcher->deleteLater();
    pick_->setEnabled(true);
    const QString sentence = watcher->result();
    if (sentence.isEmpty()) {
      status_->setText(tr("The corpus has no sentence to pick."));
      return;
    }
    sentence_->setText(sentence);
    applyProbe();
  });
  // Splitting a large corpus takes a moment: off the GUI thread.
  watcher->setFuture(QtConcurrent::run([corpus = state_->corpus(), direction = state_->direction(),
                                        data = state_->config().data] { return pickProbeSentence(*corpus, direction, data); }));
}

// ---- frames ---------------------------------------------------------------------------------

bool ProbePanel::parseFrame(const nlohmann::json& probe, qint64 step, Frame* frame, QString* error) {
  const auto fail = [error](const QString& why) {
    if (error) *error = why;
    return false;
  };
  if (!probe.is_object()) return fail(tr("no probe"));
  const auto it = probe.find("cross");
  if (it == probe.end() || !it->is_array() || it->empty()) return fail(tr("no cross-attention"));
  const auto& cross = *it;
  try {
    Frame f;
    f.step = step;
    f.layers = static_cast<int>(cross.size());
    for (const auto& layer : cross) {
      f.heads = std::max(f.heads, static_cast<int>(layer.size()));
      for (const auto& head : layer) {
        f.rows = std::max(f.rows, static_cast<int>(head.size()));
        for (const auto& row : head) f.columns = std::max(f.columns, static_cast<int>(row.size()));
      }
    }
    if (f.heads == 0 || f.rows == 0 || f.columns == 0) return fail(tr("empty cross-attention"));
    f.cross.assign(static_cast<std::size_t>(f.layers) * f.heads * f.rows * f.columns, 0.0F);
    for (int l = 0; l < f.layers; ++l)
      for (int h = 0; h < static_cast<int>(cross[l].size()); ++h)
        for (int r = 0; r < static_cast<int>(cross[l][h].size()); ++r) {
          const auto& row = cross[l][h][r];
          for (int c = 0; c < static_cast<int>(row.size()); ++c)
            f.cross[((static_cast<std::size_t>(l) * f.heads + h) * f.rows + r) * f.columns + c] = row[c].get<float>();
        }
    f.source = QString::fromStdString(probe.value("source", std::string()));
    f.text = QString::fromStdString(probe.value("text", std::string()));
    f.source_tokens = string_list(probe.value("source_tokens", nlohmann::json()));
    f.target_tokens = string_list(probe.value("target_tokens", nlohmann::json()));
    f.probe = probe;
    *frame = std::move(f);
    return true;
  } catch (const std::exception& e) {
    return fail(tr("malformed cross-attention: %1").arg(QString::fromUtf8(e.what())));
  }
}

QVector<QVector<double>> ProbePanel::matrix(const Frame& f, int layer, int head) {
  QVector<QVector<double>> m;
  if (layer < 0 || layer >= f.layers || head < -1 || head >= f.heads) return m;
  m.resize(f.rows);
  for (int r = 0; r < f.rows; ++r) {
    m[r].resize(f.columns);
    for (int c = 0; c < f.columns; ++c) {
      if (head >= 0) {
        m[r][c] = f.weight(layer, head, r, c);
      } else {
        double sum = 0;
        for (int h = 0; h < f.heads; ++h) sum += f.weight(layer, h, r, c);
        m[r][c] = sum / f.heads;
      }
    }
  }
  return m;
}

double ProbePanel::sharpness(const QVector<QVector<double>>& m) {
  double total = 0;
  int rows = 0;
  for (const auto& row : m) {
    if (row.isEmpty()) continue;
    total += *std::max_element(row.cbegin(), row.cend());
    ++rows;
  }
  return rows ? total / rows : 0;
}

double ProbePanel::normalizedEntropy(const QVector<QVector<double>>& m) {
  double total = 0;
  int rows = 0;
  for (const auto& row : m) {
    if (row.size() < 2) continue;
    double sum = 0;
    for (double w : row) sum += std::max(0.0, w);
    if (sum <= 0) continue;
    double h = 0;
    for (double w : row) {
      const double p = std::max(0.0, w) / sum;  // rows sum to 1 up to the stored rounding
      if (p > 0) h -= p * std::log(p);
    }
    total += h / std::log(static_cast<double>(row.size()));
    ++rows;
  }
  return rows ? total / rows : 0;
}

void ProbePanel::addValidation(const ts::ValidationResult& result) {
  Frame f;
  if (!parseFrame(result.probe, result.step, &f)) return;  // validations without a probe carry nothing to show
  QVector<Frame> frames = frames_;
  const int current = currentFrame();
  const bool follow = frames.isEmpty() || current == frames.size() - 1;  // watching live: move on
  const qint64 current_step = current >= 0 ? frames[current].step : -1;
  auto it = std::lower_bound(frames.begin(), frames.end(), f.step, [](const Frame& a, qint64 s) { return a.step < s; });
  if (it != frames.end() && it->step == f.step) *it = std::move(f);  // a resumed run validating again
  else frames.insert(it, std::move(f));
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

double ProbePanel::markerStep() const { return marker_->point1->key(); }

void ProbePanel::showFrame() {
  const int i = currentFrame();
  if (i < 0) {
    step_->clear();
    heatmap_->clear(tr("No frame captured yet."));
    marker_->setVisible(false);
    chart_->replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  const Frame& f = frames_[i];
  step_->setText(tr("step %L1 — %2").arg(f.step).arg(f.text.isEmpty() ? tr("(empty translation)") : f.text));
  step_->setToolTip(tr("Validation %1 of %2 · probe: %3").arg(i + 1).arg(frames_.size()).arg(f.source));
  const auto m = matrix(f, layer(), head());
  if (m.isEmpty()) heatmap_->clear(tr("Layer %1 was not recorded at step %L2.").arg(layer() + 1).arg(f.step));
  else heatmap_->setMatrix(f.target_tokens, f.source_tokens, m);
  marker_->point1->setCoords(static_cast<double>(f.step), 0);
  marker_->point2->setCoords(static_cast<double>(f.step), 1);
  marker_->setVisible(true);
  chart_->replot(QCustomPlot::rpQueuedReplot);
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
  chart_->graph(0)->setData(steps, sharp, /*alreadySorted=*/true);
  chart_->graph(1)->setData(steps, entropy, /*alreadySorted=*/true);
  if (steps.isEmpty()) {
    chart_->xAxis->setRange(0, 1);
  } else {
    const double lo = steps.first(), hi = steps.last();
    const double pad = std::max(1.0, (hi - lo) * 0.04);
    chart_->xAxis->setRange(lo - pad, hi + pad);
  }
  chart_->yAxis->setRange(0, 1.05);
  chart_->replot(QCustomPlot::rpQueuedReplot);
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
  if (isPlaying()) pause();
  else play();
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

// ---- history and export ---------------------------------------------------------------------

void ProbePanel::loadRun(const QString& db_path, qint64 run_id) {
  pause();
  empty_->setText(tr("Reading the probe frames of run %1…").arg(run_id));
  load_watcher_->setFuture(QtConcurrent::run([db_path, run_id] {
    LoadResult r;
    r.run_id = run_id;
    if (!QFileInfo::exists(db_path)) {  // opening would create an empty database there
      r.error = tr("the run history %1 does not exist").arg(db_path);
      return r;
    }
    try {
      RunStore store(QFile::encodeName(db_path).toStdString());
      for (const auto& row : store.probes(run_id)) {
        Frame f;
        if (parseFrame(row.probe, row.step, &f)) r.frames.push_back(std::move(f));
      }
      std::stable_sort(r.frames.begin(), r.frames.end(), [](const Frame& a, const Frame& b) { return a.step < b.step; });
    } catch (const std::exception& e) {
      r.error = QString::fromStdString(e.what());
    }
    return r;
  }));
}

bool ProbePanel::isLoading() const { return load_watcher_->isRunning(); }

nlohmann::json ProbePanel::framesJson(const QVector<Frame>& frames) {
  auto out = nlohmann::json::array();
  for (const auto& f : frames) {
    nlohmann::json j = f.probe.is_object() ? f.probe : nlohmann::json::object();
    j["step"] = f.step;
    out.push_back(std::move(j));
  }
  return {{"frames", std::move(out)}};
}

bool ProbePanel::writeFrames(const QVector<Frame>& frames, const QString& path, QString* error) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  const std::string text = framesJson(frames).dump();
  file.write(text.data(), static_cast<qint64>(text.size()));
  file.write("\n");
  if (!file.commit()) {
    if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

void ProbePanel::exportClicked() {
  if (frames_.isEmpty()) return;
  const QString path = QFileDialog::getSaveFileName(this, tr("Export probe frames"), QStringLiteral("probe-attention.json"),
                                                    tr("JSON (*.json)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportFrames(path, &error)) QMessageBox::warning(this, tr("Export failed"), error);
}

}  // namespace ts::ui
