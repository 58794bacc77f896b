// SPDX-License-Identifier: GPL-3.0-or-later
// Ingest (issue 6, target 4): a corpus read, oriented, split, word-tokenised, vocabularies built and
// every pair encoded, timed stage by stage and end to end; then SentencePiece (BPE) training on its
// English side, which calls the SentencePiece library's own trainer.
//
//   ts_bench_ingest [CORPUS] [--direction de-en] [--runs 3] [--bpe 8000 | --bpe 0]
//
// Default corpus: ../shared/data/deu.txt next to the project. Prints the best of --runs for each
// stage, and the peak resident memory of the process.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "ts/text/corpus.h"
#include "ts/text/tokenizer.h"
#include "ts/train/config.h"
#include "ts/train/data.h"

namespace {

using Clock = std::chrono::steady_clock;

double best_of(int runs, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = TS_SHARED_DATA_DIR "/deu.txt", direction = "de-en";
  int runs = 3, bpe = 8000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--direction" && i + 1 < argc)
      direction = argv[++i];
    else if (a == "--runs" && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--bpe" && i + 1 < argc)
      bpe = std::atoi(argv[++i]);
    else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    } else
      path = a;
  }
  try {
    const auto config = ts::preset("annotated").data;  // word-level on both sides, as the preset trains
    ts::Corpus corpus;
    const double read = best_of(runs, [&] { corpus = ts::read_corpus(path); });
    const auto dir = ts::parse_direction(direction, corpus);
    ts::DataSplit split;
    const double split_s = best_of(runs, [&] { split = ts::split_corpus(corpus, dir, config); });
    ts::PreparedData data;
    const double prepare = best_of(runs, [&] { data = ts::prepare_data(corpus, dir, config); });
    std::printf("corpus: %s, %zu pairs, direction %s\n", path.c_str(), corpus.pairs.size(), direction.c_str());
    std::printf("read_corpus                                  %7.3f s\n", read);
    std::printf("split (orient + shuffle + dev/test)          %7.3f s\n", split_s);
    std::printf(
        "prepare_data (split, word-tokenise both sides, build both vocabularies, encode every pair)"
        " %7.3f s  -> %zu train examples, vocabularies %zu / %zu\n",
        prepare, data.train.size(), data.pipeline.src_vocab->size(), data.pipeline.tgt_vocab->size());
    std::printf("ingest end to end (read + prepare)           %7.3f s   target <= 1 s\n", read + prepare);
    if (bpe > 0) {
      std::vector<std::string> english;
      for (const auto& p : corpus.pairs) english.push_back(p.english);
      ts::TokenizerConfig tc;
      tc.kind = ts::TokenizerKind::kBpe;
      tc.vocab_size = bpe;
      const auto t0 = Clock::now();
      const auto tokenizer = ts::make_tokenizer(tc, english);
      std::printf("SentencePiece BPE training, %zu English lines, vocabulary %d: %.2f s\n", english.size(), bpe,
                  std::chrono::duration<double>(Clock::now() - t0).count());
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("peak resident memory %.0f MB\n", usage.ru_maxrss / 1024.0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
