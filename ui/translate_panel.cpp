// SPDX-License-Identifier: GPL-3.0-or-later
#include "translate_panel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include "attention_heatmap.h"
#include "studio_state.h"
#include "training_controller.h"

namespace ts::ui {

namespace {

// How long to wait for a requested training snapshot before translating with the model at hand
// (a snapshot comes after the current step; a large model's step can take a few seconds).
constexpr int kSnapshotTimeoutMs = 15000;

QString no_model_text() {
  return TranslatePanel::tr("No model yet: train one (Training panel) or load a checkpoint");
}

QString format_parameters(qint64 n) {
  if (n >= 1000000) return TranslatePanel::tr("%1 M parameters").arg(n / 1e6, 0, 'f', 2);
  if (n >= 1000) return TranslatePanel::tr("%1 k parameters").arg(n / 1e3, 0, 'f', 1);
  return TranslatePanel::tr("%1 parameters").arg(n);
}

QString format_ms(double ms) { return ms < 10 ? QString::number(ms, 'f', 1) : QString::number(qRound64(ms)); }

// Signed numbers with a real minus sign, as in the rest of the app's figures.
QString format_signed(double v, int decimals) {
  QString s = QString::number(v, 'f', decimals);
  if (s.startsWith(QLatin1Char('-'))) s.replace(0, 1, QChar(0x2212));
  return s;
}

// A red that reads on light and dark windows.
QColor error_color(const QPalette& pal) {
  return pal.color(QPalette::Window).lightness() < 128 ? QColor(255, 110, 110) : QColor(200, 30, 30);
}

bool same_decode(const DecodeConfig& a, const DecodeConfig& b) {
  return a.mode == b.mode && a.beam == b.beam && a.length_penalty == b.length_penalty && a.nbest == b.nbest &&
         a.temperature == b.temperature && a.top_k == b.top_k && a.top_p == b.top_p && a.seed == b.seed &&
         a.max_len_a == b.max_len_a && a.max_len_b == b.max_len_b && a.weights == b.weights;
}

QStringList json_strings(const nlohmann::json& j) {
  QStringList out;
  if (!j.is_array()) return out;
  for (const auto& s : j)
    if (s.is_string()) out << QString::fromStdString(s.get<std::string>());
  return out;
}

}  // namespace

TranslatePanel::TranslatePanel(StudioState* state, TranslationService* service, TrainingController* controller, QWidget* parent)
    : QWidget(parent), state_(state), service_(service), controller_(controller) {
  auto* content = new QWidget;
  auto* layout = new QVBoxLayout(content);
  layout->addWidget(buildModelBox());

  // Input row: language hint, the sentence, the button.
  auto* input_row = new QHBoxLayout;
  direction_ = new QLabel(this);
  direction_->setObjectName(QStringLiteral("translateDirection"));
  direction_->setToolTip(tr("Source → target language of the model that translates"));
  input_ = new QLineEdit(this);
  input_->setObjectName(QStringLiteral("translateInput"));
  input_->setClearButtonEnabled(true);
  QFont input_font = input_->font();
  input_font.setPointSizeF(input_font.pointSizeF() * 1.2);
  input_->setFont(input_font);
  translate_ = new QPushButton(tr("Translate"), this);
  translate_->setObjectName(QStringLiteral("translateButton"));
  input_row->addWidget(direction_);
  input_row->addWidget(input_, 1);
  input_row->addWidget(translate_);
  layout->addLayout(input_row);
  layout->addWidget(buildOptionsBox());

  splitter_ = new QSplitter(Qt::Vertical, this);
  splitter_->setObjectName(QStringLiteral("translateSplitter"));
  splitter_->setChildrenCollapsible(false);
  output_box_ = buildOutputBox();
  splitter_->addWidget(output_box_);
  splitter_->addWidget(buildAttentionBox());
  splitter_->setStretchFactor(0, 0);  // the output keeps its height, the heatmap takes the rest
  splitter_->setStretchFactor(1, 1);
  connect(splitter_, &QSplitter::splitterMoved, this, [this] { splitter_moved_ = true; });
  layout->addWidget(splitter_, 1);

  // Tall content scrolls instead of squeezing the heatmap when the dock is small.
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(content);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(scroll);

  snapshot_timeout_ = new QTimer(this);
  snapshot_timeout_->setSingleShot(true);
  snapshot_timeout_->setInterval(kSnapshotTimeoutMs);
  connect(snapshot_timeout_, &QTimer::timeout, this, [this] {
    if (!waiting_for_snapshot_) return;
    waiting_for_snapshot_ = false;
    if (service_->hasModel()) {
      send();
    } else {
      status_->hide();
      showError(tr("The training model did not arrive in %1 s (training may still be preparing its data). "
                   "Try again in a moment.").arg(kSnapshotTimeoutMs / 1000));
    }
  });

  connect(input_, &QLineEdit::returnPressed, this, &TranslatePanel::translate);
  connect(translate_, &QPushButton::clicked, this, &TranslatePanel::translate);

  connect(service_, &TranslationService::loading, this, [this](const QString& path) {
    loading_ = true;
    loading_path_ = path;
    updateModelLine();
    updateEnabled();
  });
  connect(service_, &TranslationService::modelChanged, this, [this](const ModelInfo&) {
    loading_ = false;
    updateModelLine();
    updateDirectionHint();
    updateEnabled();
    if (waiting_for_snapshot_ || waiting_for_load_) {
      waiting_for_snapshot_ = waiting_for_load_ = false;
      snapshot_timeout_->stop();
      send();
    } else if (result_.id != 0 && result_.error.isEmpty() && result_.source == input_->text().trimmed() &&
               !input_->text().trimmed().isEmpty()) {
      // Same sentence, new model: show what this one makes of it (a later step, another checkpoint).
      pending_text_ = result_.source;
      send();
    }
  });
  connect(service_, &TranslationService::loadFailed, this, [this](const QString& path, const QString& message) {
    loading_ = false;
    updateModelLine();
    updateEnabled();
    if (waiting_for_load_) {
      waiting_for_load_ = false;
      status_->hide();
      if (service_->hasModel()) send();  // the model in use stays: translate with it
    }
    showError(tr("Cannot load checkpoint: %1").arg(message.contains(path) ? message : path + QStringLiteral(": ") + message));
  });
  connect(service_, &TranslationService::translated, this, [this](const TranslationResult& r) {
    if (r.id == latest_id_) showResult(r);  // an older request's answer arriving late is dropped
  });

  connect(controller_, &TrainingController::stateChanged, this, [this](TrainingController::State st) {
    updateEnabled();
    if (st == TrainingController::State::Idle) updateModelLine();  // no copy will come now
  });
  connect(controller_, &TrainingController::started, this, [this] { last_validation_step_ = -1; });
  connect(controller_, &TrainingController::validated, this,
          [this](const ts::ValidationResult& v) { last_validation_step_ = v.step; });

  connect(state_, &StudioState::configChanged, this, [this] {
    // Follow the Configuration panel's decoding defaults when they change, not on every edit
    // elsewhere (that would undo the options set here).
    if (!same_decode(state_->config().decode, applied_defaults_)) applyDecodeDefaults(state_->config().decode);
  });
  connect(state_, &StudioState::directionChanged, this, &TranslatePanel::updateDirectionHint);
  connect(state_, &StudioState::corpusChanged, this, &TranslatePanel::updateDirectionHint);

  applyDecodeDefaults(state_->config().decode);
  updateModelLine();
  updateDirectionHint();
  updateEnabled();
}

QWidget* TranslatePanel::buildModelBox() {
  auto* box = new QGroupBox(this);  // no title: the model line says what it is, and height is scarce
  auto* grid = new QGridLayout(box);
  model_ = new QLabel(box);
  model_->setObjectName(QStringLiteral("translateModel"));
  model_->setWordWrap(true);
  model_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  model_->setMinimumWidth(200);
  use_training_ = new QPushButton(tr("Use current training model"), box);
  use_training_->setObjectName(QStringLiteral("translateUseTraining"));
  use_training_->setToolTip(tr("Translate with a copy of the model being trained, at its current step"));
  load_ = new QPushButton(tr("Load checkpoint…"), box);
  load_->setObjectName(QStringLiteral("translateLoadCheckpoint"));
  load_->setToolTip(tr("Translate with a saved checkpoint (*.ckpt), e.g. best.ckpt of a run"));
  follow_training_ = new QCheckBox(tr("Refresh the training model after each validation"), box);
  follow_training_->setObjectName(QStringLiteral("translateFollowTraining"));
  follow_training_->setChecked(true);
  follow_training_->setToolTip(tr("While training, translating first takes a fresh copy of the model when a "
                                  "validation has run since the copy in use was taken"));
  grid->addWidget(model_, 0, 0, 2, 1);
  grid->addWidget(use_training_, 0, 1);
  grid->addWidget(load_, 0, 2);
  grid->addWidget(follow_training_, 1, 1, 1, 2);
  grid->setColumnStretch(0, 1);

  connect(use_training_, &QPushButton::clicked, this, [this] {
    controller_->requestSnapshot();  // the copy arrives through the service's modelChanged
    model_->setText(tr("Taking a copy of the training model…"));
  });
  connect(load_, &QPushButton::clicked, this, [this] {
    QString start = service_->model().checkpoint.isEmpty() ? state_->runsDirectory()
                                                           : QFileInfo(service_->model().checkpoint).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Load checkpoint"), start,
                                                      tr("Checkpoints (*.ckpt);;All files (*)"));
    if (!path.isEmpty()) service_->loadCheckpoint(path);
  });
  return box;
}

