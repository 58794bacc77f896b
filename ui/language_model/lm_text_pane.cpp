// SPDX-License-Identifier: GPL-3.0-or-later
#include "language_model/lm_text_pane.h"

#include <algorithm>

#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include "language_model/lm_util.h"
#include "shell/studio_state.h"

namespace ts::ui {

using lm_util::number;

namespace {
// "U+001B": a character's code point, as the vocabulary table names it.
QString code_point_text(QChar c) {
  return QStringLiteral("U+%1").arg(uint{c.unicode()}, 4, 16, QLatin1Char('0')).toUpper();
}
}  // namespace

QString visible_token(const QString& token) {
  QString out;
  for (const QChar c : token) {
    if (c == QLatin1Char('\n'))
      out += QStringLiteral("⏎");
    else if (c == QLatin1Char(' '))
      out += QStringLiteral("␣");
    else if (c == QLatin1Char('\t'))
      out += QStringLiteral("⇥");
    else if (c.category() == QChar::Other_Control)
      out += code_point_text(c);
    else
      out += c;
  }
  return out;
}

LmTextPane::LmTextPane(QWidget* parent) : QGroupBox(tr("Text"), parent) {
  auto* text_layout = new QVBoxLayout(this);
  auto* open = new QPushButton(tr("Open text…"));
  open->setObjectName(QStringLiteral("lmOpenText"));
  open->setToolTip(tr("Any UTF-8 text file: a book, your notes. It is split 90/10 into train and val, in order."));
  connect(open, &QPushButton::clicked, this, &LmTextPane::openRequested);
  text_path_ = new QLabel(tr("No text open."));
  text_path_->setObjectName(QStringLiteral("lmTextPath"));
  text_path_->setWordWrap(true);
  text_path_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  text_summary_ = new QLabel;
  text_summary_->setObjectName(QStringLiteral("lmTextSummary"));
  text_summary_->setWordWrap(true);
  text_error_ = new QLabel;
  text_error_->setObjectName(QStringLiteral("lmTextError"));
  text_error_->setWordWrap(true);
  text_error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  text_error_->setVisible(false);
  vocab_table_ = new QTableWidget(0, 3);
  vocab_table_->setObjectName(QStringLiteral("lmVocabulary"));
  vocab_table_->setHorizontalHeaderLabels({tr("Token"), tr("Count"), tr("Share")});
  vocab_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  vocab_table_->verticalHeader()->setVisible(false);
  vocab_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  vocab_table_->setMinimumHeight(140);
  vocab_table_->setToolTip(tr("The text's vocabulary, most frequent first (⏎ newline, ␣ space, ⇥ tab)."));
  text_layout->addWidget(open);
  text_layout->addWidget(text_path_);
  text_layout->addWidget(text_error_);
  text_layout->addWidget(text_summary_);
  text_layout->addWidget(vocab_table_, 1);
}

void LmTextPane::showText(const LmTextInfo& info) {
  hideError();
  text_path_->setText(QDir::toNativeSeparators(info.path));
  text_path_->setToolTip(info.path);
  text_summary_->setText(
      tr("%1 characters · %2 lines · %3<br>vocabulary <b>%4</b> tokens (%5) · train %6 / val %7 tokens<br>"
         "bigram table on val: <b>%8</b> nats/token · knowing nothing: %9")
          .arg(number(info.chars), number(info.lines), format_bytes(static_cast<double>(info.bytes)))
          .arg(info.vocab_size)
          .arg(info.tokenizer, number(info.train_tokens), number(info.val_tokens))
          .arg(info.bigram_loss, 0, 'f', 3)
          .arg(info.uniform_loss, 0, 'f', 3));
  const double total = static_cast<double>(info.train_tokens + info.val_tokens);
  vocab_table_->setRowCount(info.tokens.size());
  for (int i = 0; i < info.tokens.size(); ++i) {
    const auto& [token, count] = info.tokens[i];
    auto* t = new QTableWidgetItem(visible_token(token));
    t->setToolTip(token.size() == 1 ? code_point_text(token.at(0)) : token);
    auto* c = new QTableWidgetItem(number(count));
    c->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    auto* s = new QTableWidgetItem(
        QStringLiteral("%1%").arg(100.0 * static_cast<double>(count) / std::max(1.0, total), 0, 'f', 2));
    s->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    vocab_table_->setItem(i, 0, t);
    vocab_table_->setItem(i, 1, c);
    vocab_table_->setItem(i, 2, s);
  }
}

void LmTextPane::showError(const QString& message) {
  text_error_->setText(QStringLiteral("⚠ ") + message);
  text_error_->setVisible(true);
}

void LmTextPane::hideError() { text_error_->setVisible(false); }

}  // namespace ts::ui
