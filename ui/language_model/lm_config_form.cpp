// SPDX-License-Identifier: GPL-3.0-or-later
#include "language_model/lm_config_form.h"

#include <algorithm>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QSpinBox>
#include <QStringList>
#include <QVBoxLayout>

#include "language_model/lm_util.h"

namespace ts::ui {

using lm_util::number;
using lm_util::q;

namespace {

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
    {"vocab_size", "Subword vocabulary", 'i', 16, 100000, 100, 0, nullptr,
     "Vocabulary size for bpe/unigram (ignored for char)."},
    {"n_layer", "Layers", 'i', 1, 64, 1, 0, nullptr, "Transformer blocks."},
    {"n_head", "Heads", 'i', 1, 64, 1, 0, nullptr, "Attention heads per block; must divide the embedding size."},
    {"n_embd", "Embedding size", 'i', 4, 8192, 16, 0, nullptr, "Width of the model (n_embd)."},
    {"block_size", "Context (tokens)", 'i', 2, 8192, 8, 0, nullptr, "The longest context the model sees (block_size)."},
    {"dropout", "Dropout", 'r', 0, 0.9, 0.05, 2, nullptr, "Dropout after attention, feed-forward and embeddings."},
    {"batch_size", "Batch size", 'i', 1, 8192, 4, 0, nullptr, "Random windows per step."},
    {"lr", "Learning rate", 'r', 1e-6, 1, 1e-4, 6, nullptr, "AdamW's learning rate."},
    {"weight_decay", "Weight decay", 'r', 0, 1, 0.01, 3, nullptr, "AdamW's decoupled weight decay."},
    {"max_steps", "Steps", 'i', 1, 100000000, 500, 0, nullptr, "Training steps (iterations)."},
    {"max_minutes", "Time limit (min)", 'r', 0, 1e6, 1, 1, nullptr,
     "Stop after this many minutes of training; 0 = no limit."},
    {"eval_interval", "Estimate every", 'i', 1, 100000000, 100, 0, nullptr,
     "Estimate the train and val loss every N steps (and at the end), as the tutorial does."},
    {"eval_iters", "Batches per estimate", 'i', 1, 1000000, 10, 0, nullptr, "Batches averaged per split and estimate."},
    {"seed", "Seed", 'i', 0, 2147483647, 1, 0, nullptr,
     "Seeds the weights, the batches and dropout: the same seed trains the same model."},
    {"device", "Device", 'c', 0, 0, 0, 0, "auto|cpu|cuda", "auto: the GPU when there is one."},
    {"threads", "Threads", 'i', 0, 1024, 1, 0, nullptr, "CPU threads; 0 = every core."},
    {"precision", "Precision", 'c', 0, 0, 0, 0, "fp32|bf16",
     "bf16 autocasts the forward pass (fast on CPUs with AMX and on GPUs)."},
};

}  // namespace

LmConfigForm::LmConfigForm(QWidget* parent) : QGroupBox(tr("Model and training"), parent) {
  auto* model_layout = new QVBoxLayout(this);
  preset_ = new QComboBox;
  preset_->setObjectName(QStringLiteral("lmPreset"));
  for (const auto& name : lm_preset_names()) preset_->addItem(q(name));
  preset_->setToolTip(
      tr("shakespeare-char: the tutorial's model (4 layers, 4 heads, 64 wide, context 32, 5,000 steps). "
         "shakespeare-char-large: 6 layers, 6 heads, 384 wide, context 256. bigram: the baseline."));
  connect(preset_, &QComboBox::textActivated, this, &LmConfigForm::presetChosen);
  // Edits made while the form is being filled are the form's own, not the user's.
  const auto edited = [this](const QString& key, const QString& value) {
    if (!filling_form_) Q_EMIT fieldEdited(key, value);
  };
  auto* fields = new QWidget;
  form_ = new QFormLayout(fields);
  form_->setContentsMargins(0, 0, 0, 0);
  for (const auto& f : kFields) {
    const QString key = QString::fromLatin1(f.key);
    QWidget* editor = nullptr;
    if (f.kind == 'c') {
      auto* box = new QComboBox;
      box->addItems(QString::fromLatin1(f.choices).split(QLatin1Char('|')));
      connect(box, &QComboBox::currentTextChanged, this, [edited, key](const QString& v) { edited(key, v); });
      editor = box;
    } else if (f.kind == 'i') {
      auto* box = new QSpinBox;
      box->setRange(static_cast<int>(f.min), static_cast<int>(f.max));
      box->setSingleStep(static_cast<int>(f.step));
      box->setGroupSeparatorShown(true);
      connect(box, QOverload<int>::of(&QSpinBox::valueChanged), this,
              [edited, key](int v) { edited(key, QString::number(v)); });
      editor = box;
    } else {
      auto* box = new QDoubleSpinBox;
      box->setDecimals(f.decimals);
      box->setRange(f.min, f.max);
      box->setSingleStep(f.step);
      connect(box, QOverload<double>::of(&QDoubleSpinBox::valueChanged), this,
              [edited, key](double v) { edited(key, QString::number(v, 'g', 10)); });
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
}

void LmConfigForm::showConfig(const LmConfig& config) {
  filling_form_ = true;
  const auto j = config.to_json();
  for (auto* editor : editors_) {
    const auto key = editor->property("configKey").toString().toStdString();
    if (!j.contains(key)) continue;
    const auto& v = j.at(key);
    if (auto* box = qobject_cast<QComboBox*>(editor))
      box->setCurrentText(q(v.get<std::string>()));
    else if (auto* spin = qobject_cast<QSpinBox*>(editor))
      spin->setValue(static_cast<int>(v.get<double>()));
    else if (auto* real = qobject_cast<QDoubleSpinBox*>(editor))
      real->setValue(v.get<double>());
  }
  const int preset = preset_->findText(q(config.preset));
  if (preset >= 0) preset_->setCurrentIndex(preset);
  filling_form_ = false;
}

void LmConfigForm::showEstimate(const LmConfig& config, const LmTextInfo* text) {
  const auto problems = config.problems();
  QStringList lines;
  for (const auto& p : problems) lines << q(p);
  problems_->setText(lines.isEmpty() ? QString() : QStringLiteral("⚠ ") + lines.join(QStringLiteral("\n⚠ ")));
  problems_->setVisible(!lines.isEmpty());
  if (!problems.empty()) {
    estimate_->clear();
  } else if (text) {
    const auto params = config.parameter_estimate(text->vocab_size);
    estimate_->setText(tr("%1 parameters · %2 tokens per step · %3 steps ≈ %4 passes over the training text")
                           .arg(number(params), number(static_cast<qint64>(config.batch_size) * config.block_size),
                                number(config.max_steps))
                           .arg(static_cast<double>(config.max_steps) * config.batch_size * config.block_size /
                                    std::max<double>(1.0, static_cast<double>(text->train_tokens)),
                                0, 'f', 1));
  } else {
    estimate_->setText(tr("Open a text to see the model's size."));
  }
}

void LmConfigForm::showError(const QString& error) {
  problems_->setText(error);
  problems_->setVisible(true);
}

void LmConfigForm::setEditable(bool editable) {
  preset_->setEnabled(editable);
  for (auto* e : editors_) e->setEnabled(editable);
}

}  // namespace ts::ui
