// SPDX-License-Identifier: GPL-3.0-or-later
// Comparing translation systems (see ts/analysis/compare.h).
#include "ts/analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "ts/metrics/bleu.h"

namespace ts {
namespace {

using Tokens = std::vector<std::string>;

Tokens split_tokens(const std::string& line, const std::string& tokenize) {
  const std::string joined = tokenize_for_bleu(line, tokenize);
  Tokens out;
  std::size_t pos = 0;
  while (pos < joined.size()) {
    std::size_t end = joined.find(' ', pos);
    if (end == std::string::npos) end = joined.size();
    if (end > pos) out.emplace_back(joined, pos, end - pos);
    pos = end + 1;
  }
  return out;
}

std::vector<Tokens> split_all(const std::vector<std::string>& lines, const std::string& tokenize) {
  std::vector<Tokens> out;
  out.reserve(lines.size());
  for (const auto& line : lines) out.push_back(split_tokens(line, tokenize));
  return out;
}

// compare-mt's frequency buckets: 0, 1, 2, 3, 4, [5,10), [10,100), [100,1000), >= 1000.
const std::vector<std::string> kFrequencyLabels = {"0",      "1",        "2",          "3",     "4",
                                                   "[5,10)", "[10,100)", "[100,1000)", ">=1000"};
std::size_t frequency_bucket(long f) {
  if (f < 5) return static_cast<std::size_t>(std::max(0L, f));
  if (f < 10) return 5;
  if (f < 100) return 6;
  if (f < 1000) return 7;
  return 8;
}

// Reference length in tokens: < 5, [5,10), [10,15), [15,20), [20,30), >= 30.
const std::vector<std::string> kLengthLabels = {"<5", "[5,10)", "[10,15)", "[15,20)", "[20,30)", ">=30"};
std::size_t length_bucket(std::size_t n) {
  if (n < 5) return 0;
  if (n < 10) return 1;
  if (n < 15) return 2;
  if (n < 20) return 3;
  if (n < 30) return 4;
  return 5;
}

// Output length minus reference length: <= -5, -4 ... +4, >= +5.
const std::vector<std::string> kDifferenceLabels = {"<=-5", "-4", "-3", "-2", "-1",  "0",
                                                    "+1",   "+2", "+3", "+4", ">=+5"};
std::size_t difference_bucket(long d) { return static_cast<std::size_t>(std::clamp(d, -5L, 5L) + 5); }

// Sentence scores: [0,10), [10,20), ..., [90,100].
std::vector<std::string> score_labels() {
  std::vector<std::string> out;
  for (int lo = 0; lo < 100; lo += 10)
    out.push_back("[" + std::to_string(lo) + "," + std::to_string(lo + 10) + (lo == 90 ? "]" : ")"));
  return out;
}
std::size_t score_bucket(double s) { return static_cast<std::size_t>(std::clamp(static_cast<int>(s / 10), 0, 9)); }

BucketTable make_table(std::string title, std::string value, const std::vector<std::string>& labels,
                       std::size_t systems) {
  BucketTable t;
  t.title = std::move(title);
  t.value = std::move(value);
  t.labels = labels;
  t.values.assign(labels.size(), std::vector<double>(systems, 0.0));
  t.counts.assign(labels.size(), std::vector<long>(systems, 0));
  return t;
}

// Each system's per-sentence statistics: BLEU's 10 numbers, then chrF's, in one row per sentence.
struct SentenceStats {
  std::vector<BleuStats> bleu;
  std::vector<long> chrf;  // sentences x width
  std::size_t width = 0;
};

double bleu_of(const SentenceStats& s, const std::vector<std::size_t>& indices, const std::string& tokenize) {
  BleuStats sum;
  for (const auto i : indices) sum += s.bleu[i];
  return bleu_from_stats(sum, tokenize).score;
}

double chrf_of(const SentenceStats& s, const std::vector<std::size_t>& indices) {
  std::vector<long> sum(s.width, 0);
  for (const auto i : indices) {
    const long* row = s.chrf.data() + i * s.width;
    for (std::size_t k = 0; k < s.width; ++k) sum[k] += row[k];
  }
  return chrf_from_stats(sum);
}

using NgramCounts = std::map<std::string, long>;

// The n-grams (1..order) of a token list, as "a b c" strings with their counts.
NgramCounts ngram_counts(const Tokens& tokens, int order) {
  NgramCounts out;
  for (int n = 1; n <= order; ++n) {
    for (std::size_t i = 0; i + static_cast<std::size_t>(n) <= tokens.size(); ++i) {
      std::string g = tokens[i];
      for (int k = 1; k < n; ++k) g += ' ' + tokens[i + static_cast<std::size_t>(k)];
      ++out[g];
    }
  }
  return out;
}

// Over the test set, how often each reference n-gram is matched by each system: per sentence
// min(count in the reference, count in the output).
std::vector<NgramCounts> ngram_matches(const std::vector<Tokens>& refs, const std::vector<std::vector<Tokens>>& systems,
                                       int order) {
  std::vector<NgramCounts> out(systems.size());
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const auto ref = ngram_counts(refs[i], order);
    for (std::size_t s = 0; s < systems.size(); ++s) {
      const auto hyp = ngram_counts(systems[s][i], order);
      for (const auto& [g, c] : ref) {
        const auto it = hyp.find(g);
        out[s][g] += it == hyp.end() ? 0 : std::min(c, it->second);
      }
    }
  }
  return out;
}

}  // namespace

