// SPDX-License-Identifier: GPL-3.0-or-later
// The lexical shortlist's file (see ts/decode/shortlist.h): safetensors, through LibTorch's tensors.
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <utility>

#include "ts/decode/shortlist.h"
#include "ts/model/safetensors.h"

namespace ts {
namespace {

constexpr const char* kFormat = "ts-lexical-shortlist-1";

}  // namespace

void LexicalShortlist::save(const std::string& path) const {
  auto candidates = at::tensor(candidates_, at::kLong).view({src_vocab_, options_.per_source});
  auto frequent = at::tensor(frequent_, at::kLong);
  write_safetensors_file(path, {{"candidates", candidates}, {"frequent", frequent}},
                         {{"format", kFormat},
                          {"src_vocab", std::to_string(src_vocab_)},
                          {"tgt_vocab", std::to_string(tgt_vocab_)},
                          {"frequent", std::to_string(options_.frequent)},
                          {"per_source", std::to_string(options_.per_source)}});
}

LexicalShortlist LexicalShortlist::load(const std::string& path, std::int64_t src_vocab, std::int64_t tgt_vocab) {
  auto fail = [&path](const std::string& what) { return std::runtime_error(path + ": " + what); };
  try {
    const auto reader = SafetensorsReader::from_file(path);
    const auto& meta = reader.metadata();
    auto field = [&](const char* key) -> std::int64_t {
      const auto it = meta.find(key);
      if (it == meta.end()) throw fail(std::string("not a lexical shortlist (no \"") + key + "\" in its metadata)");
      try {
        std::size_t used = 0;
        const auto value = std::stoll(it->second, &used);
        if (used != it->second.size() || value < 0) throw std::invalid_argument(it->second);
        return value;
      } catch (const std::exception&) {
        throw fail(std::string("metadata \"") + key + "\" is not a count: \"" + it->second + "\"");
      }
    };
    const auto format = meta.find("format");
    if (format == meta.end() || format->second != kFormat)
      throw fail(std::string("not a lexical shortlist of this version (format \"") +
                 (format == meta.end() ? "" : format->second) + "\", expected \"" + kFormat + "\")");
    const auto stored_src = field("src_vocab"), stored_tgt = field("tgt_vocab");
    ShortlistOptions options;
    options.frequent = static_cast<int>(field("frequent"));
    options.per_source = static_cast<int>(field("per_source"));
    if (stored_src != src_vocab || stored_tgt != tgt_vocab)
      throw fail("made for vocabularies of " + std::to_string(stored_src) + " and " + std::to_string(stored_tgt) +
                 " tokens, the model has " + std::to_string(src_vocab) + " and " + std::to_string(tgt_vocab) +
                 " (built for another model?)");
    const auto candidates = reader.tensor("candidates").to(at::kLong).contiguous();
    const auto frequent = reader.tensor("frequent").to(at::kLong).contiguous();
    if (candidates.dim() != 2 || candidates.size(0) != src_vocab || candidates.size(1) != options.per_source)
      throw fail("\"candidates\" is not [src_vocab, per_source]");
    if (frequent.dim() != 1) throw fail("\"frequent\" is not a list of ids");
    const auto* c = candidates.data_ptr<std::int64_t>();
    const auto* q = frequent.data_ptr<std::int64_t>();
    try {
      return from_tables(src_vocab, tgt_vocab, options, std::vector<std::int64_t>(q, q + frequent.numel()),
                         std::vector<std::int64_t>(c, c + candidates.numel()));
    } catch (const std::invalid_argument& e) {
      throw fail(e.what());
    }
  } catch (const SafetensorsError& e) {
    throw fail(e.what());
  }
}

std::shared_ptr<const LexicalShortlist> shortlist_beside(const std::string& checkpoint, std::int64_t src_vocab,
                                                         std::int64_t tgt_vocab) {
  const auto path = shortlist_file(checkpoint);
  if (!std::filesystem::exists(path)) return nullptr;
  return std::make_shared<const LexicalShortlist>(LexicalShortlist::load(path, src_vocab, tgt_vocab));
}

}  // namespace ts
