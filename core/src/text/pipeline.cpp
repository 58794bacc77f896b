// SPDX-License-Identifier: GPL-3.0-or-later
// Text to ids and back (see ts/text/pipeline.h).
#include "ts/text/pipeline.h"

namespace ts {

std::vector<std::int64_t> TextPipeline::encode_source(const std::string& text) const {
  auto ids = src_vocab->encode(src_tokenizer->tokenize(text));
  ids.push_back(Vocab::kEos);
  return ids;
}

Example TextPipeline::encode(const SentencePair& pair) const {
  return {encode_source(pair.src), tgt_vocab->encode(tgt_tokenizer->tokenize(pair.tgt))};
}

std::string TextPipeline::decode_target(const std::vector<std::int64_t>& ids) const {
  return tgt_tokenizer->detokenize(tgt_vocab->decode(ids));
}

nlohmann::json TextPipeline::to_json() const {
  return {
      {"direction",
       {{"src", direction.src_code}, {"tgt", direction.tgt_code}, {"english_is_source", direction.english_is_source}}},
      {"src_language", {{"code", src_language.code}, {"name", src_language.name}}},
      {"tgt_language", {{"code", tgt_language.code}, {"name", tgt_language.name}}},
      {"src_tokenizer", src_tokenizer->to_json()},
      {"tgt_tokenizer", tgt_tokenizer->to_json()},
      {"src_vocab", src_vocab->to_json()},
      {"tgt_vocab", tgt_vocab->to_json()},
      {"shared_vocab", shared_vocab}};
}

TextPipeline TextPipeline::from_json(const nlohmann::json& j) {
  TextPipeline p;
  const auto& d = j.at("direction");
  p.direction.src_code = d.at("src").get<std::string>();
  p.direction.tgt_code = d.at("tgt").get<std::string>();
  p.direction.english_is_source = d.at("english_is_source").get<bool>();
  p.src_language = {j.at("src_language").at("code").get<std::string>(),
                    j.at("src_language").at("name").get<std::string>()};
  p.tgt_language = {j.at("tgt_language").at("code").get<std::string>(),
                    j.at("tgt_language").at("name").get<std::string>()};
  p.src_tokenizer = tokenizer_from_json(j.at("src_tokenizer"));
  p.tgt_tokenizer = tokenizer_from_json(j.at("tgt_tokenizer"));
  p.src_vocab = std::make_shared<Vocab>(Vocab::from_json(j.at("src_vocab")));
  p.tgt_vocab = std::make_shared<Vocab>(Vocab::from_json(j.at("tgt_vocab")));
  p.shared_vocab = j.value("shared_vocab", false);
  return p;
}

}  // namespace ts
