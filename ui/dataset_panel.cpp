// SPDX-License-Identifier: GPL-3.0-or-later
#include "dataset_panel.h"
#include "widget_lifetime.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QProgressBar>
#include <QPromise>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <qcustomplot.h>

#include "plot_style.h"
#include "studio_state.h"
#include "ts/text/split.h"
#include "ts/text/vocab.h"

namespace ts::ui {

// ------------------------------------------------------------------ analysis (off the GUI thread)

/// Token statistics of one side over the whole corpus.
struct SideAnalysis {
  std::vector<std::size_t> histogram;  // histogram[n] = sentences with n tokens
  std::size_t total_tokens = 0;
  std::size_t max = 0;
  std::size_t distinct = 0;  // distinct tokens in the training split
  std::size_t vocab = 0;     // the vocabulary training builds (specials included)
};

struct DatasetAnalysis {
  QString key;  // the settings it was computed for
  SideAnalysis src, tgt;
  std::size_t pairs = 0;
  std::size_t train = 0;         // pairs the vocabulary was built from
  std::size_t too_long = 0;      // training pairs longer than data.max_len (dropped by training)
  bool split_ok = true;
  QString error;
};

namespace {

constexpr int kCacheLimit = 4000;

// The same rule as core/src/train/data.cpp: a Chinese/Japanese side with a "word" tokenizer is
// split per character (data.cjk_chars).
bool is_cjk_language(const std::string& code) { return code == "zh" || code == "ja" || code == "cmn" || code == "jpn"; }

bool is_sentencepiece(const std::string& kind) { return kind == "bpe" || kind == "unigram"; }

/// What the panel tokenises with for one side, and how that relates to what training will use.
struct SideTokenizer {
  TokenizerConfig config;
  bool approximate = false;  // bpe/unigram shown at word (or character) level
  bool cjk_chars = false;    // a "word" tokenizer switched to characters for Chinese/Japanese
};

SideTokenizer side_tokenizer(const DataConfig& data, bool source, const Language& language) {
  SideTokenizer side;
  // With a shared vocabulary training uses the source tokenizer for both sides, unchanged.
  side.config = data.shared_vocab || source ? data.src_tokenizer : data.tgt_tokenizer;
  if (is_sentencepiece(side.config.kind)) {
    side.approximate = true;
    side.config.kind = "word";
    // Words of a language without spaces would be whole sentences: characters are closer.
    if (is_cjk_language(language.code)) side.config.kind = "char";
    return side;
  }
  if (!data.shared_vocab && data.cjk_chars && side.config.kind == "word" && is_cjk_language(language.code)) {
    side.config.kind = "char";
    side.cjk_chars = true;
  }
  return side;
}

/// make_tokenizer for word/char; a Chinese conversion this build cannot do falls back to none so
/// the preview still works (training reports the real error).
std::shared_ptr<const Tokenizer> build_tokenizer(TokenizerConfig config, QString* problem = nullptr) {
  try {
    return make_tokenizer(config);
  } catch (const std::exception& e) {
    if (problem) *problem = QString::fromStdString(e.what());
  }
  config.chinese = "none";
  try {
    return make_tokenizer(config);
  } catch (const std::exception&) {
    config = TokenizerConfig{};
    return make_tokenizer(config);
  }
}

bool is_special(const std::string& token) {
  return token == Vocab::kPadToken || token == Vocab::kUnkToken || token == Vocab::kBosToken || token == Vocab::kEosToken;
}

/// The size Vocab::build gives for these counts: specials plus the tokens seen at least
/// `min_freq` times, capped at `max_vocab` entries in all. Counting keeps memory flat where
/// building the real Vocab would need every tokenised training sentence at once.
std::size_t vocab_size(const std::unordered_map<std::string, std::size_t>& counts, int min_freq, int max_vocab,
                       std::size_t* distinct) {
  std::size_t kept = 0;
  const auto threshold = static_cast<std::size_t>(std::max(min_freq, 1));
  std::size_t all = 0;
  for (const auto& [token, count] : counts) {
    if (is_special(token)) continue;
    ++all;
    if (count >= threshold) ++kept;
  }
  if (distinct) *distinct = all;
  const std::size_t specials = 4;
  if (max_vocab > 0) {
    const auto cap = static_cast<std::size_t>(max_vocab);
    kept = std::min(kept, cap - std::min(cap, specials));
  }
  return specials + kept;
}

void analyse(QPromise<DatasetAnalysis>& promise, const std::shared_ptr<const Corpus>& corpus, bool english_is_source,
             const DataConfig& data, const QString& key) {
  DatasetAnalysis out;
  out.key = key;
  const auto& pairs = corpus->pairs;
  const std::size_t n = pairs.size();
  out.pairs = n;
  promise.setProgressRange(0, 100);
  promise.setProgressValue(0);

  const Language& src_lang = english_is_source ? corpus->english : corpus->other;
  const Language& tgt_lang = english_is_source ? corpus->other : corpus->english;
  const SideTokenizer src_side = side_tokenizer(data, true, src_lang);
  const SideTokenizer tgt_side = side_tokenizer(data, false, tgt_lang);
  const auto src_tok = build_tokenizer(src_side.config);
  const auto tgt_tok = build_tokenizer(tgt_side.config);

  // Which pairs are in the training split: split_pairs shuffles positions from the seed alone,
  // so splitting the pair numbers gives the same partition as splitting the pairs.
  std::vector<char> in_train(n, 1);
  out.train = n;
  try {
    std::vector<SentencePair> numbered(n);
    for (std::size_t i = 0; i < n; ++i) numbered[i].src = std::to_string(i);
    const DataSplit split = split_pairs(numbered, SplitConfig{data.dev, data.test, data.split_seed});
    std::fill(in_train.begin(), in_train.end(), 0);
    for (const auto& p : split.train) in_train[std::stoul(p.src)] = 1;
    out.train = split.train.size();
  } catch (const std::exception& e) {
    out.split_ok = false;  // the vocabulary is then counted over every pair
    out.error = QString::fromStdString(e.what());
  }

  std::unordered_map<std::string, std::size_t> src_counts, tgt_counts;
  auto& tgt_counter = data.shared_vocab ? src_counts : tgt_counts;
  const auto max_len = static_cast<std::size_t>(std::max(data.max_len, 0));
  auto record = [](SideAnalysis& side, std::size_t length) {
    if (side.histogram.size() <= length) side.histogram.resize(length + 1, 0);
    ++side.histogram[length];
    side.total_tokens += length;
    side.max = std::max(side.max, length);
  };
  const std::size_t step = std::max<std::size_t>(n / 100, 256);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % step == 0) {
      if (promise.isCanceled()) return;
      promise.setProgressValue(static_cast<int>(i * 100 / std::max<std::size_t>(n, 1)));
    }
    const auto& pair = pairs[i];
    const auto src = src_tok->tokenize(english_is_source ? pair.english : pair.other);
    const auto tgt = tgt_tok->tokenize(english_is_source ? pair.other : pair.english);
    record(out.src, src.size());
    record(out.tgt, tgt.size());
    if (!in_train[i]) continue;
    for (const auto& t : src) ++src_counts[t];
    for (const auto& t : tgt) ++tgt_counter[t];
    // As prepare_data: the source gets EOS, the target BOS or EOS, within max_len.
    if (src.size() + 1 > max_len || tgt.size() + 1 > max_len) ++out.too_long;
  }
  out.src.vocab = vocab_size(src_counts, data.min_freq, data.max_vocab, &out.src.distinct);
  if (data.shared_vocab) {
    out.tgt.vocab = out.src.vocab;
    out.tgt.distinct = out.src.distinct;
  } else {
    out.tgt.vocab = vocab_size(tgt_counts, data.min_freq, data.max_vocab, &out.tgt.distinct);
  }
  promise.setProgressValue(100);
  promise.addResult(std::move(out));
}