std::vector<std::vector<std::size_t>> bootstrap_indices(std::size_t sentences, int resamples, std::uint64_t seed) {
  std::vector<std::vector<std::size_t>> out(static_cast<std::size_t>(std::max(0, resamples)));
  if (sentences == 0) return out;
  std::mt19937_64 rng(seed);  // specified by the standard: the same draws on every library
  for (auto& draw : out) {
    draw.resize(sentences);
    for (auto& i : draw) i = static_cast<std::size_t>(rng() % sentences);
  }
  return out;
}

ScoreEstimate estimate_from_resamples(double score, std::vector<double>& resampled) {
  ScoreEstimate e;
  e.score = e.mean = e.low = e.high = score;
  if (resampled.empty()) return e;
  std::sort(resampled.begin(), resampled.end());
  const std::size_t n = resampled.size(), lower = n / 40, upper = n - lower - 1;
  e.mean = std::accumulate(resampled.begin(), resampled.end(), 0.0) / static_cast<double>(n);
  e.low = resampled[lower];
  e.high = resampled[upper];
  e.half_width = 0.5 * (e.high - e.low);
  return e;
}

double paired_bootstrap_p_value(double baseline, double system, const std::vector<double>& baseline_resampled,
                                const std::vector<double>& system_resampled) {
  if (baseline_resampled.size() != system_resampled.size())
    throw std::invalid_argument("paired bootstrap: the two systems were resampled a different number of times");
  const std::size_t n = system_resampled.size();
  if (n == 0) return 1.0;
  std::vector<double> d(n);
  for (std::size_t r = 0; r < n; ++r) d[r] = std::fabs(system_resampled[r] - baseline_resampled[r]);
  const double mean = std::accumulate(d.begin(), d.end(), 0.0) / static_cast<double>(n);
  const double real = std::fabs(system - baseline);
  // Rounding can leave identical resamples a hair apart: differences within 1e-9 count as ties.
  const auto c = std::count_if(d.begin(), d.end(), [&](double x) { return x - mean >= real - 1e-9; });
  return static_cast<double>(c + 1) / static_cast<double>(n + 1);
}

BucketTable word_accuracy_by_frequency(const std::vector<std::string>& references,
                                       const std::vector<std::vector<std::string>>& systems,
                                       const std::vector<std::string>& frequency_text, const std::string& tokenize) {
  const auto refs = split_all(references, tokenize);
  std::unordered_map<std::string, long> frequency;
  for (const auto& line : frequency_text)
    for (auto& t : split_tokens(line, tokenize)) ++frequency[std::move(t)];
  auto table = make_table("Word accuracy (F-measure) by the word's frequency in the training data", "F-measure",
                          kFrequencyLabels, systems.size());
  for (std::size_t s = 0; s < systems.size(); ++s) {
    std::vector<long> matched(kFrequencyLabels.size(), 0), in_ref(kFrequencyLabels.size(), 0),
        in_hyp(kFrequencyLabels.size(), 0);
    for (std::size_t i = 0; i < refs.size(); ++i) {
      std::map<std::string_view, std::pair<long, long>> counts;  // word -> (reference, output)
      for (const auto& t : refs[i]) ++counts[t].first;
      const auto hyp = split_tokens(systems[s][i], tokenize);
      for (const auto& t : hyp) ++counts[t].second;
      for (const auto& [word, c] : counts) {
        const auto f = frequency.find(std::string(word));
        const auto b = frequency_bucket(f == frequency.end() ? 0 : f->second);
        matched[b] += std::min(c.first, c.second);
        in_ref[b] += c.first;
        in_hyp[b] += c.second;
      }
    }
    for (std::size_t b = 0; b < kFrequencyLabels.size(); ++b) {
      const double p = in_hyp[b] ? static_cast<double>(matched[b]) / static_cast<double>(in_hyp[b]) : 0.0;
      const double r = in_ref[b] ? static_cast<double>(matched[b]) / static_cast<double>(in_ref[b]) : 0.0;
      table.values[b][s] = p + r > 0 ? 2 * p * r / (p + r) : 0.0;
      table.counts[b][s] = in_ref[b];
    }
  }
  return table;
}