QWidget* TranslatePanel::buildOptionsBox() {
  auto* box = new QGroupBox(tr("Decoding"), this);
  mode_ = new QComboBox(box);
  mode_->setObjectName(QStringLiteral("translateMode"));
  mode_->addItem(tr("Greedy"), QStringLiteral("greedy"));
  mode_->addItem(tr("Beam search"), QStringLiteral("beam"));
  mode_->addItem(tr("Sampling"), QStringLiteral("sample"));
  mode_->setItemData(0, tr("The most probable token at each step: fast, one output"), Qt::ToolTipRole);
  mode_->setItemData(1, tr("Keeps the best partial translations at each step: usually better, gives an n-best list"), Qt::ToolTipRole);
  mode_->setItemData(2, tr("Draws tokens at random from the model's distribution: varied outputs"), Qt::ToolTipRole);
  beam_ = new QSpinBox(box);
  beam_->setObjectName(QStringLiteral("translateBeam"));
  beam_->setRange(1, 64);
  beam_->setToolTip(tr("Beam width: partial translations kept at each step"));
  nbest_ = new QSpinBox(box);
  nbest_->setObjectName(QStringLiteral("translateNbest"));
  nbest_->setRange(1, 64);
  nbest_->setToolTip(tr("How many candidates to list (at most the beam width; samples drawn in sampling mode)"));
  length_penalty_ = new QDoubleSpinBox(box);
  length_penalty_->setObjectName(QStringLiteral("translateLengthPenalty"));
  length_penalty_->setRange(0, 5);
  length_penalty_->setSingleStep(0.1);
  length_penalty_->setDecimals(2);
  length_penalty_->setToolTip(tr("GNMT length penalty α: beams are ranked by log-probability / ((5 + length) / 6)^α; "
                                 "0 ranks by raw log-probability, larger values favour longer outputs"));
  temperature_ = new QDoubleSpinBox(box);
  temperature_->setObjectName(QStringLiteral("translateTemperature"));
  temperature_->setRange(0.05, 10);
  temperature_->setSingleStep(0.1);
  temperature_->setDecimals(2);
  temperature_->setToolTip(tr("Below 1 sharpens the distribution (safer), above 1 flattens it (more varied)"));
  top_k_ = new QSpinBox(box);
  top_k_->setObjectName(QStringLiteral("translateTopK"));
  top_k_->setRange(0, 100000);
  top_k_->setSpecialValueText(tr("off"));
  top_k_->setToolTip(tr("Sample only among the k most probable tokens (off = all)"));
  top_p_ = new QDoubleSpinBox(box);
  top_p_->setObjectName(QStringLiteral("translateTopP"));
  top_p_->setRange(0.01, 1);
  top_p_->setSingleStep(0.05);
  top_p_->setDecimals(2);
  top_p_->setToolTip(tr("Nucleus sampling: sample among the most probable tokens whose probabilities add up to p (1 = off)"));
  seed_ = new QSpinBox(box);
  seed_->setObjectName(QStringLiteral("translateSeed"));
  seed_->setRange(0, std::numeric_limits<int>::max());
  seed_->setToolTip(tr("Random seed for sampling: the same seed gives the same samples"));
  weights_ = new QComboBox(box);
  weights_->setObjectName(QStringLiteral("translateWeights"));
  weights_->addItem(tr("bf16"), QStringLiteral("bf16"));
  weights_->addItem(tr("int8"), QStringLiteral("int8"));
  weights_->addItem(tr("fp32"), QStringLiteral("fp32"));
  weights_->addItem(tr("LibTorch"), QStringLiteral("libtorch"));
  weights_->setItemData(0, tr("Weights rounded to bfloat16: half the memory traffic, nearly always the fp32 translation"), Qt::ToolTipRole);
  weights_->setItemData(1, tr("Weights as 8-bit integers with a scale per row: the fastest, occasionally a different word"), Qt::ToolTipRole);
  weights_->setItemData(2, tr("The model's own fp32 weights, packed for decoding one sentence"), Qt::ToolTipRole);
  weights_->setItemData(3, tr("LibTorch's own operations on the model's fp32 weights: the reference, slowest"), Qt::ToolTipRole);
  weights_->setToolTip(tr("How the CPU stores the weights while translating (a GPU always uses the model's own)"));
  auto* defaults = new QPushButton(tr("Defaults"), box);
  defaults->setObjectName(QStringLiteral("translateDefaults"));
  defaults->setToolTip(tr("Back to the decoding settings of the configuration (decode section)"));

  // The mode, then only the options that mode uses (the others are hidden and disabled): one row
  // for greedy and beam search, a second one for sampling's extra knobs, so the panel stays narrow.
  auto* rows = new QVBoxLayout(box);
  auto* first = new QHBoxLayout;
  sample_row_ = new QWidget(box);
  auto* second = new QHBoxLayout(sample_row_);
  second->setContentsMargins(0, 0, 0, 0);
  rows->addLayout(first);
  rows->addWidget(sample_row_);
  const auto add = [&](QHBoxLayout* row, const QString& text, QWidget* w) {
    auto* label = new QLabel(text, box);
    label->setBuddy(w);
    option_labels_.insert(w, label);
    row->addWidget(label);
    row->addWidget(w);
    row->addSpacing(4);
  };
  add(first, tr("&Mode"), mode_);
  add(first, tr("&Beam width"), beam_);
  add(first, tr("&N-best"), nbest_);
  add(first, tr("&Length penalty"), length_penalty_);
  add(first, tr("&Temperature"), temperature_);
  add(first, tr("&Weights"), weights_);
  first->addStretch(1);
  first->addWidget(defaults);
  add(second, tr("Top-&k"), top_k_);
  add(second, tr("Top-&p"), top_p_);
  add(second, tr("&Seed"), seed_);
  second->addStretch(1);

  connect(mode_, qOverload<int>(&QComboBox::currentIndexChanged), this, &TranslatePanel::updateModeOptions);
  connect(beam_, qOverload<int>(&QSpinBox::valueChanged), this, &TranslatePanel::updateModeOptions);
  connect(defaults, &QPushButton::clicked, this, [this] { applyDecodeDefaults(state_->config().decode); });
  return box;
}

