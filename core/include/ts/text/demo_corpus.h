// SPDX-License-Identifier: GPL-3.0-or-later
// The built-in demo corpus: English<->German sentence pairs generated from a small grammar
// (articles by gender and case, verb agreement, verb-final subordinate clauses), so a model
// trained on it in minutes shows real re-ordering in its attention. Our own generator, no copied data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ts/text/corpus.h"

namespace ts {

struct DemoCorpusOptions {
  std::size_t pairs = 6000;
  std::uint64_t seed = 7;
};

/// Distinct (English, German) pairs, deterministic for a seed. English first, like the Anki files.
std::vector<CorpusPair> generate_demo_corpus(const DemoCorpusOptions& options = {});

/// The same pairs as an in-memory Corpus named "demo-deu.txt" (languages English/German).
Corpus demo_corpus(const DemoCorpusOptions& options = {});

/// The corpus in Anki format ("english\tgerman\n" per line), e.g. to write it to a file.
std::string to_anki_text(const std::vector<CorpusPair>& pairs);

}  // namespace ts
