// SPDX-License-Identifier: GPL-3.0-or-later
// The Dataset panel's Preview box: search, pair count and the preview table (see pair_preview.h).
#include "dataset/pair_preview.h"

#include <utility>

#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "dataset/dataset_analysis.h"
#include "dataset/dataset_preview_model.h"
#include "dataset/dataset_util.h"
#include "shell/studio_state.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

using dataset::number;

PairPreview::PairPreview(StudioState* state, DatasetPreviewModel* model, QWidget* parent)
    : QGroupBox(tr("Preview"), parent), state_(state), model_(model) {
  search_timer_ = new QTimer(this);
  search_timer_->setSingleShot(true);
  search_timer_->setInterval(250);
  connect(search_timer_, &QTimer::timeout, this, &PairPreview::startSearch);

  auto* preview_layout = new QVBoxLayout(this);
  auto* search_row = new QHBoxLayout;
  search_ = new QLineEdit(this);
  search_->setObjectName(QStringLiteral("datasetSearch"));
  search_->setPlaceholderText(tr("Search both sides…"));
  search_->setClearButtonEnabled(true);
  search_->setToolTip(tr("Shows only the pairs containing this text (either side, case-insensitive)"));
  preview_info_ = new QLabel(this);
  preview_info_->setObjectName(QStringLiteral("datasetPreviewInfo"));
  search_row->addWidget(search_, 1);
  search_row->addWidget(preview_info_);
  preview_layout->addLayout(search_row);
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("datasetPreview"));
  table_->setModel(model_);
  table_->setItemDelegate(new BidiItemDelegate(table_));  // an Arabic side reads right to left
  table_->setWordWrap(false);
  table_->setTextElideMode(Qt::ElideRight);
  table_->setAlternatingRowColors(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  table_->horizontalHeader()->setHighlightSections(false);
  table_->setMinimumHeight(130);
  const QFontMetrics fm = table_->fontMetrics();
  table_->setColumnWidth(DatasetPreviewModel::kNumber, fm.horizontalAdvance(QStringLiteral("888888")) + 12);
  // Narrow enough that the token columns start inside a 560-pixel dock; tooltips show it all.
  const int x = fm.horizontalAdvance(QLatin1Char('x'));
  table_->setColumnWidth(DatasetPreviewModel::kSource, x * 20);
  table_->setColumnWidth(DatasetPreviewModel::kTarget, x * 20);
  table_->setColumnWidth(DatasetPreviewModel::kSourceTokens, x * 30);
  table_->setColumnWidth(DatasetPreviewModel::kTargetTokens, x * 30);
  table_->setColumnWidth(DatasetPreviewModel::kSourceLength, fm.horizontalAdvance(QStringLiteral("Src len")) + 20);
  table_->setColumnWidth(DatasetPreviewModel::kTargetLength, fm.horizontalAdvance(QStringLiteral("Tgt len")) + 20);
  preview_layout->addWidget(table_, 1);
  connect(search_, &QLineEdit::textChanged, this, [this] { search_timer_->start(); });
}

PairPreview::~PairPreview() {
  // The search only touches its own copies, but it should not outlive the box that started it.
  if (search_watcher_) search_watcher_->waitForFinished();
}

void PairPreview::setCorpus(std::shared_ptr<const Corpus> corpus, bool english_is_source,
                            std::shared_ptr<const Tokenizer> src_tokenizer,
                            std::shared_ptr<const Tokenizer> tgt_tokenizer) {
  model_->setCorpus(corpus, english_is_source, std::move(src_tokenizer), std::move(tgt_tokenizer));
  const int rows = model_->rowCount();
  preview_info_->setText(
      model_->isFiltered()
          ? tr("%1 of %2 pairs").arg(number(static_cast<std::size_t>(rows)), number(corpus->pairs.size()))
          : tr("%1 pairs").arg(number(corpus->pairs.size())));
}

void PairPreview::clearSearch() {
  search_->blockSignals(true);
  search_->clear();
  search_->blockSignals(false);
}

void PairPreview::startSearch() {
  const QString query = search_->text().trimmed();
  const int serial = ++search_serial_;
  const auto corpus = state_->corpus();
  if (query.isEmpty()) {
    model_->showAll();
    preview_info_->setText(tr("%1 pairs").arg(number(corpus->pairs.size())));
    return;
  }
  preview_info_->setText(tr("searching…"));
  auto* watcher = new QFutureWatcher<std::vector<int>>(this);
  search_watcher_ = watcher;
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, serial, corpus] {
    watcher->deleteLater();
    if (search_watcher_ == watcher) search_watcher_ = nullptr;
    if (serial != search_serial_ || corpus != state_->corpus()) return;  // superseded
    std::vector<int> rows = watcher->result();
    const std::size_t found = rows.size();
    model_->setRows(std::move(rows));
    preview_info_->setText(tr("%1 of %2 pairs").arg(number(found), number(corpus->pairs.size())));
  });
  watcher->setFuture(QtConcurrent::run([corpus, query] { return dataset::search_pairs(corpus, query); }));
}

}  // namespace ts::ui
