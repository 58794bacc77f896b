// SPDX-License-Identifier: GPL-3.0-or-later
// Vocabulary: token <-> id mapping with specials, frequency-ordered building and JSON (see
// ts/text/vocab.h).
#include "ts/text/vocab.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string_view>

namespace ts {

namespace {
bool is_special(std::string_view token) {
  return token == Vocab::kPadToken || token == Vocab::kUnkToken || token == Vocab::kBosToken ||
         token == Vocab::kEosToken;
}

/// Fast 64-bit hash for short strings (tokens are mostly under 16 bytes).
std::uint64_t hash_token(std::string_view s) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ (s.size() * 0xC2B2AE3D27D4EB4Full);
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    h = (h ^ word) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  h = (h ^ tail) * 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 29);
}

/// Counts distinct tokens in first-appearance order. A flat open-addressing table over a
/// contiguous copy of the distinct tokens keeps the build's hot loop cache-friendly
/// (std::unordered_map costs several cache misses per token).
class TokenCounter {
 public:
  struct Entry {
    std::uint32_t offset;  // into text_
    std::uint32_t size;
    std::int64_t count;
  };

  TokenCounter() : slots_(1 << 12) {}

  void add(std::string_view token) {
    const std::uint64_t hash = hash_token(token);
    const auto tag = static_cast<std::uint32_t>(hash >> 32);
    std::size_t i = hash & (slots_.size() - 1);
    for (;; i = (i + 1) & (slots_.size() - 1)) {
      const Slot slot = slots_[i];
      if (slot.entry == 0) break;
      if (slot.tag == tag && text(entries_[slot.entry - 1]) == token) {
        ++entries_[slot.entry - 1].count;
        return;
      }
    }
    entries_.push_back({static_cast<std::uint32_t>(text_.size()), static_cast<std::uint32_t>(token.size()), 1});
    text_.append(token);
    slots_[i] = {tag, static_cast<std::uint32_t>(entries_.size())};
    if (entries_.size() * 2 > slots_.size()) grow();
  }

  const std::vector<Entry>& entries() const { return entries_; }
  std::string_view text(const Entry& entry) const { return {text_.data() + entry.offset, entry.size}; }

 private:
  struct Slot {
    std::uint32_t tag = 0;    // high hash bits
    std::uint32_t entry = 0;  // 1-based index into entries_, 0 = empty
  };

  void grow() {
    std::vector<Slot> bigger(slots_.size() * 2);
    for (const Entry& entry : entries_) {
      const std::uint64_t hash = hash_token(text(entry));
      std::size_t i = hash & (bigger.size() - 1);
      while (bigger[i].entry != 0) i = (i + 1) & (bigger.size() - 1);
      bigger[i] = {static_cast<std::uint32_t>(hash >> 32), static_cast<std::uint32_t>(&entry - entries_.data() + 1)};
    }
    slots_ = std::move(bigger);
  }

  std::vector<Slot> slots_;
  std::vector<Entry> entries_;
  std::string text_;  // distinct tokens back to back
};

}  // namespace

Vocab::Vocab() {
  for (const char* special : {kPadToken, kUnkToken, kBosToken, kEosToken}) add(special);
}

void Vocab::add(const std::string& token) {
  index_.emplace(token, static_cast<std::int64_t>(tokens_.size()));
  tokens_.push_back(token);
}

Vocab Vocab::build(const std::vector<std::vector<std::string>>& sentences, int min_freq, std::size_t max_size) {
  TokenCounter counter;
  for (const auto& sentence : sentences) {
    for (const auto& token : sentence) counter.add(token);
  }
  // Candidates in first-appearance order, so a stable sort by count keeps ties deterministic.
  std::vector<TokenCounter::Entry> kept;
  kept.reserve(counter.entries().size());
  for (const auto& entry : counter.entries()) {
    if (entry.count >= std::max(min_freq, 1) && !is_special(counter.text(entry))) kept.push_back(entry);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
  Vocab vocab;
  if (max_size > 0) kept.resize(std::min(kept.size(), max_size - std::min(max_size, vocab.size())));
  vocab.tokens_.reserve(vocab.size() + kept.size());
  vocab.index_.reserve(vocab.size() + kept.size());
  for (const auto& entry : kept) vocab.add(std::string(counter.text(entry)));
  return vocab;
}

std::int64_t Vocab::id(const std::string& token) const {
  const auto it = index_.find(token);
  return it == index_.end() ? kUnk : it->second;
}

const std::string& Vocab::token(std::int64_t id) const {
  if (id < 0 || id >= static_cast<std::int64_t>(tokens_.size())) return tokens_[kUnk];
  return tokens_[static_cast<std::size_t>(id)];
}

bool Vocab::contains(const std::string& token) const { return index_.count(token) > 0; }

std::vector<std::int64_t> Vocab::encode(const std::vector<std::string>& tokens) const {
  std::vector<std::int64_t> ids;
  ids.reserve(tokens.size());
  for (const auto& token : tokens) ids.push_back(id(token));
  return ids;
}

std::vector<std::string> Vocab::decode(const std::vector<std::int64_t>& ids) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const auto id : ids) {
    if (id == kEos) break;
    if (id == kPad || id == kBos) continue;
    tokens.push_back(token(id));
  }
  return tokens;
}

nlohmann::json Vocab::to_json() const { return {{"tokens", tokens_}}; }

Vocab Vocab::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("tokens") || !j["tokens"].is_array()) {
    throw std::invalid_argument("vocab: expected an object with a \"tokens\" array");
  }
  const auto& tokens = j["tokens"];
  Vocab vocab;  // starts with the specials, which must match the stored ones
  if (tokens.size() < vocab.size()) {
    throw std::invalid_argument("vocab: fewer than the 4 special tokens");
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].is_string()) {
      throw std::invalid_argument("vocab: token " + std::to_string(i) + " is not a string");
    }
    const auto& token = tokens[i].get_ref<const std::string&>();
    if (i < vocab.size()) {
      if (token != vocab.tokens_[i]) {
        throw std::invalid_argument("vocab: id " + std::to_string(i) + " must be \"" + vocab.tokens_[i] + "\", not \"" +
                                    token + "\"");
      }
      continue;
    }
    if (token.empty()) throw std::invalid_argument("vocab: token " + std::to_string(i) + " is empty");
    if (vocab.contains(token)) {
      throw std::invalid_argument("vocab: duplicate token \"" + token + "\" at id " + std::to_string(i));
    }
    vocab.add(token);
  }
  return vocab;
}

}  // namespace ts
