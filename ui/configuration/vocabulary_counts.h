// SPDX-License-Identifier: GPL-3.0-or-later
// The vocabulary behind the Configuration panel's size estimate: the corpus's tokens counted per
// side (off the GUI thread), and the vocabulary sizes the data settings then give. No widgets.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ts/text/corpus.h"
#include "ts/text/tokenizer.h"
#include "ts/train/config.h"

namespace ts::ui {

// Token type frequencies per side, counted off the GUI thread. The vocabulary a setting of
// data.min_freq / data.max_vocab gives is then a binary search, so those edits stay instant.
struct VocabularyCounts {
  struct Side {
    std::vector<int> frequencies;  // one per token type, descending
    bool subword = false;          // bpe/unigram: the frequencies are of words (an upper bound)
  };
  Side src, tgt;
  double average_tokens = 12;
  std::string error;
};

/// The tokenizer each side really uses (as prepare_data decides it).
TokenizerConfig effective_tokenizer(const DataConfig& data, bool source, const Direction& direction);

/// Counts the corpus's token types per side (run it on a worker thread). Returns null when
/// `cancel` was set meanwhile; a tokenizer that cannot be made is reported in `error`.
std::shared_ptr<const VocabularyCounts> count_vocabulary(std::shared_ptr<const Corpus> corpus, Direction direction,
                                                         DataConfig data, std::shared_ptr<std::atomic<bool>> cancel);

/// What the vocabulary counts depend on; vocab_size, min_freq and max_vocab are applied afterwards.
std::string counting_key(const Corpus* corpus, const Direction& direction, const DataConfig& data);

/// The vocabulary size of one side, specials included: from the counts (null before or without a
/// count: a rough default), min_freq and max_vocab, or the subword vocabulary size.
std::int64_t side_vocabulary(const VocabularyCounts::Side* counts, const TokenizerConfig& tok, const DataConfig& data);

}  // namespace ts::ui
