// SPDX-License-Identifier: GPL-3.0-or-later
// The Configuration panel's "Estimated size" box: parameter count, weights, training memory, batch
// and vocabulary of the current configuration, live. The vocabulary is counted in the corpus in the
// background; a newer count supersedes (and cancels) older ones.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <QGroupBox>

class QLabel;

namespace ts::ui {

class StudioState;
struct VocabularyCounts;

class SizeEstimateBox : public QGroupBox {
  Q_OBJECT
 public:
  explicit SizeEstimateBox(StudioState* state, QWidget* parent = nullptr);
  ~SizeEstimateBox() override;

  /// Shows the estimate for the current configuration with the counts at hand.
  void refresh();
  /// Counts the corpus again when what the counts depend on has changed (then refreshes).
  void startCounting();

  /// The vocabulary sizes behind the estimate (specials included): see ConfigPanel.
  std::int64_t sourceVocabEstimate() const;
  std::int64_t targetVocabEstimate() const;
  /// Mean padded tokens per sentence in the corpus, for batches counted in sentences.
  double averageSentenceTokens() const;
  /// True while the corpus is being counted (the estimate then uses rough defaults).
  bool isCounting() const { return counting_; }

 private:
  StudioState* state_;
  QLabel* parameters_ = nullptr;
  QLabel* weights_ = nullptr;
  QLabel* memory_ = nullptr;
  QLabel* batch_ = nullptr;
  QLabel* vocab_ = nullptr;

  std::shared_ptr<const VocabularyCounts> counts_;
  std::string counts_key_;
  int count_serial_ = 0;
  bool counting_ = false;
  std::shared_ptr<std::atomic<bool>> cancel_;  // set to stop the running count
};

}  // namespace ts::ui
