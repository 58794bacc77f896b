// SPDX-License-Identifier: GPL-3.0-or-later
// The Preview box of the Dataset panel: a search field over both sides of the whole corpus (run on
// the thread pool after a pause in typing), the number of pairs shown, and the table of pairs with
// their tokens, a view of the panel's DatasetPreviewModel.
#pragma once

#include <memory>
#include <vector>

#include <QFutureWatcher>
#include <QGroupBox>

#include "ts/text/corpus.h"
#include "ts/text/tokenizer.h"

class QLabel;
class QLineEdit;
class QTableView;
class QTimer;

namespace ts::ui {

class DatasetPreviewModel;
class StudioState;

class PairPreview : public QGroupBox {
  Q_OBJECT
 public:
  /// Shows `model` (owned by the caller); searches the corpus `state` holds.
  PairPreview(StudioState* state, DatasetPreviewModel* model, QWidget* parent = nullptr);
  ~PairPreview() override;

  /// Shows `corpus` in this direction with these tokenizers (a new corpus drops the search result,
  /// see DatasetPreviewModel::setCorpus) and says how many pairs are shown.
  void setCorpus(std::shared_ptr<const Corpus> corpus, bool english_is_source,
                 std::shared_ptr<const Tokenizer> src_tokenizer, std::shared_ptr<const Tokenizer> tgt_tokenizer);
  /// Empties the search field without starting a search.
  void clearSearch();

 private:
  void startSearch();

  StudioState* state_;
  DatasetPreviewModel* model_;
  QLineEdit* search_ = nullptr;
  QLabel* preview_info_ = nullptr;
  QTableView* table_ = nullptr;
  QTimer* search_timer_ = nullptr;  // waits for a pause in typing
  QFutureWatcher<std::vector<int>>* search_watcher_ = nullptr;
  int search_serial_ = 0;
};

}  // namespace ts::ui
