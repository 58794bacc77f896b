// SPDX-License-Identifier: GPL-3.0-or-later
// A lexical shortlist (after Bergamot's): the target tokens a sentence may be translated into, read
// from a table built once from the training pairs, so that each decoder step scores a few hundred
// tokens instead of the whole target vocabulary (the output projection is half of a small model's
// decoding work).
//
// For every source token the table keeps the `per_source` target tokens most associated with it in
// the training pairs (Dice coefficient of sentence co-occurrence: 2·c(s,t) / (c(s) + c(t)), ties to
// the smaller id), and for every sentence the `frequent` most frequent target tokens. A sentence's
// shortlist is the union of the frequent tokens, the candidates of each of its source tokens, and
// end-of-sentence. Each sentence gets its own list, so a sentence decodes alike alone or in a batch.
//
// Building and asking need no LibTorch (shortlist.cpp, compiled into ts_infer too, so that
// transformer-studio-translate can use a shortlist carried in a translator file); save() and load()
// read and write safetensors through LibTorch (shortlist_io.cpp, ts_core only).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ts/text/pipeline.h"

namespace ts {

struct ShortlistOptions {
  int frequent = 100;   // the most frequent target tokens, in every list
  int per_source = 50;  // candidates kept per source token
};

class LexicalShortlist {
 public:
  LexicalShortlist() = default;
  /// From training pairs (ids as the pipeline encodes them; EOS and padding are ignored). Throws
  /// std::invalid_argument for options below 0 or ids outside the vocabularies.
  static LexicalShortlist build(const std::vector<Example>& pairs, std::int64_t src_vocab, std::int64_t tgt_vocab,
                                const ShortlistOptions& options = {});

  /// The target ids `src` may produce: sorted, without repeats, EOS included. Source ids outside the
  /// table contribute nothing.
  std::vector<std::int64_t> targets(const std::vector<std::int64_t>& src) const;

  /// From tables as save() writes them (`candidates` [src_vocab × per_source], -1 padded). Throws
  /// std::invalid_argument saying what does not fit: a table of another size, an id outside the
  /// vocabularies, more frequent ids than options.frequent.
  static LexicalShortlist from_tables(std::int64_t src_vocab, std::int64_t tgt_vocab, const ShortlistOptions& options,
                                      std::vector<std::int64_t> frequent, std::vector<std::int64_t> candidates);

  /// Writes the table as safetensors (candidates [src_vocab, per_source] int64, -1 where a token had
  /// fewer; frequent [n] int64; the vocabulary sizes and options as metadata).
  void save(const std::string& path) const;
  /// Reads a table written by save(); throws std::runtime_error naming `path` when it is unreadable,
  /// malformed, or made for other vocabulary sizes than the model's.
  static LexicalShortlist load(const std::string& path, std::int64_t src_vocab, std::int64_t tgt_vocab);

  std::int64_t src_vocab() const { return src_vocab_; }
  std::int64_t tgt_vocab() const { return tgt_vocab_; }
  const ShortlistOptions& options() const { return options_; }
  const std::vector<std::int64_t>& frequent() const { return frequent_; }
  /// Source token `s`'s candidates, best first.
  std::vector<std::int64_t> candidates(std::int64_t s) const;
  /// Every source token's candidates: [src_vocab × per_source], row-major, -1 padded (from_tables' form).
  const std::vector<std::int64_t>& candidate_table() const { return candidates_; }

 private:
  std::int64_t src_vocab_ = 0, tgt_vocab_ = 0;
  ShortlistOptions options_;
  std::vector<std::int64_t> frequent_;
  std::vector<std::int64_t> candidates_;  // [src_vocab][per_source], -1 padded
};

/// Where a run keeps its shortlist: "shortlist.safetensors" beside the checkpoint `checkpoint` (a
/// checkpoint file, or the run's folder).
std::string shortlist_file(const std::string& checkpoint);

/// What both translating programs say when a run asked to decode with its shortlist has none at
/// `list_path`: the error's text when the command line asked for it (`required`), otherwise the note's
/// (the whole vocabulary is scored). `checkpoint` as the person gave it, for the command that makes one.
std::string missing_shortlist_message(const std::string& list_path, const std::string& checkpoint, bool required);

/// The shortlist beside `checkpoint` (shortlist_file) for a model of these vocabularies, or null when
/// there is none; throws std::runtime_error naming the file when there is one that cannot be used.
std::shared_ptr<const LexicalShortlist> shortlist_beside(const std::string& checkpoint, std::int64_t src_vocab,
                                                         std::int64_t tgt_vocab);

}  // namespace ts
