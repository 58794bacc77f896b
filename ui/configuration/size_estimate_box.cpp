// SPDX-License-Identifier: GPL-3.0-or-later
// SizeEstimateBox: the labels of the estimate, and the background count of the corpus behind them.
#include "configuration/size_estimate_box.h"

#include <algorithm>

#include <QFont>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QLabel>
#include <QLocale>
#include <QtConcurrent/QtConcurrentRun>

#include "configuration/config_panel_util.h"
#include "configuration/vocabulary_counts.h"
#include "shell/studio_state.h"
#include "ts/train/model_size.h"

namespace ts::ui {

using namespace config_util;

SizeEstimateBox::SizeEstimateBox(StudioState* state, QWidget* parent)
    : QGroupBox(tr("Estimated size"), parent), state_(state) {
  setObjectName(QStringLiteral("sizeBox"));
  auto* size_form = new QFormLayout(this);
  size_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  parameters_ = small_label(this, QStringLiteral("parameterCount"));
  weights_ = small_label(this, QStringLiteral("weightsSize"));
  memory_ = small_label(this, QStringLiteral("memoryEstimate"));
  batch_ = small_label(this, QStringLiteral("batchTokens"));
  vocab_ = small_label(this, QStringLiteral("vocabEstimate"));
  QFont bold = parameters_->font();
  bold.setBold(true);
  parameters_->setFont(bold);
  memory_->setFont(bold);
  parameters_->setToolTip(
      tr("Weights the model will have. Exact for the vocabulary sizes below, which are "
         "estimated from the corpus before the tokenizers are trained."));
  memory_->setToolTip(
      tr("Weights, gradients and the two Adam moments (4 copies), plus the activations of one "
         "batch kept for the backward pass. A rough guide, not a guarantee."));
  size_form->addRow(tr("Parameters:"), parameters_);
  size_form->addRow(tr("Weights:"), weights_);
  size_form->addRow(tr("Training memory:"), memory_);
  size_form->addRow(tr("Batch:"), batch_);
  size_form->addRow(tr("Vocabulary:"), vocab_);
}

SizeEstimateBox::~SizeEstimateBox() {
  if (cancel_) cancel_->store(true);  // the count holds its own copies; it just stops early
}

std::int64_t SizeEstimateBox::sourceVocabEstimate() const {
  const ExperimentConfig& c = state_->config();
  const TokenizerConfig tok = effective_tokenizer(c.data, true, state_->direction());
  return side_vocabulary(counts_ ? &counts_->src : nullptr, tok, c.data);
}

std::int64_t SizeEstimateBox::targetVocabEstimate() const {
  const ExperimentConfig& c = state_->config();
  const TokenizerConfig tok = effective_tokenizer(c.data, false, state_->direction());
  return side_vocabulary(counts_ ? &counts_->tgt : nullptr, tok, c.data);
}

double SizeEstimateBox::averageSentenceTokens() const { return counts_ ? counts_->average_tokens : 12.0; }

void SizeEstimateBox::refresh() {
  const ExperimentConfig& c = state_->config();
  const std::int64_t src = sourceVocabEstimate();
  const std::int64_t tgt = targetVocabEstimate();
  const double average = averageSentenceTokens();
  const ModelSize size = estimate_model_size(c, src, tgt, average);
  const double millions = static_cast<double>(size.parameters) / 1e6;
  parameters_->setText(
      tr("\u2248 %1 (%2 M)").arg(count(size.parameters), QLocale().toString(millions, 'f', millions < 10 ? 2 : 1)));
  weights_->setText(tr("%1 as 32-bit floats").arg(format_bytes(static_cast<double>(size.weight_bytes))));
  memory_->setText(tr("\u2248 %1").arg(format_bytes(static_cast<double>(size.training_bytes))));
  QString batch;
  if (c.train.batch_tokens > 0) {
    batch = tr("%1 tokens (\u2248 %2 sentences)")
                .arg(count(size.batch_tokens),
                     count(static_cast<std::int64_t>(std::max(1.0, c.train.batch_tokens / average))));
  } else {
    batch = tr("%1 sentences \u2248 %2 tokens").arg(count(c.train.batch_sentences), count(size.batch_tokens));
  }
  if (c.train.accumulate > 1)
    batch += tr("; %1 batches per step \u2248 %2 tokens")
                 .arg(c.train.accumulate)
                 .arg(count(size.batch_tokens * c.train.accumulate));
  batch_->setText(batch);

  QString vocab;
  const bool shared = c.data.shared_vocab;
  if (shared)
    vocab = tr("shared \u2248 %1 tokens").arg(count(src));
  else
    vocab = tr("source \u2248 %1, target \u2248 %2 tokens").arg(count(src), count(tgt));
  if (counting_ && !counts_)
    vocab += tr(" (rough default; counting the corpus…)");
  else if (counting_)
    vocab += tr(" (recounting…)");
  else if (counts_ && !counts_->error.empty())
    vocab += tr(" (rough default: %1)").arg(QString::fromStdString(counts_->error));
  else if (counts_)
    vocab += tr(" (counted in the corpus, specials included)");
  vocab_->setText(vocab);
}

void SizeEstimateBox::startCounting() {
  const auto corpus = state_->corpus();
  if (!corpus) return;
  const ExperimentConfig& c = state_->config();
  const std::string key = counting_key(corpus.get(), state_->direction(), c.data);
  if (key == counts_key_) return;
  counts_key_ = key;
  if (cancel_) cancel_->store(true);
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  const int serial = ++count_serial_;
  counting_ = true;
  refresh();
  using Result = std::shared_ptr<const VocabularyCounts>;
  auto* watcher = new QFutureWatcher<Result>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, serial] {
    watcher->deleteLater();
    if (serial != count_serial_) return;  // superseded
    counting_ = false;
    if (Result counts = watcher->result()) counts_ = std::move(counts);
    refresh();
  });
  watcher->setFuture(QtConcurrent::run(count_vocabulary, corpus, state_->direction(), c.data, cancel_));
}

}  // namespace ts::ui
