// SPDX-License-Identifier: GPL-3.0-or-later
// The `runs` commands over the run store (see runs_commands.h).
#include "runs_commands.h"
#include "compare_commands.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ts/store/atomic_file.h"
#include "ts/store/html_report.h"
#include "ts/store/run_store.h"
#include "ts/train/environment.h"
#include "ts/train/checkpoint.h"
#include "ts/train/model_comparison.h"
#include "ts/train/trainer.h"

namespace ts::cli {
namespace {

namespace fs = std::filesystem;

std::string bleu_text(const RunInfo& r) { return r.best_bleu ? fmt::format("{:.2f}", *r.best_bleu) : "-"; }

std::string shorten(const std::string& s, std::size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 1) + "~";
}

// "ok", "missing", "replaced" (a newer file under the same name) or "damaged".
std::string checkpoint_state(const CheckpointRow& c) {
  std::error_code ec;
  if (!fs::exists(c.path, ec)) return "missing";
  try {
    return read_checkpoint_header(c.path).sha256 == c.sha256 ? "ok" : "replaced";
  } catch (const std::exception&) {
    return "damaged";
  }
}

int list_runs(RunStore& store) {
  const auto runs = store.list_runs();
  if (runs.empty()) {
    fmt::print("no runs recorded in {}\n", store.path());
    return 0;
  }
  fmt::print("{:>4}  {:28}  {:18}  {:6}  {:15}  {:>7}  {:>6}  {:13}  {}\n", "id", "name", "corpus", "dir", "preset",
             "steps", "BLEU", "status", "started");
  for (const auto& r : runs)
    fmt::print("{:>4}  {:28}  {:18}  {:6}  {:15}  {:>7}  {:>6}  {:13}  {}\n", r.id, shorten(r.name, 28),
               shorten(fs::path(r.corpus_path).filename().string(), 18),
               r.kind == RunKind::kLanguageModel ? "LM" : r.direction, shorten(r.preset, 15), r.steps, bleu_text(r),
               run_status_name(r.status), r.started_at);
  return 0;
}

RunInfo require(RunStore& store, std::int64_t id) {
  auto run = store.find_run(id);
  if (!run) throw StoreError(fmt::format("no run with id {} in {} (see `runs list`)", id, store.path()));
  return *run;
}

int show_run(RunStore& store, std::int64_t id) {
  const auto r = require(store, id);
  fmt::print(
      "run {}: {} ({})\n  status    {}{}\n  started   {}{}\n  corpus    {} ({} pairs, {} bytes, sha256 {})\n"
      "  direction {}   preset {}   steps {}   best BLEU {}\n  machine   {}   device {}\n  directory {}\n",
      r.id, r.name, r.kind == RunKind::kLanguageModel ? "language model" : run_kind_name(r.kind),
      run_status_name(r.status), r.message.empty() ? "" : " (" + r.message + ")", r.started_at,
      r.ended_at.empty() ? "" : ", ended " + r.ended_at, r.corpus_path, r.corpus_pairs, r.corpus_bytes,
      r.corpus_sha256.empty() ? "-" : r.corpus_sha256.substr(0, 16), r.direction, r.preset, r.steps, bleu_text(r),
      r.machine, r.device, r.out_dir);
  if (!r.tags.empty()) {
    std::string tags;
    for (const auto& t : r.tags) tags += (tags.empty() ? "" : ", ") + t;
    fmt::print("  tags      {}\n", tags);
  }
  fmt::print("metrics:\n");
  for (const auto& name : store.metric_names(id)) {
    const auto points = store.metric(id, name);
    double lo = points.front().value, hi = lo;
    for (const auto& p : points) lo = std::min(lo, p.value), hi = std::max(hi, p.value);
    fmt::print("  {:14} {:6} points, last {:.4g} at step {}, min {:.4g}, max {:.4g}\n", name, points.size(),
               points.back().value, points.back().step, lo, hi);
  }
  fmt::print("checkpoints:\n");
  for (const auto& c : store.checkpoints(id))
    fmt::print("  step {:>7}  {:5}  {:8}  {}\n", c.step, c.kind, checkpoint_state(c), c.path);
  fmt::print("config:\n{}\n", r.config.dump(2));
  return 0;
}

// Flattens {"a": {"b": 1}} into {"a.b": "1"}.
void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (const auto& item : j.items())
      flatten(item.value(), prefix.empty() ? item.key() : prefix + "." + item.key(), out);
  } else {
    out[prefix] = j.dump();
  }
}