/// Corpus indices whose either side contains `query` (case-insensitive, any script).
std::vector<int> search_pairs(const std::shared_ptr<const Corpus>& corpus, const QString& query) {
  std::vector<int> rows;
  const auto& pairs = corpus->pairs;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& p = pairs[i];
    if (QString::fromStdString(p.english).contains(query, Qt::CaseInsensitive) ||
        QString::fromStdString(p.other).contains(query, Qt::CaseInsensitive))
      rows.push_back(static_cast<int>(i));
  }
  return rows;
}

QString lang_name(const Language& language) {
  return language.name.empty() || language.name == "Other" ? QString::fromStdString(language.code)
                                                           : QString::fromStdString(language.name);
}

QString number(std::size_t n) { return QLocale().toString(static_cast<qulonglong>(n)); }

QString split_value_text(double value) { return QString::number(value, 'g', 10); }

}  // namespace

// ------------------------------------------------------------------ preview model

DatasetPreviewModel::DatasetPreviewModel(QObject* parent) : QAbstractTableModel(parent) {}

void DatasetPreviewModel::setCorpus(std::shared_ptr<const Corpus> corpus, bool english_is_source,
                                    std::shared_ptr<const Tokenizer> src_tokenizer,
                                    std::shared_ptr<const Tokenizer> tgt_tokenizer) {
  beginResetModel();
  // A new corpus drops the search result; a new direction or tokenizer keeps it.
  if (corpus != corpus_) {
    rows_.clear();
    filtered_ = false;
  }
  corpus_ = std::move(corpus);
  english_is_source_ = english_is_source;
  src_tokenizer_ = std::move(src_tokenizer);
  tgt_tokenizer_ = std::move(tgt_tokenizer);
  cache_.clear();
  endResetModel();
  Q_EMIT headerDataChanged(Qt::Horizontal, 0, kColumns - 1);
}

