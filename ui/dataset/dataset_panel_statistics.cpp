// SPDX-License-Identifier: GPL-3.0-or-later
// The Dataset panel's corpus statistics: when to recompute them (a key of the settings they depend
// on), the background job with its progress, and showing the result: vocabulary sizes and pairs
// longer than data.max_len in the Tokenizers box, and the source/target length histograms. The
// job itself is in dataset_analysis.cpp. Part of DatasetPanel (see dataset_panel.h).
#include "dataset/dataset_panel.h"

#include <memory>

#include <QLabel>
#include <QProgressBar>
#include <QPromise>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include "dataset/dataset_analysis.h"
#include "dataset/dataset_util.h"
#include "dataset/length_histogram.h"
#include "dataset/side_tokenizer.h"
#include "shell/studio_state.h"

namespace ts::ui {

using dataset::number;
using dataset::side_tokenizer;
using dataset::SideTokenizer;

QString DatasetPanel::analysisKey() const {
  const DataConfig& d = state_->config().data;
  const auto corpus = state_->corpus();
  const bool ens = state_->direction().english_is_source;
  const SideTokenizer src = side_tokenizer(d, true, ens ? corpus->english : corpus->other);
  const SideTokenizer tgt = side_tokenizer(d, false, ens ? corpus->other : corpus->english);
  // Only what changes the statistics: a new SentencePiece size does not (it is not trained here).
  return QStringLiteral("%1|%2|%3|%4|%5|%6|%7|%8|%9")
      .arg(QString::number(reinterpret_cast<quintptr>(corpus.get())),
           ens ? QStringLiteral("en") : QStringLiteral("other"), QString::fromStdString(src.config.to_json().dump()),
           QString::fromStdString(tgt.config.to_json().dump()),
           QStringLiteral("%1/%2/%3/%4").arg(d.dev).arg(d.test).arg(d.split_seed).arg(split_method_name(d.split)),
           QStringLiteral("%1/%2").arg(d.min_freq).arg(d.max_vocab), QString::number(d.max_len),
           d.shared_vocab ? QStringLiteral("shared") : QStringLiteral("separate"),
           d.cjk_chars ? QStringLiteral("cjk") : QStringLiteral("nocjk"));
}

bool DatasetPanel::isAnalysing() const { return analysis_ != nullptr || analysis_timer_->isActive(); }

void DatasetPanel::scheduleAnalysis() {
  const QString key = analysisKey();
  if (key == shown_key_ && !analysis_) return;
  if (key == running_key_ && analysis_) return;
  analysis_timer_->start();
  updateStatus();
}

void DatasetPanel::startAnalysis() {
  const QString key = analysisKey();
  if (analysis_) {
    if (key == running_key_) return;
    analysis_->cancel();  // its result is dropped below (the key no longer matches)
    analysis_->disconnect(this);
    analysis_->deleteLater();
    analysis_ = nullptr;
  }
  if (key == shown_key_) {  // back to the settings on screen
    if (shown_) showAnalysis(*shown_);
    updateStatus();
    return;
  }
  // The statistics on screen describe other settings: mark them stale while the new ones come.
  for (QLabel* vocab : {src_vocab_, tgt_vocab_}) {
    vocab->setText(tr("counting…"));
    vocab->setToolTip(QString());
  }
  long_pairs_->setText(tr("Counting tokens…"));
  running_key_ = key;
  auto* watcher = new QFutureWatcher<DatasetAnalysis>(this);
  analysis_ = watcher;
  connect(watcher, &QFutureWatcherBase::progressValueChanged, this, [this, watcher](int value) {
    if (watcher == analysis_) progress_->setValue(value);
  });
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
    watcher->deleteLater();
    if (watcher != analysis_) return;
    analysis_ = nullptr;
    running_key_.clear();
    if (watcher->isCanceled() || watcher->future().resultCount() == 0) {
      updateStatus();
      return;
    }
    const DatasetAnalysis result = watcher->result();
    if (result.key == analysisKey()) {
      showAnalysis(result);
    } else {
      scheduleAnalysis();  // the settings changed while it ran
    }
    updateStatus();
    if (!isAnalysing()) Q_EMIT analysisFinished();
  });
  const auto corpus = state_->corpus();
  const bool ens = state_->direction().english_is_source;
  const DataConfig data = state_->config().data;
  watcher->setFuture(QtConcurrent::run([corpus, ens, data, key](QPromise<DatasetAnalysis>& promise) {
    dataset::analyse(promise, corpus, ens, data, key);
  }));
  updateStatus();
}

