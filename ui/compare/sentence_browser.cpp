// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare panel's sentence table with its search box (see sentence_browser.h).
#include "compare/sentence_browser.h"

#include <algorithm>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTableView>
#include <QVBoxLayout>

#include "compare/sentence_table_model.h"
#include "compare/word_highlight.h"

namespace ts::ui {

SentenceBrowser::SentenceBrowser(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 4, 0, 0);
  auto* top = new QHBoxLayout;
  search_ = new QLineEdit(this);
  search_->setObjectName(QStringLiteral("compareSearch"));
  search_->setPlaceholderText(tr("Search the sources, references and outputs"));
  search_->setToolTip(tr("Every word must occur in the source, the reference or an output"));
  search_->setClearButtonEnabled(true);
  count_ = new QLabel(this);
  count_->setObjectName(QStringLiteral("compareSentenceCount"));
  top->addWidget(search_, 1);
  top->addWidget(count_);
  layout->addLayout(top);

  model_ = new SentenceTableModel(this);
  proxy_ = new SentenceFilterProxy(this);
  proxy_->setSourceModel(model_);
  view_ = new QTableView(this);
  view_->setObjectName(QStringLiteral("compareSentences"));
  view_->setModel(proxy_);
  view_->setItemDelegate(new HtmlItemDelegate(SentenceTableModel::HtmlRole, view_));
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view_->setSortingEnabled(true);
  view_->setAlternatingRowColors(true);
  view_->setWordWrap(false);
  view_->setTextElideMode(Qt::ElideRight);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 8);
  view_->horizontalHeader()->setSectionsMovable(true);
  view_->horizontalHeader()->setToolTip(tr("Click to sort"));
  view_->setToolTip(
      tr("Double-click a row to open the sentence in the Attention and Beam search panels, with the "
         "system of the column clicked (the baseline for the source and reference)"));
  layout->addWidget(view_, 1);

  connect(search_, &QLineEdit::textChanged, this, [this](const QString& text) {
    proxy_->setSearch(text);
    updateCount();
  });
  connect(view_, &QAbstractItemView::doubleClicked, this, &SentenceBrowser::activate);
  updateCount();
}

void SentenceBrowser::clear() {
  models_.clear();
  model_->clear();
  updateCount();
}

void SentenceBrowser::setResult(const CompareResult& result) {
  models_ = result.models;
  model_->setResult(result);
  // Worst first: with several systems where the last one loses most against the baseline, with
  // one the sentences it scores lowest.
  const int sort_column = model_->systems() > 1 ? model_->differenceColumn() : model_->scoreColumn(0);
  view_->sortByColumn(model_->systems() > 0 ? sort_column : SentenceTableModel::Index, Qt::AscendingOrder);
  auto* header = view_->horizontalHeader();
  const int text_width = std::max(160, view_->fontMetrics().averageCharWidth() * 36);
  for (int c = 0; c < model_->columnCount(); ++c) {
    const int system = model_->systemOfColumn(c);
    const bool text = c == SentenceTableModel::Source || c == SentenceTableModel::Reference ||
                      (system >= 0 && c == model_->outputColumn(system));
    if (text) {
      header->resizeSection(c, text_width);
    } else {
      view_->resizeColumnToContents(c);
      header->resizeSection(c, std::max(56, header->sectionSize(c)));
    }
  }
  updateCount();
}

void SentenceBrowser::sortByConfidence(int system) {
  const int column = model_->confidenceColumn(system);
  if (column >= 0) view_->sortByColumn(column, Qt::AscendingOrder);
}

void SentenceBrowser::setSearch(const QString& text) {
  if (search_->text() != text) search_->setText(text);  // textChanged filters
}

void SentenceBrowser::activate(const QModelIndex& view_index) {
  if (!view_index.isValid() || models_.isEmpty()) return;
  const QModelIndex index = proxy_->mapToSource(view_index);
  int system = model_->systemOfColumn(index.column());
  if (system < 0 || system >= models_.size()) system = 0;
  Q_EMIT openSentence(model_->source(index.row()), models_[system].path);
}

void SentenceBrowser::updateCount() {
  const int total = model_->rowCount(), shown = proxy_->rowCount();
  if (total == 0)
    count_->clear();
  else if (shown == total)
    count_->setText(total == 1 ? tr("1 sentence") : tr("%1 sentences").arg(total));
  else
    count_->setText(tr("%1 of %2 sentences").arg(shown).arg(total));
}

}  // namespace ts::ui