QWidget* TranslatePanel::buildOutputBox() {
  auto* box = new QGroupBox(tr("Translation"), this);
  auto* v = new QVBoxLayout(box);
  status_ = new QLabel(box);
  status_->setObjectName(QStringLiteral("translateStatus"));
  status_->setForegroundRole(QPalette::PlaceholderText);
  status_->hide();
  output_ = new QLabel(box);
  output_->setObjectName(QStringLiteral("translateOutput"));
  output_->setWordWrap(true);
  output_->setTextFormat(Qt::PlainText);
  output_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  QFont big = output_->font();
  big.setPointSizeF(big.pointSizeF() * 1.7);
  output_->setFont(big);
  score_ = new QLabel(box);
  score_->setObjectName(QStringLiteral("translateScore"));
  score_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  score_->setToolTip(tr("Score: the log-probability normalised by the length penalty (what beam search ranks by). "
                        "Log-probability: the sum over output tokens; p is its exponential."));
  latency_ = new QLabel(box);
  latency_->setObjectName(QStringLiteral("translateLatency"));
  latency_->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  error_ = new QLabel(box);
  error_->setObjectName(QStringLiteral("translateError"));
  error_->setWordWrap(true);
  error_->setTextFormat(Qt::PlainText);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->hide();

  tokens_ = new QTableWidget(2, 0, box);
  tokens_->setObjectName(QStringLiteral("translateTokens"));
  tokens_->setVerticalHeaderLabels({tr("token"), tr("p")});
  tokens_->horizontalHeader()->hide();
  tokens_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  tokens_->setSelectionMode(QAbstractItemView::NoSelection);
  tokens_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  tokens_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  tokens_->setToolTip(tr("Each output token with the probability the model gave it"));
  tokens_->setFixedHeight(2 * tokens_->verticalHeader()->defaultSectionSize() +
                          tokens_->horizontalScrollBar()->sizeHint().height() + 2 * tokens_->frameWidth() + 2);

  nbest_table_ = new QTableWidget(0, 4, box);
  nbest_table_->setObjectName(QStringLiteral("translateNbestTable"));
  nbest_table_->setHorizontalHeaderLabels({tr("#"), tr("Candidate"), tr("Score"), tr("Log-prob")});
  nbest_table_->verticalHeader()->hide();
  nbest_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  nbest_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  nbest_table_->setWordWrap(false);
  nbest_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  nbest_table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  nbest_table_->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
  nbest_table_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  nbest_table_->hide();  // shown when there is more than one candidate
  nbest_table_->setToolTip(tr("The candidates of beam search (or the samples drawn), best first"));

  v->addWidget(status_);
  v->addWidget(output_);
  auto* figures = new QHBoxLayout;
  figures->addWidget(score_);
  figures->addStretch(1);
  figures->addWidget(latency_);
  v->addLayout(figures);
  v->addWidget(error_);
  v->addWidget(tokens_);
  v->addWidget(nbest_table_);
  v->addStretch(1);
  return box;
}

