// SPDX-License-Identifier: GPL-3.0-or-later
// Counting the corpus's vocabulary for the Configuration panel's size estimate.
#include "configuration/vocabulary_counts.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <unordered_map>

#include "ts/text/language.h"

namespace ts::ui {

namespace {

constexpr std::int64_t kSpecials = 4;          // PAD, UNK, BOS, EOS
constexpr std::int64_t kFallbackVocab = 8000;  // before (or without) a count

// Subword sides are counted in words: the SentencePiece vocabulary cannot usefully exceed that.
TokenizerConfig counting_tokenizer(TokenizerConfig c) {
  if (is_sentencepiece(c.kind)) {
    c.kind = TokenizerKind::kWord;
    c.punctuation = Punctuation::kSplit;
  }
  if (!chinese_conversion_available()) c.chinese = ChineseScript::kNone;
  return c;
}

}  // namespace

TokenizerConfig effective_tokenizer(const DataConfig& data, bool source, const Direction& direction) {
  if (data.shared_vocab) return data.src_tokenizer;
  TokenizerConfig c = source ? data.src_tokenizer : data.tgt_tokenizer;
  if (data.cjk_chars && c.kind == TokenizerKind::kWord &&
      is_cjk_language(source ? direction.src_code : direction.tgt_code))
    c.kind = TokenizerKind::kChar;
  return c;
}

std::shared_ptr<const VocabularyCounts> count_vocabulary(std::shared_ptr<const Corpus> corpus, Direction direction,
                                                         DataConfig data, std::shared_ptr<std::atomic<bool>> cancel) {
  auto out = std::make_shared<VocabularyCounts>();
  try {
    const TokenizerConfig src_config = effective_tokenizer(data, true, direction);
    const TokenizerConfig tgt_config = effective_tokenizer(data, false, direction);
    const auto src_tokenizer = make_tokenizer(counting_tokenizer(src_config));
    const auto tgt_tokenizer = make_tokenizer(counting_tokenizer(tgt_config));
    std::unordered_map<std::string, int> src_types, tgt_types;
    auto& tgt_map = data.shared_vocab ? src_types : tgt_types;
    double tokens = 0;
    std::size_t n = 0;
    for (const auto& pair : corpus->pairs) {
      if ((++n & 1023) == 0 && cancel->load()) return nullptr;
      const std::string& src = direction.english_is_source ? pair.english : pair.other;
      const std::string& tgt = direction.english_is_source ? pair.other : pair.english;
      const auto s = src_tokenizer->tokenize(src);
      const auto t = tgt_tokenizer->tokenize(tgt);
      for (const auto& token : s) ++src_types[token];
      for (const auto& token : t) ++tgt_map[token];
      tokens += static_cast<double>(std::max(s.size(), t.size()) + 1);  // + EOS / BOS
    }
    auto frequencies = [](const std::unordered_map<std::string, int>& types) {
      std::vector<int> f;
      f.reserve(types.size());
      for (const auto& item : types) f.push_back(item.second);
      std::sort(f.begin(), f.end(), std::greater<int>());
      return f;
    };
    out->src.frequencies = frequencies(src_types);
    out->tgt.frequencies = data.shared_vocab ? out->src.frequencies : frequencies(tgt_types);
    out->src.subword = is_sentencepiece(src_config.kind);
    out->tgt.subword = is_sentencepiece(tgt_config.kind);
    if (n > 0) out->average_tokens = tokens / static_cast<double>(n);
  } catch (const std::exception& e) {
    out->error = e.what();
  }
  return out;
}

std::string counting_key(const Corpus* corpus, const Direction& direction, const DataConfig& data) {
  auto tok = [](TokenizerConfig c) {
    c.vocab_size = 0;
    c.character_coverage = 0;
    return c.to_json().dump();
  };
  return std::to_string(reinterpret_cast<std::uintptr_t>(corpus)) + '|' + corpus->path + '|' +
         std::to_string(corpus->pairs.size()) + '|' + direction.str() +
         (direction.english_is_source ? "|en|" : "|xx|") + tok(data.src_tokenizer) + tok(data.tgt_tokenizer) +
         (data.shared_vocab ? "|shared" : "") + (data.cjk_chars ? "|cjk" : "");
}

std::int64_t side_vocabulary(const VocabularyCounts::Side* counts, const TokenizerConfig& tok, const DataConfig& data) {
  std::int64_t size;
  if (is_sentencepiece(tok.kind)) {
    size = tok.vocab_size;
    if (counts && !counts->frequencies.empty())
      size = std::min<std::int64_t>(size, static_cast<std::int64_t>(counts->frequencies.size()) + 256);
    size += kSpecials;
  } else if (counts) {
    const auto& f = counts->frequencies;
    // frequencies are descending: the types kept are those before the first one below min_freq
    const auto kept = std::upper_bound(f.begin(), f.end(), data.min_freq, std::greater<int>()) - f.begin();
    size = kept + kSpecials;
  } else {
    size = kFallbackVocab;
  }
  if (data.max_vocab > 0) size = std::min<std::int64_t>(size, data.max_vocab);
  return std::max<std::int64_t>(size, kSpecials);
}

}  // namespace ts::ui
