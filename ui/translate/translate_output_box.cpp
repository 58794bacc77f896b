// SPDX-License-Identifier: GPL-3.0-or-later
// The Translate panel's output: translation, figures, token probabilities and the n-best list.
#include "translate/translate_output_box.h"

#include <algorithm>
#include <cmath>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QTableWidget>
#include <QVBoxLayout>

#include "services/translation_service.h"
#include "widgets/attention_heatmap.h"
#include "widgets/plot_style.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

namespace {

QString format_ms(double ms) { return ms < 10 ? QString::number(ms, 'f', 1) : QString::number(qRound64(ms)); }

// Signed numbers with a real minus sign, as in the rest of the app's figures.
QString format_signed(double v, int decimals) {
  QString s = QString::number(v, 'f', decimals);
  if (s.startsWith(QLatin1Char('-'))) s.replace(0, 1, QChar(0x2212));
  return s;
}

}  // namespace

TranslateOutputBox::TranslateOutputBox(QWidget* parent) : QGroupBox(tr("Translation"), parent) {
  auto* v = new QVBoxLayout(this);
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("translateStatus"));
  status_->setForegroundRole(QPalette::PlaceholderText);
  status_->hide();
  output_ = new QLabel(this);
  output_->setObjectName(QStringLiteral("translateOutput"));
  output_->setWordWrap(true);
  output_->setTextFormat(Qt::PlainText);
  output_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  QFont big = output_->font();
  big.setPointSizeF(big.pointSizeF() * 1.7);
  output_->setFont(big);
  score_ = new QLabel(this);
  score_->setObjectName(QStringLiteral("translateScore"));
  score_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  score_->setToolTip(
      tr("Score: the log-probability normalised by the length penalty (what beam search ranks by). "
         "Log-probability: the sum over output tokens; p is its exponential."));
  latency_ = new QLabel(this);
  latency_->setObjectName(QStringLiteral("translateLatency"));
  latency_->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  error_ = new QLabel(this);
  error_->setObjectName(QStringLiteral("translateError"));
  error_->setWordWrap(true);
  error_->setTextFormat(Qt::PlainText);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->hide();

  tokens_ = new QTableWidget(2, 0, this);
  tokens_->setObjectName(QStringLiteral("translateTokens"));
  tokens_->setVerticalHeaderLabels({tr("token"), tr("p")});
  tokens_->horizontalHeader()->hide();
  tokens_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  tokens_->setSelectionMode(QAbstractItemView::NoSelection);
  tokens_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  tokens_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  tokens_->setToolTip(
      tr("Each output token with the probability the model gave it; click one to see which "
         "source tokens it read"));
  tokens_->setFixedHeight(2 * tokens_->verticalHeader()->defaultSectionSize() +
                          tokens_->horizontalScrollBar()->sizeHint().height() + 2 * tokens_->frameWidth() + 2);
  connect(tokens_, &QTableWidget::cellClicked, this, [this](int, int column) { Q_EMIT tokenClicked(column); });

  // The scale of the token colours, and the line a clicked token fills.
  legend_ = new QLabel(this);
  legend_->setObjectName(QStringLiteral("translateConfidenceLegend"));
  QString legend = tr("p:") + QLatin1Char(' ');
  for (double p : {0.05, 0.25, 0.5, 0.75, 0.95})
    legend += QStringLiteral("<span style=\"background-color:%1; color:#1f2933\">&nbsp;%2&nbsp;</span> ")
                  .arg(confidence_color(p).name())
                  .arg(p, 0, 'f', 2);
  legend_->setText(legend + tr("· unsure tokens are red; click one to see what it read"));
  legend_->setTextFormat(Qt::RichText);
  legend_->setForegroundRole(QPalette::PlaceholderText);
  focus_ = new QLabel(this);
  focus_->setObjectName(QStringLiteral("translateTokenFocus"));
  focus_->setTextFormat(Qt::RichText);
  focus_->setWordWrap(true);
  focus_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  focus_->hide();

  nbest_table_ = new QTableWidget(0, 4, this);
  nbest_table_->setObjectName(QStringLiteral("translateNbestTable"));
  nbest_table_->setHorizontalHeaderLabels({tr("#"), tr("Candidate"), tr("Score"), tr("Log-prob")});
  nbest_table_->verticalHeader()->hide();
  nbest_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  nbest_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  nbest_table_->setWordWrap(false);
  nbest_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  nbest_table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  nbest_table_->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
  nbest_table_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  nbest_table_->hide();  // shown when there is more than one candidate
  nbest_table_->setToolTip(tr("The candidates of beam search (or the samples drawn), best first"));

  v->addWidget(status_);
  v->addWidget(output_);
  auto* figures = new QHBoxLayout;
  figures->addWidget(score_);
  figures->addStretch(1);
  figures->addWidget(latency_);
  v->addLayout(figures);
  v->addWidget(error_);
  v->addWidget(tokens_);
  v->addWidget(legend_);
  v->addWidget(focus_);
  v->addWidget(nbest_table_);
  v->addStretch(1);
}