double pearson_correlation(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 2) return 0.0;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t t = i; t <= j; ++t) ranks[order[t]] = mean_rank;
    i = j + 1;
  }
  return ranks;
}

double spearman_correlation(const std::vector<double>& x, const std::vector<double>& y) {
  return pearson_correlation(average_ranks(x), average_ranks(y));
}

ConfidenceResult analyse_confidence(const std::vector<double>& confidences,
                                    const std::vector<double>& sentence_scores) {
  ConfidenceResult r;
  const std::size_t n = std::min(confidences.size(), sentence_scores.size());
  r.available = true;
  std::vector<double> conf, score;
  std::vector<std::size_t> finite, other;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isfinite(confidences[i])) {
      finite.push_back(i);
      conf.push_back(confidences[i]);
      score.push_back(sentence_scores[i]);
    } else {
      other.push_back(i);
    }
  }
  r.sentences = finite.size();
  if (!conf.empty()) r.mean = std::accumulate(conf.begin(), conf.end(), 0.0) / static_cast<double>(conf.size());
  r.pearson = pearson_correlation(conf, score);
  r.spearman = spearman_correlation(conf, score);
  std::stable_sort(finite.begin(), finite.end(),
                   [&](std::size_t a, std::size_t b) { return confidences[a] < confidences[b]; });
  r.least_confident = other;
  r.least_confident.insert(r.least_confident.end(), finite.begin(), finite.end());
  // Fifths of the finite ones, in confidence order: sentence i of m goes to fifth 5i/m.
  r.fifth_confidence.assign(5, 0.0);
  r.fifth_score.assign(5, 0.0);
  r.fifth_count.assign(5, 0);
  const std::size_t m = finite.size();
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t f = 5 * i / m;
    r.fifth_confidence[f] += confidences[finite[i]];
    r.fifth_score[f] += sentence_scores[finite[i]];
    ++r.fifth_count[f];
  }
  for (std::size_t f = 0; f < 5; ++f) {
    if (r.fifth_count[f] == 0) continue;
    r.fifth_confidence[f] /= static_cast<double>(r.fifth_count[f]);
    r.fifth_score[f] /= static_cast<double>(r.fifth_count[f]);
  }
  return r;
}