void DatasetPreviewModel::setRows(std::vector<int> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  filtered_ = true;
  endResetModel();
}

void DatasetPreviewModel::showAll() {
  if (!filtered_) return;
  beginResetModel();
  rows_.clear();
  filtered_ = false;
  endResetModel();
}

int DatasetPreviewModel::pairIndex(int row) const { return filtered_ ? rows_.at(static_cast<std::size_t>(row)) : row; }

int DatasetPreviewModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !corpus_) return 0;
  return filtered_ ? static_cast<int>(rows_.size()) : static_cast<int>(corpus_->pairs.size());
}

int DatasetPreviewModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

QString DatasetPreviewModel::side(int pair, bool source) const {
  const auto& p = corpus_->pairs[static_cast<std::size_t>(pair)];
  return QString::fromStdString(source == english_is_source_ ? p.english : p.other);
}

const DatasetPreviewModel::Tokens& DatasetPreviewModel::tokens(int pair) const {
  auto it = cache_.find(pair);
  if (it != cache_.end()) return *it;
  if (cache_.size() > kCacheLimit) cache_.clear();
  const auto& p = corpus_->pairs[static_cast<std::size_t>(pair)];
  const std::string& src = english_is_source_ ? p.english : p.other;
  const std::string& tgt = english_is_source_ ? p.other : p.english;
  auto join = [](const std::vector<std::string>& tokens) {
    QStringList parts;
    parts.reserve(static_cast<int>(tokens.size()));
    for (const auto& t : tokens) parts << QString::fromStdString(t);
    return parts.join(QString::fromUtf8(kSeparator));
  };
  Tokens t;
  if (src_tokenizer_) {
    const auto s = src_tokenizer_->tokenize(src);
    t.src = join(s);
    t.src_len = static_cast<int>(s.size());
  }
  if (tgt_tokenizer_) {
    const auto g = tgt_tokenizer_->tokenize(tgt);
    t.tgt = join(g);
    t.tgt_len = static_cast<int>(g.size());
  }
  return *cache_.insert(pair, t);
}

QVariant DatasetPreviewModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !corpus_ || index.row() >= rowCount()) return {};
  const int pair = pairIndex(index.row());
  const int column = index.column();
  if (role == Qt::TextAlignmentRole) {
    if (column == kNumber || column == kSourceLength || column == kTargetLength)
      return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  }
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != Qt::EditRole) return {};
  switch (column) {
    case kNumber: return role == Qt::ToolTipRole ? QVariant(tr("Pair %1 of the corpus").arg(pair + 1)) : QVariant(pair + 1);
    case kSource: return side(pair, true);
    case kTarget: return side(pair, false);
    case kSourceTokens: return tokens(pair).src;
    case kTargetTokens: return tokens(pair).tgt;
    case kSourceLength: return tokens(pair).src_len;
    case kTargetLength: return tokens(pair).tgt_len;
    default: return {};
  }
}

