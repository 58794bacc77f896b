// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare panel: its layout, the request to the CompareService, its progress and errors, and
// the result handed to the parts (see compare_panel.h).
#include "compare/compare_panel.h"

#include <algorithm>

#include <QComboBox>
#include <QDir>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include "compare/bucket_view.h"
#include "compare/confidence_view.h"
#include "compare/ngram_view.h"
#include "compare/sentence_browser.h"
#include "compare/summary_table.h"
#include "compare/system_chooser.h"
#include "shell/studio_state.h"
#include "widgets/widget_lifetime.h"
#include "widgets/qt_text.h"

namespace ts::ui {

ComparePanel::ComparePanel(StudioState* state, QWidget* parent)
    : QWidget(parent), state_(state), service_(new CompareService(this)) {
  buildUi();
  connect(service_, &CompareService::progress, this,
          [this](int index, int count, const QString& name, int done, int sentences) {
            // One bar over every model's sentences (each model translates the same test split).
            const int per_model = std::max(1, sentences);
            progress_->setRange(0, count * per_model);
            progress_->setValue(index * per_model + std::min(done, per_model));
            if (sentences > 0)
              setStatus(tr("Translating the test split with %1 (%2 of %3): %4 of %5 sentences…")
                            .arg(name)
                            .arg(index + 1)
                            .arg(count)
                            .arg(done)
                            .arg(sentences));
            else
              setStatus(tr("Translating the test split with %1 (%2 of %3)…").arg(name).arg(index + 1).arg(count));
          });
  connect(service_, &CompareService::finished, this, &ComparePanel::showResult);
  connect(service_, &CompareService::failed, this, [this](const QString& message) {
    setStatus(tr("Could not compare: %1").arg(message), true);
    Q_EMIT comparisonFailed(message);
  });
  connect(service_, &CompareService::stopped, this, [this] { setStatus(tr("Stopped.")); });
  connect(service_, &CompareService::busyChanged, this, &ComparePanel::updateButtons);
  connect(chooser_, &SystemChooser::checkedChanged, this, &ComparePanel::updateButtons);
  connect(chooser_, &SystemChooser::message, this, &ComparePanel::setStatus);
  connect(sentences_, &SentenceBrowser::openSentence, this, &ComparePanel::openSentence);
  refreshRuns();
}

ComparePanel::~ComparePanel() { disconnect_children(this); }

void ComparePanel::buildUi() {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setObjectName(QStringLiteral("compareSplitter"));
  layout->addWidget(split, 1);

  // Left: what to compare, and how it goes.
  auto* left = new QWidget(split);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  chooser_ = new SystemChooser(left);
  left_layout->addWidget(chooser_, 1);
  auto* run = new QHBoxLayout;
  compare_ = new QPushButton(tr("Compare"), left);
  compare_->setObjectName(QStringLiteral("compareRun"));
  compare_->setToolTip(tr("Translate the test split with each checked system and compare them"));
  stop_ = new QPushButton(tr("Stop"), left);
  stop_->setObjectName(QStringLiteral("compareStop"));
  progress_ = new QProgressBar(left);
  progress_->setTextVisible(false);
  progress_->setMaximumHeight(12);
  progress_->hide();
  run->addWidget(compare_);
  run->addWidget(stop_);
  run->addWidget(progress_, 1);
  left_layout->addLayout(run);
  status_ = new QLabel(left);
  status_->setObjectName(QStringLiteral("compareStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  left_layout->addWidget(status_);
  connect(compare_, &QPushButton::clicked, this, &ComparePanel::compare);
  connect(stop_, &QPushButton::clicked, this, &ComparePanel::stop);

  // Right: the summary (as tall as its rows) over the analyses.
  auto* right = new QWidget(split);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  caption_ = new QLabel(tr("Check one or more systems and press Compare."), right);
  caption_->setObjectName(QStringLiteral("compareCaption"));
  caption_->setWordWrap(true);
  summary_ = new SummaryTable(right);
  right_layout->addWidget(caption_);
  right_layout->addWidget(summary_);

  tabs_ = new QTabWidget(right);
  tabs_->setObjectName(QStringLiteral("compareTabs"));
  word_accuracy_ = new BucketView(QStringLiteral("compareWordAccuracy"), tabs_);
  tabs_->addTab(word_accuracy_, tr("Word accuracy"));

  auto* buckets_page = new QWidget(tabs_);
  auto* buckets_layout = new QVBoxLayout(buckets_page);
  buckets_layout->setContentsMargins(0, 4, 0, 0);
  bucket_kind_ = new QComboBox(buckets_page);
  bucket_kind_->setObjectName(QStringLiteral("compareBucketKind"));
  bucket_kind_->addItems({tr("Corpus score by reference length"), tr("Sentences by sentence score"),
                          tr("Sentences by output length minus reference length")});
  buckets_ = new BucketView(QStringLiteral("compareSentenceBuckets"), buckets_page);
  buckets_layout->addWidget(bucket_kind_);
  buckets_layout->addWidget(buckets_, 1);
  tabs_->addTab(buckets_page, tr("Sentence buckets"));
  connect(bucket_kind_, &QComboBox::currentIndexChanged, this, &ComparePanel::showBuckets);

  ngrams_ = new NgramView(tabs_);
  tabs_->addTab(ngrams_, tr("N-grams"));
  confidence_ = new ConfidenceView(tabs_);
  tabs_->addTab(confidence_, tr("Confidence"));
  sentences_ = new SentenceBrowser(tabs_);
  tabs_->addTab(sentences_, tr("Sentences"));
  connect(confidence_, &ConfidenceView::leastConfidentRequested, this, [this](int system) {
    tabs_->setCurrentWidget(sentences_);
    sentences_->sortByConfidence(system);
  });
  right_layout->addWidget(tabs_, 1);

  // The chooser's long labels must not claim the width the results need: the stretch factors decide.
  left->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  left->setMinimumWidth(300);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 3);
  split->setChildrenCollapsible(false);
  updateButtons();
}

void ComparePanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refreshRuns();  // runs recorded since the last look
}

void ComparePanel::refreshRuns() {
  chooser_->setDatabasePath(state_ ? state_->databasePath() : QString());
  if (state_) chooser_->setStartDirectory(state_->runsDirectory());
  chooser_->refresh();
}

bool ComparePanel::compare() {
  const auto models = chooser_->checkedModels();
  if (models.isEmpty()) {
    setStatus(tr("Check one system to browse its test translations, or several to compare them."), true);
    return false;
  }
  progress_->setRange(0, static_cast<int>(models.size()));
  progress_->setValue(0);
  progress_->show();
  setStatus(tr("Starting…"));
  service_->compare(models);
  return true;
}

void ComparePanel::stop() { service_->stop(); }

bool ComparePanel::isBusy() const { return service_->isBusy(); }

QString ComparePanel::status() const { return status_->text(); }

void ComparePanel::setStatus(const QString& text, bool error) {
  status_->setText(text);
  status_error_ = error;
  status_->setStyleSheet(error ? QStringLiteral("color: #c0392b;") : QString());
  status_->setToolTip(error ? tr("Error") : QString());
}

void ComparePanel::updateButtons() {
  const bool busy = service_->isBusy();
  compare_->setEnabled(!chooser_->checkedModels().isEmpty());
  compare_->setText(busy ? tr("Compare again") : tr("Compare"));
  stop_->setEnabled(busy);
  if (!busy) progress_->hide();
}

void ComparePanel::showResult(const CompareResult& result) {
  result_ = result;
  has_result_ = true;
  const auto& c = result.comparison;
  QStringList names, tips;
  for (const auto& n : result.input.names) names << q(n);
  for (const auto& m : result.models) tips << QDir::toNativeSeparators(m.path);
  summary_->setComparison(c, tips);
  caption_->setText(SummaryTable::caption(c));
  word_accuracy_->setTable(c.word_accuracy, names, false);
  showBuckets(bucket_kind_->currentIndex());
  ngrams_->setComparison(c, names);
  confidence_->setComparison(c, result.input, names);
  sentences_->setResult(result);
  const QString pairs = c.sentences == 1 ? tr("1 test pair") : tr("%1 test pairs").arg(c.sentences);
  if (names.size() == 1) {
    tabs_->setCurrentWidget(sentences_);  // the held-out browser
    setStatus(tr("%1 on %2, worst first (%3 s).").arg(names.front(), pairs).arg(result.seconds, 0, 'f', 1));
  } else {
    setStatus(tr("Compared %1 systems on %2 in %3 s.").arg(names.size()).arg(pairs).arg(result.seconds, 0, 'f', 1));
  }
  Q_EMIT compared();
}

void ComparePanel::showBuckets(int kind) {
  if (!has_result_) return;
  const auto& c = result_.comparison;
  QStringList names;
  for (const auto& n : result_.input.names) names << q(n);
  if (kind == 0)
    buckets_->setTable(c.by_reference_length, names, false);
  else if (kind == 1)
    buckets_->setTable(c.by_sentence_score, names, true);
  else
    buckets_->setTable(c.by_length_difference, names, true);
}

}  // namespace ts::ui
