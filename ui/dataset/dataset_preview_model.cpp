// SPDX-License-Identifier: GPL-3.0-or-later
// The Dataset panel's preview table model (see dataset_preview_model.h).
#include "dataset/dataset_preview_model.h"

#include <string>
#include <utility>

#include <QStringList>

#include "dataset/dataset_util.h"

namespace ts::ui {

using dataset::lang_name;

namespace {

constexpr int kCacheLimit = 4000;

}  // namespace

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
    case kNumber:
      return role == Qt::ToolTipRole ? QVariant(tr("Pair %1 of the corpus").arg(pair + 1)) : QVariant(pair + 1);
    case kSource:
      return side(pair, true);
    case kTarget:
      return side(pair, false);
    case kSourceTokens:
      return tokens(pair).src;
    case kTargetTokens:
      return tokens(pair).tgt;
    case kSourceLength:
      return tokens(pair).src_len;
    case kTargetLength:
      return tokens(pair).tgt_len;
    default:
      return {};
  }
}

QVariant DatasetPreviewModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || !corpus_) return QAbstractTableModel::headerData(section, orientation, role);
  const QString src = lang_name(english_is_source_ ? corpus_->english : corpus_->other);
  const QString tgt = lang_name(english_is_source_ ? corpus_->other : corpus_->english);
  const QString src_kind =
      src_tokenizer_ ? QString::fromLatin1(tokenizer_kind_name(src_tokenizer_->config().kind)) : QString();
  const QString tgt_kind =
      tgt_tokenizer_ ? QString::fromLatin1(tokenizer_kind_name(tgt_tokenizer_->config().kind)) : QString();
  if (role == Qt::DisplayRole) {
    switch (section) {
      case kNumber:
        return tr("#");
      case kSource:
        return tr("%1 (source)").arg(src);
      case kTarget:
        return tr("%1 (target)").arg(tgt);
      case kSourceTokens:
        return tr("%1 tokens (%2)").arg(src, src_kind);
      case kTargetTokens:
        return tr("%1 tokens (%2)").arg(tgt, tgt_kind);
      case kSourceLength:
        return tr("Src len");
      case kTargetLength:
        return tr("Tgt len");
      default:
        return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case kNumber:
        return tr("Position of the pair in the corpus file (valid pairs only)");
      case kSourceTokens:
        return tr("The %1 side as the %2 tokenizer splits it, tokens separated by \u00B7").arg(src, src_kind);
      case kTargetTokens:
        return tr("The %1 side as the %2 tokenizer splits it, tokens separated by \u00B7").arg(tgt, tgt_kind);
      case kSourceLength:
        return tr("Number of %1 tokens").arg(src);
      case kTargetLength:
        return tr("Number of %1 tokens").arg(tgt);
      default:
        return {};
    }
  }
  return QAbstractTableModel::headerData(section, orientation, role);
}

}  // namespace ts::ui
