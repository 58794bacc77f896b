// SPDX-License-Identifier: GPL-3.0-or-later
// Batched greedy decoding and beam search on packed weights (see ts/infer/batch_search.h).
#include "ts/infer/batch_search.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <stdexcept>

#include "ts/infer/row_select.h"
#include "ts/model/float_mode.h"
#include "ts/text/vocab.h"

namespace ts {
namespace {

// The batch padded to its longest source, [B, S].
std::vector<std::int64_t> padded(const std::vector<std::vector<std::int64_t>>& batch, std::int64_t pad,
                                 std::int64_t& longest) {
  longest = 0;
  for (const auto& s : batch) longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(s.size()));
  std::vector<std::int64_t> src(batch.size() * static_cast<std::size_t>(longest), pad);
  for (std::size_t b = 0; b < batch.size(); ++b)
    std::copy(batch[b].begin(), batch[b].end(), src.begin() + static_cast<std::ptrdiff_t>(b * longest));
  return src;
}

// Each thread keeps the decoder state of its last batch: the next batch's key/value caches reuse its
// memory instead of faulting in fresh pages (page faults and zeroing took about a third of a batched beam
// search of 128 sentences; docs/benchmarks.md, "Issue 35's translation targets on an AMD EPYC Zen 5").
PackedDecoding& recycled_state() {
  thread_local PackedDecoding state;
  return state;
}

// Encodes the batch and prepares the decoder: one hypothesis row per source.
PackedDecoding begin(const PackedModel& model, const std::vector<std::vector<std::int64_t>>& batch,
                     const std::vector<std::vector<std::int64_t>>* shortlists) {
  std::int64_t S = 0;
  const auto src = padded(batch, model.shape().pad_id, S);
  const auto B = static_cast<std::int64_t>(batch.size());
  const auto memory = model.encode(src.data(), B, S);
  const auto mask = model.padding_mask(src.data(), B, S);
  PackedDecoding state = std::move(recycled_state());
  model.start(state, memory.data(), mask.data(), B, S);
  if (shortlists) model.set_shortlist(state, *shortlists);
  return state;
}

// The packed model as a StepDecoder.
class PackedStepDecoder : public StepDecoder {
 public:
  PackedStepDecoder(const PackedModel& model, const std::vector<std::vector<std::int64_t>>& batch,
                    const std::vector<std::vector<std::int64_t>>* shortlists)
      : model_(model), state_(begin(model, batch, shortlists)) {}
  ~PackedStepDecoder() override {
    state_.clear();
    recycled_state() = std::move(state_);
  }
  PackedStepDecoder(const PackedStepDecoder&) = delete;
  PackedStepDecoder& operator=(const PackedStepDecoder&) = delete;
  std::int64_t vocab() const override { return model_.shape().tgt_vocab; }
  std::int64_t max_length() const override { return model_.max_length(); }
  void step(const std::vector<std::int64_t>& tokens, FloatScratch& log_probs) override {
    const auto B = static_cast<std::int64_t>(tokens.size());
    log_probs.resize_discarding(static_cast<std::size_t>(B * vocab()));
    model_.step(state_, tokens.data(), B, log_probs.data());
  }
  void reorder(const std::vector<std::int64_t>& rows) override { state_.reorder(rows); }

 private:
  const PackedModel& model_;
  PackedDecoding state_;
};

}  // namespace

std::vector<std::int64_t> fit_to_positions(std::vector<std::int64_t> src, std::int64_t max_length) {
  const auto limit = static_cast<std::size_t>(std::max<std::int64_t>(1, max_length));
  if (src.size() > limit) {  // keep the end-of-sentence marker, drop what the model cannot position
    src.resize(limit - 1);
    src.push_back(Vocab::kEos);
  }
  return src;
}

