// SPDX-License-Identifier: GPL-3.0-or-later
// The Dataset panel's per-side tokenizer rules (see side_tokenizer.h).
#include "dataset/side_tokenizer.h"

#include <exception>

namespace ts::ui::dataset {

SideTokenizer side_tokenizer(const DataConfig& data, bool source, const Language& language) {
  SideTokenizer side;
  // With a shared vocabulary training uses the source tokenizer for both sides, unchanged.
  side.config = data.shared_vocab || source ? data.src_tokenizer : data.tgt_tokenizer;
  if (is_sentencepiece(side.config.kind)) {
    side.approximate = true;
    side.config.kind = TokenizerKind::kWord;
    // Words of a language without spaces would be whole sentences: characters are closer.
    if (is_cjk_language(language.code)) side.config.kind = TokenizerKind::kChar;
    return side;
  }
  // The same rule as core/src/train/data.cpp: a Chinese/Japanese side with a word tokenizer is split
  // per character (data.cjk_chars).
  if (!data.shared_vocab && data.cjk_chars && side.config.kind == TokenizerKind::kWord &&
      is_cjk_language(language.code)) {
    side.config.kind = TokenizerKind::kChar;
    side.cjk_chars = true;
  }
  return side;
}

std::shared_ptr<const Tokenizer> build_tokenizer(TokenizerConfig config, QString* problem) {
  try {
    return make_tokenizer(config);
  } catch (const std::exception& e) {
    if (problem) *problem = QString::fromStdString(e.what());
  }
  config.chinese = ChineseScript::kNone;
  try {
    return make_tokenizer(config);
  } catch (const std::exception&) {
    config = TokenizerConfig{};
    return make_tokenizer(config);
  }
}

}  // namespace ts::ui::dataset
