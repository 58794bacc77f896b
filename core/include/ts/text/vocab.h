// SPDX-License-Identifier: GPL-3.0-or-later
// Vocabulary: token <-> id with PAD/UNK/BOS/EOS, min-frequency and max-size, JSON round trip.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace ts {

class Vocab {
 public:
  static constexpr std::int64_t kPad = 0;
  static constexpr std::int64_t kUnk = 1;
  static constexpr std::int64_t kBos = 2;
  static constexpr std::int64_t kEos = 3;
  static inline const char* kPadToken = "<pad>";
  static inline const char* kUnkToken = "<unk>";
  static inline const char* kBosToken = "<s>";
  static inline const char* kEosToken = "</s>";

  Vocab();  // just the four specials

  /// Builds from tokenized sentences: tokens seen at least `min_freq` times, most frequent first
  /// (ties broken by first appearance, so the result is deterministic), at most `max_size` entries
  /// in total including the specials (0 = no limit).
  static Vocab build(const std::vector<std::vector<std::string>>& sentences, int min_freq = 1,
                     std::size_t max_size = 0);

  std::int64_t id(const std::string& token) const;  // kUnk when absent
  const std::string& token(std::int64_t id) const;  // kUnkToken text when out of range
  std::size_t size() const { return tokens_.size(); }
  bool contains(const std::string& token) const;

  /// Token ids, without BOS/EOS.
  std::vector<std::int64_t> encode(const std::vector<std::string>& tokens) const;
  /// Tokens for ids, stopping at EOS and skipping PAD/BOS.
  std::vector<std::string> decode(const std::vector<std::int64_t>& ids) const;

  nlohmann::json to_json() const;                   // {"tokens": [...]} in id order
  static Vocab from_json(const nlohmann::json& j);  // throws std::invalid_argument if specials are wrong

  bool operator==(const Vocab& other) const { return tokens_ == other.tokens_; }

 private:
  void add(const std::string& token);
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::int64_t> index_;
};

}  // namespace ts
