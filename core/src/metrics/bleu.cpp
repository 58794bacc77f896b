// SPDX-License-Identifier: GPL-3.0-or-later
// Corpus BLEU computed the sacreBLEU way: the 13a / zh / char / none tokenisers, n-gram clipping
// against several reference streams, exp smoothing and sacreBLEU's score line. Also holds the
// whitespace and n-gram helpers that chrf.cpp shares (ts::detail).
#include "ts/metrics/bleu.h"

#include "ts/text/utf8.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace ts {
namespace detail {

static bool is_ascii_space(unsigned char b) { return b == ' ' || (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x1F); }

bool is_python_space(char32_t cp) { return cp < 0x80 ? is_ascii_space(static_cast<unsigned char>(cp)) : is_space(cp); }

// Decodes one code point; ASCII without the general decoder (the common case).
static char32_t decode_at(std::string_view s, std::size_t& pos) {
  const auto byte = static_cast<unsigned char>(s[pos]);
  if (byte < 0x80) {
    ++pos;
    return byte;
  }
  return next_code_point(s, pos);
}

void split_python_whitespace(std::string_view s, std::vector<std::string_view>& out) {
  constexpr auto npos = std::string_view::npos;
  std::size_t pos = 0, start = npos;
  while (pos < s.size()) {
    const std::size_t here = pos;
    const auto byte = static_cast<unsigned char>(s[pos]);
    if (byte < 0x80 ? (++pos, is_ascii_space(byte)) : is_python_space(next_code_point(s, pos))) {
      if (start != npos) out.push_back(s.substr(start, here - start));
      start = npos;
    } else if (start == npos) {
      start = here;
    }
  }
  if (start != npos) out.push_back(s.substr(start));
}

constexpr std::uint32_t kEmptySlot = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kDirectLimit = std::uint64_t{1} << 22;  // renumbering table, 16 MiB max

void NgramTable::start(std::uint32_t alphabet) {
  alphabet_ = std::max<std::uint32_t>(alphabet, 1);
  distinct = alphabet_;
  order = 1;
  grams = ids;
  grow_scratch();
}

void NgramTable::advance() {
  ++order;
  const std::uint64_t space = std::uint64_t{distinct} * alphabet_;
  if (space <= kDirectLimit) {
    renumber_direct(space);
  } else {
    renumber_sorted();
  }
  grow_scratch();
}

// An n-gram is its (n-1)-gram prefix plus a last unit: the pair key prefix * alphabet + unit is
// unique, and a direct-address table turns the pair keys into consecutive ids.
void NgramTable::renumber_direct(std::uint64_t space) {
  if (slot_.size() < space) slot_.resize(space, kEmptySlot);
  const auto n = static_cast<std::size_t>(order);
  std::uint32_t next = 0;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    auto& g = grams[t];
    const std::size_t count = ids[t].size() >= n ? ids[t].size() - n + 1 : 0;
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t key = std::uint64_t{g[i]} * alphabet_ + ids[t][i + n - 1];
      std::uint32_t& slot = slot_[key];
      if (slot == kEmptySlot) {
        slot = next++;
        touched_.push_back(key);
      }
      g[i] = slot;
    }
    g.resize(count);
  }
  for (const auto key : touched_) slot_[key] = kEmptySlot;
  touched_.clear();
  distinct = next;
}