QWidget* TranslatePanel::buildAttentionBox() {
  auto* box = new QGroupBox(tr("Attention: which source tokens each output token looked at"), this);
  auto* v = new QVBoxLayout(box);
  auto* row = new QHBoxLayout;
  layer_ = new QComboBox(box);
  layer_->setObjectName(QStringLiteral("attentionLayer"));
  layer_->setToolTip(tr("Decoder layer whose cross-attention is shown"));
  head_ = new QComboBox(box);
  head_->setObjectName(QStringLiteral("attentionHead"));
  head_->setToolTip(tr("One attention head, or the mean of all heads of the layer"));
  auto* layer_label = new QLabel(tr("La&yer"), box);
  layer_label->setBuddy(layer_);
  auto* head_label = new QLabel(tr("&Head"), box);
  head_label->setBuddy(head_);
  row->addWidget(layer_label);
  row->addWidget(layer_);
  row->addSpacing(12);
  row->addWidget(head_label);
  row->addWidget(head_);
  row->addStretch(1);
  auto* hint = new QLabel(tr("Hover a cell for its weight · wheel zooms · double-click resets"), box);
  hint->setForegroundRole(QPalette::PlaceholderText);
  row->addWidget(hint);
  heatmap_ = new AttentionHeatmap(box);
  heatmap_->setObjectName(QStringLiteral("attentionHeatmap"));
  heatmap_->setMinimumHeight(220);
  heatmap_->clear(tr("Translate a sentence to see its attention."));
  v->addLayout(row);
  v->addWidget(heatmap_, 1);
  connect(layer_, qOverload<int>(&QComboBox::currentIndexChanged), this, &TranslatePanel::showAttention);
  connect(head_, qOverload<int>(&QComboBox::currentIndexChanged), this, &TranslatePanel::showAttention);
  return box;
}