void TranslateOutputBox::showStatus(const QString& text) {
  status_->setText(text);
  status_->show();
}

void TranslateOutputBox::hideStatus() { status_->hide(); }

void TranslateOutputBox::showError(const QString& message, const QColor& color) {
  QPalette pal = error_->palette();
  pal.setColor(QPalette::WindowText, color);
  error_->setPalette(pal);
  error_->setText(message);
  error_->show();
}

void TranslateOutputBox::hideError() { error_->hide(); }

void TranslateOutputBox::clearResult() {
  output_->clear();
  score_->clear();
  latency_->clear();
  tokens_->setColumnCount(0);
  focused_ = -1;
  focus_->clear();
  focus_->hide();
  nbest_table_->setRowCount(0);
  nbest_table_->hide();
}

void TranslateOutputBox::showResult(const TranslationResult& r, const QString& model) {
  error_->hide();
  output_->setText(r.text.isEmpty() ? tr("(empty translation)") : r.text);
  score_->setText(tr("score %1 · log-probability %2 · p = %3")
                      .arg(format_signed(r.score, 3), format_signed(r.log_prob, 3))
                      .arg(std::exp(r.log_prob), 0, 'g', 3));
  latency_->setText(tr("translated in %1 ms by %2").arg(format_ms(r.milliseconds), model));

  // Per-token probabilities, coloured from unsure (red) to sure (green); dark text on the pale colours.
  focused_ = -1;
  focus_->hide();
  tokens_->setColumnCount(r.target_tokens.size());
  for (int i = 0; i < r.target_tokens.size(); ++i) {
    const double lp = i < r.token_log_probs.size() ? r.token_log_probs[i] : 0;
    const double p = std::exp(lp);
    auto* token = new QTableWidgetItem(r.target_tokens[i]);
    auto* prob = new QTableWidgetItem(QString::number(p, 'f', 2));
    for (auto* item : {token, prob}) {
      item->setTextAlignment(Qt::AlignCenter);
      item->setBackground(confidence_color(p));
      item->setForeground(QColor(0x1f, 0x29, 0x33));
    }
    tokens_->setItem(0, i, token);
    tokens_->setItem(1, i, prob);
  }

  nbest_table_->setRowCount(r.nbest.size());
  for (int i = 0; i < r.nbest.size(); ++i) {
    const auto& c = r.nbest[i];
    auto* rank = new QTableWidgetItem(QString::number(i + 1));
    auto* text = new QTableWidgetItem(c.text);
    auto* score = new QTableWidgetItem(format_signed(c.score, 3));
    auto* lp = new QTableWidgetItem(format_signed(c.log_prob, 3));
    text->setToolTip(c.text);
    for (auto* item : {rank, score, lp}) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    const QList<QTableWidgetItem*> items{rank, text, score, lp};
    for (int col = 0; col < items.size(); ++col) {
      if (i == 0) {
        QFont f = items[col]->font();
        f.setBold(true);
        items[col]->setFont(f);
      }
      nbest_table_->setItem(i, col, items[col]);
    }
  }

  nbest_table_->setVisible(r.nbest.size() > 1);  // one candidate is the translation above
}