// The same renumbering by sorting, for long texts with many distinct units.
void NgramTable::renumber_sorted() {
  const auto n = static_cast<std::size_t>(order);
  std::vector<std::vector<std::uint64_t>> keys(ids.size());
  std::vector<std::uint64_t> all;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    const std::size_t count = ids[t].size() >= n ? ids[t].size() - n + 1 : 0;
    for (std::size_t i = 0; i < count; ++i) {
      keys[t].push_back(std::uint64_t{grams[t][i]} * alphabet_ + ids[t][i + n - 1]);
    }
    all.insert(all.end(), keys[t].begin(), keys[t].end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  for (std::size_t t = 0; t < ids.size(); ++t) {
    grams[t].resize(keys[t].size());
    for (std::size_t i = 0; i < keys[t].size(); ++i) {
      grams[t][i] = static_cast<std::uint32_t>(std::lower_bound(all.begin(), all.end(), keys[t][i]) - all.begin());
    }
  }
  distinct = static_cast<std::uint32_t>(all.size());
}

void NgramTable::grow_scratch() {
  if (count_a_.size() < distinct) {
    count_a_.resize(distinct, 0);
    count_b_.resize(distinct, 0);
    max_b_.resize(distinct, 0);
  }
}

long NgramTable::matches(std::size_t a, std::size_t b) {
  for (const auto g : grams[a]) ++count_a_[g];
  long total = 0;
  for (const auto g : grams[b]) {
    if (count_a_[g] > 0) {  // each occurrence in b uses up one occurrence in a
      --count_a_[g];
      ++total;
    }
  }
  for (const auto g : grams[a]) count_a_[g] = 0;
  return total;
}

long NgramTable::clipped_by_max_reference() {
  for (std::size_t r = 1; r < grams.size(); ++r) {
    for (const auto g : grams[r]) ++count_b_[g];
    for (const auto g : grams[r]) {
      max_b_[g] = std::max(max_b_[g], count_b_[g]);
      count_b_[g] = 0;
    }
  }
  for (const auto g : grams[0]) ++count_a_[g];
  long total = 0;
  for (const auto g : grams[0]) {
    total += std::min(count_a_[g], max_b_[g]);
    count_a_[g] = 0;  // later occurrences of g add nothing
    max_b_[g] = 0;
  }
  for (std::size_t r = 1; r < grams.size(); ++r) {
    for (const auto g : grams[r]) max_b_[g] = 0;
  }
  return total;
}

}  // namespace detail

namespace {

using detail::is_python_space;
// A tokeniser writes the tokens of `line`, joined by single spaces, into `out`.
using TokenizeFn = void (*)(std::string_view line, std::string& out);

constexpr int kMaxOrder = 4;

// Reused buffers, so that tokenising a corpus allocates almost nothing per sentence.
struct Scratch {
  std::string clean, spaced, a, b;
};

Scratch& scratch() {
  thread_local Scratch buffers;
  return buffers;
}

// out = ' '.join(s.split()) with Python's notion of whitespace.
void join_pieces(std::string_view s, std::string& out) {
  out.resize(s.size());
  char* const begin = &out[0];
  char* w = begin;
  bool pending_space = false;
  std::size_t pos = 0;
  while (pos < s.size()) {
    const std::size_t here = pos;
    const auto byte = static_cast<unsigned char>(s[pos]);
    const bool space = byte < 0x80 ? (++pos, detail::is_ascii_space(byte)) : is_python_space(next_code_point(s, pos));
    if (space) {
      pending_space = w != begin;
      continue;
    }
    if (pending_space) *w++ = ' ';
    pending_space = false;
    w = std::copy(s.data() + here, s.data() + pos, w);
  }
  out.resize(static_cast<std::size_t>(w - begin));
}

std::string_view rstrip_python(std::string_view s) {
  std::size_t end = s.size();
  while (end > 0 && detail::is_ascii_space(static_cast<unsigned char>(s[end - 1]))) --end;
  if (end == 0 || static_cast<unsigned char>(s[end - 1]) < 0x80) return s.substr(0, end);
  std::size_t pos = 0, keep = 0;  // ends in a non-ASCII character: decode from the start
  while (pos < end) {
    if (!is_python_space(detail::decode_at(s, pos))) keep = pos;
  }
  return s.substr(0, keep);
}

std::string_view strip_python(std::string_view s) {
  s = rstrip_python(s);
  std::size_t pos = 0;
  while (pos < s.size()) {
    const std::size_t here = pos;
    if (!is_python_space(detail::decode_at(s, pos))) return s.substr(here);
  }
  return {};
}

// Python's str.replace: non-overlapping, left to right, one pass.
void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::size_t hit = s.find(from);
  if (hit == std::string::npos) return;
  std::string out;
  out.reserve(s.size());
  std::size_t pos = 0;
  for (; hit != std::string::npos; hit = s.find(from, pos)) {
    out.append(s, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s, pos, std::string::npos);
  s.swap(out);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_not_digit(char c) { return !is_digit(c); }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }
bool is_dash(char c) { return c == '-'; }

// The class [\{-\~\[-\` -\&\(-\+\:-\@\/] of 13a's first substitution (ASCII only).
bool is_13a_symbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
         (c >= ':' && c <= '@') || c == '/';
}