DecodeConfig TranslatePanel::decodeConfig() const {
  DecodeConfig d = state_->config().decode;  // keeps max_len_a/b, which the panel does not show
  d.mode = mode_->currentData().toString().toStdString();
  d.beam = beam_->value();
  d.length_penalty = length_penalty_->value();
  d.nbest = d.mode == "greedy" ? 1 : nbest_->value();
  if (d.mode == "beam") d.nbest = std::min(d.nbest, d.beam);
  d.temperature = temperature_->value();
  d.top_k = top_k_->value();
  d.top_p = top_p_->value();
  d.seed = static_cast<std::uint64_t>(seed_->value());
  d.weights = weights_->currentData().toString().toStdString();
  return d;
}

int TranslatePanel::attentionLayer() const { return layer_->currentIndex(); }
int TranslatePanel::attentionHead() const { return head_->currentIndex() - 1; }

void TranslatePanel::applyDecodeDefaults(const DecodeConfig& d) {
  applied_defaults_ = d;
  const int mode = mode_->findData(QString::fromStdString(d.mode));
  mode_->setCurrentIndex(mode < 0 ? 0 : mode);
  beam_->setValue(d.beam);
  nbest_->setMaximum(64);
  nbest_->setValue(d.nbest);
  length_penalty_->setValue(d.length_penalty);
  temperature_->setValue(d.temperature);
  top_k_->setValue(d.top_k);
  top_p_->setValue(d.top_p);
  seed_->setValue(static_cast<int>(std::min<std::uint64_t>(d.seed, static_cast<std::uint64_t>(seed_->maximum()))));
  const int weights = weights_->findData(QString::fromStdString(d.weights));
  weights_->setCurrentIndex(weights < 0 ? 0 : weights);
  updateModeOptions();
}