QVariant DatasetPreviewModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || !corpus_) return QAbstractTableModel::headerData(section, orientation, role);
  const QString src = lang_name(english_is_source_ ? corpus_->english : corpus_->other);
  const QString tgt = lang_name(english_is_source_ ? corpus_->other : corpus_->english);
  const QString src_kind = src_tokenizer_ ? QString::fromStdString(src_tokenizer_->config().kind) : QString();
  const QString tgt_kind = tgt_tokenizer_ ? QString::fromStdString(tgt_tokenizer_->config().kind) : QString();
  if (role == Qt::DisplayRole) {
    switch (section) {
      case kNumber: return tr("#");
      case kSource: return tr("%1 (source)").arg(src);
      case kTarget: return tr("%1 (target)").arg(tgt);
      case kSourceTokens: return tr("%1 tokens (%2)").arg(src, src_kind);
      case kTargetTokens: return tr("%1 tokens (%2)").arg(tgt, tgt_kind);
      case kSourceLength: return tr("Src len");
      case kTargetLength: return tr("Tgt len");
      default: return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case kNumber: return tr("Position of the pair in the corpus file (valid pairs only)");
      case kSourceTokens: return tr("The %1 side as the %2 tokenizer splits it, tokens separated by \u00B7").arg(src, src_kind);
      case kTargetTokens: return tr("The %1 side as the %2 tokenizer splits it, tokens separated by \u00B7").arg(tgt, tgt_kind);
      case kSourceLength: return tr("Number of %1 tokens").arg(src);
      case kTargetLength: return tr("Number of %1 tokens").arg(tgt);
      default: return {};
    }
  }
  return QAbstractTableModel::headerData(section, orientation, role);
}

// ------------------------------------------------------------------ panel

DatasetPanel::DatasetPanel(StudioState* state, QWidget* parent) : QWidget(parent), state_(state) {
  model_ = new DatasetPreviewModel(this);
  analysis_timer_ = new QTimer(this);
  analysis_timer_->setSingleShot(true);
  analysis_timer_->setInterval(0);
  connect(analysis_timer_, &QTimer::timeout, this, &DatasetPanel::startAnalysis);
  search_timer_ = new QTimer(this);
  search_timer_->setSingleShot(true);
  search_timer_->setInterval(250);
  connect(search_timer_, &QTimer::timeout, this, &DatasetPanel::startSearch);

  buildUi();

  connect(state_, &StudioState::corpusLoading, this, &DatasetPanel::onCorpusLoading);
  connect(state_, &StudioState::corpusChanged, this, &DatasetPanel::onCorpusChanged);
  connect(state_, &StudioState::corpusFailed, this, &DatasetPanel::onCorpusFailed);
  connect(state_, &StudioState::directionChanged, this, &DatasetPanel::onDirectionChanged);
  connect(state_, &StudioState::configChanged, this, &DatasetPanel::onConfigChanged);

  loading_ = state_->isLoading();
  showCorpusInfo();
  showDirection();
  showConfigValues();
  showSplit();
  rebuildPreview();
  scheduleAnalysis();
  updateStatus();
}

DatasetPanel::~DatasetPanel() {
  disconnect_children(this);  // the split boxes' editingFinished, sent as ~QWidget moves the focus
  // The statistics job checks for cancellation every 1% of the corpus, so this wait is short; the
  // jobs only touch their own copies, but none should outlive the panel that started it.
  if (analysis_) {
    analysis_->cancel();
    analysis_->waitForFinished();
  }
  if (search_watcher_) search_watcher_->waitForFinished();
}