// re.sub for a two-character pattern (first)(second): a left-to-right, non-overlapping scan where
// each match becomes `before first ' ' second after` (before/after: a space or nothing). Working on UTF-8 bytes gives the same
// result as on code points: every class involved is ASCII, and [^0-9] holds for every byte of a
// multi-byte character.
template <class First, class Second>
void substitute_pairs(const std::string& s, std::string& out, First first, Second second, char before, char after) {
  out.resize(2 * s.size() + 2);  // a match turns 2 bytes into at most 4
  char* w = &out[0];
  std::size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      if (before) *w++ = before;
      *w++ = s[i];
      *w++ = ' ';
      *w++ = s[i + 1];
      if (after) *w++ = after;
      i += 2;
    } else {
      *w++ = s[i++];
    }
  }
  out.resize(static_cast<std::size_t>(w - out.data()));
}

// The language-independent part of 13a: <skipped>, hyphenated line breaks, newlines, entities.
std::string_view clean_13a(std::string_view line, std::string& buffer) {
  if (line.find_first_of("<\n&") == std::string_view::npos) return line;
  buffer.assign(line);
  replace_all(buffer, "<skipped>", "");
  replace_all(buffer, "-\n", "");
  std::replace(buffer.begin(), buffer.end(), '\n', ' ');
  if (buffer.find('&') != std::string::npos) {
    replace_all(buffer, "&quot;", "\"");
    replace_all(buffer, "&amp;", "&");
    replace_all(buffer, "&lt;", "<");
    replace_all(buffer, "&gt;", ">");
  }
  return buffer;
}

// sacreBLEU's Tokenizer13a (mteval-v13a.pl).
void tokenize_13a(std::string_view line, std::string& out) {
  Scratch& tmp = scratch();
  const std::string_view text = clean_13a(line, tmp.clean);
  // f' {line} ', then ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> ' \1 ' (the padding spaces included).
  std::string& padded = tmp.a;
  padded.resize(3 * text.size() + 6);
  char* w = &padded[0];
  w = std::fill_n(w, 3, ' ');
  for (const char c : text) {
    if (is_13a_symbol(c)) {
      *w++ = ' ';
      *w++ = c;
      *w++ = ' ';
    } else {
      *w++ = c;
    }
  }
  w = std::fill_n(w, 3, ' ');
  padded.resize(static_cast<std::size_t>(w - padded.data()));
  // The other three substitutions; each is the identity when its characters are absent.
  const std::string* result = &tmp.a;
  if (text.find_first_of(".,") != std::string_view::npos) {
    substitute_pairs(tmp.a, tmp.b, is_not_digit, is_period_or_comma, 0, ' ');  // ([^0-9])([\.,])
    substitute_pairs(tmp.b, tmp.a, is_period_or_comma, is_not_digit, ' ', 0);  // ([\.,])([^0-9])
  }
  if (text.find('-') != std::string_view::npos) {
    substitute_pairs(tmp.a, tmp.b, is_digit, is_dash, 0, ' ');  // ([0-9])(-)
    result = &tmp.b;
  }
  join_pieces(*result, out);
}

// sacreBLEU's TokenizerZh as the project's reference scorer (shared/bench/bleu.py) has it: strip,
// space out CJK characters (ts::is_cjk ranges), then the full 13a tokenizer.
void tokenize_zh(std::string_view line, std::string& out) {
  line = strip_python(line);
  std::string& spaced = scratch().spaced;
  spaced.clear();
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t here = pos;
    const bool cjk = is_cjk(detail::decode_at(line, pos));
    if (cjk) spaced += ' ';
    spaced.append(line.data() + here, pos - here);
    if (cjk) spaced += ' ';
  }
  tokenize_13a(spaced, out);
}

// Every non-whitespace code point is a token.
void tokenize_char(std::string_view line, std::string& out) {
  out.clear();
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t here = pos;
    if (is_python_space(detail::decode_at(line, pos))) continue;
    if (!out.empty()) out += ' ';
    out.append(line.data() + here, pos - here);
  }
}

void tokenize_none(std::string_view line, std::string& out) { join_pieces(line, out); }