void TranslatePanel::updateModeOptions() {
  const QString mode = mode_->currentData().toString();
  const bool beam = mode == QLatin1String("beam"), sample = mode == QLatin1String("sample");
  beam_->setEnabled(beam);
  length_penalty_->setEnabled(beam);
  nbest_->setEnabled(beam || sample);
  nbest_->setMaximum(beam ? beam_->value() : 64);  // beam search cannot return more than its width
  for (QWidget* w : std::initializer_list<QWidget*>{temperature_, top_k_, top_p_, seed_}) w->setEnabled(sample);
  sample_row_->setVisible(sample);
  for (auto it = option_labels_.cbegin(); it != option_labels_.cend(); ++it) {
    it.key()->setVisible(it.key()->isEnabled());
    it.value()->setVisible(it.key()->isEnabled());
  }
}

void TranslatePanel::updateModelLine() {
  if (loading_) {
    model_->setText(tr("Loading %1…").arg(QFileInfo(loading_path_).fileName().toHtmlEscaped()));
    model_->setToolTip(loading_path_);
    return;
  }
  if (!service_->hasModel()) {
    model_->setText(no_model_text());
    model_->setToolTip(QString());
    return;
  }
  const ModelInfo& m = service_->model();
  QStringList details;
  if (!m.src_language.isEmpty()) details << QStringLiteral("%1 → %2").arg(m.src_language, m.tgt_language);
  details << tr("step %L1").arg(m.step) << format_parameters(m.parameters)
          << tr("%1+%2 layers, %3 heads").arg(m.encoder_layers).arg(m.decoder_layers).arg(m.heads);
  model_->setText(QStringLiteral("<b>%1</b><br>%2").arg(m.label.toHtmlEscaped(), details.join(QStringLiteral(" · ")).toHtmlEscaped()));
  model_->setToolTip(m.checkpoint.isEmpty() ? tr("A copy of the model being trained") : m.checkpoint);
}

void TranslatePanel::updateDirectionHint() {
  QString src, tgt;
  if (service_->hasModel() && !service_->model().src_language.isEmpty()) {
    src = service_->model().src_language;
    tgt = service_->model().tgt_language;
  } else {
    const QString other = state_->corpus() ? QString::fromStdString(state_->corpus()->other.name) : tr("other");
    const bool english_first = state_->direction().english_is_source;
    src = english_first ? tr("English") : other;
    tgt = english_first ? other : tr("English");
  }
  direction_->setText(QStringLiteral("%1 → %2").arg(src, tgt));
  input_->setPlaceholderText(tr("Type a sentence in %1 and press Enter").arg(src));
  heatmap_->setAxisTitles(tr("output (%1)").arg(tgt), tr("input (%1)").arg(src));
}

void TranslatePanel::updateEnabled() {
  const bool has = service_->hasModel(), training = controller_->isRunning();
  translate_->setEnabled(has || training || loading_);
  translate_->setToolTip(has || training || loading_ ? tr("Translate the sentence (Enter)") : no_model_text());
  input_->setToolTip(has ? QString() : no_model_text());
  use_training_->setEnabled(training);
  use_training_->setToolTip(training ? tr("Translate with a copy of the model being trained, at its current step")
                                     : tr("Available while a model is training"));
  follow_training_->setEnabled(training);
}

bool TranslatePanel::snapshotIsStale() const {
  const ModelInfo& m = service_->model();
  return controller_->isRunning() && m.checkpoint.isEmpty() && last_validation_step_ > m.step;
}

void TranslatePanel::translateText(const QString& text) {
  input_->setText(text);
  translate();
}

void TranslatePanel::translate() {
  const QString text = input_->text().trimmed();
  if (text.isEmpty()) {
    input_->setFocus();
    return;
  }
  pending_text_ = text;
  const bool training = controller_->isRunning();
  if (loading_) {
    // A checkpoint is on its way: translate with it once it is loaded.
    waiting_for_load_ = true;
    error_->hide();
    status_->setText(tr("Loading %1…").arg(QFileInfo(loading_path_).fileName()));
    status_->show();
    return;
  }
  if (!service_->hasModel() && !training) {
    latest_id_ = 0;  // nothing in flight is wanted any more
    result_ = TranslationResult();
    output_->clear();
    score_->clear();
    latency_->clear();
    tokens_->setColumnCount(0);
    nbest_table_->setRowCount(0);
    nbest_table_->hide();
    heatmap_->clear(tr("Translate a sentence to see its attention."));
    showError(no_model_text() + QLatin1Char('.'));
    fitOutput();
    return;
  }
  if (training && (!service_->hasModel() || (follow_training_->isChecked() && snapshotIsStale()))) {
    // Take a fresh copy of the training model first; send() runs when it arrives.
    waiting_for_snapshot_ = true;
    controller_->requestSnapshot();
    snapshot_timeout_->start();
    error_->hide();
    status_->setText(tr("Taking a copy of the training model…"));
    status_->show();
    return;
  }
  send();
}

