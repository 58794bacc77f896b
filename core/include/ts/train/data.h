// SPDX-License-Identifier: GPL-3.0-or-later
// From a corpus to training examples: direction, split, tokenizers, vocabularies, ids.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ts/text/corpus.h"
#include "ts/text/pipeline.h"
#include "ts/text/split.h"
#include "ts/text/tokenizer.h"
#include "ts/text/vocab.h"
#include "ts/train/config.h"

namespace ts {

struct PreparedData {
  TextPipeline pipeline;
  DataSplit text;                  // the split as text (references for BLEU)
  std::vector<Example> train;      // long pairs dropped (see dropped_long)
  std::vector<Example> dev, test;  // aligned with text.dev / text.test
  std::size_t dropped_long = 0;
};

/// The train/dev/test split training uses: the corpus oriented source→target, split by the
/// config's sizes and seed. Panels and commands that show "the dev pairs" or "the test pairs" call
/// this so they always mean the trainer's.
DataSplit split_corpus(const Corpus& corpus, const Direction& direction, const DataConfig& config);

/// Writes the split a run trains on to `path` (JSON, written atomically), for anyone to check:
/// {"format": 1, "corpus", "corpus_sha256" (empty for the built-in demo corpus), "direction",
/// "method" ("grouped" or "pairs"), "seed", "pairs", "sources", "shared_pairs", "train" (a count),
/// "dev" and "test" ([source, target] pairs in the order used)}.
void write_split_file(const std::string& path, const PreparedData& data, const DataConfig& config,
                      const std::string& corpus_path);

/// Applies `config.data` to a corpus. When `existing` is given (resume), its tokenizers and
/// vocabularies are reused instead of being trained again. `log` receives progress lines.
PreparedData prepare_data(const Corpus& corpus, const Direction& direction, const DataConfig& config,
                          const TextPipeline* existing = nullptr,
                          const std::function<void(const std::string&)>& log = {});

/// Removes the held-out pairs a model with `positions` positions cannot score (the source with its
/// EOS, or the target with its BOS, longer than that), from the ids and the text alike so the two
/// stay aligned. Training pairs are filtered by data.max_len already; dev and test pairs are not,
/// and a model with learned positions (a table of model.max_positions rows) has no row for them.
/// Returns how many dev and test pairs were removed.
struct HeldOutDropped {
  std::size_t dev = 0, test = 0;
};
HeldOutDropped drop_held_out_longer_than(PreparedData& data, std::size_t positions);
/// The same for one list of pairs and their ids (eval on a checkpoint's test split or a corpus file);
/// returns how many were removed.
std::size_t drop_pairs_longer_than(std::vector<Example>& ids, std::vector<SentencePair>& text, std::size_t positions);

}  // namespace ts
