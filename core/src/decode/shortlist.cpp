// SPDX-License-Identifier: GPL-3.0-or-later
// The lexical shortlist (see ts/decode/shortlist.h): building and asking, without LibTorch (this file
// is compiled into ts_infer as well, for transformer-studio-translate); reading and writing its
// safetensors file is shortlist_io.cpp.
#include "ts/decode/shortlist.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "ts/text/vocab.h"

namespace ts {
namespace {

bool special(std::int64_t id) { return id == Vocab::kPad || id == Vocab::kBos || id == Vocab::kEos; }

// The distinct ordinary ids of one side of a pair, refusing ids outside the vocabulary.
std::vector<std::int64_t> distinct(const std::vector<std::int64_t>& ids, std::int64_t vocab, const char* side) {
  std::vector<std::int64_t> out;
  for (auto id : ids) {
    if (id < 0 || id >= vocab)
      throw std::invalid_argument(std::string("shortlist: ") + side + " token id " + std::to_string(id) +
                                  " is outside the vocabulary of " + std::to_string(vocab));
    if (!special(id)) out.push_back(id);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

LexicalShortlist LexicalShortlist::build(const std::vector<Example>& pairs, std::int64_t src_vocab,
                                         std::int64_t tgt_vocab, const ShortlistOptions& options) {
  if (options.frequent < 0 || options.per_source < 0)
    throw std::invalid_argument("shortlist: frequent and per_source must not be negative");
  if (src_vocab <= 0 || tgt_vocab <= 0) throw std::invalid_argument("shortlist: empty vocabulary");
  LexicalShortlist out;
  out.src_vocab_ = src_vocab;
  out.tgt_vocab_ = tgt_vocab;
  out.options_ = options;

  // Sentence counts c(s), c(t), every target occurrence, and for each source token the targets of
  // the sentences it occurs in (counted per source token below: a sort, no hash of pairs).
  std::vector<std::int64_t> src_count(static_cast<std::size_t>(src_vocab)),
      tgt_count(static_cast<std::size_t>(tgt_vocab)), tgt_occurrences(static_cast<std::size_t>(tgt_vocab));
  std::vector<std::vector<std::int32_t>> together(static_cast<std::size_t>(src_vocab));
  for (const auto& pair : pairs) {
    const auto s = distinct(pair.src, src_vocab, "source");
    const auto t = distinct(pair.tgt, tgt_vocab, "target");
    for (auto id : pair.tgt)
      if (!special(id)) ++tgt_occurrences[static_cast<std::size_t>(id)];
    for (auto id : t) ++tgt_count[static_cast<std::size_t>(id)];
    for (auto id : s) {
      ++src_count[static_cast<std::size_t>(id)];
      auto& list = together[static_cast<std::size_t>(id)];
      for (auto tid : t) list.push_back(static_cast<std::int32_t>(tid));
    }
  }

  const auto k = static_cast<std::size_t>(options.per_source);
  out.candidates_.assign(static_cast<std::size_t>(src_vocab) * k, -1);
  std::vector<std::pair<double, std::int64_t>> scored;  // (-dice, target): sorts best first, ties to the smaller id
  for (std::int64_t s = 0; s < src_vocab && k > 0; ++s) {
    auto& list = together[static_cast<std::size_t>(s)];
    if (list.empty()) continue;
    std::sort(list.begin(), list.end());
    scored.clear();
    for (std::size_t i = 0; i < list.size();) {
      std::size_t j = i;
      while (j < list.size() && list[j] == list[i]) ++j;
      const auto t = static_cast<std::int64_t>(list[i]);
      const double dice =
          2.0 * static_cast<double>(j - i) /
          static_cast<double>(src_count[static_cast<std::size_t>(s)] + tgt_count[static_cast<std::size_t>(t)]);
      scored.emplace_back(-dice, t);
      i = j;
    }
    const auto n = std::min(k, scored.size());
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(n), scored.end());
    for (std::size_t i = 0; i < n; ++i) out.candidates_[static_cast<std::size_t>(s) * k + i] = scored[i].second;
    std::vector<std::int32_t>().swap(list);  // free as we go: the lists hold every co-occurrence
  }

  std::vector<std::pair<std::int64_t, std::int64_t>> by_count;  // (-occurrences, target)
  for (std::int64_t t = 0; t < tgt_vocab; ++t)
    if (tgt_occurrences[static_cast<std::size_t>(t)] > 0)
      by_count.emplace_back(-tgt_occurrences[static_cast<std::size_t>(t)], t);
  const auto f = std::min(static_cast<std::size_t>(options.frequent), by_count.size());
  std::partial_sort(by_count.begin(), by_count.begin() + static_cast<std::ptrdiff_t>(f), by_count.end());
  for (std::size_t i = 0; i < f; ++i) out.frequent_.push_back(by_count[i].second);
  return out;
}

std::vector<std::int64_t> LexicalShortlist::candidates(std::int64_t s) const {
  std::vector<std::int64_t> out;
  if (s < 0 || s >= src_vocab_) return out;
  const auto k = static_cast<std::size_t>(options_.per_source);
  for (std::size_t i = 0; i < k; ++i) {
    const auto t = candidates_[static_cast<std::size_t>(s) * k + i];
    if (t < 0) break;
    out.push_back(t);
  }
  return out;
}

std::vector<std::int64_t> LexicalShortlist::targets(const std::vector<std::int64_t>& src) const {
  std::vector<std::int64_t> out(frequent_);
  out.push_back(Vocab::kEos);
  const auto k = static_cast<std::size_t>(options_.per_source);
  for (auto s : src) {
    if (s < 0 || s >= src_vocab_ || special(s)) continue;
    for (std::size_t i = 0; i < k; ++i) {
      const auto t = candidates_[static_cast<std::size_t>(s) * k + i];
      if (t < 0) break;
      out.push_back(t);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

LexicalShortlist LexicalShortlist::from_tables(std::int64_t src_vocab, std::int64_t tgt_vocab,
                                               const ShortlistOptions& options, std::vector<std::int64_t> frequent,
                                               std::vector<std::int64_t> candidates) {
  if (src_vocab <= 0 || tgt_vocab <= 0) throw std::invalid_argument("empty vocabulary");
  if (options.frequent < 0 || options.per_source < 0)
    throw std::invalid_argument("frequent and per_source must not be negative");
  if (candidates.size() != static_cast<std::size_t>(src_vocab) * static_cast<std::size_t>(options.per_source))
    throw std::invalid_argument("the candidates are not [src_vocab, per_source]");
  if (frequent.size() > static_cast<std::size_t>(options.frequent))
    throw std::invalid_argument("\"frequent\" is not a list of at most " + std::to_string(options.frequent) + " ids");
  for (auto t : candidates)
    if (t < -1 || t >= tgt_vocab)
      throw std::invalid_argument("candidate id " + std::to_string(t) + " is outside the target vocabulary");
  for (auto t : frequent)
    if (t < 0 || t >= tgt_vocab)
      throw std::invalid_argument("frequent id " + std::to_string(t) + " is outside the target vocabulary");
  LexicalShortlist out;
  out.src_vocab_ = src_vocab;
  out.tgt_vocab_ = tgt_vocab;
  out.options_ = options;
  out.frequent_ = std::move(frequent);
  out.candidates_ = std::move(candidates);
  return out;
}

std::string missing_shortlist_message(const std::string& list_path, const std::string& checkpoint, bool required) {
  const std::string how = "make one with `transformer-studio-cli shortlist --checkpoint " + checkpoint + "`";
  if (required) return list_path + ": this run has no lexical shortlist; " + how;
  return "the model's settings ask for its lexical shortlist, and " + list_path +
         " is missing: scoring the whole vocabulary (" + how + ")";
}

std::string shortlist_file(const std::string& checkpoint) {
  const std::filesystem::path path(checkpoint);
  return ((std::filesystem::is_directory(path) ? path : path.parent_path()) / "shortlist.safetensors").string();
}

}  // namespace ts