void TranslatePanel::send() {
  if (pending_text_.isEmpty()) return;
  error_->hide();
  latest_id_ = service_->translate(pending_text_, decodeConfig(), true);
  status_->setText(tr("Translating…"));
  status_->show();
}

void TranslatePanel::showError(const QString& message) {
  QPalette pal = error_->palette();
  pal.setColor(QPalette::WindowText, error_color(palette()));
  error_->setPalette(pal);
  error_->setText(message);
  error_->show();
}

void TranslatePanel::showResult(const TranslationResult& r) {
  status_->hide();
  result_ = r;
  if (!r.error.isEmpty()) {
    output_->clear();
    score_->clear();
    latency_->clear();
    tokens_->setColumnCount(0);
    nbest_table_->setRowCount(0);
    nbest_table_->hide();
    heatmap_->clear(tr("No attention: the translation failed."));
    showError(tr("Translation failed: %1").arg(r.error));
    fitOutput();
    return;
  }
  error_->hide();
  output_->setText(r.text.isEmpty() ? tr("(empty translation)") : r.text);
  score_->setText(tr("score %1 · log-probability %2 · p = %3")
                      .arg(format_signed(r.score, 3), format_signed(r.log_prob, 3))
                      .arg(std::exp(r.log_prob), 0, 'g', 3));
  // The service answers in order on one thread, so the model it reported last is the one that
  // translated when the result does not name it.
  const QString model = r.model.isEmpty() ? service_->model().label : r.model;
  latency_->setText(tr("translated in %1 ms by %2").arg(format_ms(r.milliseconds), model));

  // Per-token probabilities: the more certain, the stronger the highlight.
  const QColor highlight = palette().color(QPalette::Highlight);
  tokens_->setColumnCount(r.target_tokens.size());
  for (int i = 0; i < r.target_tokens.size(); ++i) {
    const double lp = i < r.token_log_probs.size() ? r.token_log_probs[i] : 0;
    const double p = std::exp(lp);
    auto* token = new QTableWidgetItem(r.target_tokens[i]);
    auto* prob = new QTableWidgetItem(QString::number(p, 'f', 2));
    QColor bg = highlight;
    bg.setAlphaF(0.12 + 0.5 * p);
    for (auto* item : {token, prob}) {
      item->setTextAlignment(Qt::AlignCenter);
      item->setBackground(bg);
    }
    tokens_->setItem(0, i, token);
    tokens_->setItem(1, i, prob);
  }

  nbest_table_->setRowCount(r.nbest.size());
  for (int i = 0; i < r.nbest.size(); ++i) {
    const auto& c = r.nbest[i];
    auto* rank = new QTableWidgetItem(QString::number(i + 1));
    auto* text = new QTableWidgetItem(c.text);
    auto* score = new QTableWidgetItem(format_signed(c.score, 3));
    auto* lp = new QTableWidgetItem(format_signed(c.log_prob, 3));
    text->setToolTip(c.text);
    for (auto* item : {rank, score, lp}) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    const QList<QTableWidgetItem*> items{rank, text, score, lp};
    for (int col = 0; col < items.size(); ++col) {
      if (i == 0) {
        QFont f = items[col]->font();
        f.setBold(true);
        items[col]->setFont(f);
      }
      nbest_table_->setItem(i, col, items[col]);
    }
  }

  nbest_table_->setVisible(r.nbest.size() > 1);  // one candidate is the translation above
  fitOutput();

  // Layer and head choices follow the model; a choice made for the previous sentence is kept.
  const auto& cross = r.attention.contains("cross") ? r.attention["cross"] : nlohmann::json();
  const int layers = cross.is_array() ? static_cast<int>(cross.size()) : 0;
  const int heads = layers > 0 && cross[0].is_array() ? static_cast<int>(cross[0].size()) : 0;
  const QSignalBlocker block_layer(layer_), block_head(head_);
  if (layer_->count() != layers) {
    layer_->clear();
    for (int l = 0; l < layers; ++l)
      layer_->addItem(l + 1 == layers ? tr("%1 (last)").arg(l + 1) : QString::number(l + 1));
    layer_->setCurrentIndex(layers - 1);
  }
  if (head_->count() != heads + 1) {
    head_->clear();
    if (heads > 0) {
      head_->addItem(tr("Average of heads"));
      for (int h = 0; h < heads; ++h) head_->addItem(tr("Head %1").arg(h + 1));
    }
    head_->setCurrentIndex(0);
  }
  showAttention();
}