Comparison compare_systems(const CompareInput& input, const CompareOptions& options) {
  const std::size_t n = input.references.size(), k = input.systems.size();
  if (k == 0) throw std::invalid_argument("compare: no system to compare");
  if (n == 0) throw std::invalid_argument("compare: no sentences to compare (the references are empty)");
  if (input.names.size() != k)
    throw std::invalid_argument("compare: " + std::to_string(k) + " systems but " + std::to_string(input.names.size()) +
                                " names");
  for (std::size_t s = 0; s < k; ++s)
    if (input.systems[s].size() != n)
      throw std::invalid_argument("compare: " + input.names[s] + " has " + std::to_string(input.systems[s].size()) +
                                  " lines but the references have " + std::to_string(n));
  if (input.confidences.size() > k)
    throw std::invalid_argument("compare: confidences for " + std::to_string(input.confidences.size()) +
                                " systems but " + std::to_string(k) + " systems");
  for (std::size_t s = 0; s < input.confidences.size(); ++s)
    if (!input.confidences[s].empty() && input.confidences[s].size() != n)
      throw std::invalid_argument("compare: " + input.names[s] + " has " + std::to_string(input.confidences[s].size()) +
                                  " confidences but the references have " + std::to_string(n));
  if (!input.sources.empty() && input.sources.size() != n)
    throw std::invalid_argument("compare: the sources have " + std::to_string(input.sources.size()) +
                                " lines but the references have " + std::to_string(n));
  if (options.resamples < 0 || options.ngrams < 0 || options.examples < 0 || options.ngram_order < 1)
    throw std::invalid_argument(
        "compare: resamples, n-grams and examples must not be negative, the n-gram order at least 1");
  tokenize_for_bleu("", input.tokenize);  // an unknown tokenisation names the valid ones

  Comparison out;
  out.sentences = n;
  out.resamples = options.resamples;
  const bool character_level = input.tokenize == "zh" || input.tokenize == "char";
  out.sentence_metric = character_level ? "chrF" : "BLEU";
  const std::vector<std::vector<std::string>> ref_stream{input.references};

  // Statistics once per sentence and system.
  std::vector<SentenceStats> stats(k);
  for (std::size_t s = 0; s < k; ++s) {
    stats[s].bleu = sentence_bleu_stats(input.systems[s], ref_stream, input.tokenize);
    const auto chrf = sentence_chrf_stats(input.systems[s], ref_stream);
    stats[s].width = chrf.empty() ? 0 : chrf.front().size();
    for (const auto& row : chrf) stats[s].chrf.insert(stats[s].chrf.end(), row.begin(), row.end());
  }
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  out.sentence_scores.assign(k, std::vector<double>(n, 0.0));
  for (std::size_t s = 0; s < k; ++s) {
    for (std::size_t i = 0; i < n; ++i)
      out.sentence_scores[s][i] =
          character_level ? chrf_of(stats[s], {i}) : bleu_from_stats(stats[s].bleu[i], input.tokenize, true).score;
  }

  // Corpus scores, their intervals and the p-values against the first system.
  const auto draws = bootstrap_indices(n, out.resamples, options.seed);
  std::vector<std::vector<double>> bleu_r(k), chrf_r(k);
  for (std::size_t s = 0; s < k; ++s) {
    for (const auto& draw : draws) {
      bleu_r[s].push_back(bleu_of(stats[s], draw, input.tokenize));
      chrf_r[s].push_back(chrf_of(stats[s], draw));
    }
  }
  const double base_bleu = bleu_of(stats[0], all, input.tokenize), base_chrf = chrf_of(stats[0], all);
  for (std::size_t s = 0; s < k; ++s) {
    SystemResult r;
    r.name = input.names[s];
    const double bleu = bleu_of(stats[s], all, input.tokenize), chrf = chrf_of(stats[s], all);
    r.p_bleu = s == 0 ? 1.0 : paired_bootstrap_p_value(base_bleu, bleu, bleu_r[0], bleu_r[s]);
    r.p_chrf = s == 0 ? 1.0 : paired_bootstrap_p_value(base_chrf, chrf, chrf_r[0], chrf_r[s]);
    auto b = bleu_r[s], c = chrf_r[s];  // sorted by the estimates; the originals stay paired
    r.bleu = estimate_from_resamples(bleu, b);
    r.chrf = estimate_from_resamples(chrf, c);
    r.mean_sentence_score =
        n ? std::accumulate(out.sentence_scores[s].begin(), out.sentence_scores[s].end(), 0.0) / static_cast<double>(n)
          : 0.0;
    out.systems.push_back(std::move(r));
  }

  // compare-mt's analyses.
  out.word_accuracy = word_accuracy_by_frequency(
      input.references, input.systems, input.training_targets.empty() ? input.references : input.training_targets,
      input.tokenize);
  if (input.training_targets.empty())
    out.word_accuracy.title =
        "Word accuracy (F-measure) by the word's frequency in the references (no training text given)";

  const auto refs = split_all(input.references, input.tokenize);
  std::vector<std::vector<Tokens>> hyps(k);
  for (std::size_t s = 0; s < k; ++s) hyps[s] = split_all(input.systems[s], input.tokenize);

  out.by_sentence_score = make_table("Sentences by sentence " + out.sentence_metric, "sentences", score_labels(), k);
  out.by_length_difference =
      make_table("Sentences by output length minus reference length (tokens)", "sentences", kDifferenceLabels, k);
  out.by_reference_length = make_table("Corpus " + out.sentence_metric + " by reference length (tokens)",
                                       out.sentence_metric, kLengthLabels, k);
  std::vector<std::vector<std::size_t>> by_length(kLengthLabels.size());
  for (std::size_t i = 0; i < n; ++i) by_length[length_bucket(refs[i].size())].push_back(i);
  for (std::size_t s = 0; s < k; ++s) {
    for (std::size_t i = 0; i < n; ++i) {
      ++out.by_sentence_score.counts[score_bucket(out.sentence_scores[s][i])][s];
      const long diff = static_cast<long>(hyps[s][i].size()) - static_cast<long>(refs[i].size());
      ++out.by_length_difference.counts[difference_bucket(diff)][s];
    }
    for (std::size_t b = 0; b < by_length.size(); ++b) {
      out.by_reference_length.counts[b][s] = static_cast<long>(by_length[b].size());
      if (!by_length[b].empty())
        out.by_reference_length.values[b][s] =
            character_level ? chrf_of(stats[s], by_length[b]) : bleu_of(stats[s], by_length[b], input.tokenize);
    }
  }
  for (auto* t : {&out.by_sentence_score, &out.by_length_difference})
    for (std::size_t b = 0; b < t->labels.size(); ++b)
      for (std::size_t s = 0; s < k; ++s) t->values[b][s] = static_cast<double>(t->counts[b][s]);

  // Confidence against sentence score, per system that has confidences.
  out.by_confidence =
      make_table("Mean sentence " + out.sentence_metric + " by confidence fifth (mean token log-probability)",
                 out.sentence_metric, {"least confident", "2nd fifth", "3rd fifth", "4th fifth", "most confident"}, k);
  out.confidence.assign(k, ConfidenceResult{});
  for (std::size_t s = 0; s < input.confidences.size(); ++s) {
    if (input.confidences[s].empty()) continue;
    out.confidence[s] = analyse_confidence(input.confidences[s], out.sentence_scores[s]);
    for (std::size_t f = 0; f < 5; ++f) {
      out.by_confidence.values[f][s] = out.confidence[s].fifth_score[f];
      out.by_confidence.counts[f][s] = out.confidence[s].fifth_count[f];
    }
  }

  // Each other system against the first: n-grams and sentences.
  const auto matches = ngram_matches(refs, hyps, options.ngram_order);
  const auto limit = static_cast<std::size_t>(options.ngrams), examples = static_cast<std::size_t>(options.examples);
  for (std::size_t s = 1; s < k; ++s) {
    PairComparison p;
    p.a = 0;
    p.b = s;
    std::vector<NgramDifference> all_ngrams;
    for (const auto& [g, a] : matches[0]) {
      const auto it = matches[s].find(g);
      const long b = it == matches[s].end() ? 0 : it->second;
      if (a == b) continue;
      all_ngrams.push_back({g, a, b, (static_cast<double>(a) + 1) / (static_cast<double>(a + b) + 2)});
    }
    auto by_a = all_ngrams;
    std::sort(by_a.begin(), by_a.end(), [](const NgramDifference& x, const NgramDifference& y) {
      if (x.score != y.score) return x.score > y.score;
      if (x.matches_a + x.matches_b != y.matches_a + y.matches_b)
        return x.matches_a + x.matches_b > y.matches_a + y.matches_b;
      return x.ngram < y.ngram;
    });
    for (const auto& g : by_a) {
      if (p.a_better.size() >= limit || g.score <= 0.5) break;
      p.a_better.push_back(g);
    }
    for (auto it = by_a.rbegin(); it != by_a.rend(); ++it) {
      if (p.b_better.size() >= limit || it->score >= 0.5) break;
      p.b_better.push_back(*it);
    }
    // Within equal scores the reversed list would put the rarer n-grams first: order them as for A.
    std::stable_sort(p.b_better.begin(), p.b_better.end(), [](const NgramDifference& x, const NgramDifference& y) {
      if (x.score != y.score) return x.score < y.score;
      return x.matches_a + x.matches_b > y.matches_a + y.matches_b;
    });

    std::vector<SentenceDifference> diffs;
    for (std::size_t i = 0; i < n; ++i) {
      if (input.systems[0][i] == input.systems[s][i]) ++p.identical;
      const double a = out.sentence_scores[0][i], b = out.sentence_scores[s][i];
      if (a != b) diffs.push_back({i, a, b});
    }
    std::stable_sort(diffs.begin(), diffs.end(), [](const SentenceDifference& x, const SentenceDifference& y) {
      return (x.score_b - x.score_a) > (y.score_b - y.score_a);
    });
    for (const auto& d : diffs) {
      if (p.b_better_sentences.size() >= examples || d.score_b <= d.score_a) break;
      p.b_better_sentences.push_back(d);
    }
    for (auto it = diffs.rbegin(); it != diffs.rend(); ++it) {
      if (p.a_better_sentences.size() >= examples || it->score_a <= it->score_b) break;
      p.a_better_sentences.push_back(*it);
    }
    out.pairs.push_back(std::move(p));
  }
  return out;
}

}  // namespace ts