int compare_runs(RunStore& store, const std::vector<std::int64_t>& ids) {
  if (ids.size() < 2) throw std::invalid_argument("runs compare needs at least two run ids");
  std::vector<RunInfo> runs;
  std::vector<std::map<std::string, std::string>> flat(ids.size());
  std::set<std::string> keys;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    runs.push_back(require(store, ids[i]));
    flatten(runs.back().config, "", flat[i]);
    for (const auto& kv : flat[i]) keys.insert(kv.first);
  }
  fmt::print("{:34}", "");
  for (const auto& r : runs) fmt::print("  {:>16}", fmt::format("run {}", r.id));
  fmt::print("\n");
  auto row = [&](const std::string& label, auto value_of) {
    fmt::print("{:34}", label);
    for (std::size_t i = 0; i < runs.size(); ++i) fmt::print("  {:>16}", shorten(value_of(i), 16));
    fmt::print("\n");
  };
  row("status", [&](std::size_t i) { return std::string(run_status_name(runs[i].status)); });
  row("corpus", [&](std::size_t i) { return fs::path(runs[i].corpus_path).filename().string(); });
  row("direction", [&](std::size_t i) { return runs[i].direction; });
  row("steps", [&](std::size_t i) { return std::to_string(runs[i].steps); });
  row("best BLEU", [&](std::size_t i) { return bleu_text(runs[i]); });
  for (const char* metric : {"chrf", "dev_loss"}) {
    row(std::string("last ") + metric, [&](std::size_t i) {
      const auto points = store.metric(runs[i].id, metric);
      return points.empty() ? std::string("-") : fmt::format("{:.3f}", points.back().value);
    });
  }
  fmt::print("config differences:\n");
  bool any = false;
  for (const auto& key : keys) {
    std::set<std::string> values;
    for (const auto& f : flat) values.insert(f.count(key) ? f.at(key) : "-");
    if (values.size() < 2) continue;
    any = true;
    row("  " + key, [&](std::size_t i) { return flat[i].count(key) ? flat[i].at(key) : std::string("-"); });
  }
  if (!any) fmt::print("  (none)\n");
  return 0;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

int export_run(RunStore& store, std::int64_t id, const std::string& format, const std::string& out_path) {
  const auto run = require(store, id);
  std::ofstream file;
  if (!out_path.empty()) {
    file.open(out_path);
    if (!file) throw std::runtime_error(out_path + ": cannot write");
  }
  std::ostream& out = out_path.empty() ? std::cout : file;
  const auto metrics = store.all_metrics(id);
  if (format == "csv") {
    out << "run_id,step,metric,value,time_s\n";
    for (const auto& m : metrics)
      out << fmt::format("{},{},{},{},{:.3f}\n", id, m.step, csv_field(m.name), m.value, m.time);
    return 0;
  }
  nlohmann::json j = {{"id", run.id},
                      {"name", run.name},
                      {"kind", run_kind_name(run.kind)},
                      {"status", run_status_name(run.status)},
                      {"corpus", run.corpus_path},
                      {"direction", run.direction},
                      {"config", run.config}};
  for (const auto& m : metrics)
    j["metrics"][m.name].push_back({{"step", m.step}, {"value", m.value}, {"time", m.time}});
  for (const auto& s : store.samples(id))
    j["samples"].push_back(
        {{"step", s.step}, {"source", s.source}, {"reference", s.reference}, {"hypothesis", s.hypothesis}});
  for (const auto& c : store.checkpoints(id))
    j["checkpoints"].push_back({{"step", c.step}, {"kind", c.kind}, {"path", c.path}, {"sha256", c.sha256}});
  for (const auto& p : store.probes(id)) j["probes"].push_back({{"step", p.step}, {"probe", p.probe}});
  out << j.dump(2) << "\n";
  return 0;
}

