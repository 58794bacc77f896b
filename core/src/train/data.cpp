// SPDX-License-Identifier: GPL-3.0-or-later
// Data preparation: split, tokenizer training, vocabulary building and encoding.
#include "ts/train/data.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <stdexcept>

#include <fmt/format.h>

#include "ts/host/cpu.h"
#include "ts/store/atomic_file.h"
#include "ts/store/sha256.h"
#include "ts/text/language.h"
#include "ts/text/tokenize_all.h"

namespace ts {
namespace {

TokenizerConfig side_config(TokenizerConfig config, const std::string& language, const DataConfig& data) {
  if (data.cjk_chars && config.kind == TokenizerKind::kWord && is_cjk_language(language))
    config.kind = TokenizerKind::kChar;
  return config;
}

std::vector<Example> encode_all(const TextPipeline& p, const std::vector<SentencePair>& pairs) {
  std::vector<Example> out;
  out.reserve(pairs.size());
  for (const auto& pair : pairs) out.push_back(p.encode(pair));
  return out;
}

}  // namespace

DataSplit split_corpus(const Corpus& corpus, const Direction& direction, const DataConfig& config) {
  return split_pairs(oriented_pairs(corpus, direction),
                     SplitConfig{config.dev, config.test, config.split_seed, config.split});
}

void write_split_file(const std::string& path, const PreparedData& data, const DataConfig& config,
                      const std::string& corpus_path) {
  using nlohmann::json;
  const auto dump = [](const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); };
  // One pair per line: readable, and a diff of two split files shows the pairs that differ.
  const auto pairs = [&](const std::vector<SentencePair>& part) {
    std::string list = "[";
    for (std::size_t i = 0; i < part.size(); ++i)
      list += (i ? ",\n  " : "\n  ") + dump(json::array({part[i].src, part[i].tgt}));
    return list + (part.empty() ? "]" : "\n ]");
  };
  std::error_code ec;
  const bool on_disk = !corpus_path.empty() && std::filesystem::is_regular_file(corpus_path, ec);
  const auto& stats = data.text.stats;
  const std::vector<std::pair<std::string, json>> header = {
      {"format", 1},
      {"corpus", corpus_path},
      {"corpus_sha256", on_disk ? sha256_file(corpus_path) : ""},
      {"direction", data.pipeline.src_language.code + "-" + data.pipeline.tgt_language.code},
      {"method", split_method_name(stats.method)},
      {"seed", config.split_seed},
      {"pairs", stats.pairs},
      {"sources", stats.sources},
      {"shared_pairs", stats.shared_pairs},
      {"train", data.text.train.size()}};
  std::string text = "{\n";
  for (const auto& [key, value] : header) text += " " + dump(key) + ": " + dump(value) + ",\n";
  text += " \"dev\": " + pairs(data.text.dev) + ",\n \"test\": " + pairs(data.text.test) + "\n}\n";
  write_file_atomically(path, text);
}

