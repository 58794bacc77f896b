// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare panel's summary table (see summary_table.h).
#include "compare/summary_table.h"
#include "widgets/qt_text.h"

#include <algorithm>
#include <cmath>

#include <QHeaderView>
#include <QScrollBar>

namespace ts::ui {

namespace {

QTableWidgetItem* number_item(const QString& text, double value) {
  auto* item = new QTableWidgetItem(text);
  item->setData(Qt::UserRole, value);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

QString interval_text(const ScoreEstimate& e, int resamples) {
  if (resamples == 0) return QString::number(e.score, 'f', 2);
  return QStringLiteral("%1 (%2–%3)").arg(e.score, 0, 'f', 2).arg(e.low, 0, 'f', 2).arg(e.high, 0, 'f', 2);
}

}  // namespace

SummaryTable::SummaryTable(QWidget* parent) : QTableWidget(0, ColumnCount, parent) {
  setObjectName(QStringLiteral("compareSummary"));
  // Two-line headers: on one line "BLEU (95% interval)" is wider than its numbers and was cut.
  setHorizontalHeaderLabels({tr("System"), tr("BLEU\n(95% interval)"), tr("chrF\n(95% interval)"), tr("p (BLEU)"),
                             tr("p (chrF)"), tr("Mean sentence\nscore")});
  horizontalHeaderItem(PBleu)->setToolTip(
      tr("Paired bootstrap resampling against the baseline: the chance of a difference this large if the two "
         "systems were equally good. * marks p < 0.05"));
  horizontalHeaderItem(PChrf)->setToolTip(horizontalHeaderItem(PBleu)->toolTip());
  horizontalHeaderItem(Bleu)->setToolTip(
      tr("Corpus BLEU (sacreBLEU), between the 2.5th and 97.5th percentiles of the resamples"));
  horizontalHeaderItem(Chrf)->setToolTip(
      tr("Corpus chrF (sacreBLEU), between the 2.5th and 97.5th percentiles of the resamples"));
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setSelectionMode(QAbstractItemView::SingleSelection);
  setWordWrap(false);
  verticalHeader()->hide();
  verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
  horizontalHeader()->setStretchLastSection(false);
  resizeColumnsToContents();  // the headers whole before there are numbers
  fitHeight();
}

void SummaryTable::fitHeight() {
  // Every system in view (up to eight; more scroll), so the summary never hides a row.
  const int rows = std::clamp(rowCount(), 2, 8);
  int height =
      horizontalHeader()->sizeHint().height() + 2 * frameWidth() + rows * verticalHeader()->defaultSectionSize();
  // Room for the horizontal scroll bar whether or not it shows yet: it appears only after the
  // layout, when a narrow dock cannot show every column.
  height += horizontalScrollBar()->sizeHint().height();
  setFixedHeight(height);
}

void SummaryTable::clearComparison() {
  setRowCount(0);
  fitHeight();
}

void SummaryTable::setComparison(const Comparison& c, const QStringList& tooltips) {
  setRowCount(0);
  const bool resampled = c.resamples > 0;
  const QString metric = q(c.sentence_metric);
  horizontalHeaderItem(MeanSentence)->setText(tr("Mean sentence\n%1").arg(metric));
  const QColor better(0x2e, 0x8b, 0x57), worse(0xc0, 0x39, 0x2b);
  for (std::size_t s = 0; s < c.systems.size(); ++s) {
    const auto& r = c.systems[s];
    const int row = static_cast<int>(s);
    insertRow(row);
    auto* name = new QTableWidgetItem(q(r.name));
    if (row < tooltips.size()) name->setToolTip(tooltips[row]);
    if (s == 0) {
      QFont bold = name->font();
      bold.setBold(true);
      name->setFont(bold);
    }
    setItem(row, System, name);
    setItem(row, Bleu, number_item(interval_text(r.bleu, c.resamples), r.bleu.score));
    setItem(row, Chrf, number_item(interval_text(r.chrf, c.resamples), r.chrf.score));
    const std::pair<double, double> scores[] = {{r.p_bleu, r.bleu.score - c.systems[0].bleu.score},
                                                {r.p_chrf, r.chrf.score - c.systems[0].chrf.score}};
    for (int k = 0; k < 2; ++k) {
      const auto [p, difference] = scores[k];
      const int column = k == 0 ? PBleu : PChrf;
      QTableWidgetItem* item;
      if (s == 0) {
        item = number_item(tr("baseline"), 1.0);
        item->setToolTip(tr("The other systems are tested against this one"));
      } else if (!resampled) {
        item = number_item(QStringLiteral("–"), p);
        item->setToolTip(tr("No resampling, no p-value"));
      } else {
        const bool significant = p < kSignificance;
        item = number_item(QString::number(p, 'f', 4) + (significant ? QStringLiteral(" *") : QString()), p);
        if (significant) {
          QFont bold = item->font();
          bold.setBold(true);
          item->setFont(bold);
          item->setForeground(difference > 0 ? better : worse);
          item->setToolTip(tr("%1 than the baseline by %2, and significant (p < %3)")
                               .arg(difference > 0 ? tr("Better") : tr("Worse"))
                               .arg(std::abs(difference), 0, 'f', 2)
                               .arg(kSignificance));
        } else {
          item->setToolTip(tr("Not significantly different from the baseline (p ≥ %1)").arg(kSignificance));
        }
      }
      setItem(row, column, item);
    }
    setItem(row, MeanSentence, number_item(QString::number(r.mean_sentence_score, 'f', 2), r.mean_sentence_score));
  }
  resizeColumnsToContents();
  fitHeight();
}

QString SummaryTable::caption(const Comparison& c) {
  QString text = c.sentences == 1 ? tr("1 test sentence") : tr("%1 test sentences").arg(c.sentences);
  if (c.resamples > 0)
    text += tr("; 95% intervals and p-values against %1 by paired bootstrap resampling (%2 resamples); * p < %3")
                .arg(c.systems.empty() ? QString() : q(c.systems.front().name))
                .arg(c.resamples)
                .arg(kSignificance);
  text += tr("; sentence scores: sentence %1").arg(q(c.sentence_metric));
  return text;
}

}  // namespace ts::ui