// The n-best table takes the height of its rows (AdjustToContents; the header's height is only
// known once styled), up to about eight rows; more scroll.
void TranslatePanel::fitOutput() {
  nbest_table_->setMaximumHeight(8 * nbest_table_->verticalHeader()->defaultSectionSize() +
                                 2 * nbest_table_->horizontalHeader()->sizeHint().height());
  nbest_table_->updateGeometry();
  QTimer::singleShot(0, this, &TranslatePanel::fitSplitter);
}

// QSplitter keeps the sizes it started with; give the output the height it now needs (the heatmap
// the rest) unless the user has placed the handle.
void TranslatePanel::fitSplitter() {
  if (splitter_moved_ || !splitter_->isVisible()) return;
  const auto sizes = splitter_->sizes();
  const int total = sizes.value(0) + sizes.value(1);
  const int rest = splitter_->widget(1)->minimumSizeHint().height();
  const int out = std::max(0, std::min(output_box_->sizeHint().height(), total - rest));
  if (total > 0 && out != sizes.value(0)) splitter_->setSizes({out, total - out});
}

void TranslatePanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  QTimer::singleShot(0, this, &TranslatePanel::fitSplitter);
}

void TranslatePanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  QTimer::singleShot(0, this, &TranslatePanel::fitSplitter);
}

void TranslatePanel::showAttention() {
  const auto& a = result_.attention;
  const int layer = layer_->currentIndex(), head = head_->currentIndex() - 1;
  if (!a.is_object() || !a.contains("cross") || !a["cross"].is_array() || layer < 0 ||
      layer >= static_cast<int>(a["cross"].size())) {
    heatmap_->clear(result_.id == 0 ? tr("Translate a sentence to see its attention.") : tr("No attention was recorded."));
    updateTokenTips();
    return;
  }
  const auto& heads = a["cross"][layer];  // [head][target][source]
  QVector<QVector<double>> matrix;
  const auto add_head = [&](const nlohmann::json& m, double weight) {
    for (std::size_t q = 0; q < m.size(); ++q) {
      if (matrix.size() <= static_cast<int>(q)) matrix.resize(static_cast<int>(q) + 1);
      auto& row = matrix[static_cast<int>(q)];
      if (row.size() < static_cast<int>(m[q].size())) row.resize(static_cast<int>(m[q].size()));
      for (std::size_t k = 0; k < m[q].size(); ++k)  // NaN is stored as null: a diverged model shows 0
        if (m[q][k].is_number()) row[static_cast<int>(k)] += weight * m[q][k].get<double>();
    }
  };
  if (head < 0) {
    for (const auto& m : heads) add_head(m, 1.0 / static_cast<double>(heads.size()));
  } else if (head < static_cast<int>(heads.size())) {
    add_head(heads[head], 1.0);
  }
  QStringList rows = json_strings(a.value("target_tokens", nlohmann::json::array()));
  QStringList columns = json_strings(a.value("source_tokens", nlohmann::json::array()));
  if (rows.isEmpty()) rows = result_.target_tokens;
  if (columns.isEmpty()) columns = result_.source_tokens;
  heatmap_->setMatrix(rows, columns, matrix);
  updateTokenTips();
}

// Each token's tooltip names the source token it attended to most in the map shown.
void TranslatePanel::updateTokenTips() {
  for (int i = 0; i < tokens_->columnCount(); ++i) {
    const double lp = i < result_.token_log_probs.size() ? result_.token_log_probs[i] : 0;
    QString tip = tr("%1\np = %2 (log p = %3)")
                      .arg(result_.target_tokens.value(i))
                      .arg(std::exp(lp), 0, 'f', 4)
                      .arg(format_signed(lp, 3));
    if (i < heatmap_->rowCount() && heatmap_->columnCount() > 0) {
      int best = 0;
      for (int c = 1; c < heatmap_->columnCount(); ++c)
        if (heatmap_->value(i, c) > heatmap_->value(i, best)) best = c;
      tip += tr("\nattended most to “%1” (%2)").arg(heatmap_->columnLabels().value(best)).arg(heatmap_->value(i, best), 0, 'f', 2);
    }
    for (int row = 0; row < 2; ++row)
      if (auto* item = tokens_->item(row, i)) item->setToolTip(tip);
  }
}

}  // namespace ts::ui