int delete_run(RunStore& store, std::int64_t id, bool yes) {
  const auto run = require(store, id);
  if (!yes) {
    if (!::isatty(STDIN_FILENO)) throw std::invalid_argument("refusing to delete without confirmation: pass --yes");
    fmt::print("delete run {} \"{}\" and its history (checkpoint files stay on disk)? [y/N] ", run.id, run.name);
    std::fflush(stdout);
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      fmt::print("kept\n");
      return 1;
    }
  }
  store.delete_run(id);
  fmt::print("deleted run {}\n", id);
  return 0;
}

int check_store(RunStore& store) {
  const auto integrity = store.integrity_check();
  fmt::print("{}: integrity {}\n", store.path(), integrity);
  for (const auto& run : store.list_runs()) {
    std::map<std::string, std::string> latest;  // path -> state of the newest registration
    for (const auto& c : store.checkpoints(run.id)) latest[c.path] = checkpoint_state(c);
    for (const auto& [path, state] : latest) fmt::print("  run {:>4}  {:8}  {}\n", run.id, state, path);
  }
  return integrity == "ok" ? 0 : 1;
}

// The model of a run in the history, named for the report.
ModelToCompare run_model(const RunStore& store, std::int64_t id) {
  const auto run = store.find_run(id);
  if (!run) throw std::invalid_argument(fmt::format("runs report: there is no run {} in {}", id, store.path()));
  if (run->out_dir.empty()) throw std::invalid_argument(fmt::format("runs report: run {} has no run directory", id));
  return {run->name.empty() ? fmt::format("run {}", id) : fmt::format("run {} ({})", id, run->name),
          model_of_path(run->out_dir)};
}

int write_report(RunStore& store, std::int64_t id, std::string out, const RunsArgs& args) {
  ReportOptions options;
  options.version = version_string();
  CompareInput input;
  Comparison comparison;
  if (args.test || !args.compare_with.empty()) {
    configure_threads(args.threads);
    std::vector<ModelToCompare> models{run_model(store, id)};
    for (const auto other : args.compare_with) models.push_back(run_model(store, other));
    input = compare_input_from_models(models, print_compare_progress());
    comparison = compare_systems(input);
    options.test_input = &input;
    options.test_comparison = &comparison;
  }
  const auto html = html_report(store, id, options);
  if (out.empty()) out = fmt::format("run-{}.html", id);
  write_file_atomically(out, html);  // throws FileWriteError naming the file
  fmt::print("report of run {} written to {} ({} KB)\n", id, out, (html.size() + 1023) / 1024);
  return 0;
}

}  // namespace