TokenizeFn find_tokenizer(const std::string& name) {
  if (name == "13a") return tokenize_13a;
  if (name == "zh") return tokenize_zh;
  if (name == "char") return tokenize_char;
  if (name == "none") return tokenize_none;
  throw std::invalid_argument("unknown BLEU tokenize '" + name + "' (valid: 13a, zh, char, none)");
}

// Per-sentence statistics; keeps its buffers between sentences.
class BleuAccumulator {
 public:
  explicit BleuAccumulator(TokenizeFn tokenize) : tokenize_(tokenize) {}
  void add(const std::string& hyp, const std::vector<const std::string*>& refs);
  BleuStats stats;

 private:
  void to_ids(const std::string& tokenized, std::vector<std::uint32_t>& ids);

  TokenizeFn tokenize_;
  std::vector<std::string> texts_;  // tokenised hypothesis, then references
  std::unordered_map<std::string_view, std::uint32_t> vocab_;
  detail::NgramTable table_;
};

void BleuAccumulator::to_ids(const std::string& tokenized, std::vector<std::uint32_t>& ids) {
  ids.clear();
  std::size_t pos = 0;
  while (pos < tokenized.size()) {  // the tokenisers separate tokens by single spaces
    std::size_t end = tokenized.find(' ', pos);
    if (end == std::string::npos) end = tokenized.size();
    const std::string_view token(tokenized.data() + pos, end - pos);
    const auto next_id = static_cast<std::uint32_t>(vocab_.size());
    ids.push_back(vocab_.try_emplace(token, next_id).first->second);
    pos = end + 1;
  }
}

void BleuAccumulator::add(const std::string& hyp, const std::vector<const std::string*>& refs) {
  texts_.resize(1 + refs.size());
  tokenize_(rstrip_python(hyp), texts_[0]);  // sacreBLEU tokenises sent.rstrip()
  for (std::size_t r = 0; r < refs.size(); ++r) tokenize_(rstrip_python(*refs[r]), texts_[r + 1]);
  vocab_.clear();
  table_.ids.resize(texts_.size());
  for (std::size_t t = 0; t < texts_.size(); ++t) to_ids(texts_[t], table_.ids[t]);

  // Closest reference length, ties going to the shorter reference.
  const long hyp_len = static_cast<long>(table_.ids[0].size());
  long closest = -1;
  for (std::size_t r = 1; r < texts_.size(); ++r) {
    const long len = static_cast<long>(table_.ids[r].size());
    const long diff = std::labs(hyp_len - len), best = std::labs(hyp_len - closest);
    if (closest < 0 || diff < best || (diff == best && len < closest)) closest = len;
  }
  stats.sys_len += hyp_len;
  stats.ref_len += closest;

  // sacreBLEU's clipping: a hypothesis n-gram counts at most as often as in the reference
  // that has it most often.
  table_.start(static_cast<std::uint32_t>(vocab_.size()));
  for (int n = 1; n <= kMaxOrder; ++n) {
    if (n > 1) table_.advance();
    stats.totals[n - 1] += std::max(0L, hyp_len - n + 1);
    stats.counts[n - 1] += table_.clipped_by_max_reference();
  }
}