void DatasetPanel::buildUi() {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  auto* scroll = new QScrollArea(this);
  scroll->setObjectName(QStringLiteral("datasetScroll"));
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  outer->addWidget(scroll);
  auto* content = new QWidget(scroll);
  scroll->setWidget(content);
  auto* layout = new QVBoxLayout(content);

  // Status: reading the file, computing statistics.
  auto* status_row = new QHBoxLayout;
  status_ = new QLabel(content);
  status_->setObjectName(QStringLiteral("datasetStatus"));
  progress_ = new QProgressBar(content);
  progress_->setObjectName(QStringLiteral("datasetProgress"));
  progress_->setMaximumWidth(180);
  progress_->setTextVisible(false);
  status_row->addWidget(status_, 1);
  status_row->addWidget(progress_);
  layout->addLayout(status_row);

  error_ = new QLabel(content);
  error_->setObjectName(QStringLiteral("datasetError"));
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->setFrameShape(QFrame::StyledPanel);
  error_->setMargin(6);
  error_->hide();
  layout->addWidget(error_);

  // Corpus, direction and split in one compact form: the panel must work in a 560×800 dock.
  auto* corpus_box = new QGroupBox(tr("Corpus"), content);
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
  skipped_->setToolTip(tr("Malformed lines (no tab, an empty side, invalid UTF-8, absurdly long) are skipped, never fatal"));
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
  split_->setToolTip(tr("Deterministic shuffle from data.split_seed; the vocabularies are built from the training pairs only"));
  held_out->addSpacing(6);
  held_out->addWidget(split_, 1);
  corpus_form->addRow(tr("Split:"), held_out);
  layout->addWidget(corpus_box);

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

  // Tokenizers
  auto* tok_box = new QGroupBox(tr("Tokenizers"), content);
  auto* grid = new QGridLayout(tok_box);
  grid->setVerticalSpacing(4);
  auto make_row = [&](int row, const QString& prefix, QLabel*& side, QComboBox*& kind, QSpinBox*& size,
                      QCheckBox*& lower, QLabel*& vocab) {
    side = new QLabel(tok_box);
    side->setObjectName(QStringLiteral("dataset%1Side").arg(prefix));
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
  shared_vocab_->setToolTip(tr("One tokenizer and vocabulary for both sides (data.shared_vocab); needed to share embeddings"));
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
  layout->addWidget(tok_box);

  auto connect_side = [this](const QString& side, QComboBox* kind, QSpinBox* size, QCheckBox* lower) {
    connect(kind, qOverload<int>(&QComboBox::currentIndexChanged), this, [this, side, kind] {
      applySetting(QStringLiteral("data.%1_tokenizer.kind=%2").arg(side, kind->currentData().toString()));
    });
    connect(size, qOverload<int>(&QSpinBox::valueChanged), this, [this, side](int value) {
      applySetting(QStringLiteral("data.%1_tokenizer.vocab_size=%2").arg(side).arg(value));
    });
    connect(lower, &QCheckBox::toggled, this, [this, side](bool on) {
      applySetting(QStringLiteral("data.%1_tokenizer.lowercase=%2").arg(side, on ? QStringLiteral("true") : QStringLiteral("false")));
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

  // Preview and histograms share a splitter so either can be given the room.
  auto* splitter = new QSplitter(Qt::Vertical, content);
  splitter->setObjectName(QStringLiteral("datasetSplitter"));
  splitter->setChildrenCollapsible(false);
  auto* preview = new QGroupBox(tr("Preview"), splitter);
  auto* preview_layout = new QVBoxLayout(preview);
  auto* search_row = new QHBoxLayout;
  search_ = new QLineEdit(preview);
  search_->setObjectName(QStringLiteral("datasetSearch"));
  search_->setPlaceholderText(tr("Search both sides…"));
  search_->setClearButtonEnabled(true);
  search_->setToolTip(tr("Shows only the pairs containing this text (either side, case-insensitive)"));
  preview_info_ = new QLabel(preview);
  preview_info_->setObjectName(QStringLiteral("datasetPreviewInfo"));
  search_row->addWidget(search_, 1);
  search_row->addWidget(preview_info_);
  preview_layout->addLayout(search_row);
  table_ = new QTableView(preview);
  table_->setObjectName(QStringLiteral("datasetPreview"));
  table_->setModel(model_);
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

  auto* lengths = new QGroupBox(tr("Sentence lengths"), splitter);
  auto* plots = new QHBoxLayout(lengths);
  auto make_plot = [&](const QString& name, int color) {
    auto* plot = new QCustomPlot(lengths);
    plot->setObjectName(name);
    plot->setMinimumSize(180, 160);
    style_plot(plot);
    plot->plotLayout()->insertRow(0);
    auto* title = new QCPTextElement(plot, QString(), QFont(font().family(), font().pointSize()));
    title->setTextColor(palette().color(QPalette::WindowText));
    plot->plotLayout()->addElement(0, 0, title);
    plot->xAxis->setLabel(tr("tokens per sentence"));
    plot->yAxis->setLabel(tr("sentences"));
    // Lengths and counts are whole numbers: no 2.5-token ticks.
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
      QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
      ticker->setTickStep(1.0);
      ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
      ticker->setTickCount(5);
      axis->setTicker(ticker);
    }
    auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
    bars->setWidth(1.0);
    QColor fill = series_color(color);
    bars->setPen(QPen(fill.darker(130)));
    fill.setAlpha(170);
    bars->setBrush(fill);
    plot->setToolTip(tr("How many sentences have each length in tokens, over the whole corpus. "
                        "Drag to pan, wheel to zoom."));
    plots->addWidget(plot, 1);
    return plot;
  };
  src_plot_ = make_plot(QStringLiteral("datasetSourceHistogram"), 0);
  tgt_plot_ = make_plot(QStringLiteral("datasetTargetHistogram"), 1);
  splitter->addWidget(preview);
  splitter->addWidget(lengths);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  layout->addWidget(splitter, 1);
}

// ------------------------------------------------------------------ state changes

void DatasetPanel::onCorpusLoading(const QString& path) {
  loading_ = true;
  error_->hide();
  status_->setText(tr("Reading %1…").arg(QFileInfo(path).fileName()));
  updateStatus();
}

void DatasetPanel::onCorpusChanged() {
  loading_ = state_->isLoading();
  error_->hide();
  search_->blockSignals(true);
  search_->clear();
  search_->blockSignals(false);
  showCorpusInfo();
  showDirection();
  showConfigValues();  // the side labels name the new languages
  showSplit();
  rebuildPreview();
  clearAnalysis();
  scheduleAnalysis();
  updateStatus();
}

void DatasetPanel::onCorpusFailed(const QString& path, const QString& message) {
  loading_ = state_->isLoading();
  const QString text = message.contains(path) || message.contains(QFileInfo(path).fileName())
                           ? message
                           : QStringLiteral("%1: %2").arg(path, message);
  error_->setText(tr("<b>Could not open %1</b><br>%2<br>The corpus shown below is still in use.")
                      .arg(QFileInfo(path).fileName().toHtmlEscaped(), text.toHtmlEscaped()));
  error_->show();
  updateStatus();
}

void DatasetPanel::onDirectionChanged() {
  showDirection();
  showConfigValues();  // the side labels name the languages
  rebuildPreview();
  scheduleAnalysis();
}

void DatasetPanel::onConfigChanged() {
  showConfigValues();
  showSplit();
  rebuildPreview();
  scheduleAnalysis();
}

void DatasetPanel::applySetting(const QString& assignment) {
  QString error;
  if (!state_->applySetting(assignment, &error)) {
    showConfigValues();  // back to what the configuration holds
    tokenizer_note_->setText(tr("Not applied: %1").arg(error));
    tokenizer_note_->show();
  }
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

QString DatasetPanel::sideName(bool source) const {
  const auto corpus = state_->corpus();
  const bool english = source == state_->direction().english_is_source;
  return lang_name(english ? corpus->english : corpus->other);
}

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

void DatasetPanel::showConfigValues() {
  const DataConfig& data = state_->config().data;
  const auto set_side = [&](QLabel* side, QComboBox* kind, QSpinBox* size, QCheckBox* lower, bool source,
                            const TokenizerConfig& config, bool enabled) {
    side->setText(tr("%1 (%2):").arg(source ? tr("Source") : tr("Target"), sideName(source)));
    const QSignalBlocker b1(kind), b2(size), b3(lower);
    const int index = kind->findData(QString::fromStdString(config.kind));
    kind->setCurrentIndex(index < 0 ? 0 : index);
    size->setValue(config.vocab_size);
    size->setEnabled(enabled && is_sentencepiece(config.kind));
    lower->setChecked(config.lowercase);
    kind->setEnabled(enabled);
    lower->setEnabled(enabled);
  };
  set_side(src_side_, src_kind_, src_size_, src_lower_, true, data.src_tokenizer, true);
  set_side(tgt_side_, tgt_kind_, tgt_size_, tgt_lower_, false, data.shared_vocab ? data.src_tokenizer : data.tgt_tokenizer,
           !data.shared_vocab);
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
      approximations << tr("%1 at %2 level").arg(name, side.config.kind == "char" ? tr("character") : tr("word"));
  }
  if (!approximations.isEmpty())
    notes << tr("SentencePiece is trained when training starts; the preview and histograms show %1.")
                 .arg(approximations.join(tr(" and ")));
  if (data.shared_vocab) notes << tr("Shared vocabulary: the source tokenizer is used for both sides.");
  tokenizer_note_->setText(notes.join(QLatin1Char('\n')));
  tokenizer_note_->setVisible(!notes.isEmpty());
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
    split_->setText(tr("train %1 · dev %2 · test %3 pairs").arg(number(total - dev - test), number(dev), number(test)));
  } catch (const std::exception& e) {
    split_->setText(QString::fromStdString(e.what()));
  }
}

void DatasetPanel::rebuildPreview() {
  const auto corpus = state_->corpus();
  const bool ens = state_->direction().english_is_source;
  const DataConfig& data = state_->config().data;
  const SideTokenizer src = side_tokenizer(data, true, ens ? corpus->english : corpus->other);
  const SideTokenizer tgt = side_tokenizer(data, false, ens ? corpus->other : corpus->english);
  QString src_problem, tgt_problem;
  auto src_tok = build_tokenizer(src.config, &src_problem);
  auto tgt_tok = build_tokenizer(tgt.config, &tgt_problem);
  model_->setCorpus(corpus, ens, std::move(src_tok), std::move(tgt_tok));
  // E.g. Chinese conversion (t2s) in a build without OpenCC: shown here, before training refuses it.
  for (const QString& problem : {src_problem, tgt_problem}) {
    if (problem.isEmpty() || tokenizer_note_->text().contains(problem)) continue;
    tokenizer_note_->setText(tokenizer_note_->text().isEmpty() ? problem : tokenizer_note_->text() + QLatin1Char('\n') + problem);
    tokenizer_note_->show();
  }
  const int rows = model_->rowCount();
  preview_info_->setText(model_->isFiltered()
                             ? tr("%1 of %2 pairs").arg(number(static_cast<std::size_t>(rows)), number(corpus->pairs.size()))
                             : tr("%1 pairs").arg(number(corpus->pairs.size())));
}

void DatasetPanel::startSearch() {
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
  watcher->setFuture(QtConcurrent::run([corpus, query] { return search_pairs(corpus, query); }));
}

// ------------------------------------------------------------------ statistics

QString DatasetPanel::analysisKey() const {
  const DataConfig& d = state_->config().data;
  const auto corpus = state_->corpus();
  const bool ens = state_->direction().english_is_source;
  const SideTokenizer src = side_tokenizer(d, true, ens ? corpus->english : corpus->other);
  const SideTokenizer tgt = side_tokenizer(d, false, ens ? corpus->other : corpus->english);
  // Only what changes the statistics: a new SentencePiece size does not (it is not trained here).
  return QStringLiteral("%1|%2|%3|%4|%5|%6|%7|%8|%9")
      .arg(QString::number(reinterpret_cast<quintptr>(corpus.get())), ens ? QStringLiteral("en") : QStringLiteral("other"),
           QString::fromStdString(src.config.to_json().dump()), QString::fromStdString(tgt.config.to_json().dump()),
           QStringLiteral("%1/%2/%3").arg(d.dev).arg(d.test).arg(d.split_seed),
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
    analyse(promise, corpus, ens, data, key);
  }));
  updateStatus();
}

