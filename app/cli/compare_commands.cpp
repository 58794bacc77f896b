// SPDX-License-Identifier: GPL-3.0-or-later
// compare (see compare_commands.h).
#include "compare_commands.h"
#include "text_lines.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ts/analysis/compare.h"
#include "ts/store/run_store.h"
#include "ts/text/utf8.h"
#include "ts/train/model_comparison.h"
#include "ts/train/model_export.h"
#include "ts/train/trainer.h"

namespace ts::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// "zh" when most characters of the references are Chinese or Japanese, else "13a".
std::string tokenization_for(const std::vector<std::string>& refs) {
  std::size_t cjk = 0, letters = 0;
  for (const auto& line : refs) {
    for (std::size_t pos = 0; pos < line.size();) {
      const char32_t cp = next_code_point(line, pos);
      if (cp <= ' ') continue;
      ++letters;
      cjk += is_cjk(cp) ? 1 : 0;
    }
  }
  return letters > 0 && 2 * cjk > letters ? "zh" : "13a";
}

std::string interval_text(const ScoreEstimate& e, int resamples) {
  if (resamples == 0) return fmt::format("{:6.2f}", e.score);
  return fmt::format("{:6.2f} ({:.2f}-{:.2f})", e.score, e.low, e.high);
}

void print_table(const BucketTable& t, const std::vector<std::string>& names, bool counts_are_values) {
  fmt::print("\n{}\n", t.title);
  fmt::print("  {:<12}", "bucket");
  for (const auto& n : names) fmt::print(" {:>18}", n.substr(0, 18));
  fmt::print("\n");
  for (std::size_t b = 0; b < t.labels.size(); ++b) {
    fmt::print("  {:<12}", t.labels[b]);
    for (std::size_t s = 0; s < names.size(); ++s) {
      if (counts_are_values)
        fmt::print(" {:>18}", t.counts[b][s]);
      else
        fmt::print(" {:>18}", t.counts[b][s] ? fmt::format("{:.3f} ({})", t.values[b][s], t.counts[b][s]) : "-");
    }
    fmt::print("\n");
  }
}

json table_json(const BucketTable& t) {
  return {{"title", t.title}, {"value", t.value}, {"labels", t.labels}, {"values", t.values}, {"counts", t.counts}};
}

json confidence_json(const ConfidenceResult& r, const std::vector<double>& confidences) {
  if (!r.available) return nullptr;
  return {{"mean_log_prob", r.mean},
          {"pearson", r.pearson},
          {"spearman", r.spearman},
          {"sentences", r.sentences},
          {"fifth_log_prob", r.fifth_confidence},
          {"fifth_score", r.fifth_score},
          {"fifth_count", r.fifth_count},
          {"least_confident", r.least_confident},
          {"sentence_log_probs", confidences}};
}

// Does each model know when it is wrong? Its correlations, the mean score per confidence fifth,
// and its least confident sentences.
void print_confidence(const Comparison& c, const CompareInput& in, std::size_t examples) {
  bool any = false;
  for (const auto& r : c.confidence) any = any || r.available;
  if (!any) return;
  fmt::print(
      "\nConfidence: each output's mean token log-probability against its sentence {} (does the model know "
      "when it is wrong?)\n",
      c.sentence_metric);
  fmt::print("  {:<24} {:>12} {:>10} {:>11}\n", "system", "mean log p", "Pearson r", "Spearman ρ");
  for (std::size_t s = 0; s < c.systems.size(); ++s) {
    const auto& r = c.confidence[s];
    if (!r.available) continue;
    fmt::print("  {:<24} {:>12.3f} {:>10.3f} {:>11.3f}\n", c.systems[s].name.substr(0, 24), r.mean, r.pearson,
               r.spearman);
  }
  print_table(c.by_confidence, in.names, false);
  for (std::size_t s = 0; s < c.systems.size(); ++s) {
    const auto& r = c.confidence[s];
    if (!r.available || examples == 0) continue;
    fmt::print("\nLeast confident outputs of {}:\n", c.systems[s].name);
    for (std::size_t k = 0; k < std::min(examples, r.least_confident.size()); ++k) {
      const auto i = r.least_confident[k];
      fmt::print("    #{} log p {:.3f}, sentence {} {:.1f}\n", i + 1, in.confidences[s][i], c.sentence_metric,
                 c.sentence_scores[s][i]);
      if (!in.sources.empty()) fmt::print("      source:    {}\n", in.sources[i]);
      fmt::print("      reference: {}\n      output:    {}\n", in.references[i], in.systems[s][i]);
    }
  }
}