void DatasetPanel::clearAnalysis() {
  shown_.reset();
  shown_key_.clear();
  for (LengthHistogram* plot : {src_plot_, tgt_plot_}) plot->clearHistogram();
}

void DatasetPanel::showAnalysis(const DatasetAnalysis& a) {
  if (shown_.get() != &a) shown_ = std::make_unique<DatasetAnalysis>(a);
  shown_key_ = a.key;
  const DataConfig& data = state_->config().data;
  const auto corpus = state_->corpus();
  const bool ens = state_->direction().english_is_source;
  const SideTokenizer src = side_tokenizer(data, true, ens ? corpus->english : corpus->other);
  const SideTokenizer tgt = side_tokenizer(data, false, ens ? corpus->other : corpus->english);
  const QString from =
      a.split_ok ? tr("the %1 training pairs").arg(number(a.train)) : tr("all %1 pairs").arg(number(a.pairs));
  const QString limits =
      tr("min_freq %1, %2")
          .arg(data.min_freq)
          .arg(data.max_vocab > 0 ? tr("at most %1 entries").arg(number(static_cast<std::size_t>(data.max_vocab)))
                                  : tr("no size limit"));
  auto show_vocab = [&](QLabel* label, const SideTokenizer& side, const TokenizerConfig& configured,
                        const SideAnalysis& s) {
    if (side.approximate) {
      label->setText(tr("%1 (configured)").arg(number(static_cast<std::size_t>(configured.vocab_size))));
      label->setToolTip(tr("The SentencePiece %1 model is trained on the training split when training starts; "
                           "word-level counting here would find %2 distinct tokens")
                            .arg(QString::fromLatin1(tokenizer_kind_name(configured.kind)), number(s.distinct)));
    } else {
      label->setText(tr("%1 tokens").arg(number(s.vocab)));
      label->setToolTip(tr("The vocabulary training will build: from %1 (%2), the 4 special tokens included; "
                           "%3 distinct tokens seen")
                            .arg(from, limits, number(s.distinct)));
    }
  };
  const TokenizerConfig& src_configured = data.src_tokenizer;
  const TokenizerConfig& tgt_configured = data.shared_vocab ? data.src_tokenizer : data.tgt_tokenizer;
  if (a.split_ok)  // the exact sizes (grouping can move a few pairs) and how the pairs were dealt
    split_->setText(splitCounts(a.train, a.dev, a.test) + QStringLiteral("\n") +
                    QString::fromStdString(describe_split(a.split)));
  show_vocab(src_vocab_, src, src_configured, a.src);
  show_vocab(tgt_vocab_, tgt, tgt_configured, a.tgt);

  QString long_text;
  if (!a.split_ok) {
    long_text = tr("Vocabularies counted over all pairs: the split above leaves no training pair.");
  } else if (a.too_long == 0) {
    long_text = tr("No training pair is longer than data.max_len (%1 tokens).").arg(data.max_len);
  } else {
    long_text = tr("%1 of %2 training pairs are longer than data.max_len (%3 tokens) and will be dropped.")
                    .arg(number(a.too_long), number(a.train))
                    .arg(data.max_len);
  }
  if (src.approximate || tgt.approximate) long_text += tr(" (Estimated from the preview tokens.)");
  long_pairs_->setText(long_text);

  auto title = [&](bool source, const SideAnalysis& s, const SideTokenizer& side) {
    const double mean = a.pairs ? static_cast<double>(s.total_tokens) / static_cast<double>(a.pairs) : 0.0;
    return tr("%1 (%2, %3)\nmean %4 · max %5 tokens")
        .arg(sideName(source), source ? tr("source") : tr("target"),
             QString::fromLatin1(tokenizer_kind_name(side.config.kind)))
        .arg(mean, 0, 'f', 1)
        .arg(s.max);
  };
  src_plot_->setHistogram(a.src.histogram, title(true, a.src, src));
  tgt_plot_->setHistogram(a.tgt.histogram, title(false, a.tgt, tgt));
}

}  // namespace ts::ui