RunsCommands::RunsCommands(CLI::App& app) {
  runs_ = app.add_subcommand("runs", "The recorded run history (SQLite)");
  runs_->require_subcommand(1);
  runs_->add_option("--db", args_.db, "Run database (default: " + RunStore::default_path() + ")");
  list_ = runs_->add_subcommand("list", "One line per run");
  show_ = runs_->add_subcommand("show", "Config, metrics summary and checkpoints of a run");
  show_->add_option("id", args_.id, "Run id")->required();
  compare_ = runs_->add_subcommand("compare", "Best metrics and config differences side by side");
  compare_->add_option("ids", args_.ids, "Two or more run ids")->required()->expected(2, 64);
  export_ = runs_->add_subcommand("export", "Metrics as CSV, or the whole run as JSON");
  export_->add_option("id", args_.id, "Run id")->required();
  auto* csv = export_->add_flag_callback(
      "--csv", [this] { args_.format = "csv"; }, "CSV: run_id,step,metric,value,time_s");
  export_
      ->add_flag_callback(
          "--json", [this] { args_.format = "json"; }, "JSON with metrics, samples, checkpoints and probe attention")
      ->excludes(csv);
  export_->add_option("-o,--output", args_.out, "Write to this file instead of stdout");
  delete_ = runs_->add_subcommand("delete", "Delete a run's history (asks first)");
  delete_->add_option("id", args_.id, "Run id")->required();
  delete_->add_flag("-y,--yes", args_.yes, "Do not ask");
  rename_ = runs_->add_subcommand("rename", "Rename a run");
  rename_->add_option("id", args_.id, "Run id")->required();
  rename_->add_option("name", args_.name, "New name")->required();
  tag_ = runs_->add_subcommand("tag", "Tag a run (or remove a tag with --remove)");
  tag_->add_option("id", args_.id, "Run id")->required();
  tag_->add_option("tag", args_.tag, "Tag")->required();
  tag_->add_flag("--remove", args_.remove, "Remove the tag instead");
  report_ = runs_->add_subcommand("report",
                                  "A self-contained HTML report of a run: config, curves, BLEU/chrF, "
                                  "sample translations and attention, to share");
  report_->add_option("id", args_.id, "Run id")->required();
  report_->add_option("-o,--output", args_.out, "The HTML file to write (default: run-<id>.html)");
  report_->add_flag(
      "--test", args_.test,
      "Translate the run's held-out test pairs with its model and add a Test set section: scores with 95% "
      "intervals, word accuracy, sentence buckets, confidence against score, the worst sentences");
  report_->add_option("--compare", args_.compare_with,
                      "Another run to compare with on the same test pairs (repeat; implies --test): p-values, n-grams "
                      "and sentences where each does better");
  report_->add_option("--threads", args_.threads, "CPU threads for translating (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  check_ = runs_->add_subcommand("check", "SQLite integrity check and the state of every checkpoint file");
  for (auto* sub : {list_, show_, compare_, export_, delete_, rename_, tag_, check_, report_})
    sub->add_option("--db", args_.db, "Run database (default: " + RunStore::default_path() + ")");
}

bool RunsCommands::chosen() const { return runs_->parsed(); }

int RunsCommands::dispatch() {
  RunStore store(args_.db.empty() ? RunStore::default_path() : args_.db);
  // This process writes the history (rename, tag, delete), so it closes the runs whose training
  // process died before it reads: `runs list` then shows them as interrupted, or recovered.
  try {
    store.mark_interrupted_runs();
  } catch (const StoreError& e) {
    fmt::print(stderr, "warning: {}\n", e.what());  // the history can still be read
  }
  const auto first = args_.id;
  if (list_->parsed()) return list_runs(store);
  if (check_->parsed()) return check_store(store);
  if (show_->parsed()) return show_run(store, first);
  if (compare_->parsed()) return compare_runs(store, args_.ids);
  if (export_->parsed()) return export_run(store, first, args_.format, args_.out);
  if (delete_->parsed()) return delete_run(store, first, args_.yes);
  if (report_->parsed()) return write_report(store, first, args_.out, args_);
  if (rename_->parsed()) {
    store.rename_run(first, args_.name);
    fmt::print("run {} renamed to \"{}\"\n", first, args_.name);
    return 0;
  }
  if (args_.remove) {
    store.remove_tag(first, args_.tag);
  } else {
    store.add_tag(first, args_.tag);
  }
  fmt::print("run {} {} tag \"{}\"\n", first, args_.remove ? "lost" : "has", args_.tag);
  return 0;
}

}  // namespace ts::cli