void DatasetPanel::clearAnalysis() {
  shown_.reset();
  shown_key_.clear();
  for (QCustomPlot* plot : {src_plot_, tgt_plot_}) {
    if (auto* bars = qobject_cast<QCPBars*>(plot->plottable(0))) bars->data()->clear();
    plot->replot(QCustomPlot::rpQueuedReplot);
  }
}

void DatasetPanel::fillHistogram(QCustomPlot* plot, const std::vector<std::size_t>& histogram, const QString& title) {
  auto* bars = qobject_cast<QCPBars*>(plot->plottable(0));
  QVector<double> keys, values;
  std::size_t total = 0;
  double peak = 0;
  for (std::size_t n = 0; n < histogram.size(); ++n) {
    if (histogram[n] == 0) continue;
    keys << static_cast<double>(n);
    values << static_cast<double>(histogram[n]);
    total += histogram[n];
    peak = std::max(peak, static_cast<double>(histogram[n]));
  }
  bars->setData(keys, values, true);
  // Show up to the 99.5th percentile so a few absurdly long lines do not squeeze the rest;
  // dragging reaches the tail.
  std::size_t seen = 0, upper = histogram.empty() ? 1 : histogram.size() - 1;
  for (std::size_t n = 0; n < histogram.size(); ++n) {
    seen += histogram[n];
    if (static_cast<double>(seen) >= 0.995 * static_cast<double>(total)) {
      upper = n;
      break;
    }
  }
  plot->xAxis->setRange(-0.5, static_cast<double>(upper) + 1.5);
  plot->yAxis->setRange(0, std::max(1.0, peak * 1.08));
  if (auto* text = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) text->setText(title);
  plot->replot(QCustomPlot::rpQueuedReplot);
}

