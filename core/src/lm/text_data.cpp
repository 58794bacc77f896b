// SPDX-License-Identifier: GPL-3.0-or-later
// Text for language models (see ts/lm/text_data.h).
#include "ts/lm/text_data.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "ts/text/files.h"
#include "ts/text/numbers.h"
#include "ts/text/utf8.h"

namespace ts {
namespace {

[[noreturn]] void fail(const std::string& name, const std::string& what) { throw LmDataError(name + ": " + what); }

// Refuses files that are not text before anything tries to tokenise them.
void check_text(std::string_view text, const std::string& name) {
  if (text.empty()) fail(name, "the file is empty: a language model needs text to learn from");
  const auto starts_with = [&](std::string_view magic) { return text.substr(0, magic.size()) == magic; };
  struct Magic {
    std::string_view bytes, what;
  };
  static const Magic kMagic[] = {{"PK\x03\x04", "a zip archive"},
                                 {"\x1F\x8B", "a gzip-compressed file"},
                                 {"%PDF", "a PDF document"},
                                 {"\x89PNG", "a PNG image"},
                                 {"\xFF\xD8\xFF", "a JPEG image"},
                                 {"\x7F"
                                  "ELF",
                                  "an executable (ELF)"},
                                 {"\xFF\xFE", "UTF-16 text (save it as UTF-8)"},
                                 {"\xFE\xFF", "UTF-16 text (save it as UTF-8)"}};
  for (const auto& m : kMagic)
    if (starts_with(m.bytes)) fail(name, fmt::format("looks like {}, not UTF-8 text", m.what));
  const auto nul = text.find('\0');
  if (nul != std::string_view::npos)
    fail(name, fmt::format("looks like a binary file (NUL byte at byte offset {}), not UTF-8 text", nul));
  // Invalid UTF-8: name the first bad line and the byte within it (1-based, as editors count).
  std::size_t line_start = 0, line_no = 1;
  while (line_start <= text.size()) {
    auto end = text.find('\n', line_start);
    if (end == std::string_view::npos) end = text.size();
    const auto line = text.substr(line_start, end - line_start);
    if (!is_valid_utf8(line)) {
      std::size_t pos = 0;
      while (pos < line.size()) {
        const auto at = pos;
        const auto cp = next_code_point(line, pos);
        if (cp == 0xFFFD && line.substr(at, pos - at) != "\xEF\xBF\xBD")
          fail(name, fmt::format("invalid UTF-8 on line {}, byte {} (file offset {}): save the file as UTF-8", line_no,
                                 at + 1, line_start + at));
      }
      fail(name, fmt::format("invalid UTF-8 on line {}: save the file as UTF-8", line_no));
    }
    line_start = end + 1;
    ++line_no;
  }
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find('\n', start);
    lines.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return lines;
}

}  // namespace

// ---------------------------------------------------------------- codec

LmCodec LmCodec::build(LmTokenizer kind, int vocab_size, std::string_view text) {
  LmCodec c;
  c.kind_ = kind;
  if (kind != LmTokenizer::kChar) {
    TokenizerConfig tc;
    tc.kind = kind == LmTokenizer::kBpe ? TokenizerKind::kBpe : TokenizerKind::kUnigram;
    tc.lowercase = false;  // a language model keeps the text as it is
    tc.vocab_size = vocab_size;
    tc.character_coverage = 1.0;
    auto lines = split_lines(text);
    std::vector<std::string> training;
    for (auto& l : lines)
      if (!l.empty()) training.push_back(std::move(l));
    c.spm_ = std::shared_ptr<const Tokenizer>(make_tokenizer(tc, training));
  }
  c.vocab_ = Vocab::build({c.tokenize(text)});
  return c;
}

std::vector<std::string> LmCodec::tokenize(std::string_view text) const {
  if (!spm_) return split_code_points(text);
  std::vector<std::string> tokens;
  const auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) tokens.emplace_back("\n");  // SentencePiece knows no newlines: they are tokens of their own
    if (lines[i].empty()) continue;
    auto pieces = spm_->tokenize(lines[i]);
    tokens.insert(tokens.end(), std::make_move_iterator(pieces.begin()), std::make_move_iterator(pieces.end()));
  }
  return tokens;
}

std::string LmCodec::detokenize(const std::vector<std::string>& tokens) const {
  if (!spm_) {
    std::string out;
    for (const auto& t : tokens) out += t;
    return out;
  }
  std::string out;
  std::vector<std::string> line;
  const auto flush = [&] {
    if (!line.empty()) out += spm_->detokenize(line);
    line.clear();
  };
  for (const auto& t : tokens) {
    if (t == "\n") {
      flush();
      out += '\n';
    } else {
      line.push_back(t);
    }
  }
  flush();
  return out;
}

std::vector<std::int64_t> LmCodec::encode(std::string_view text, bool strict) const {
  const auto tokens = tokenize(text);
  if (strict)
    for (const auto& t : tokens)
      if (!vocab_.contains(t))
        throw std::invalid_argument(
            fmt::format("\"{}\" is not in the model's vocabulary ({} tokens)", t == "\n" ? "\\n" : t, vocab_.size()));
  return vocab_.encode(tokens);
}

std::string LmCodec::decode(const std::vector<std::int64_t>& ids) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const auto id : ids)
    tokens.push_back(id < 4 ? std::string() : vocab_.token(id));  // specials never appear in text
  return detokenize(tokens);
}