double gnmt_length_penalty(std::size_t length, double alpha) {
  return alpha <= 0 ? 1.0 : std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

std::int64_t output_length_limit(const DecodeConfig& config, std::int64_t src_len, std::int64_t max_length) {
  const std::int64_t n =
      (config.max_len_a > 0 || config.max_len_b > 0) ? config.max_len_a * src_len + config.max_len_b : 2 * src_len + 10;
  return std::max<std::int64_t>(1, std::min(n, max_length - 1));
}

std::vector<HypothesisTokens> greedy_steps(StepDecoder& decoder, const std::vector<std::int64_t>& lengths,
                                           const DecodeConfig& config) {
  const auto B = lengths.size();
  std::vector<HypothesisTokens> out(B);
  if (B == 0) return out;
  const auto V = decoder.vocab();
  std::vector<std::size_t> limit(B), alive(B);
  for (std::size_t b = 0; b < B; ++b) {
    limit[b] = static_cast<std::size_t>(output_length_limit(config, lengths[b], decoder.max_length()));
    alive[b] = b;
  }
  std::vector<std::int64_t> tokens(B, Vocab::kBos);
  thread_local FloatScratch log_probs;  // kept for the thread's next batch: no pages to fault in
  while (!alive.empty()) {
    const auto n = static_cast<std::int64_t>(alive.size());
    decoder.step(tokens, log_probs);
    std::vector<std::int64_t> keep, next_tokens;
    std::vector<std::size_t> next_alive;
    for (std::int64_t r = 0; r < n; ++r) {
      const float* row = log_probs.data() + r * V;
      const std::int64_t best = first_argmax(row, V);
      const auto which = alive[static_cast<std::size_t>(r)];
      auto& h = out[which];
      h.token_log_probs.push_back(row[best]);
      h.log_prob += row[best];
      if (best == Vocab::kEos) {
        h.finished = true;
        continue;
      }
      h.ids.push_back(best);
      if (h.ids.size() >= limit[which]) continue;  // cut at the length limit
      keep.push_back(r);
      next_tokens.push_back(best);
      next_alive.push_back(which);
    }
    // Finished sentences leave the batch.
    if (static_cast<std::int64_t>(keep.size()) != n && !keep.empty()) decoder.reorder(keep);
    alive = std::move(next_alive);
    tokens = std::move(next_tokens);
  }
  for (auto& h : out) h.score = h.log_prob;
  return out;
}

std::vector<std::vector<HypothesisTokens>> beam_steps(StepDecoder& decoder, const std::vector<std::int64_t>& lengths,
                                                      const DecodeConfig& config) {
  std::vector<std::vector<HypothesisTokens>> out(lengths.size());
  if (lengths.empty()) return out;
  const auto width = static_cast<std::int64_t>(std::max(1, config.beam));
  const auto nbest = static_cast<std::size_t>(std::clamp(config.nbest, 1, std::max(1, config.beam)));
  const auto V = decoder.vocab();

  // One search per sentence, as beam_search runs it; its live hypotheses are rows first_row... of
  // the shared decoder state, in order.
  struct Search {
    std::vector<HypothesisTokens> alive, finished;
    std::int64_t max_len = 0, first_row = 0;
    bool done = false;
  };
  std::vector<Search> searches(lengths.size());
  std::vector<std::int64_t> tokens_now;
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    auto& s = searches[b];
    s.alive.resize(1);
    s.max_len = output_length_limit(config, lengths[b], decoder.max_length());
    s.first_row = static_cast<std::int64_t>(b);
    tokens_now.push_back(Vocab::kBos);
  }
  thread_local FloatScratch log_probs;  // kept for the thread's next batch: no pages to fault in
  std::vector<ScoredIndex> top;
  for (std::int64_t t = 0; !tokens_now.empty(); ++t) {
    decoder.step(tokens_now, log_probs);
    std::vector<std::int64_t> origins, next_tokens;
    for (auto& s : searches) {
      if (s.done) continue;
      const auto n = static_cast<std::int64_t>(s.alive.size());
      // The 2 × width best candidates, each scored by its hypothesis's log-probability (rounded to
      // float) plus its own; index k is row k / V's token k % V.
      top.clear();
      for (std::int64_t r = 0; r < n; ++r)
        select_top_k(log_probs.data() + (s.first_row + r) * V, V,
                     static_cast<float>(s.alive[static_cast<std::size_t>(r)].log_prob), r * V, 2 * width, top);
      std::vector<HypothesisTokens> next;
      std::vector<std::int64_t> rows, tokens;
      for (const auto& candidate : top) {
        if (static_cast<std::int64_t>(next.size()) >= width) break;
        const auto row = candidate.index / V, token = candidate.index % V;
        HypothesisTokens h = s.alive[static_cast<std::size_t>(row)];
        h.token_log_probs.push_back(log_probs.data()[(s.first_row + row) * V + token]);
        h.log_prob = candidate.score;
        if (token == Vocab::kEos) {
          h.finished = true;
          h.score = h.log_prob / gnmt_length_penalty(h.ids.size() + 1, config.length_penalty);
          s.finished.push_back(std::move(h));
          continue;
        }
        h.ids.push_back(token);
        next.push_back(std::move(h));
        rows.push_back(s.first_row + row);
        tokens.push_back(token);
      }
      bool stop = next.empty();
      if (!stop && s.finished.size() >= nbest) {
        // Stop once the best finished hypothesis beats every live one (scores only fall with length).
        double best_finished = -INFINITY;
        for (const auto& h : s.finished) best_finished = std::max(best_finished, h.score);
        double best_alive = -INFINITY;
        for (const auto& h : next)
          best_alive = std::max(best_alive, h.log_prob / gnmt_length_penalty(s.max_len, config.length_penalty));
        stop = static_cast<std::int64_t>(s.finished.size()) >= width || best_finished >= best_alive;
      }
      if (!stop && t + 1 == s.max_len) {
        for (auto& h : next) {
          h.score = h.log_prob / gnmt_length_penalty(h.ids.size(), config.length_penalty);
          s.finished.push_back(std::move(h));
        }
        stop = true;
      }
      if (stop) {
        s.done = true;
        s.alive.clear();
        continue;
      }
      s.alive = std::move(next);
      s.first_row = static_cast<std::int64_t>(origins.size());  // its rows after the reorder below
      origins.insert(origins.end(), rows.begin(), rows.end());
      next_tokens.insert(next_tokens.end(), tokens.begin(), tokens.end());
    }
    if (origins.empty()) break;
    decoder.reorder(origins);
    tokens_now = std::move(next_tokens);
  }
  for (std::size_t i = 0; i < searches.size(); ++i) {
    auto& finished = searches[i].finished;
    std::stable_sort(finished.begin(), finished.end(),
                     [](const HypothesisTokens& a, const HypothesisTokens& b) { return a.score > b.score; });
    if (finished.size() > nbest) finished.resize(nbest);
    out[i] = std::move(finished);
  }
  return out;
}

