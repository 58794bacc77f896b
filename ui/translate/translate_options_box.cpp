// SPDX-License-Identifier: GPL-3.0-or-later
// The Translate panel's decoding options, and how they map to and from a DecodeConfig.
#include "translate/translate_options_box.h"

#include <algorithm>
#include <limits>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "shell/studio_state.h"

namespace ts::ui {

namespace {

bool same_decode(const DecodeConfig& a, const DecodeConfig& b) {
  return a.mode == b.mode && a.beam == b.beam && a.length_penalty == b.length_penalty && a.nbest == b.nbest &&
         a.temperature == b.temperature && a.top_k == b.top_k && a.top_p == b.top_p && a.seed == b.seed &&
         a.max_len_a == b.max_len_a && a.max_len_b == b.max_len_b && a.weights == b.weights;
}

}  // namespace

TranslateOptionsBox::TranslateOptionsBox(StudioState* state, QWidget* parent)
    : QGroupBox(tr("Decoding"), parent), state_(state) {
  mode_ = new QComboBox(this);
  mode_->setObjectName(QStringLiteral("translateMode"));
  mode_->addItem(tr("Greedy"), QStringLiteral("greedy"));
  mode_->addItem(tr("Beam search"), QStringLiteral("beam"));
  mode_->addItem(tr("Sampling"), QStringLiteral("sample"));
  mode_->setItemData(0, tr("The most probable token at each step: fast, one output"), Qt::ToolTipRole);
  mode_->setItemData(1, tr("Keeps the best partial translations at each step: usually better, gives an n-best list"),
                     Qt::ToolTipRole);
  mode_->setItemData(2, tr("Draws tokens at random from the model's distribution: varied outputs"), Qt::ToolTipRole);
  beam_ = new QSpinBox(this);
  beam_->setObjectName(QStringLiteral("translateBeam"));
  beam_->setRange(1, 64);
  beam_->setToolTip(tr("Beam width: partial translations kept at each step"));
  nbest_ = new QSpinBox(this);
  nbest_->setObjectName(QStringLiteral("translateNbest"));
  nbest_->setRange(1, 64);
  nbest_->setToolTip(tr("How many candidates to list (at most the beam width; samples drawn in sampling mode)"));
  length_penalty_ = new QDoubleSpinBox(this);
  length_penalty_->setObjectName(QStringLiteral("translateLengthPenalty"));
  length_penalty_->setRange(0, 5);
  length_penalty_->setSingleStep(0.1);
  length_penalty_->setDecimals(2);
  length_penalty_->setToolTip(
      tr("GNMT length penalty α: beams are ranked by log-probability / ((5 + length) / 6)^α; "
         "0 ranks by raw log-probability, larger values favour longer outputs"));
  temperature_ = new QDoubleSpinBox(this);
  temperature_->setObjectName(QStringLiteral("translateTemperature"));
  temperature_->setRange(0.05, 10);
  temperature_->setSingleStep(0.1);
  temperature_->setDecimals(2);
  temperature_->setToolTip(tr("Below 1 sharpens the distribution (safer), above 1 flattens it (more varied)"));
  top_k_ = new QSpinBox(this);
  top_k_->setObjectName(QStringLiteral("translateTopK"));
  top_k_->setRange(0, 100000);
  top_k_->setSpecialValueText(tr("off"));
  top_k_->setToolTip(tr("Sample only among the k most probable tokens (off = all)"));
  top_p_ = new QDoubleSpinBox(this);
  top_p_->setObjectName(QStringLiteral("translateTopP"));
  top_p_->setRange(0.01, 1);
  top_p_->setSingleStep(0.05);
  top_p_->setDecimals(2);
  top_p_->setToolTip(
      tr("Nucleus sampling: sample among the most probable tokens whose probabilities add up to p (1 = off)"));
  seed_ = new QSpinBox(this);
  seed_->setObjectName(QStringLiteral("translateSeed"));
  seed_->setRange(0, std::numeric_limits<int>::max());
  seed_->setToolTip(tr("Random seed for sampling: the same seed gives the same samples"));
  weights_ = new QComboBox(this);
  weights_->setObjectName(QStringLiteral("translateWeights"));
  weights_->addItem(tr("bf16"), QStringLiteral("bf16"));
  weights_->addItem(tr("int8"), QStringLiteral("int8"));
  weights_->addItem(tr("fp32"), QStringLiteral("fp32"));
  weights_->addItem(tr("LibTorch"), QStringLiteral("libtorch"));
  weights_->setItemData(0,
                        tr("Weights rounded to bfloat16: half the memory traffic, nearly always the fp32 translation"),
                        Qt::ToolTipRole);
  weights_->setItemData(
      1, tr("Weights as 8-bit integers with a scale per row: the fastest, occasionally a different word"),
      Qt::ToolTipRole);
  weights_->setItemData(2, tr("The model's own fp32 weights, packed for decoding one sentence"), Qt::ToolTipRole);
  weights_->setItemData(3, tr("LibTorch's own operations on the model's fp32 weights: the reference, slowest"),
                        Qt::ToolTipRole);
  weights_->setToolTip(tr("How the CPU stores the weights while translating (a GPU always uses the model's own)"));
  auto* defaults = new QPushButton(tr("Defaults"), this);
  defaults->setObjectName(QStringLiteral("translateDefaults"));
  defaults->setToolTip(
      tr("Back to the loaded checkpoint's own decoding settings, or, for the model being trained, the "
         "configuration's (decode section)"));

  // The mode, then only the options that mode uses (the others are hidden and disabled): the search's
  // on the first row, sampling's extra knobs and the weights on the second, so the panel stays narrow
  // (all on one row, it scrolled sideways at the default window size).
  auto* rows = new QVBoxLayout(this);
  auto* first = new QHBoxLayout;
  auto* second = new QHBoxLayout;
  rows->addLayout(first);
  rows->addLayout(second);
  const auto add = [&](QHBoxLayout* row, const QString& text, QWidget* w) {
    auto* label = new QLabel(text, this);
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
  first->addStretch(1);
  add(second, tr("Top-&k"), top_k_);
  add(second, tr("Top-&p"), top_p_);
  add(second, tr("&Seed"), seed_);
  add(second, tr("&Weights"), weights_);
  second->addStretch(1);
  second->addWidget(defaults);

  connect(mode_, qOverload<int>(&QComboBox::currentIndexChanged), this, &TranslateOptionsBox::updateModeOptions);
  connect(beam_, qOverload<int>(&QSpinBox::valueChanged), this, &TranslateOptionsBox::updateModeOptions);
  connect(defaults, &QPushButton::clicked, this, [this] { applyDefaults(this->defaults()); });
  connect(state_, &StudioState::configChanged, this, [this] {
    // Follow the Configuration panel's decoding defaults when they change, not on every edit
    // elsewhere (that would undo the options set here); a checkpoint keeps its own.
    if (!model_decode_ && !same_decode(state_->config().decode, applied_defaults_))
      applyDefaults(state_->config().decode);
  });
}

DecodeConfig TranslateOptionsBox::decodeConfig() const {
  DecodeConfig d = defaults();  // keeps max_len_a/b, which the panel does not show
  d.mode = parse_decode_mode(mode_->currentData().toString().toStdString());
  d.beam = beam_->value();
  d.length_penalty = length_penalty_->value();
  d.nbest = d.mode == DecodeMode::kGreedy ? 1 : nbest_->value();
  if (d.mode == DecodeMode::kBeam) d.nbest = std::min(d.nbest, d.beam);
  d.temperature = temperature_->value();
  d.top_k = top_k_->value();
  d.top_p = top_p_->value();
  d.seed = static_cast<std::uint64_t>(seed_->value());
  d.weights = parse_decode_weights(weights_->currentData().toString().toStdString());
  return d;
}

DecodeConfig TranslateOptionsBox::defaults() const { return model_decode_ ? *model_decode_ : state_->config().decode; }

void TranslateOptionsBox::setModelDecode(const std::optional<DecodeConfig>& d) {
  const bool had = model_decode_.has_value();
  model_decode_ = d;
  if (d)
    applyDefaults(*d);
  else if (had)
    applyDefaults(state_->config().decode);  // back to the configuration's rule
}

void TranslateOptionsBox::applyDefaults(const DecodeConfig& d) {
  applied_defaults_ = d;
  const int mode = mode_->findData(QString::fromLatin1(decode_mode_name(d.mode)));
  mode_->setCurrentIndex(mode < 0 ? 0 : mode);
  beam_->setValue(d.beam);
  nbest_->setMaximum(64);
  nbest_->setValue(d.nbest);
  length_penalty_->setValue(d.length_penalty);
  temperature_->setValue(d.temperature);
  top_k_->setValue(d.top_k);
  top_p_->setValue(d.top_p);
  seed_->setValue(static_cast<int>(std::min<std::uint64_t>(d.seed, static_cast<std::uint64_t>(seed_->maximum()))));
  const int weights = weights_->findData(QString::fromLatin1(decode_weights_name(d.weights)));
  weights_->setCurrentIndex(weights < 0 ? 0 : weights);
  updateModeOptions();
}

void TranslateOptionsBox::updateModeOptions() {
  const QString mode = mode_->currentData().toString();
  const bool beam = mode == QLatin1String("beam"), sample = mode == QLatin1String("sample");
  beam_->setEnabled(beam);
  length_penalty_->setEnabled(beam);
  nbest_->setEnabled(beam || sample);
  nbest_->setMaximum(beam ? beam_->value() : 64);  // beam search cannot return more than its width
  for (QWidget* w : std::initializer_list<QWidget*>{temperature_, top_k_, top_p_, seed_}) w->setEnabled(sample);
  for (auto it = option_labels_.cbegin(); it != option_labels_.cend(); ++it) {
    it.key()->setVisible(it.key()->isEnabled());
    it.value()->setVisible(it.key()->isEnabled());
  }
}

}  // namespace ts::ui