nlohmann::json LmCodec::to_json() const {
  nlohmann::json j = {{"kind", lm_tokenizer_name(kind_)}, {"vocab", vocab_.to_json()}};
  if (spm_) j["tokenizer"] = spm_->to_json();
  return j;
}

LmCodec LmCodec::from_json(const nlohmann::json& j) {
  LmCodec c;
  c.kind_ = parse_lm_tokenizer(j.at("kind").get<std::string>());
  if (c.kind_ != LmTokenizer::kChar) c.spm_ = std::shared_ptr<const Tokenizer>(tokenizer_from_json(j.at("tokenizer")));
  c.vocab_ = Vocab::from_json(j.at("vocab"));
  return c;
}

// ---------------------------------------------------------------- data

std::string LmData::summary() const {
  return fmt::format("{}: {} characters, {} lines, {} tokenizer, vocabulary {}, train {} / val {} tokens",
                     path.empty() ? "text" : path, thousands(chars), thousands(lines), lm_tokenizer_name(codec.kind()),
                     codec.vocab().size(), thousands(static_cast<std::size_t>(train.numel())),
                     thousands(static_cast<std::size_t>(val.numel())));
}

LmData prepare_lm_text(std::string_view raw, const std::string& name, const LmConfig& config, const LmCodec* codec) {
  check_text(raw, name);
  if (raw.substr(0, 3) == "\xEF\xBB\xBF") raw.remove_prefix(3);  // a UTF-8 byte order mark is no character
  if (raw.empty()) fail(name, "the file holds only a byte order mark: a language model needs text to learn from");
  std::string text;
  text.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i)  // CRLF -> LF: line endings are not part of the language
    if (!(raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n')) text += raw[i];
  LmData d;
  d.path = name;
  d.bytes = raw.size();
  d.chars = code_point_count(text);
  d.lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + (text.back() == '\n' ? 0 : 1);
  try {
    d.codec = codec ? *codec : LmCodec::build(config.tokenizer, config.vocab_size, text);
  } catch (const std::exception& e) {
    fail(name, std::string("cannot build the tokenizer: ") + e.what());
  }
  const auto ids = d.codec.encode(text);
  const auto n = static_cast<std::int64_t>(ids.size());
  const auto n_train = static_cast<std::int64_t>(0.9 * static_cast<double>(n));
  const auto need = static_cast<std::int64_t>(config.block_size) + 1;
  if (n_train < need || n - n_train < need)
    fail(name, fmt::format("too small for block_size {}: {} tokens give {} for training and {} for validation, and "
                           "each split needs at least {} (about {} tokens in all)",
                           config.block_size, n, n_train, n - n_train, need, need * 10 + 10));
  auto all = at::tensor(ids, at::TensorOptions().dtype(at::kLong));
  d.train = all.slice(0, 0, n_train).clone();
  d.val = all.slice(0, n_train, n).clone();
  return d;
}

LmData load_lm_text(const std::string& path, const LmConfig& config, const LmCodec* codec) {
  if (const auto kind = special_file_kind(path); !kind.empty()) fail(path, "it is " + kind + ", not a text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) fail(path, "cannot read the file");
  return prepare_lm_text(buffer.str(), path, config, codec);
}

std::pair<at::Tensor, at::Tensor> sample_batch(const at::Tensor& ids, std::int64_t batch, std::int64_t block,
                                               at::Generator& generator) {
  const auto n = ids.numel();
  TORCH_CHECK(n > block, "sample_batch: ", n, " tokens cannot hold a window of ", block + 1);
  auto starts = at::randint(n - block, {batch, 1}, generator, at::TensorOptions().dtype(at::kLong));
  auto index = starts + at::arange(block, at::TensorOptions().dtype(at::kLong));  // [B, T]
  auto x = ids.index_select(0, index.reshape({-1})).view({batch, block});
  auto y = ids.index_select(0, (index + 1).reshape({-1})).view({batch, block});
  return {x, y};
}

double bigram_cross_entropy(const at::Tensor& train, const at::Tensor& eval, std::int64_t vocab, double alpha) {
  const auto t = train.to(at::kCPU).contiguous();
  const auto e = eval.to(at::kCPU).contiguous();
  const auto* tp = t.data_ptr<std::int64_t>();
  const auto* ep = e.data_ptr<std::int64_t>();
  std::unordered_map<std::int64_t, double> pair_counts;
  std::unordered_map<std::int64_t, double> row_counts;
  for (std::int64_t i = 0; i + 1 < t.numel(); ++i) {
    pair_counts[tp[i] * vocab + tp[i + 1]] += 1;
    row_counts[tp[i]] += 1;
  }
  double nll = 0;
  std::int64_t n = 0;
  for (std::int64_t i = 0; i + 1 < e.numel(); ++i) {
    const auto pc = pair_counts.find(ep[i] * vocab + ep[i + 1]);
    const auto rc = row_counts.find(ep[i]);
    const double num = (pc == pair_counts.end() ? 0.0 : pc->second) + alpha;
    const double den = (rc == row_counts.end() ? 0.0 : rc->second) + alpha * static_cast<double>(vocab);
    nll -= std::log(num > 0 && den > 0 ? num / den : 1e-12);
    ++n;
  }
  return n ? nll / static_cast<double>(n) : 0.0;
}

}  // namespace ts
