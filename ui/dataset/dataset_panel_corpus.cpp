// SPDX-License-Identifier: GPL-3.0-or-later
// The Dataset panel's Corpus box: the file in use (open another, or the demo), its pairs, skipped
// lines and first problems, the translation direction, and the dev/test split sizes with their
// edits. Part of DatasetPanel (see dataset_panel.h); the rest of the panel is in the other
// dataset_panel_*.cpp files.
#include "dataset/dataset_panel.h"

#include <algorithm>
#include <exception>
#include <string>

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStringList>

#include "dataset/dataset_util.h"
#include "shell/studio_state.h"
#include "ts/text/split.h"

namespace ts::ui {

using dataset::lang_name;
using dataset::number;
using dataset::split_value_text;

QWidget* DatasetPanel::buildCorpusBox(QWidget* parent) {
  // Corpus, direction and split in one compact form: the panel must work in a 560×800 dock.
  auto* corpus_box = new QGroupBox(tr("Corpus"), parent);
  auto* corpus_form = new QFormLayout(corpus_box);
  corpus_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  corpus_form->setVerticalSpacing(4);
  auto* path_row = new QHBoxLayout;
  path_row->setSpacing(6);
  path_ = new QLineEdit(corpus_box);
  path_->setObjectName(QStringLiteral("datasetPath"));
  path_->setReadOnly(true);
  path_->setToolTip(tr("The corpus file in use (Tatoeba/Anki format: English<TAB>other language)"));
  open_ = new QPushButton(tr("Open…"), corpus_box);
  open_->setObjectName(QStringLiteral("datasetOpen"));
  open_->setToolTip(tr("Read another corpus file (read in the background)"));
  demo_ = new QPushButton(tr("Demo"), corpus_box);
  demo_->setObjectName(QStringLiteral("datasetDemo"));
  demo_->setToolTip(tr("Use the built-in generated German–English corpus"));
  path_row->addWidget(path_, 1);
  path_row->addWidget(open_);
  path_row->addWidget(demo_);
  corpus_form->addRow(tr("File:"), path_row);

  auto* count_row = new QHBoxLayout;
  count_row->setSpacing(6);
  pair_count_ = new QLabel(corpus_box);
  pair_count_->setObjectName(QStringLiteral("datasetPairCount"));
  skipped_ = new QLabel(corpus_box);
  skipped_->setObjectName(QStringLiteral("datasetSkipped"));
  skipped_->setToolTip(
      tr("Malformed lines (no tab, an empty side, invalid UTF-8, absurdly long) are skipped, never fatal"));
  count_row->addWidget(pair_count_);
  count_row->addWidget(new QLabel(QStringLiteral("\u00B7"), corpus_box));
  count_row->addWidget(skipped_);
  count_row->addStretch(1);
  corpus_form->addRow(tr("Pairs:"), count_row);
  problems_ = new QLabel(corpus_box);
  problems_->setObjectName(QStringLiteral("datasetProblems"));
  problems_->setWordWrap(true);
  problems_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  problems_->setToolTip(tr("The first skipped lines, with their line numbers in the file"));
  corpus_form->addRow(QString(), problems_);
  file_details_ = new QLabel(corpus_box);
  file_details_->setObjectName(QStringLiteral("datasetFileDetails"));
  file_details_->setWordWrap(true);
  corpus_form->addRow(tr("Content:"), file_details_);

  auto* direction_row = new QHBoxLayout;
  direction_row->setSpacing(6);
  direction_ = new QComboBox(corpus_box);
  direction_->setObjectName(QStringLiteral("datasetDirection"));
  direction_->setToolTip(tr("Which language the model reads (source) and which it writes (target)"));
  languages_ = new QLabel(corpus_box);
  languages_->setObjectName(QStringLiteral("datasetLanguages"));
  languages_->setToolTip(tr("Inferred from the file name (deu.txt: German, cmn.txt: Chinese, …)"));
  languages_->setWordWrap(true);
  direction_row->addWidget(direction_);
  direction_row->addWidget(languages_, 1);
  corpus_form->addRow(tr("Direction:"), direction_row);

  auto* held_out = new QHBoxLayout;
  held_out->setSpacing(6);
  dev_ = new QLineEdit(corpus_box);
  dev_->setObjectName(QStringLiteral("datasetDev"));
  test_ = new QLineEdit(corpus_box);
  test_->setObjectName(QStringLiteral("datasetTest"));
  for (QLineEdit* edit : {dev_, test_}) {
    edit->setMaximumWidth(edit->fontMetrics().horizontalAdvance(QStringLiteral("0.0000")) + 16);
    edit->setToolTip(tr("A fraction below 1 (0.1 = 10% of the pairs) or a number of pairs (500)"));
  }
  held_out->addWidget(new QLabel(tr("dev"), corpus_box));
  held_out->addWidget(dev_);
  held_out->addWidget(new QLabel(tr("test"), corpus_box));
  held_out->addWidget(test_);
  split_ = new QLabel(corpus_box);
  split_->setObjectName(QStringLiteral("datasetSplit"));
  split_->setWordWrap(true);
  split_->setToolTip(
      tr("Deterministic shuffle from data.split_seed. With data.split grouped (the default), pairs that "
         "share a source sentence (alternate translations) stay in one part, so no dev or test source "
         "occurs in training. The vocabularies are built from the training pairs only."));
  held_out->addSpacing(6);
  held_out->addWidget(split_, 1);
  corpus_form->addRow(tr("Split:"), held_out);

  connect(open_, &QPushButton::clicked, this, [this] {
    auto* dialog = new QFileDialog(this, tr("Open corpus"), QFileInfo(state_->corpusPath()).absolutePath(),
                                   tr("Tatoeba/Anki corpora (*.txt *.tsv);;All files (*)"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setFileMode(QFileDialog::ExistingFile);
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& file) { state_->loadCorpus(file); });
    dialog->open();
  });
  connect(demo_, &QPushButton::clicked, this, [this] { state_->loadDemoCorpus(); });
  connect(direction_, qOverload<int>(&QComboBox::currentIndexChanged), this,
          [this](int index) { state_->setEnglishIsSource(index == 0); });
  connect(dev_, &QLineEdit::editingFinished, this, [this] { applySplit(dev_, "dev"); });
  connect(test_, &QLineEdit::editingFinished, this, [this] { applySplit(test_, "test"); });
  return corpus_box;
}

void DatasetPanel::applySplit(QLineEdit* edit, const char* key) {
  const double current = std::string(key) == "dev" ? state_->config().data.dev : state_->config().data.test;
  bool ok = false;
  const double value = QLocale::c().toDouble(edit->text().trimmed().replace(QLatin1Char(','), QLatin1Char('.')), &ok);
  QString problem;
  if (!ok) {
    problem = tr("data.%1: \"%2\" is not a number").arg(QLatin1String(key), edit->text());
  } else {
    try {
      resolve_split_size(value, state_->corpus()->pairs.size());
    } catch (const std::exception& e) {
      problem = tr("data.%1: %2").arg(QLatin1String(key), QString::fromStdString(e.what()));
    }
  }
  if (!problem.isEmpty()) {
    edit->setText(split_value_text(current));
    showSplit();
    split_->setText(split_->text() + QStringLiteral("\n") + problem);
    return;
  }
  if (value == current) return;
  QString error;
  if (!state_->applySetting(QStringLiteral("data.%1=%2").arg(QLatin1String(key), split_value_text(value)), &error)) {
    edit->setText(split_value_text(current));
    split_->setText(error);
  }
}

// ------------------------------------------------------------------ showing values

void DatasetPanel::showCorpusInfo() {
  const auto corpus = state_->corpus();
  const auto& stats = corpus->stats;
  if (state_->isDemo()) {
    path_->setText(tr("demo corpus (built in)"));
    path_->setToolTip(tr("Generated by the program: German–English sentences from a small grammar"));
  } else {
    path_->setText(QDir::toNativeSeparators(state_->corpusPath()));
    path_->setToolTip(QDir::toNativeSeparators(QFileInfo(state_->corpusPath()).absoluteFilePath()));
  }
  path_->setCursorPosition(0);
  pair_count_->setText(tr("%1 pairs").arg(number(corpus->pairs.size())));
  languages_->setText(QStringLiteral("%1 (%2) · %3 (%4)")
                          .arg(lang_name(corpus->english), QString::fromStdString(corpus->english.code),
                               lang_name(corpus->other), QString::fromStdString(corpus->other.code)));
  QStringList details;
  if (state_->isDemo()) {
    details << tr("%1 of text generated in memory").arg(format_bytes(static_cast<double>(stats.bytes)));
  } else {
    details << format_bytes(static_cast<double>(stats.bytes));
    details << tr("%1 lines").arg(number(stats.lines));
    details << (stats.had_bom ? tr("UTF-8 with BOM") : tr("UTF-8"));
    details << (stats.crlf ? tr("CRLF line endings") : tr("LF line endings"));
    if (stats.blank_lines == 1) details << tr("1 blank line");
    if (stats.blank_lines > 1) details << tr("%1 blank lines").arg(number(stats.blank_lines));
  }
  file_details_->setText(details.join(QStringLiteral(" · ")));

  if (stats.skipped == 0) {
    skipped_->setText(tr("no lines skipped"));
    problems_->clear();
    problems_->hide();
  } else {
    skipped_->setText(stats.skipped == 1 ? tr("1 line skipped") : tr("%1 lines skipped").arg(number(stats.skipped)));
    QStringList lines;
    for (const auto& p : stats.first_problems)
      lines << tr("line %1: %2").arg(number(p.line), QString::fromStdString(p.reason));
    if (stats.skipped > stats.first_problems.size())
      lines << tr("… and %1 more").arg(number(stats.skipped - stats.first_problems.size()));
    problems_->setText(lines.join(QLatin1Char('\n')));
    problems_->show();
  }
}

void DatasetPanel::showDirection() {
  const auto corpus = state_->corpus();
  const QString en = lang_name(corpus->english);
  const QString other = lang_name(corpus->other);
  // Updated in place: this also runs from the combo's own signal (via directionChanged).
  const QSignalBlocker block(direction_);
  while (direction_->count() < 2) direction_->addItem(QString());
  direction_->setItemText(0, QStringLiteral("%1 \u2192 %2").arg(en, other));
  direction_->setItemText(1, QStringLiteral("%1 \u2192 %2").arg(other, en));
  direction_->setCurrentIndex(state_->direction().english_is_source ? 0 : 1);
}

QString DatasetPanel::splitCounts(std::size_t train, std::size_t dev, std::size_t test) {
  const std::size_t total = std::max<std::size_t>(1, train + dev + test);
  const auto share = [total](std::size_t n) {
    return QString::number(100.0 * n / total, 'f', n * 1000 < total ? 2 : 1);
  };
  return tr("train %1 · dev %2 (%3%) · test %4 (%5%) pairs")
      .arg(number(train), number(dev), share(dev), number(test), share(test));
}

void DatasetPanel::showSplit() {
  const DataConfig& data = state_->config().data;
  const std::size_t total = state_->corpus()->pairs.size();
  try {
    const std::size_t test = resolve_split_size(data.test, total);
    const std::size_t dev = resolve_split_size(data.dev, total);
    if (test + dev >= total) {
      split_->setText(tr("dev %1 + test %2 leave no training pair out of %3; lower data.dev or data.test")
                          .arg(number(dev), number(test), number(total)));
      return;
    }
    split_->setText(splitCounts(total - dev - test, dev, test));
  } catch (const std::exception& e) {
    split_->setText(QString::fromStdString(e.what()));
  }
}

}  // namespace ts::ui