// sacreBLEU's BLEU.compute_bleu with smooth_method='exp' (effective_order: sentence_bleu's).
BleuScore make_score(const BleuStats& c, const std::string& tokenize, bool effective_order) {
  BleuScore s;
  s.tokenize = tokenize;
  s.sys_len = c.sys_len;
  s.ref_len = c.ref_len;
  s.counts.assign(c.counts, c.counts + kMaxOrder);
  s.totals.assign(c.totals, c.totals + kMaxOrder);
  s.precisions.assign(kMaxOrder, 0.0);
  s.ratio = c.ref_len ? static_cast<double>(c.sys_len) / static_cast<double>(c.ref_len) : 0.0;
  if (c.sys_len < c.ref_len) {
    s.bp = c.sys_len > 0 ? std::exp(1.0 - static_cast<double>(c.ref_len) / c.sys_len) : 0.0;
  } else {
    s.bp = 1.0;
  }
  if (std::all_of(c.counts, c.counts + kMaxOrder, [](long v) { return v == 0; })) return s;

  double smooth = 1.0;
  int orders = kMaxOrder;
  for (int n = 0; n < kMaxOrder; ++n) {
    if (c.totals[n] == 0) {
      if (effective_order) orders = n;
      break;
    }
    if (c.counts[n] == 0) {
      smooth *= 2;
      s.precisions[n] = 100.0 / (smooth * static_cast<double>(c.totals[n]));
    } else {
      s.precisions[n] = 100.0 * static_cast<double>(c.counts[n]) / static_cast<double>(c.totals[n]);
    }
  }
  if (effective_order) {
    double log_sum = 0.0;
    for (int n = 0; n < orders; ++n) log_sum += std::log(s.precisions[n]);
    s.score = orders > 0 ? s.bp * std::exp(log_sum / orders) : 0.0;
    return s;
  }
  double log_sum = 0.0;  // sacreBLEU's my_log: log(0) counts as -9999999999
  for (const double p : s.precisions) log_sum += p == 0.0 ? -9999999999.0 : std::log(p);
  s.score = s.bp * std::exp(log_sum / kMaxOrder);
  return s;
}

}  // namespace

namespace detail {

// Throws unless every stream has one reference per hypothesis (and there is at least one).
void check_reference_streams(std::size_t hypotheses, const std::vector<std::vector<std::string>>& streams) {
  if (streams.empty()) throw std::invalid_argument("at least one reference stream is required");
  for (std::size_t s = 0; s < streams.size(); ++s) {
    if (streams[s].size() != hypotheses) {
      throw std::invalid_argument(fmt::format("reference stream {} has {} lines but there are {} hypotheses", s,
                                              streams[s].size(), hypotheses));
    }
  }
}

// sacreBLEU drops empty references of a sentence; when all are empty one empty one stays.
void gather_references(const std::vector<std::vector<std::string>>& streams, std::size_t i,
                       std::vector<const std::string*>& refs) {
  refs.clear();
  for (const auto& stream : streams) {
    if (!stream[i].empty()) refs.push_back(&stream[i]);
  }
  if (refs.empty()) refs.push_back(&streams.front()[i]);
}

}  // namespace detail

std::string tokenize_for_bleu(std::string_view line, const std::string& tokenize) {
  std::string out;
  find_tokenizer(tokenize)(line, out);
  return out;
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& reference_streams, const std::string& tokenize) {
  BleuAccumulator acc(find_tokenizer(tokenize));
  detail::for_each_sentence(
      hypotheses, reference_streams,
      [&](const std::string& hyp, const std::vector<const std::string*>& refs) { acc.add(hyp, refs); });
  return make_score(acc.stats, tokenize, false);
}

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  sys_len += other.sys_len;
  ref_len += other.ref_len;
  for (int n = 0; n < kOrders; ++n) {
    counts[n] += other.counts[n];
    totals[n] += other.totals[n];
  }
  return *this;
}

std::vector<BleuStats> sentence_bleu_stats(const std::vector<std::string>& hypotheses,
                                           const std::vector<std::vector<std::string>>& reference_streams,
                                           const std::string& tokenize) {
  BleuAccumulator acc(find_tokenizer(tokenize));
  std::vector<BleuStats> out;
  out.reserve(hypotheses.size());
  detail::for_each_sentence(hypotheses, reference_streams,
                            [&](const std::string& hyp, const std::vector<const std::string*>& refs) {
                              acc.stats = {};
                              acc.add(hyp, refs);
                              out.push_back(acc.stats);
                            });
  return out;
}

BleuScore bleu_from_stats(const BleuStats& stats, const std::string& tokenize, bool effective_order) {
  find_tokenizer(tokenize);  // the name is checked as corpus_bleu checks it
  return make_score(stats, tokenize, effective_order);
}

std::string BleuScore::to_string() const {
  std::string precs;
  for (std::size_t n = 0; n < precisions.size(); ++n) {
    if (n > 0) precs += '/';
    precs += fmt::format("{:.1f}", precisions[n]);
  }
  return fmt::format("BLEU = {:.2f} {} (BP = {:.3f} ratio = {:.3f} hyp_len = {} ref_len = {})", score, precs, bp, ratio,
                     sys_len, ref_len);
}

}  // namespace ts