void DatasetPanel::showAnalysis(const DatasetAnalysis& a) {
  if (shown_.get() != &a) shown_ = std::make_unique<DatasetAnalysis>(a);
  shown_key_ = a.key;
  const DataConfig& data = state_->config().data;
  const auto corpus = state_->corpus();
  const bool ens = state_->direction().english_is_source;
  const SideTokenizer src = side_tokenizer(data, true, ens ? corpus->english : corpus->other);
  const SideTokenizer tgt = side_tokenizer(data, false, ens ? corpus->other : corpus->english);
  const QString from = a.split_ok ? tr("the %1 training pairs").arg(number(a.train)) : tr("all %1 pairs").arg(number(a.pairs));
  const QString limits = tr("min_freq %1, %2").arg(data.min_freq).arg(
      data.max_vocab > 0 ? tr("at most %1 entries").arg(number(static_cast<std::size_t>(data.max_vocab))) : tr("no size limit"));
  auto show_vocab = [&](QLabel* label, const SideTokenizer& side, const TokenizerConfig& configured, const SideAnalysis& s) {
    if (side.approximate) {
      label->setText(tr("%1 (configured)").arg(number(static_cast<std::size_t>(configured.vocab_size))));
      label->setToolTip(tr("The SentencePiece %1 model is trained on the training split when training starts; "
                           "word-level counting here would find %2 distinct tokens")
                            .arg(QString::fromStdString(configured.kind), number(s.distinct)));
    } else {
      label->setText(tr("%1 tokens").arg(number(s.vocab)));
      label->setToolTip(tr("The vocabulary training will build: from %1 (%2), the 4 special tokens included; "
                           "%3 distinct tokens seen")
                            .arg(from, limits, number(s.distinct)));
    }
  };
  const TokenizerConfig& src_configured = data.src_tokenizer;
  const TokenizerConfig& tgt_configured = data.shared_vocab ? data.src_tokenizer : data.tgt_tokenizer;
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
        .arg(sideName(source), source ? tr("source") : tr("target"), QString::fromStdString(side.config.kind))
        .arg(mean, 0, 'f', 1)
        .arg(s.max);
  };
  fillHistogram(src_plot_, a.src.histogram, title(true, a.src, src));
  fillHistogram(tgt_plot_, a.tgt.histogram, title(false, a.tgt, tgt));
}

void DatasetPanel::updateStatus() {
  if (loading_) {
    progress_->setRange(0, 0);  // the reader reports no progress: a busy indicator
    progress_->show();
    status_->show();
    return;
  }
  if (isAnalysing()) {
    status_->setText(tr("Counting tokens and building vocabularies…"));
    progress_->setRange(0, 100);
    if (!analysis_) progress_->setValue(0);
    progress_->show();
    status_->show();
    return;
  }
  progress_->hide();
  status_->hide();
}

}  // namespace ts::ui
