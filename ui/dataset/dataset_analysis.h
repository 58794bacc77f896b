// SPDX-License-Identifier: GPL-3.0-or-later
// The Dataset panel's work on the whole corpus, run on the thread pool (internal to ui/dataset/):
// token statistics per side (length histograms, the vocabulary training would build, pairs longer
// than data.max_len) and the search over both sides. Both work on their own copies of the
// settings and hold the corpus by shared_ptr, so the GUI may go on changing either.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include <QPromise>
#include <QString>

#include "ts/text/corpus.h"
#include "ts/train/config.h"

namespace ts::ui {

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
  std::size_t train = 0;          // pairs the vocabulary was built from
  std::size_t dev = 0, test = 0;  // held-out pairs
  SplitStats split;               // how the split dealt them (grouped by source or not)
  std::size_t too_long = 0;       // training pairs longer than data.max_len (dropped by training)
  bool split_ok = true;
  QString error;
};

namespace dataset {

/// Tokenises every pair with the panel's side tokenizers, counting lengths and (over the training
/// split) the vocabularies; reports progress and stops early when cancelled. `key` is copied into
/// the result so the panel can tell whether it still matches the settings.
void analyse(QPromise<DatasetAnalysis>& promise, const std::shared_ptr<const Corpus>& corpus, bool english_is_source,
             const DataConfig& data, const QString& key);

/// Corpus indices whose either side contains `query` (case-insensitive, any script).
std::vector<int> search_pairs(const std::shared_ptr<const Corpus>& corpus, const QString& query);

}  // namespace dataset

}  // namespace ts::ui
