// SPDX-License-Identifier: GPL-3.0-or-later
// Shared fixtures for the metric tests: sacreBLEU's README example and a deterministic corpus of
// perturbed sentence pairs (hyps and other_refs are perturbations of refs: dropped, replaced, doubled
// and swapped words), whose expected scores were computed offline with ../shared/bench/bleu.py.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ts {

namespace metrics_fixture {
// sacreBLEU's README example (test_bleu.py: test_corpus_bleu_cases).
inline const std::vector<std::string> kHyps = {"The dog bit the man.", "It wasn't surprising.",
                                               "The man had just bitten him."};
inline const std::vector<std::vector<std::string>> kRefs = {
    {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
    {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."}};
}  // namespace metrics_fixture

namespace metrics_fixture {
namespace detail {

// 64-bit LCG (Knuth's MMIX constants): the same numbers in C++ and in the Python used to compute
// the expected values.
class Lcg {
 public:
  explicit Lcg(std::uint64_t seed) : state_(seed) {}
  std::size_t next(std::size_t n) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>((state_ >> 33) % n);
  }

 private:
  std::uint64_t state_;
};

inline const std::vector<std::string> kWords = {
    "the",   "dog",        "man",        "bit",   "cat",    "sat",   "on",      "mat",        "a",     "it",
    "was",   "not",        "surprising", "he",    "she",    "had",   "just",    "bitten",     "him",   "first",
    "no",    "one",        "house",      "tree",  "green",  "red",   "quickly", "and",        "or",    "but",
    "today", "yesterday",  "3.5",        "1,000", "a-b",    "5-3",   "don't",   "\"quoted\"", "&amp;", "(see)",
    "e.g.",  "U.S.",       "Grüß",       "naïve", "Straße", "你好",  "世界。",  "，",         "x/y",   "$5",
    "10%",   "well-known", "1990s",      "--",    "...",    "co-op", "¿Qué?",   "it's",       "word.", "end,"};
inline const std::vector<std::string> kEnds = {".", "!", "?", "", " ."};

inline std::vector<std::string> perturb(const std::vector<std::string>& words, Lcg& rng) {
  std::vector<std::string> out;
  for (const auto& w : words) {
    const std::size_t r = rng.next(100);
    if (r < 8) continue;  // drop
    if (r < 14) {         // replace
      out.push_back(kWords[rng.next(kWords.size())]);
      continue;
    }
    if (r < 18) out.push_back(w);  // double
    out.push_back(w);
  }
  if (out.size() > 1 && rng.next(10) < 3) {  // swap two neighbours
    const std::size_t i = rng.next(out.size() - 1);
    std::swap(out[i], out[i + 1]);
  }
  return out;
}

inline std::string join(const std::vector<std::string>& words, const std::string& end) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s + end;
}

}  // namespace detail

inline void random_corpus(std::size_t sentences, std::vector<std::string>& hyps, std::vector<std::string>& refs,
                          std::vector<std::string>& other_refs) {
  using namespace detail;
  Lcg rng(20240611);
  hyps.clear();
  refs.clear();
  other_refs.clear();
  for (std::size_t i = 0; i < sentences; ++i) {
    std::vector<std::string> ref(3 + rng.next(12));
    for (auto& w : ref) w = kWords[rng.next(kWords.size())];
    const std::string& end = kEnds[rng.next(kEnds.size())];
    const auto other = perturb(ref, rng);
    const auto hyp = perturb(ref, rng);
    refs.push_back(join(ref, end));
    other_refs.push_back(join(other, end));
    hyps.push_back(join(hyp, end));
  }
}

}  // namespace metrics_fixture

}  // namespace ts