// The n-best table takes the height of its rows (AdjustToContents; the header's height is only
// known once styled), up to about eight rows; more scroll.
void TranslateOutputBox::fitNbestTable() {
  nbest_table_->setMaximumHeight(8 * nbest_table_->verticalHeader()->defaultSectionSize() +
                                 2 * nbest_table_->horizontalHeader()->sizeHint().height());
  nbest_table_->updateGeometry();
}

// Each token's tooltip names the source token it attended to most in the map shown.
void TranslateOutputBox::updateTokenTips(const TranslationResult& result, const AttentionHeatmap& heatmap) {
  for (int i = 0; i < tokens_->columnCount(); ++i) {
    const double lp = i < result.token_log_probs.size() ? result.token_log_probs[i] : 0;
    QString tip = tr("%1\np = %2 (log p = %3)")
                      .arg(result.target_tokens.value(i))
                      .arg(std::exp(lp), 0, 'f', 4)
                      .arg(format_signed(lp, 3));
    if (i < heatmap.rowCount() && heatmap.columnCount() > 0) {
      int best = 0;
      for (int c = 1; c < heatmap.columnCount(); ++c)
        if (heatmap.value(i, c) > heatmap.value(i, best)) best = c;
      tip += tr("\nattended most to “%1” (%2)")
                 .arg(isolated(heatmap.columnLabels().value(best)))
                 .arg(heatmap.value(i, best), 0, 'f', 2);
    }
    for (int row = 0; row < 2; ++row)
      if (auto* item = tokens_->item(row, i)) item->setToolTip(tip);
  }
}

QString TranslateOutputBox::focusText() const { return focus_->isHidden() ? QString() : focus_->text(); }

void TranslateOutputBox::showTokenFocus(int index, const AttentionHeatmap& heatmap) {
  // The picked column in bold; the others as they were.
  for (int i = 0; i < tokens_->columnCount(); ++i)
    for (int row = 0; row < 2; ++row)
      if (auto* item = tokens_->item(row, i)) {
        QFont f = item->font();
        f.setBold(i == index);
        f.setUnderline(i == index && row == 0);
        item->setFont(f);
      }
  focused_ = index >= 0 && index < tokens_->columnCount() ? index : -1;
  if (focused_ < 0) {
    focus_->hide();
    return;
  }
  const QString token = tokens_->item(0, focused_) ? tokens_->item(0, focused_)->text() : QString();
  if (focused_ >= heatmap.rowCount() || heatmap.columnCount() == 0) {
    focus_->setText(
        left_to_right(tr("“%1”: no cross-attention to show for this token.").arg(isolated(token.toHtmlEscaped()))));
    focus_->show();
    return;
  }
  double top = 0;
  for (int c = 0; c < heatmap.columnCount(); ++c) top = std::max(top, heatmap.value(focused_, c));
  QString line = left_to_right(tr("“%1” read:").arg(isolated(token.toHtmlEscaped()))) + QLatin1Char(' ');
  for (int c = 0; c < heatmap.columnCount(); ++c) {
    const double w = heatmap.value(focused_, c);
    // Blue over white, the stronger the more weight (opaque: rich text has no alpha).
    const double a = top > 0 ? 0.08 + 0.8 * w / top : 0.08;
    const QColor bg =
        QColor::fromRgbF(static_cast<float>(1 - a * (1 - 0x31 / 255.0)), static_cast<float>(1 - a * (1 - 0x82 / 255.0)),
                         static_cast<float>(1 - a * (1 - 0xbd / 255.0)));
    const bool strong = top > 0 && w >= 0.5 * top;
    line += QStringLiteral("<span style=\"background-color:%1; color:%2;%3\">&nbsp;%4&nbsp;</span> ")
                .arg(bg.name(), a > 0.55 ? QStringLiteral("#ffffff") : QStringLiteral("#1f2933"),
                     strong ? QStringLiteral(" font-weight:600") : QString())
                .arg(heatmap.columnLabels().value(c).toHtmlEscaped());
  }
  focus_->setText(line);
  focus_->setToolTip(
      tr("The source tokens output token “%1” attended to in the layer and head shown below: the darker, the "
         "more weight")
          .arg(isolated(token)));
  focus_->show();
}

}  // namespace ts::ui
