// SPDX-License-Identifier: GPL-3.0-or-later
// The n-grams each of two systems matches more often (see ngram_view.h).
#include "compare/ngram_view.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include "widgets/bidi_delegate.h"
#include "widgets/qt_text.h"

namespace ts::ui {

namespace {

QTableWidget* make_table(const QString& name, QWidget* parent) {
  auto* t = new QTableWidget(0, 3, parent);
  t->setObjectName(name);
  t->setItemDelegate(new BidiItemDelegate(t));  // n-grams of a right-to-left language read right to left
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setWordWrap(false);
  t->verticalHeader()->hide();
  t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
  t->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  return t;
}

}  // namespace

NgramView::NgramView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 4, 0, 0);
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Compare:"), this));
  pairs_ = new QComboBox(this);
  pairs_->setObjectName(QStringLiteral("compareNgramPair"));
  pairs_->setToolTip(tr("The baseline against which system"));
  top->addWidget(pairs_, 1);
  layout->addLayout(top);
  note_ = new QLabel(this);
  note_->setObjectName(QStringLiteral("compareNgramNote"));
  note_->setWordWrap(true);
  layout->addWidget(note_);

  auto* grid = new QGridLayout;
  a_title_ = new QLabel(this);
  b_title_ = new QLabel(this);
  a_title_->setWordWrap(true);
  b_title_->setWordWrap(true);
  a_better_ = make_table(QStringLiteral("compareNgramsBaseline"), this);
  b_better_ = make_table(QStringLiteral("compareNgramsOther"), this);
  grid->addWidget(a_title_, 0, 0);
  grid->addWidget(b_title_, 0, 1);
  grid->addWidget(a_better_, 1, 0);
  grid->addWidget(b_better_, 1, 1);
  grid->setRowStretch(1, 1);
  layout->addLayout(grid, 1);

  connect(pairs_, &QComboBox::currentIndexChanged, this, &NgramView::showPair);
  clearComparison();
}

void NgramView::clearComparison() {
  data_.clear();
  names_.clear();
  const QSignalBlocker block(pairs_);
  pairs_->clear();
  pairs_->setEnabled(false);
  a_title_->clear();
  b_title_->clear();
  a_better_->setRowCount(0);
  b_better_->setRowCount(0);
  note_->setText(tr("Compare two or more systems to see the n-grams of the references each matches more often."));
}

void NgramView::setComparison(const Comparison& comparison, const QStringList& names) {
  clearComparison();
  data_ = comparison.pairs;
  names_ = names;
  if (data_.empty()) return;  // one system: nothing to set against it
  note_->setText(
      tr("N-grams (1 to 4 words) of the references matched more often by one system than by the other "
         "over the test set, by compare-mt's smoothed share (a + 1) / (a + b + 2)."));
  {
    const QSignalBlocker block(pairs_);
    for (const auto& p : data_)
      pairs_->addItem(tr("%1 against %2")
                          .arg(names_.value(static_cast<qsizetype>(p.b)), names_.value(static_cast<qsizetype>(p.a))));
    pairs_->setCurrentIndex(pairs_->count() - 1);  // the last system, as in the sentence table
    pairs_->setEnabled(pairs_->count() > 1);
  }
  showPair(pairs_->currentIndex());
}

void NgramView::showPair(int pair) {
  if (pair < 0 || pair >= static_cast<int>(data_.size())) return;
  const auto& p = data_[static_cast<std::size_t>(pair)];
  const QString a = names_.value(static_cast<qsizetype>(p.a)), b = names_.value(static_cast<qsizetype>(p.b));
  a_title_->setText(tr("<b>%1</b> matches more often").arg(a.toHtmlEscaped()));
  b_title_->setText(tr("<b>%1</b> matches more often").arg(b.toHtmlEscaped()));
  fill(a_better_, p.a_better, a, b);
  fill(b_better_, p.b_better, a, b);
}

void NgramView::fill(QTableWidget* table, const std::vector<NgramDifference>& rows, const QString& a,
                     const QString& b) {
  table->setRowCount(0);
  table->setHorizontalHeaderLabels({tr("N-gram"), a, b});
  table->horizontalHeaderItem(1)->setToolTip(tr("Times %1 matched it in the references").arg(a));
  table->horizontalHeaderItem(2)->setToolTip(tr("Times %1 matched it in the references").arg(b));
  for (const auto& g : rows) {
    const int row = table->rowCount();
    table->insertRow(row);
    auto* text = new QTableWidgetItem(q(g.ngram));
    text->setToolTip(tr("Share of %1: %2").arg(a).arg(g.score, 0, 'f', 3));
    table->setItem(row, 0, text);
    for (int k = 0; k < 2; ++k) {
      const long count = k == 0 ? g.matches_a : g.matches_b;
      auto* item = new QTableWidgetItem(QString::number(count));
      item->setData(Qt::UserRole, static_cast<qlonglong>(count));
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table->setItem(row, k + 1, item);
    }
  }
  if (rows.empty()) {
    table->insertRow(0);
    auto* none = new QTableWidgetItem(tr("(none)"));
    none->setFlags(Qt::ItemIsEnabled);
    table->setItem(0, 0, none);
  }
}

}  // namespace ts::ui
