// SPDX-License-Identifier: GPL-3.0-or-later
// The Dataset panel's preview table as a Qt item model: the pairs of the corpus (or of a search
// result) in the current direction, each side with its tokens and token count.
#pragma once

#include <memory>
#include <vector>

#include <QAbstractTableModel>
#include <QHash>
#include <QString>

#include "ts/text/corpus.h"
#include "ts/text/tokenizer.h"

namespace ts::ui {

/// The corpus as a table: one row per pair (or per search match), with the sides in the current
/// direction and their tokens. Rows are tokenised lazily when the view asks for them, so a
/// 170k-pair corpus costs nothing until it is scrolled.
class DatasetPreviewModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kNumber, kSource, kTarget, kSourceTokens, kTargetTokens, kSourceLength, kTargetLength, kColumns };
  /// Shown between tokens; visible, and unlike a space it cannot be mistaken for part of a token.
  static constexpr const char* kSeparator = " \u00B7 ";

  explicit DatasetPreviewModel(QObject* parent = nullptr);

  /// Replaces everything; `rows` lists corpus indices to show (empty + `all` = every pair).
  void setCorpus(std::shared_ptr<const Corpus> corpus, bool english_is_source,
                 std::shared_ptr<const Tokenizer> src_tokenizer, std::shared_ptr<const Tokenizer> tgt_tokenizer);
  /// Shows only these corpus indices (a search result); `showAll` drops the filter.
  void setRows(std::vector<int> rows);
  void showAll();
  bool isFiltered() const { return filtered_; }
  /// The corpus index of a table row.
  int pairIndex(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Tokens {
    QString src, tgt;
    int src_len = 0, tgt_len = 0;
  };
  const Tokens& tokens(int pair) const;
  QString side(int pair, bool source) const;

  std::shared_ptr<const Corpus> corpus_;
  bool english_is_source_ = true;
  std::shared_ptr<const Tokenizer> src_tokenizer_, tgt_tokenizer_;
  std::vector<int> rows_;
  bool filtered_ = false;
  mutable QHash<int, Tokens> cache_;  // bounded: cleared when it grows past a few thousand rows
};

}  // namespace ts::ui
