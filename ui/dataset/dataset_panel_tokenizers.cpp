// SPDX-License-Identifier: GPL-3.0-or-later
// The Dataset panel's Tokenizers box: the tokenizer of each side (kind, SentencePiece size,
// lowercasing), the vocabulary settings (shared, min_freq, max_vocab), what the preview shows
// instead of training's tokenizers, and applying every change to the configuration. The
// vocabulary sizes and long-pair count in this box come from dataset_panel_statistics.cpp. Part
// of DatasetPanel (see dataset_panel.h).
#include "dataset/dataset_panel.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QFontMetrics>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStringList>

#include "dataset/dataset_util.h"
#include "dataset/side_tokenizer.h"
#include "shell/studio_state.h"

namespace ts::ui {
namespace {

/// Lets `box` be as narrow as the value `typical` needs (in the box's locale) rather than its widest value: "10,000,000" and
/// "1,000,000" made the Tokenizers box 37 px wider than the Dataset dock at 1280 x 800. A longer
/// value still shows, scrolled within its field.
void allow_narrow(QSpinBox* box, int typical) {
  const QFontMetrics metrics = box->fontMetrics();
  int widest = metrics.horizontalAdvance(box->specialValueText());
  for (int value : {box->minimum(), box->maximum()})
    widest = std::max(widest, metrics.horizontalAdvance(box->locale().toString(value)));
  const int spare = widest - metrics.horizontalAdvance(box->locale().toString(typical));
  if (spare > 0) box->setMinimumWidth(box->minimumSizeHint().width() - spare);
}

}  // namespace

using dataset::lang_name;
using dataset::side_tokenizer;
using dataset::SideTokenizer;
using dataset::split_value_text;

QWidget* DatasetPanel::buildTokenizerBox(QWidget* parent) {
  auto* tok_box = new QGroupBox(tr("Tokenizers"), parent);
  auto* grid = new QGridLayout(tok_box);
  grid->setVerticalSpacing(4);
  auto make_row = [&](int row, const QString& prefix, QLabel*& side, QComboBox*& kind, QSpinBox*& size,
                      QCheckBox*& lower, QLabel*& vocab) {
    side = new QLabel(tok_box);
    side->setObjectName(QStringLiteral("dataset%1Side").arg(prefix));
    side->setWordWrap(true);  // "Source (English):" may take two lines in a narrow dock
    kind = new QComboBox(tok_box);
    kind->setObjectName(QStringLiteral("dataset%1Tokenizer").arg(prefix));
    kind->addItem(tr("word"), QStringLiteral("word"));
    kind->addItem(tr("char"), QStringLiteral("char"));
    kind->addItem(tr("bpe"), QStringLiteral("bpe"));
    kind->addItem(tr("unigram"), QStringLiteral("unigram"));
    kind->setItemData(0, tr("Words and punctuation marks (ICU-aware lowercasing)"), Qt::ToolTipRole);
    kind->setItemData(1, tr("One token per character; spaces become \u2581"), Qt::ToolTipRole);
    kind->setItemData(2, tr("SentencePiece byte-pair encoding, trained on the training split"), Qt::ToolTipRole);
    kind->setItemData(3, tr("SentencePiece unigram model, trained on the training split"), Qt::ToolTipRole);
    size = new QSpinBox(tok_box);
    size->setObjectName(QStringLiteral("dataset%1PieceCount").arg(prefix));
    size->setRange(16, 1000000);
    size->setSingleStep(500);
    size->setKeyboardTracking(false);
    size->setGroupSeparatorShown(true);
    size->setToolTip(tr("SentencePiece vocabulary size: the number of pieces (bpe and unigram only)"));
    allow_narrow(size, 99999);
    lower = new QCheckBox(tr("lowercase"), tok_box);
    lower->setObjectName(QStringLiteral("dataset%1Lowercase").arg(prefix));
    lower->setToolTip(tr("Lowercase before tokenizing (smaller vocabulary; the model then writes lowercase)"));
    vocab = new QLabel(tok_box);
    vocab->setObjectName(QStringLiteral("dataset%1Vocab").arg(prefix));
    vocab->setWordWrap(true);  // "8,000 (configured)" may take two lines in a narrow dock
    vocab->setToolTip(tr("The vocabulary size training will use for this side"));
    grid->addWidget(side, row, 0);
    grid->addWidget(kind, row, 1);
    grid->addWidget(size, row, 2);
    grid->addWidget(lower, row, 3);
    grid->addWidget(vocab, row, 4);
  };
  make_row(0, QStringLiteral("Source"), src_side_, src_kind_, src_size_, src_lower_, src_vocab_);
  make_row(1, QStringLiteral("Target"), tgt_side_, tgt_kind_, tgt_size_, tgt_lower_, tgt_vocab_);
  grid->setColumnStretch(4, 1);

  auto* vocab_row = new QHBoxLayout;
  vocab_row->setSpacing(6);
  shared_vocab_ = new QCheckBox(tr("shared vocabulary"), tok_box);
  shared_vocab_->setObjectName(QStringLiteral("datasetSharedVocab"));
  shared_vocab_->setToolTip(
      tr("One tokenizer and vocabulary for both sides (data.shared_vocab); needed to share embeddings"));
  min_freq_ = new QSpinBox(tok_box);
  min_freq_->setObjectName(QStringLiteral("datasetMinFreq"));
  min_freq_->setRange(1, 1000000);
  min_freq_->setKeyboardTracking(false);
  min_freq_->setToolTip(tr("Tokens seen fewer times in the training split become <unk> (data.min_freq)"));
  max_vocab_ = new QSpinBox(tok_box);
  max_vocab_->setObjectName(QStringLiteral("datasetMaxVocab"));
  max_vocab_->setRange(0, 10000000);
  max_vocab_->setSingleStep(1000);
  max_vocab_->setKeyboardTracking(false);
  max_vocab_->setGroupSeparatorShown(true);
  max_vocab_->setSpecialValueText(tr("no limit"));
  max_vocab_->setToolTip(tr("Largest vocabulary per side, the four special tokens included (data.max_vocab)"));
  allow_narrow(min_freq_, 999);
  allow_narrow(max_vocab_, 99999);
  vocab_row->addWidget(shared_vocab_);
  vocab_row->addSpacing(8);
  vocab_row->addWidget(new QLabel(tr("min freq"), tok_box));
  vocab_row->addWidget(min_freq_);
  vocab_row->addSpacing(8);
  vocab_row->addWidget(new QLabel(tr("max"), tok_box));
  vocab_row->addWidget(max_vocab_);
  vocab_row->addStretch(1);
  grid->addLayout(vocab_row, 2, 0, 1, 5);
  tokenizer_note_ = new QLabel(tok_box);
  tokenizer_note_->setObjectName(QStringLiteral("datasetTokenizerNote"));
  tokenizer_note_->setWordWrap(true);
  grid->addWidget(tokenizer_note_, 3, 0, 1, 5);
  long_pairs_ = new QLabel(tok_box);
  long_pairs_->setObjectName(QStringLiteral("datasetLongPairs"));
  long_pairs_->setWordWrap(true);
  grid->addWidget(long_pairs_, 4, 0, 1, 5);

  auto connect_side = [this](const QString& side, QComboBox* kind, QSpinBox* size, QCheckBox* lower) {
    connect(kind, qOverload<int>(&QComboBox::currentIndexChanged), this, [this, side, kind] {
      applySetting(QStringLiteral("data.%1_tokenizer.kind=%2").arg(side, kind->currentData().toString()));
    });
    connect(size, qOverload<int>(&QSpinBox::valueChanged), this, [this, side](int value) {
      applySetting(QStringLiteral("data.%1_tokenizer.vocab_size=%2").arg(side).arg(value));
    });
    connect(lower, &QCheckBox::toggled, this, [this, side](bool on) {
      applySetting(QStringLiteral("data.%1_tokenizer.lowercase=%2")
                       .arg(side, on ? QStringLiteral("true") : QStringLiteral("false")));
    });
  };
  connect_side(QStringLiteral("src"), src_kind_, src_size_, src_lower_);
  connect_side(QStringLiteral("tgt"), tgt_kind_, tgt_size_, tgt_lower_);
  connect(shared_vocab_, &QCheckBox::toggled, this, [this](bool on) {
    applySetting(QStringLiteral("data.shared_vocab=%1").arg(on ? QStringLiteral("true") : QStringLiteral("false")));
  });
  connect(min_freq_, qOverload<int>(&QSpinBox::valueChanged), this,
          [this](int value) { applySetting(QStringLiteral("data.min_freq=%1").arg(value)); });
  connect(max_vocab_, qOverload<int>(&QSpinBox::valueChanged), this,
          [this](int value) { applySetting(QStringLiteral("data.max_vocab=%1").arg(value)); });
  return tok_box;
}

void DatasetPanel::applySetting(const QString& assignment) {
  QString error;
  if (!state_->applySetting(assignment, &error)) {
    showConfigValues();  // back to what the configuration holds
    tokenizer_note_->setText(tr("Not applied: %1").arg(error));
    tokenizer_note_->show();
  }
}

// ------------------------------------------------------------------ showing values

QString DatasetPanel::sideName(bool source) const {
  const auto corpus = state_->corpus();
  const bool english = source == state_->direction().english_is_source;
  return lang_name(english ? corpus->english : corpus->other);
}

void DatasetPanel::showConfigValues() {
  const DataConfig& data = state_->config().data;
  const auto set_side = [&](QLabel* side, QComboBox* kind, QSpinBox* size, QCheckBox* lower, bool source,
                            const TokenizerConfig& config, bool enabled) {
    side->setText(tr("%1 (%2):").arg(source ? tr("Source") : tr("Target"), sideName(source)));
    const QSignalBlocker b1(kind), b2(size), b3(lower);
    const int index = kind->findData(QString::fromLatin1(tokenizer_kind_name(config.kind)));
    kind->setCurrentIndex(index < 0 ? 0 : index);
    size->setValue(config.vocab_size);
    size->setEnabled(enabled && is_sentencepiece(config.kind));
    lower->setChecked(config.lowercase);
    kind->setEnabled(enabled);
    lower->setEnabled(enabled);
  };
  set_side(src_side_, src_kind_, src_size_, src_lower_, true, data.src_tokenizer, true);
  set_side(tgt_side_, tgt_kind_, tgt_size_, tgt_lower_, false,
           data.shared_vocab ? data.src_tokenizer : data.tgt_tokenizer, !data.shared_vocab);
  {
    const QSignalBlocker b1(shared_vocab_), b2(min_freq_), b3(max_vocab_);
    shared_vocab_->setChecked(data.shared_vocab);
    min_freq_->setValue(data.min_freq);
    max_vocab_->setValue(data.max_vocab);
  }
  if (!dev_->hasFocus()) dev_->setText(split_value_text(data.dev));
  if (!test_->hasFocus()) test_->setText(split_value_text(data.test));

  const auto corpus = state_->corpus();
  const bool ens = state_->direction().english_is_source;
  QStringList notes, approximations;
  for (bool source : {true, false}) {
    const Language& language = source == ens ? corpus->english : corpus->other;
    const SideTokenizer side = side_tokenizer(data, source, language);
    const QString name = sideName(source);
    if (side.cjk_chars)
      notes << tr("%1 is split per character (data.cjk_chars: words are not separated by spaces).").arg(name);
    if (side.approximate)
      approximations
          << tr("%1 at %2 level").arg(name, side.config.kind == TokenizerKind::kChar ? tr("character") : tr("word"));
  }
  if (!approximations.isEmpty())
    notes << tr("SentencePiece is trained when training starts; the preview and histograms show %1.")
                 .arg(approximations.join(tr(" and ")));
  if (data.shared_vocab) notes << tr("Shared vocabulary: the source tokenizer is used for both sides.");
  tokenizer_note_->setText(notes.join(QLatin1Char('\n')));
  tokenizer_note_->setVisible(!notes.isEmpty());
}

}  // namespace ts::ui
