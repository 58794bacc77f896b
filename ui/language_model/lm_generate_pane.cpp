// SPDX-License-Identifier: GPL-3.0-or-later
#include "language_model/lm_generate_pane.h"

#include <limits>

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTextEdit>
#include <QVBoxLayout>

#include "language_model/lm_util.h"

namespace ts::ui {

using lm_util::number;

LmGeneratePane::LmGeneratePane(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* model_row = new QHBoxLayout;
  model_label_ = new QLabel(tr("No model yet: train one, or open a language-model checkpoint."));
  model_label_->setObjectName(QStringLiteral("lmModelLabel"));
  auto* open = new QPushButton(tr("Open checkpoint…"));
  connect(open, &QPushButton::clicked, this, &LmGeneratePane::openCheckpointRequested);
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
  temperature_->setToolTip(
      tr("Divides the logits: below 1 more predictable, above 1 more varied; 0 = always the likeliest token."));
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
  connect(prompt_, &QLineEdit::returnPressed, this, &LmGeneratePane::generateRequested);
  generate_ = new QPushButton(tr("Generate"));
  generate_->setObjectName(QStringLiteral("lmGenerate"));
  generate_->setToolTip(tr("While training, the latest weights are taken first."));
  connect(generate_, &QPushButton::clicked, this, &LmGeneratePane::generateRequested);
  stop_generation_ = new QPushButton(tr("Stop"));
  stop_generation_->setObjectName(QStringLiteral("lmStopGeneration"));
  connect(stop_generation_, &QPushButton::clicked, this, &LmGeneratePane::stopRequested);
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
}

LmGenerateRequest LmGeneratePane::request() const {
  LmGenerateRequest r;
  r.prompt = prompt_->text();
  r.length = length_->value();
  r.temperature = temperature_->value();
  r.top_k = top_k_->value();
  r.top_p = top_p_->value();
  r.seed = static_cast<quint64>(seed_->value());
  return r;
}

void LmGeneratePane::setPrompt(const QString& text) { prompt_->setText(text); }

void LmGeneratePane::startOutput(const QString& prompt) {
  output_->clear();
  QTextCharFormat bold;
  bold.setFontWeight(QFont::Bold);
  QTextCursor cursor(output_->document());
  cursor.insertText(prompt, bold);
}

void LmGeneratePane::appendPiece(const QString& text) {
  QTextCursor cursor(output_->document());
  cursor.movePosition(QTextCursor::End);
  cursor.insertText(text, QTextCharFormat());
  output_->setTextCursor(cursor);
  output_->ensureCursorVisible();
}

QString LmGeneratePane::outputText() const { return output_->toPlainText(); }

void LmGeneratePane::setModelLabel(const QString& label) { model_label_->setText(label); }

void LmGeneratePane::setVocabulary(int size) { top_k_->setMaximum(size); }

void LmGeneratePane::setStatus(const QString& text) { generation_status_->setText(text); }

void LmGeneratePane::showFinished(const LmGeneration& g) {
  const double rate = g.seconds > 0 ? static_cast<double>(g.tokens) / g.seconds : 0;
  generation_status_->setText(
      (g.stopped ? tr("Stopped after %1 tokens (%2 s, %3 tokens/s) · %4") : tr("%1 tokens in %2 s (%3 tokens/s) · %4"))
          .arg(number(g.tokens))
          .arg(g.seconds, 0, 'f', 2)
          .arg(rate, 0, 'f', 0)
          .arg(g.model));
}

void LmGeneratePane::setButtons(bool can_generate, bool generating) {
  generate_->setEnabled(can_generate);
  stop_generation_->setEnabled(generating);
}

}  // namespace ts::ui
