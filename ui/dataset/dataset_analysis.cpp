// SPDX-License-Identifier: GPL-3.0-or-later
// The Dataset panel's corpus statistics and search, run off the GUI thread (see dataset_analysis.h).
#include "dataset/dataset_analysis.h"

#include <algorithm>
#include <exception>
#include <string>
#include <unordered_map>
#include <utility>

#include "dataset/side_tokenizer.h"
#include "ts/text/split.h"
#include "ts/text/vocab.h"

namespace ts::ui::dataset {

namespace {

bool is_special(const std::string& token) {
  return token == Vocab::kPadToken || token == Vocab::kUnkToken || token == Vocab::kBosToken ||
         token == Vocab::kEosToken;
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

}  // namespace

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

  // Which pairs are in the training split: the split depends on the sources (pairs sharing one stay
  // together) and the seed, not on the targets, so each pair's number can ride in place of its target.
  std::vector<char> in_train(n, 1);
  out.train = n;
  try {
    std::vector<SentencePair> numbered(n);
    for (std::size_t i = 0; i < n; ++i)
      numbered[i] = {english_is_source ? pairs[i].english : pairs[i].other, std::to_string(i)};
    const DataSplit split = split_pairs(numbered, SplitConfig{data.dev, data.test, data.split_seed, data.split});
    std::fill(in_train.begin(), in_train.end(), 0);
    for (const auto& p : split.train) in_train[std::stoul(p.tgt)] = 1;
    out.train = split.train.size();
    out.dev = split.dev.size();
    out.test = split.test.size();
    out.split = split.stats;
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

}  // namespace ts::ui::dataset
