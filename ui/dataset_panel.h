// SPDX-License-Identifier: GPL-3.0-or-later
// The Dataset panel: the corpus in use (path, pairs, skipped lines with the first problems),
// languages and direction, split sizes, tokenizer per side with vocabulary size, a preview table
// of pairs with their tokenisation, and source/target length histograms.
//
// Everything that touches the whole corpus (token counts, vocabularies, histograms, search) runs
// on the thread pool; the GUI thread only tokenises the handful of rows the table shows.
#pragma once

#include <memory>
#include <vector>

#include <QAbstractTableModel>
#include <QFutureWatcher>
#include <QHash>
#include <QWidget>

#include "ts/text/corpus.h"
#include "ts/text/tokenizer.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;
class QTimer;

namespace ts::ui {

class StudioState;
struct DatasetAnalysis;

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

class DatasetPanel : public QWidget {
  Q_OBJECT
 public:
  DatasetPanel(StudioState* state, QWidget* parent = nullptr);
  ~DatasetPanel() override;

  /// True while corpus statistics (vocabularies, histograms) are being computed.
  bool isAnalysing() const;
  DatasetPreviewModel* previewModel() const { return model_; }

 Q_SIGNALS:
  /// Emitted when the statistics for the current corpus, direction and data settings are shown.
  void analysisFinished();

 private:
  void buildUi();
  void onCorpusLoading(const QString& path);
  void onCorpusChanged();
  void onCorpusFailed(const QString& path, const QString& message);
  void onDirectionChanged();
  void onConfigChanged();

  void showCorpusInfo();
  void showDirection();
  void showConfigValues();
  void showSplit();
  void rebuildPreview();
  void scheduleAnalysis();
  void startAnalysis();
  void showAnalysis(const DatasetAnalysis& analysis);
  void clearAnalysis();
  void startSearch();
  void updateStatus();
  void applySetting(const QString& assignment);
  void applySplit(QLineEdit* edit, const char* key);
  void fillHistogram(QCustomPlot* plot, const std::vector<std::size_t>& histogram, const QString& title);
  QString analysisKey() const;
  QString sideName(bool source) const;

  StudioState* state_;
  DatasetPreviewModel* model_ = nullptr;

  // Corpus
  QLineEdit* path_ = nullptr;
  QLabel* pair_count_ = nullptr;
  QLabel* languages_ = nullptr;
  QLabel* file_details_ = nullptr;
  QLabel* skipped_ = nullptr;
  QLabel* problems_ = nullptr;
  QLabel* error_ = nullptr;
  QLabel* status_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* open_ = nullptr;
  QPushButton* demo_ = nullptr;

  // Direction and split
  QComboBox* direction_ = nullptr;
  QLineEdit* dev_ = nullptr;
  QLineEdit* test_ = nullptr;
  QLabel* split_ = nullptr;

  // Tokenizers
  QLabel* src_side_ = nullptr;
  QLabel* tgt_side_ = nullptr;
  QComboBox* src_kind_ = nullptr;
  QComboBox* tgt_kind_ = nullptr;
  QSpinBox* src_size_ = nullptr;
  QSpinBox* tgt_size_ = nullptr;
  QCheckBox* src_lower_ = nullptr;
  QCheckBox* tgt_lower_ = nullptr;
  QLabel* src_vocab_ = nullptr;
  QLabel* tgt_vocab_ = nullptr;
  QCheckBox* shared_vocab_ = nullptr;
  QSpinBox* min_freq_ = nullptr;
  QSpinBox* max_vocab_ = nullptr;
  QLabel* tokenizer_note_ = nullptr;
  QLabel* long_pairs_ = nullptr;

  // Preview and histograms
  QLineEdit* search_ = nullptr;
  QLabel* preview_info_ = nullptr;
  QTableView* table_ = nullptr;
  QCustomPlot* src_plot_ = nullptr;
  QCustomPlot* tgt_plot_ = nullptr;

  QTimer* analysis_timer_ = nullptr;  // coalesces corpusChanged + directionChanged + configChanged
  QTimer* search_timer_ = nullptr;    // waits for a pause in typing
  QFutureWatcher<DatasetAnalysis>* analysis_ = nullptr;
  QFutureWatcher<std::vector<int>>* search_watcher_ = nullptr;
  std::unique_ptr<DatasetAnalysis> shown_;  // the statistics on screen
  QString shown_key_;    // the settings the shown statistics were computed for
  QString running_key_;  // the settings of the analysis in flight
  int search_serial_ = 0;
  bool loading_ = false;
};

}  // namespace ts::ui
