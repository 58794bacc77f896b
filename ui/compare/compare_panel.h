// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare panel: choose systems (runs of the history or checkpoints), translate their shared
// test split and compare them as MT research does. A summary of BLEU and chrF with 95% intervals
// and paired-bootstrap p-values against the baseline, then tabs: word accuracy by word frequency,
// sentence buckets, the n-grams each system matches more often, confidence against sentence score
// (does the model know when it is wrong?), and every test sentence side by side. With one system checked the sentence table is the held-out browser: the model's output for
// every test pair, worst first. A double-click on a sentence asks (openSentence) for it to be shown
// in the Attention and Beam search panels with that system.
//
// The panel assembles its parts: SystemChooser (the list), SummaryTable, BucketView (the charts),
// NgramView, ConfidenceView and SentenceBrowser; the work runs in its CompareService.
#pragma once

#include <QString>
#include <QWidget>

#include "services/compare_service.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace ts::ui {

class StudioState;
class SystemChooser;
class SummaryTable;
class BucketView;
class NgramView;
class ConfidenceView;
class SentenceBrowser;

class ComparePanel : public QWidget {
  Q_OBJECT
 public:
  /// `state` gives the run history's path and where dialogs start (null: the default history).
  explicit ComparePanel(StudioState* state, QWidget* parent = nullptr);
  ~ComparePanel() override;

  /// Compares the checked systems (as the Compare button does). False, with the reason in the
  /// status line, when none is checked.
  bool compare();
  /// Stops the comparison running (the Stop button).
  void stop();
  bool isBusy() const;
  /// The status line: progress, the outcome, or what went wrong.
  QString status() const;
  bool statusIsError() const { return status_error_; }
  bool hasResult() const { return has_result_; }
  /// The comparison shown (valid when hasResult()).
  const CompareResult& result() const { return result_; }

  SystemChooser* chooser() const { return chooser_; }
  CompareService* service() const { return service_; }
  SummaryTable* summary() const { return summary_; }
  QTabWidget* tabs() const { return tabs_; }
  BucketView* wordAccuracy() const { return word_accuracy_; }
  /// The "Sentence buckets" tab's chart and the choice of analysis it shows.
  BucketView* sentenceBuckets() const { return buckets_; }
  QComboBox* bucketChooser() const { return bucket_kind_; }
  NgramView* ngrams() const { return ngrams_; }
  ConfidenceView* confidence() const { return confidence_; }
  SentenceBrowser* sentences() const { return sentences_; }

 public Q_SLOTS:
  /// Re-reads the runs of the history into the chooser.
  void refreshRuns();

 Q_SIGNALS:
  /// Show `source` translated by the model at `checkpoint` in the Attention and Beam search panels.
  void openSentence(const QString& source, const QString& checkpoint);
  /// A comparison's result is shown.
  void compared();
  /// A comparison failed; the status line says why.
  void comparisonFailed(const QString& message);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void buildUi();
  void showResult(const CompareResult& result);
  void showBuckets(int kind);
  void setStatus(const QString& text, bool error = false);
  void updateButtons();

  StudioState* state_;
  CompareService* service_;
  CompareResult result_;
  bool has_result_ = false;
  bool status_error_ = false;

  SystemChooser* chooser_ = nullptr;
  QPushButton* compare_ = nullptr;
  QPushButton* stop_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* caption_ = nullptr;
  SummaryTable* summary_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  BucketView* word_accuracy_ = nullptr;
  QComboBox* bucket_kind_ = nullptr;
  BucketView* buckets_ = nullptr;
  NgramView* ngrams_ = nullptr;
  ConfidenceView* confidence_ = nullptr;
  SentenceBrowser* sentences_ = nullptr;
};

}  // namespace ts::ui
