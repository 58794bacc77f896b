// SPDX-License-Identifier: GPL-3.0-or-later
// Tokenising many texts on several threads: what preparing a corpus for training does with every
// training sentence. A Tokenizer (ts/text/tokenizer.h) holds no state that changes after it is built,
// so its tokenize and detokenize may be called from several threads at once: SentencePiece's
// processor, ICU's case mapping and OpenCC's converter are all safe to share, and a new Tokenizer
// must keep it so.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ts/text/tokenizer.h"

namespace ts {

/// `tokenizer.tokenize` of every text, in order, on up to `threads` threads (cpu_cores() when 0), each
/// taking a contiguous block of at least `min_block` texts, so short lists stay on the calling thread.
/// The result is the same for any thread count. An exception on any thread is rethrown here, after
/// every thread has stopped.
std::vector<std::vector<std::string>> tokenize_all(const Tokenizer& tokenizer, const std::vector<std::string>& texts,
                                                   int threads = 0, std::size_t min_block = 4096);

}  // namespace ts