std::size_t cpu_decode_batch(const DecodeConfig& config) {
  const int width = config.mode == DecodeMode::kBeam ? std::max(1, config.beam) : 1;
  return static_cast<std::size_t>(std::max(1, kCpuDecodeRows / width));
}

std::vector<HypothesisTokens> decode_packed_batch(const PackedModel& model,
                                                  const std::vector<std::vector<std::int64_t>>& batch,
                                                  const DecodeConfig& config,
                                                  const std::vector<std::vector<std::int64_t>>* shortlists) {
  if (config.mode == DecodeMode::kSample)
    throw std::invalid_argument("batched decoding runs greedy decoding or beam search, not sampling");
  std::vector<HypothesisTokens> best(batch.size());
  if (batch.empty()) return best;
  std::vector<std::int64_t> lengths;
  for (const auto& s : batch) lengths.push_back(static_cast<std::int64_t>(s.size()));
  PackedStepDecoder decoder(model, batch, shortlists);
  if (config.mode == DecodeMode::kGreedy) return greedy_steps(decoder, lengths, config);
  auto nbest = beam_steps(decoder, lengths, config);
  for (std::size_t k = 0; k < batch.size(); ++k)
    if (!nbest[k].empty()) best[k] = std::move(nbest[k].front());
  return best;
}

std::vector<HypothesisTokens> decode_in_batches(const std::vector<std::vector<std::int64_t>>& sources,
                                                std::size_t batch_size, int threads,
                                                const std::function<void(std::size_t)>& progress,
                                                const BatchDecode& decode) {
  batch_size = std::max<std::size_t>(1, batch_size);
  std::vector<std::size_t> order(sources.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return sources[a].size() < sources[b].size(); });
  std::vector<std::vector<std::size_t>> chunks;
  for (std::size_t start = 0; start < order.size(); start += batch_size)
    chunks.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(start),
                        order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + batch_size)));
  std::vector<HypothesisTokens> out(sources.size());
  std::mutex lock;  // guards `done` and the calls of `progress`
  std::size_t done = 0;
  auto run = [&](const std::vector<std::size_t>& chunk) {
    std::vector<std::vector<std::int64_t>> batch;
    batch.reserve(chunk.size());
    for (auto i : chunk) batch.push_back(sources[i]);
    auto best = decode(batch);
    for (std::size_t k = 0; k < chunk.size(); ++k) out[chunk[k]] = std::move(best[k]);
    const std::lock_guard<std::mutex> guard(lock);
    done += chunk.size();
    if (progress) progress(done);
  };
  threads = std::max(1, std::min<int>(threads, static_cast<int>(chunks.size())));
  if (threads < 2) {
    for (const auto& chunk : chunks) run(chunk);
    return out;
  }
  // The threads share out the batches, each decoding its own on one core: the products of a batch
  // are too small to be worth splitting across cores, and the search between steps then runs on
  // every core too. The longest batches go first, so that no thread is left with a long one at the
  // end. Each takes the caller's floating-point mode (flush-to-zero): a batch decodes alike anywhere.
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  const auto mode = FloatMode::current();
#pragma omp parallel num_threads(threads)
  {
    const FloatMode::Scope same(mode);
    while (true) {
      const auto k = next.fetch_add(1);
      if (k >= chunks.size()) break;
      try {
        run(chunks[chunks.size() - 1 - k]);
      } catch (...) {
        const std::lock_guard<std::mutex> guard(lock);
        if (!failure) failure = std::current_exception();
        next = chunks.size();  // the others stop at their next batch
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

std::vector<HypothesisTokens> decode_packed(const PackedModel& model,
                                            const std::vector<std::vector<std::int64_t>>& sources,
                                            const DecodeConfig& config, std::size_t batch_size, int threads,
                                            const std::function<void(std::size_t)>& progress,
                                            const ShortlistOf& shortlist) {
  return decode_in_batches(sources, batch_size, threads, progress, [&](const auto& batch) {
    std::vector<std::vector<std::int64_t>> lists;
    if (shortlist)
      for (const auto& s : batch) lists.push_back(shortlist(s));
    return decode_packed_batch(model, batch, config, shortlist ? &lists : nullptr);
  });
}

}  // namespace ts
