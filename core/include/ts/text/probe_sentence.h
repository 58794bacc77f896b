// SPDX-License-Identifier: GPL-3.0-or-later
// The probe sentence: one source sentence translated at every validation, whose attention the app's
// "Attention over training" replays. When the person names none, one is picked from the dev split
// by a fixed rule, so the same corpus and settings always give the same sentence.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ts/text/corpus.h"

namespace ts {

/// Length in words; CJK text has no spaces, so its characters count as two thirds of a word each
/// (a 6–12 word sentence is then about 9–18 characters).
double probe_word_length(std::string_view text);

/// The source sentence closest to 6–12 words, then closest to 9 words, then first in `pool`, with
/// its whitespace collapsed; empty when every source is blank.
std::string pick_probe_sentence(const std::vector<SentencePair>& pool);

}  // namespace ts
