// SPDX-License-Identifier: GPL-3.0-or-later
// The Dataset panel: the corpus in use (path, pairs, skipped lines with the first problems),
// languages and direction, split sizes, tokenizer per side with vocabulary size, a preview table
// of pairs with their tokenisation, and source/target length histograms.
//
// Everything that touches the whole corpus (token counts, vocabularies, histograms, search) runs
// on the thread pool; the GUI thread only tokenises the handful of rows the table shows.
//
// The panel's own code is spread over files named for its parts: dataset_panel.cpp (layout,
// following StudioState, the status line), dataset_panel_corpus.cpp (the Corpus box),
// dataset_panel_tokenizers.cpp (the Tokenizers box) and dataset_panel_statistics.cpp (the
// background statistics). Its pieces: DatasetPreviewModel and PairPreview (the preview table and
// its search), LengthHistogram (the charts), dataset_analysis.h (the work on the thread pool) and
// side_tokenizer.h (which tokenizer each side is shown with).
#pragma once

#include <memory>

#include <QFutureWatcher>
#include <QString>
#include <QWidget>

#include "dataset/dataset_preview_model.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTimer;

namespace ts::ui {

class LengthHistogram;
class PairPreview;
class StudioState;
struct DatasetAnalysis;

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
  // dataset_panel.cpp: the layout, following StudioState, the status line.
  void buildUi();
  void onCorpusLoading(const QString& path);
  void onCorpusChanged();
  void onCorpusFailed(const QString& path, const QString& message);
  void onDirectionChanged();
  void onConfigChanged();
  void rebuildPreview();
  void updateStatus();

  // dataset_panel_corpus.cpp: the Corpus box (file, pairs, direction, split).
  QWidget* buildCorpusBox(QWidget* parent);
  void showCorpusInfo();
  void showDirection();
  void showSplit();
  /// "train 11,305 · dev 628 (5.0%) · test 628 (5.0%) pairs": counts and shares both, whether
  /// data.dev/test were given as a number of pairs or as a fraction.
  static QString splitCounts(std::size_t train, std::size_t dev, std::size_t test);
  void applySplit(QLineEdit* edit, const char* key);

  // dataset_panel_tokenizers.cpp: the Tokenizers box (kind, pieces, case, vocabulary settings).
  QWidget* buildTokenizerBox(QWidget* parent);
  void showConfigValues();
  void applySetting(const QString& assignment);
  QString sideName(bool source) const;

  // dataset_panel_statistics.cpp: vocabulary sizes, long pairs and histograms, computed off the GUI thread.
  QString analysisKey() const;
  void scheduleAnalysis();
  void startAnalysis();
  void showAnalysis(const DatasetAnalysis& analysis);
  void clearAnalysis();

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
  PairPreview* preview_ = nullptr;
  LengthHistogram* src_plot_ = nullptr;
  LengthHistogram* tgt_plot_ = nullptr;

  QTimer* analysis_timer_ = nullptr;  // coalesces corpusChanged + directionChanged + configChanged
  QFutureWatcher<DatasetAnalysis>* analysis_ = nullptr;
  std::unique_ptr<DatasetAnalysis> shown_;  // the statistics on screen
  QString shown_key_;                       // the settings the shown statistics were computed for
  QString running_key_;                     // the settings of the analysis in flight
  bool loading_ = false;
};

}  // namespace ts::ui