json estimate_json(const ScoreEstimate& e) {
  return {{"score", e.score}, {"mean", e.mean}, {"low", e.low}, {"high", e.high}, {"plus_minus", e.half_width}};
}

}  // namespace

CompareProgress print_compare_progress() {
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  auto started = std::chrono::steady_clock::now();
  return [tty, started](const CompareProgressInfo& p) mutable {
    if (p.done == 0) {
      fmt::print(stderr, "translating the test split with {} ({} of {})\n", p.name, p.model + 1, p.models);
      started = std::chrono::steady_clock::now();
      return;
    }
    if (!tty || p.sentences == 0) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    fmt::print(stderr, "\r\033[2K  {} of {} sentences ({:.0f}%), {:.0f} sentences/s", p.done, p.sentences,
               100.0 * p.done / p.sentences, s > 0 ? p.done / s : 0.0);
    if (p.done >= p.sentences) fmt::print(stderr, "\n");
  };
}

CompareCommand::CompareCommand(CLI::App& app) {
  auto* c = command_ = app.add_subcommand(
      "compare",
      "Compare two or more systems on one test set: BLEU and chrF with 95% intervals and p-values by paired bootstrap "
      "resampling, word accuracy by frequency, sentence buckets, the n-grams and sentences where they differ; models "
      "also each output's confidence against its score");
  c->add_option("--ref", ref_, "References, one per line (with --hyp)")->check(CLI::ExistingFile);
  c->add_option("--hyp", hyps_, "A system's output, one line per reference (repeat; the first is the baseline)")
      ->check(CLI::ExistingFile);
  c->add_option("--name", names_, "Names of the systems, in order (default: file names, checkpoints or runs)");
  c->add_option("--checkpoint", checkpoints_,
                "A model (checkpoint, run directory or model folder), translated on its test split first (repeat)");
  c->add_option("--run", runs_, "A run of the history, by id: its best checkpoint (repeat)");
  c->add_option("--db", db_, "Run history database for --run (default: " + RunStore::default_path() + ")");
  c->add_option("--src", src_, "Sources, one per line, shown with the example sentences")->check(CLI::ExistingFile);
  c->add_option("--train", train_,
                "Target side of the training data, one sentence per line: word frequencies for the word-accuracy "
                "buckets (models: their own training split)")
      ->check(CLI::ExistingFile);
  c->add_option("--tokenize", tokenize_, "BLEU tokenisation (default: zh for Chinese or Japanese references, else 13a)")
      ->check(CLI::IsMember({"13a", "zh", "char", "none"}));
  c->add_option("--resamples", resamples_, "Paired bootstrap resamples (0 = none)")->check(CLI::Range(0, 100000));
  c->add_option("--seed", seed_, "Seed of the resampling");
  c->add_option("--examples", examples_, "Sentences shown each way")->check(CLI::Range(0, 10000));
  c->add_option("--ngrams", ngrams_, "N-grams shown each way")->check(CLI::Range(0, 10000));
  c->add_option("--threads", threads_, "CPU threads for translating models (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  c->add_flag("--json", json_, "Write the comparison as JSON");
}

bool CompareCommand::chosen() const { return command_->parsed(); }

int CompareCommand::dispatch() {
  const bool text = !hyps_.empty(), models = !checkpoints_.empty() || !runs_.empty();
  if (text == models)
    throw std::invalid_argument(
        "compare: give text files (--ref with --hyp ...) or models (--checkpoint / --run ...), not both");
  CompareInput in;
  if (text) {
    if (ref_.empty()) throw std::invalid_argument("compare: --hyp needs --ref");
    in.references = read_text_lines(ref_);
    for (const auto& h : hyps_) {
      in.systems.push_back(read_text_lines(h));
      in.names.push_back(fs::path(h).filename().string());
    }
    if (!src_.empty()) in.sources = read_text_lines(src_);
    in.tokenize = tokenize_.empty() ? tokenization_for(in.references) : tokenize_;
  } else {
    configure_threads(threads_);
    std::vector<ModelToCompare> models;
    for (const auto& c : checkpoints_) models.push_back({c, model_of_path(c)});
    if (!runs_.empty()) {
      RunStore store(db_.empty() ? RunStore::default_path() : db_, 5000, StoreAccess::kReadOnly);
      for (const auto id : runs_) {
        const auto run = store.find_run(id);
        if (!run) throw std::invalid_argument(fmt::format("compare: there is no run {} in {}", id, store.path()));
        models.push_back({run->name.empty() ? fmt::format("run {}", id) : run->name, model_of_path(run->out_dir)});
      }
    }
    const auto started = std::chrono::steady_clock::now();
    in = compare_input_from_models(models, print_compare_progress());
    fmt::print(stderr, "translated {} test pairs with {} models in {:.1f} s\n", in.references.size(), models.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (!tokenize_.empty()) in.tokenize = tokenize_;
  }
  if (!train_.empty()) in.training_targets = read_text_lines(train_);
  if (!names_.empty()) {
    if (names_.size() != in.names.size())
      throw std::invalid_argument(fmt::format("compare: {} names for {} systems", names_.size(), in.names.size()));
    in.names = names_;
  }
  CompareOptions o;
  o.resamples = resamples_;
  o.seed = seed_;
  o.examples = examples_;
  o.ngrams = ngrams_;
  const auto started = std::chrono::steady_clock::now();
  const auto c = compare_systems(in, o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  if (json_) {
    json j = {{"sentences", c.sentences},
              {"resamples", c.resamples},
              {"seed", seed_},
              {"tokenize", in.tokenize},
              {"sentence_metric", c.sentence_metric},
              {"split", in.split},
              {"systems", json::array()},
              {"pairs", json::array()},
              {"word_accuracy", table_json(c.word_accuracy)},
              {"by_sentence_score", table_json(c.by_sentence_score)},
              {"by_reference_length", table_json(c.by_reference_length)},
              {"by_length_difference", table_json(c.by_length_difference)},
              {"by_confidence", table_json(c.by_confidence)}};
    for (std::size_t s = 0; s < c.systems.size(); ++s) {
      const auto& r = c.systems[s];
      j["systems"].push_back(
          {{"name", r.name},
           {"bleu", estimate_json(r.bleu)},
           {"chrf", estimate_json(r.chrf)},
           {"mean_sentence_score", r.mean_sentence_score},
           {"sentence_scores", c.sentence_scores[s]},
           {"confidence",
            confidence_json(c.confidence[s], s < in.confidences.size() ? in.confidences[s] : std::vector<double>{})}});
    }
    for (const auto& p : c.pairs) {
      json pair = {{"a", c.systems[p.a].name},           {"b", c.systems[p.b].name},
                   {"p_value", c.systems[p.b].p_bleu},   {"p_value_chrf", c.systems[p.b].p_chrf},
                   {"identical", p.identical},           {"a_better_ngrams", json::array()},
                   {"b_better_ngrams", json::array()},   {"a_better_sentences", json::array()},
                   {"b_better_sentences", json::array()}};
      for (const auto* list : {&p.a_better, &p.b_better})
        for (const auto& g : *list)
          pair[list == &p.a_better ? "a_better_ngrams" : "b_better_ngrams"].push_back(
              {{"ngram", g.ngram}, {"matches_a", g.matches_a}, {"matches_b", g.matches_b}, {"score", g.score}});
      for (const auto* list : {&p.a_better_sentences, &p.b_better_sentences})
        for (const auto& d : *list)
          pair[list == &p.a_better_sentences ? "a_better_sentences" : "b_better_sentences"].push_back(
              {{"index", d.index}, {"score_a", d.score_a}, {"score_b", d.score_b}});
      j["pairs"].push_back(std::move(pair));
    }
    std::cout << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    return 0;
  }

  if (!in.split.empty()) fmt::print("test split: {}\n", in.split);
  fmt::print("{} sentences, {} systems, tokenisation {}; ", c.sentences, c.systems.size(), in.tokenize);
  if (c.resamples > 0)
    fmt::print("95% intervals and p-values against {} by paired bootstrap ({} resamples, seed {}, {:.2f} s)\n",
               c.systems[0].name, c.resamples, seed_, seconds);
  else
    fmt::print("no resampling\n");
  fmt::print("\n  {:<24} {:>22} {:>22} {:>9} {:>9} {:>10}\n", "system", "BLEU (95% interval)", "chrF (95% interval)",
             "p BLEU", "p chrF", fmt::format("mean s{}", c.sentence_metric));
  for (std::size_t s = 0; s < c.systems.size(); ++s) {
    const auto& r = c.systems[s];
    fmt::print("  {:<24} {:>22} {:>22} {:>9} {:>9} {:>10.2f}\n", r.name.substr(0, 24),
               interval_text(r.bleu, c.resamples), interval_text(r.chrf, c.resamples),
               s == 0 || c.resamples == 0 ? "-" : fmt::format("{:.4f}", r.p_bleu),
               s == 0 || c.resamples == 0 ? "-" : fmt::format("{:.4f}", r.p_chrf), r.mean_sentence_score);
  }
  print_table(c.word_accuracy, in.names, false);
  print_table(c.by_reference_length, in.names, false);
  print_table(c.by_sentence_score, in.names, true);
  print_table(c.by_length_difference, in.names, true);
  print_confidence(c, in, static_cast<std::size_t>(examples_));
  for (const auto& p : c.pairs) {
    const auto &a = in.names[p.a], &b = in.names[p.b];
    fmt::print("\n{} against {}: {} of {} outputs identical\n", b, a, p.identical, c.sentences);
    for (const auto* list : {&p.a_better, &p.b_better}) {
      fmt::print("  n-grams {} matches more often (matches {} / {}):\n", list == &p.a_better ? a : b, a, b);
      if (list->empty()) fmt::print("    (none)\n");
      for (const auto& g : *list) fmt::print("    {:<32} {:>5} / {:<5}\n", g.ngram, g.matches_a, g.matches_b);
    }
    for (const auto* list : {&p.a_better_sentences, &p.b_better_sentences}) {
      fmt::print("  sentences where {} scores higher (sentence {} {} / {}):\n", list == &p.a_better_sentences ? a : b,
                 c.sentence_metric, a, b);
      if (list->empty()) fmt::print("    (none)\n");
      for (const auto& d : *list) {
        fmt::print("    #{} {:.1f} / {:.1f}\n", d.index + 1, d.score_a, d.score_b);
        if (!in.sources.empty()) fmt::print("      source:    {}\n", in.sources[d.index]);
        fmt::print("      reference: {}\n      {}: {}\n      {}: {}\n", in.references[d.index], a,
                   in.systems[p.a][d.index], b, in.systems[p.b][d.index]);
      }
    }
  }
  return 0;
}

}  // namespace ts::cli