PreparedData prepare_data(const Corpus& corpus, const Direction& direction, const DataConfig& config,
                          const TextPipeline* existing, const std::function<void(const std::string&)>& log) {
  auto say = [&](const std::string& line) {
    if (log) log(line);
  };
  const auto t0 = std::chrono::steady_clock::now();
  PreparedData out;
  out.text = split_corpus(corpus, direction, config);
  say(fmt::format("split: {} train, {} dev, {} test pairs; {}", out.text.train.size(), out.text.dev.size(),
                  out.text.test.size(), describe_split(out.text.stats)));
  // Legal, but almost certainly not what was meant (a header line only, the wrong file).
  if (out.text.train.size() < 100)
    say(
        fmt::format("warning: only {} training pair{}: far too few to learn a translation (Tatoeba files hold "
                    "tens of thousands)",
                    out.text.train.size(), out.text.train.size() == 1 ? "" : "s"));

  TextPipeline& p = out.pipeline;
  std::vector<Example> train;
  if (existing) {
    p = *existing;
    train = encode_all(p, out.text.train);
  } else {
    p.direction = direction;
    p.src_language = direction.english_is_source ? corpus.english : corpus.other;
    p.tgt_language = direction.english_is_source ? corpus.other : corpus.english;
    p.shared_vocab = config.shared_vocab;
    std::vector<std::string> src_text, tgt_text;
    src_text.reserve(out.text.train.size());
    tgt_text.reserve(out.text.train.size());
    for (const auto& pair : out.text.train) {
      src_text.push_back(pair.src);
      tgt_text.push_back(pair.tgt);
    }
    // Each training sentence is tokenised once: the tokens build the vocabulary and are then encoded
    // (tokenising was most of the ingest time, and was done twice). Tokenising shares the cores
    // (Tokenizer is safe to call from several threads); the times go to the log.
    using Clock = std::chrono::steady_clock;
    const auto since = [](Clock::time_point start) {
      return std::chrono::duration<double>(Clock::now() - start).count();
    };
    std::vector<std::vector<std::string>> src_tokens, tgt_tokens;
    double learn_seconds = 0, tokenize_seconds = 0;
    if (config.shared_vocab) {
      std::vector<std::string> both = src_text;
      both.insert(both.end(), tgt_text.begin(), tgt_text.end());
      auto start = Clock::now();
      std::shared_ptr<const Tokenizer> tok = make_tokenizer(config.src_tokenizer, both);
      learn_seconds = since(start);
      p.src_tokenizer = p.tgt_tokenizer = tok;
      start = Clock::now();
      src_tokens = tokenize_all(*tok, src_text);
      tgt_tokens = tokenize_all(*tok, tgt_text);
      tokenize_seconds = since(start);
      auto all = src_tokens;
      all.insert(all.end(), tgt_tokens.begin(), tgt_tokens.end());
      auto vocab = std::make_shared<Vocab>(Vocab::build(all, config.min_freq, config.max_vocab));
      p.src_vocab = p.tgt_vocab = vocab;
    } else {
      // The two sides have their own tokenizers and vocabularies: built at the same time, each side
      // tokenising on half the cores. The log gives the slower side's times.
      const int side_threads = std::max(1, cpu_cores() / 2);
      double tgt_learn = 0, tgt_tokenize = 0;
      auto tgt_future = std::async(std::launch::async, [&] {
        auto start = Clock::now();
        auto tok = make_tokenizer(side_config(config.tgt_tokenizer, p.tgt_language.code, config), tgt_text);
        tgt_learn = since(start);
        start = Clock::now();
        tgt_tokens = tokenize_all(*tok, tgt_text, side_threads);
        tgt_tokenize = since(start);
        p.tgt_vocab = std::make_shared<Vocab>(Vocab::build(tgt_tokens, config.min_freq, config.max_vocab));
        p.tgt_tokenizer = std::move(tok);
      });
      auto start = Clock::now();
      p.src_tokenizer = make_tokenizer(side_config(config.src_tokenizer, p.src_language.code, config), src_text);
      learn_seconds = since(start);
      start = Clock::now();
      src_tokens = tokenize_all(*p.src_tokenizer, src_text, side_threads);
      tokenize_seconds = since(start);
      p.src_vocab = std::make_shared<Vocab>(Vocab::build(src_tokens, config.min_freq, config.max_vocab));
      tgt_future.get();  // rethrows a failure of the target side
      learn_seconds = std::max(learn_seconds, tgt_learn);
      tokenize_seconds = std::max(tokenize_seconds, tgt_tokenize);
    }
    say(fmt::format("tokenizers: learnt in {:.2f} s; {} training sentences tokenised in {:.2f} s on up to {} threads",
                    learn_seconds, src_text.size() + tgt_text.size(), tokenize_seconds, cpu_cores()));
    train.reserve(src_tokens.size());
    for (std::size_t i = 0; i < src_tokens.size(); ++i) {
      Example e{p.src_vocab->encode(src_tokens[i]), p.tgt_vocab->encode(tgt_tokens[i])};
      e.src.push_back(Vocab::kEos);
      train.push_back(std::move(e));
    }
  }
  if (!existing) {  // what training the tokenizers changed from the configuration, and why
    if (p.src_tokenizer == p.tgt_tokenizer) {
      if (const auto note = p.src_tokenizer->training_note(); !note.empty()) say("shared tokenizer: " + note);
    } else {
      for (const auto& [tok, language] : {std::pair{p.src_tokenizer.get(), p.src_language.name},
                                          std::pair{p.tgt_tokenizer.get(), p.tgt_language.name}})
        if (const auto note = tok->training_note(); !note.empty()) say(language + " tokenizer: " + note);
    }
  }
  say(fmt::format("vocabulary: {} {} tokens ({}), {} {} tokens ({})", p.src_vocab->size(), p.src_language.name,
                  tokenizer_kind_name(p.src_tokenizer->config().kind), p.tgt_vocab->size(), p.tgt_language.name,
                  tokenizer_kind_name(p.tgt_tokenizer->config().kind)));

  for (auto& example : train) {
    const auto max_len = static_cast<std::size_t>(config.max_len);
    if (example.src.size() > max_len || example.tgt.size() + 1 > max_len) {
      ++out.dropped_long;
      continue;
    }
    out.train.push_back(std::move(example));
  }
  out.dev = encode_all(p, out.text.dev);
  out.test = encode_all(p, out.text.test);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  say(fmt::format("encoded {} training pairs ({} longer than {} tokens dropped) in {:.2f} s", out.train.size(),
                  out.dropped_long, config.max_len, seconds));
  if (out.train.empty()) throw std::invalid_argument("no training pair left after the split and length filter");
  return out;
}

std::size_t drop_pairs_longer_than(std::vector<Example>& ids, std::vector<SentencePair>& text, std::size_t positions) {
  if (ids.size() != text.size()) throw std::logic_error("held-out ids and text are not aligned");
  std::size_t kept = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i].src.size() > positions || ids[i].tgt.size() + 1 > positions) continue;
    if (kept != i) {
      ids[kept] = std::move(ids[i]);
      text[kept] = std::move(text[i]);
    }
    ++kept;
  }
  const std::size_t dropped = ids.size() - kept;
  ids.resize(kept);
  text.resize(kept);
  return dropped;
}

HeldOutDropped drop_held_out_longer_than(PreparedData& data, std::size_t positions) {
  HeldOutDropped out;
  out.dev = drop_pairs_longer_than(data.dev, data.text.dev, positions);
  out.test = drop_pairs_longer_than(data.test, data.text.test, positions);
  return out;
}

}  // namespace ts
