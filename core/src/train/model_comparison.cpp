// SPDX-License-Identifier: GPL-3.0-or-later
// Models compared on their shared test split (see ts/train/model_comparison.h).
#include "ts/train/model_comparison.h"

#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "ts/decode/translator.h"
#include "ts/train/checkpoint.h"
#include "ts/train/model_export.h"
#include "ts/train/trainer.h"

namespace ts {

std::string model_of_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec) || is_model_folder(path)) return path;
  const auto best = fs::path(path) / "best.ckpt";
  return (fs::exists(best, ec) ? best : fs::path(path) / "last.ckpt").string();
}

CompareInput compare_input_from_models(const std::vector<ModelToCompare>& models, const CompareProgress& progress,
                                       const std::function<bool()>& stop) {
  if (models.empty()) throw std::invalid_argument("compare: no model to compare");
  CompareInput in;
  std::string first_corpus;
  for (std::size_t m = 0; m < models.size(); ++m) {
    if (stop && stop()) throw std::runtime_error("stopped");
    if (progress) progress({m, models.size(), models[m].name, 0, in.sources.size()});
    auto loaded = load_checkpoint(models[m].path, at::Device(at::kCPU));
    const auto split = checkpoint_split(loaded);
    if (split.test.empty())
      throw std::invalid_argument(
          fmt::format("{} has no test pairs (data.test = {} of the {} pairs of {}): nothing to compare", models[m].path,
                      loaded.meta.config.data.test, split.train.size() + split.dev.size(), loaded.meta.corpus_path));
    std::vector<std::string> sources, references;
    for (const auto& pair : split.test) {
      sources.push_back(pair.src);
      references.push_back(pair.tgt);
    }
    if (m == 0) {
      first_corpus = loaded.meta.corpus_path;
      in.sources = std::move(sources);
      in.references = std::move(references);
      for (const auto& pair : split.train) in.training_targets.push_back(pair.tgt);
      in.tokenize = bleu_tokenize_for(loaded.pipeline.tgt_language.code);
      in.split = describe_split(split.stats);
    } else if (sources != in.sources || references != in.references) {
      throw std::invalid_argument(fmt::format(
          "{} was tested on other sentences than {} ({} test pairs of {} against {} of {}): compare needs one test "
          "set; train both on the same corpus, direction and data.test/data.split_seed, or compare text files",
          models[m].path, models[0].path, split.test.size(), loaded.meta.corpus_path, in.references.size(),
          first_corpus));
    }
    auto decode = loaded.meta.config.decode;
    decode.weights = DecodeWeights::kFloat32;  // the model's own scores, as eval gives them
    Translator translator(loaded.model, std::move(loaded.pipeline));
    std::vector<double> confidences;
    const auto total = in.sources.size();
    in.systems.push_back(
        translator.translate_all(in.sources, decode, kDeviceBatch, &confidences, [&](std::size_t done) {
          // Between batches: a stop lands within one batch of sentences, not at the end of a model.
          if (stop && stop()) throw std::runtime_error("stopped");
          if (progress) progress({m, models.size(), models[m].name, done, total});
        }));
    in.confidences.push_back(std::move(confidences));
    in.names.push_back(models[m].name);
  }
  return in;
}

}  // namespace ts
