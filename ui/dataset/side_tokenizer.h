// SPDX-License-Identifier: GPL-3.0-or-later
// The tokenizer the Dataset panel uses for each side (internal to ui/dataset/): the rules training
// follows (a shared vocabulary, data.cjk_chars), with SentencePiece approximated at word or
// character level, since bpe/unigram models are only trained when training starts. The preview,
// the statistics and the tokenizer notes all go through side_tokenizer so they agree.
#pragma once

#include <memory>
#include <string>

#include <QString>

#include "ts/text/corpus.h"
#include "ts/text/language.h"
#include "ts/text/tokenizer.h"
#include "ts/train/config.h"

namespace ts::ui::dataset {

/// What the panel tokenises with for one side, and how that relates to what training will use.
struct SideTokenizer {
  TokenizerConfig config;
  bool approximate = false;  // bpe/unigram shown at word (or character) level
  bool cjk_chars = false;    // a "word" tokenizer switched to characters for Chinese/Japanese
};

SideTokenizer side_tokenizer(const DataConfig& data, bool source, const Language& language);

/// make_tokenizer for word/char; a Chinese conversion this build cannot do falls back to none so
/// the preview still works (training reports the real error).
std::shared_ptr<const Tokenizer> build_tokenizer(TokenizerConfig config, QString* problem = nullptr);

}  // namespace ts::ui::dataset
