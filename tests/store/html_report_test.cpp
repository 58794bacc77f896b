#include "ts/store/html_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <random>

namespace ts {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("ts-report-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string db() const { return (dir_ / "runs.db").string(); }

 private:
  fs::path dir_;
};

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + needle.size())) ++n;
  return n;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// The text between the first `from` and the next `to` after it ("" when absent).
std::string between(const std::string& s, const std::string& from, const std::string& to) {
  const auto a = s.find(from);
  if (a == std::string::npos) return {};
  const auto b = s.find(to, a + from.size());
  return s.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

const std::string kHostile = "<script>alert(\"x\")</script>";
const std::string kChinese = "我昨天读了这本书。";

/// cross[layer][head][target][source] for 2 layers, 2 heads, 3 target x 4 source tokens: head 0
/// holds 0.2 and head 1 0.8 everywhere, so every mean over heads is 0.5.
nlohmann::json cross_attention() {
  nlohmann::json layers = nlohmann::json::array();
  for (int l = 0; l < 2; ++l) {
    nlohmann::json heads = nlohmann::json::array();
    for (double w : {0.2, 0.8}) heads.push_back(std::vector<std::vector<double>>(3, std::vector<double>(4, w)));
    layers.push_back(heads);
  }
  return layers;
}

/// A finished translation run with metrics at two validations, samples, probes and checkpoints.
std::int64_t make_full_run(RunStore& store) {
  NewRun r;
  r.name = "en→zh " + kHostile;
  r.corpus_path = "/data/corpora/cmn & friends.txt";
  r.corpus_sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  r.corpus_pairs = 29'000;
  r.corpus_bytes = 1'500'000;
  r.direction = "en-zh";
  r.preset = "tiny";
  r.machine = "lab-01";
  r.device = "cpu";
  r.config = {{"model", {{"d_model", 32}}}, {"train", {{"probe", kHostile}}}};
  const auto id = store.create_run(r);
  store.add_tag(id, "baseline <b>");

  StoreBatch b;
  for (int step = 10; step <= 300; step += 10) {
    b.metrics.push_back({id, step, "train_loss", 8.0 - step / 50.0, step * 0.1});
    b.metrics.push_back({id, step, "lr", 1e-4 * step / 300.0, step * 0.1});
    b.metrics.push_back({id, step, "tokens_per_s", 12000.0 + step, step * 0.1});
  }
  const std::vector<std::pair<int, std::vector<double>>> validations = {
      {100, {3.0, 20.7, 10.0, 25.0}}, {200, {2.0, 7.4, 30.0, 40.0}}, {300, {2.5, 12.2, 20.0, 35.0}}};
  for (const auto& [step, v] : validations) {
    int k = 0;
    for (const char* name : {"dev_loss", "dev_ppl", "bleu", "chrf"}) b.metrics.push_back({id, step, name, v[k++], 0});
    b.samples.push_back({id, step, 0, "I read the book yesterday.", kChinese, step == 100 ? "我书。" : "我读了书。"});
    b.samples.push_back({id, step, 1, "Hello " + kHostile, "你好", step == 100 ? "好" : "你好 " + kHostile});
    nlohmann::json probe = {{"source", "the house " + kHostile},
                            {"text", "房子"},
                            {"source_tokens", {"the", "house", "<script>", "</s>"}},
                            {"target_tokens", {"房", "子", "</s>"}},
                            {"cross", cross_attention()}};
    b.probes.push_back({id, step, probe});
  }
  b.checkpoints.push_back({0, id, 200, "best", "/runs/a <b>/best.ckpt", r.corpus_sha256, "", 9'470'415, {}});
  b.checkpoints.push_back({0, id, 300, "last", "/runs/a <b>/last.ckpt", r.corpus_sha256, "", 9'470'415, {}});
  store.write(b);
  store.update_progress(id, 300, 30.0);
  store.set_device(id, "cpu");
  store.finish_run(id, "finished", "", 300);
  return id;
}

TEST(HtmlReport, IsOneUtf8DocumentWithTheSectionsInOrder) {
  TempDir dir;
  RunStore store(dir.db());
  const auto id = make_full_run(store);
  ReportOptions options;
  options.version = "1.2.3";
  options.generated_at = "2026-01-02T03:04:05Z";
  const auto html = html_report(store, id, options);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_NE(html.find("\"Noto Sans CJK SC\""), std::string::npos);
  std::size_t last = 0;
  for (const char* part : {"<h1>", "id=\"summary\"", "id=\"curves\"", "id=\"samples\"", "id=\"attention\"",
                           "id=\"configuration\"", "<footer>"}) {
    const auto p = html.find(part);
    ASSERT_NE(p, std::string::npos) << part;
    EXPECT_GT(p, last) << part;
    last = p;
  }
  EXPECT_NE(html.find("Generated by Transformer Studio 1.2.3 on 2026-01-02T03:04:05Z"), std::string::npos);
  EXPECT_EQ(count(html, "</html>"), 1u);
  // The header's facts.
  EXPECT_NE(html.find("cmn &amp; friends.txt"), std::string::npos);  // the corpus's file name, escaped
  EXPECT_EQ(html.find("/data/corpora"), std::string::npos);          // not its directory
  EXPECT_NE(html.find("29,000 pairs"), std::string::npos);
  EXPECT_NE(html.find("0123456789ab"), std::string::npos);
  EXPECT_NE(html.find("lab-01"), std::string::npos);
  EXPECT_NE(html.find("30.00"), std::string::npos);  // best BLEU
  EXPECT_NE(html.find("baseline &lt;b&gt;"), std::string::npos);
  EXPECT_NE(html.find("&quot;probe&quot;: &quot;&lt;script&gt;"), std::string::npos);  // the config, pretty-printed
}

TEST(HtmlReport, EscapesEverythingUserProvidedAndKeepsChinese) {
  TempDir dir;
  RunStore store(dir.db());
  const auto html = html_report(store, make_full_run(store));
  EXPECT_EQ(lower(html).find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("<h1>en→zh &lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find(kChinese), std::string::npos);
  EXPECT_NE(html.find("/runs/a &lt;b&gt;/best.ckpt"), std::string::npos);
  EXPECT_EQ(html_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
}

TEST(HtmlReport, ReferencesNothingOutsideItself) {
  TempDir dir;
  RunStore store(dir.db());
  auto html = lower(html_report(store, make_full_run(store)));
  const std::string xmlns = "xmlns=\"http://www.w3.org/2000/svg\"";
  EXPECT_EQ(count(html, xmlns), count(html, "<svg"));
  for (auto p = html.find(xmlns); p != std::string::npos; p = html.find(xmlns)) html.erase(p, xmlns.size());
  for (const char* ref : {"http://", "https://", "src=", "url(", "@import", "<link", "<img", "<iframe", "<object",
                          "<embed", "href=\"/", "href=\"//", "javascript:"})
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;
}

TEST(HtmlReport, DrawsOneChartPerCurveWithAxes) {
  TempDir dir;
  RunStore store(dir.db());
  const auto html = html_report(store, make_full_run(store));
  // Loss (training and dev), BLEU and chrF, learning rate, tokens/s; dev_ppl is not drawn.
  EXPECT_EQ(count(html, "<svg class=\"chart\""), 4u);
  const auto loss = between(html, "aria-label=\"Loss\"", "</svg>");
  EXPECT_EQ(count(loss, "<polyline"), 2u);  // training loss (30 points) and dev loss (3 points)
  EXPECT_NE(loss.find(">Training loss</text>"), std::string::npos);
  EXPECT_NE(loss.find(">Dev loss</text>"), std::string::npos);
  EXPECT_NE(loss.find(">step</text>"), std::string::npos);
  EXPECT_GE(count(loss, "class=\"xtick\""), 3u);
  EXPECT_GE(count(loss, "class=\"ytick\""), 3u);
  const auto scores = between(html, "aria-label=\"BLEU and chrF\"", "</svg>");
  EXPECT_NE(scores.find(">BLEU</text>"), std::string::npos);
  EXPECT_NE(scores.find(">chrF</text>"), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"Learning rate\""), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"Throughput\""), std::string::npos);
}

TEST(HtmlReport, SummarisesFinalAndBestOfEachMetric) {
  TempDir dir;
  RunStore store(dir.db());
  const auto html = html_report(store, make_full_run(store));
  const auto summary = between(html, "id=\"summary\"", "</section>");
  // BLEU 10, 30, 20: final 20 at 300, best (highest) 30 at 200.
  const auto bleu = between(summary, "<code>bleu</code>", "</tr>");
  EXPECT_NE(bleu.find("<td class=\"num\">20</td><td class=\"num\">300</td><td class=\"num\">30</td><td class=\"num\">200</td>"),
            std::string::npos) << bleu;
  // Dev loss 3, 2, 2.5: best (lowest) 2 at 200.
  const auto dev = between(summary, "<code>dev_loss</code>", "</tr>");
  EXPECT_NE(dev.find("<td class=\"num\">2.5</td><td class=\"num\">300</td><td class=\"num\">2</td><td class=\"num\">200</td>"),
            std::string::npos) << dev;
  for (const char* name : {"train_loss", "dev_ppl", "chrf", "lr", "tokens_per_s"})
    EXPECT_NE(summary.find(std::string("<code>") + name + "</code>"), std::string::npos) << name;
}

TEST(HtmlReport, ShowsTheLastSamplesAndComparesFirstAndLast) {
  TempDir dir;
  RunStore store(dir.db());
  const auto html = html_report(store, make_full_run(store));
  const auto samples = between(html, "id=\"samples\"", "</section>");
  EXPECT_NE(samples.find("Last validation (step 300)"), std::string::npos);
  EXPECT_NE(samples.find("<th>Step 100</th><th>Step 300</th>"), std::string::npos);
  const auto compare = between(samples, "<th>Step 100</th>", "</table>");
  EXPECT_NE(compare.find("<td dir=\"auto\">我书。</td><td dir=\"auto\">我读了书。</td>"), std::string::npos) << compare;
  EXPECT_EQ(count(compare, "<tr>"), 2u);  // both sources (the slice starts after the header row)
}

TEST(HtmlReport, DrawsTheProbeAttentionAsOneCellPerTokenPair) {
  TempDir dir;
  RunStore store(dir.db());
  const auto html = html_report(store, make_full_run(store));
  const auto attention = between(html, "id=\"attention\"", "</section>");
  EXPECT_NE(attention.find("Last validation (step 300)"), std::string::npos);
  EXPECT_NE(attention.find("First validation (step 100)"), std::string::npos);
  // Two probes shown (last and first), two layers each; each map 3 target rows x 4 source columns.
  EXPECT_EQ(count(attention, "<svg class=\"heatmap\""), 4u);
  EXPECT_EQ(count(attention, "<rect class=\"cell\""), 4u * 3 * 4);
  std::size_t maps = 0;
  for (auto p = attention.find("<svg class=\"heatmap\""); p != std::string::npos;
       p = attention.find("<svg class=\"heatmap\"", p + 1), ++maps) {
    const auto svg = attention.substr(p, attention.find("</svg>", p) - p);
    EXPECT_EQ(count(svg, "<rect class=\"cell\""), 12u);
    EXPECT_EQ(count(svg, "class=\"row\""), 3u);
    EXPECT_EQ(count(svg, "class=\"col\""), 4u);
  }
  EXPECT_EQ(maps, 4u);
  EXPECT_NE(attention.find("mean of 2 heads"), std::string::npos);
  EXPECT_NE(attention.find("<title>房 ← house: 0.5000</title>"), std::string::npos);  // (0.2 + 0.8) / 2
  EXPECT_NE(attention.find("&lt;script&gt;</text>"), std::string::npos);                // a token label, escaped
}

TEST(HtmlReport, DownsamplesLongSeriesToStaySmall) {
  TempDir dir;
  RunStore store(dir.db());
  NewRun r;
  r.name = "long";
  const auto id = store.create_run(r);
  StoreBatch b;
  constexpr int kPoints = 200'000;
  for (int step = 1; step <= kPoints; ++step) {
    b.metrics.push_back({id, step, "train_loss", 2.0 + std::sin(step * 0.01) + (step % 97) * 0.01, step * 0.05});
    b.metrics.push_back({id, step, "lr", 1e-3 / std::sqrt(static_cast<double>(step)), step * 0.05});
  }
  store.write(b);
  const auto html = html_report(store, id);
  EXPECT_LT(html.size(), 2'000'000u);
  EXPECT_LT(html.size(), 300'000u);  // what M4 downsampling gives: a few points per pixel column
  const auto loss = between(html, "aria-label=\"Loss\"", "</svg>");
  const auto points = between(loss, "points=\"", "\"/>");
  EXPECT_GT(count(points, ","), 500u);   // still the whole curve's shape
  EXPECT_LT(count(points, ","), 4000u);  // at most 4 per pixel column
  EXPECT_EQ(count(loss, "<circle"), 0u);  // no markers on a long series
  EXPECT_NE(loss.find(">200k</text>"), std::string::npos);  // x ticks up to the last step
}

TEST(HtmlReport, NotesEachSectionWithoutData) {
  TempDir dir;
  RunStore store(dir.db());
  NewRun r;
  r.name = "empty";
  r.kind = "language-model";
  const auto id = store.create_run(r);
  const auto html = html_report(store, id);
  EXPECT_EQ(count(html, "<svg"), 0u);
  for (const char* note : {"No metrics were recorded", "No validation samples were recorded", "No probe sentence was recorded",
                           "No configuration was recorded", "No checkpoints were recorded"})
    EXPECT_NE(html.find(note), std::string::npos) << note;
  EXPECT_NE(html.find("Generated by Transformer Studio on "), std::string::npos);
}

TEST(HtmlReport, SkipsAProbeWithoutReadableAttention) {
  TempDir dir;
  RunStore store(dir.db());
  NewRun r;
  r.name = "odd probe";
  const auto id = store.create_run(r);
  StoreBatch b;
  b.probes.push_back({id, 10, {{"source", "x"}, {"cross", {{{{"not a number"}}}}}}});
  store.write(b);
  const auto html = html_report(store, id);
  EXPECT_NE(html.find("This probe has no readable cross-attention."), std::string::npos);
  EXPECT_EQ(count(html, "<svg class=\"heatmap\""), 0u);
}

TEST(HtmlReport, RefusesAMissingRun) {
  TempDir dir;
  RunStore store(dir.db());
  EXPECT_THROW(html_report(store, 42), StoreError);
}

}  // namespace
}  // namespace ts
