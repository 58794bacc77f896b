// SPDX-License-Identifier: GPL-3.0-or-later
// Recovery files for the run history (see ts/store/recovery.h).
#include "ts/store/recovery.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ts/store/atomic_file.h"

namespace ts {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "transformer-studio run-history recovery";
constexpr int kVersion = 1;

json to_json(const StoreBatch& b) {
  json metrics = json::array(), samples = json::array(), checkpoints = json::array(), probes = json::array();
  for (const auto& m : b.metrics) metrics.push_back({m.step, m.name, m.value, m.time});
  for (const auto& s : b.samples) samples.push_back({s.step, s.index, s.source, s.reference, s.hypothesis});
  for (const auto& c : b.checkpoints)
    checkpoints.push_back({{"step", c.step},
                           {"kind", c.kind},
                           {"path", c.path},
                           {"sha256", c.sha256},
                           {"bytes", c.bytes},
                           {"metrics", c.metrics},
                           {"created_at", c.created_at}});
  for (const auto& p : b.probes) probes.push_back({{"step", p.step}, {"probe", p.probe}});
  json j{{"metrics", metrics}, {"samples", samples}, {"checkpoints", checkpoints}, {"probes", probes}};
  j["steps"] = b.steps ? json(*b.steps) : json();
  j["best_bleu"] = b.best_bleu ? json(*b.best_bleu) : json();
  j["device"] = b.device;
  j["end"] = b.end ? json{{"status", run_status_name(b.end->status)},
                          {"message", b.end->message},
                          {"steps", b.end->steps},
                          {"ended_at", b.end->ended_at}}
                   : json();
  return j;
}

// Reads field `key` of `j` as T, naming the field when it is missing or of the wrong type.
template <class T>
T field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw std::runtime_error(where + ": missing field \"" + key + "\"");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::runtime_error(where + ": field \"" + key + "\" has the wrong type");
  }
}

const json& array_field(const json& j, const char* key) {
  if (!j.contains(key) || !j.at(key).is_array())
    throw std::runtime_error(std::string("field \"") + key + "\" is not a list");
  return j.at(key);
}

StoreBatch from_json(const json& j, std::int64_t run_id) {
  StoreBatch b;
  b.run_id = run_id;
  std::size_t i = 0;
  for (const auto& m : array_field(j, "metrics")) {
    const auto where = "metrics[" + std::to_string(i++) + "]";
    if (!m.is_array() || m.size() != 4 || !m[0].is_number_integer() || !m[1].is_string() || !m[2].is_number() ||
        !m[3].is_number())
      throw std::runtime_error(where + ": expected [step, name, value, time]");
    b.metrics.push_back(
        {run_id, m[0].get<std::int64_t>(), m[1].get<std::string>(), m[2].get<double>(), m[3].get<double>()});
  }
  i = 0;
  for (const auto& s : array_field(j, "samples")) {
    const auto where = "samples[" + std::to_string(i++) + "]";
    if (!s.is_array() || s.size() != 5 || !s[0].is_number_integer() || !s[1].is_number_integer() || !s[2].is_string() ||
        !s[3].is_string() || !s[4].is_string())
      throw std::runtime_error(where + ": expected [step, index, source, reference, hypothesis]");
    b.samples.push_back({run_id, s[0].get<std::int64_t>(), s[1].get<int>(), s[2].get<std::string>(),
                         s[3].get<std::string>(), s[4].get<std::string>()});
  }
  i = 0;
  for (const auto& c : array_field(j, "checkpoints")) {
    const auto where = "checkpoints[" + std::to_string(i++) + "]";
    CheckpointRow row;
    row.run_id = run_id;
    row.step = field<std::int64_t>(c, "step", where);
    row.kind = field<std::string>(c, "kind", where);
    row.path = field<std::string>(c, "path", where);
    row.sha256 = field<std::string>(c, "sha256", where);
    row.bytes = field<std::int64_t>(c, "bytes", where);
    row.metrics = c.is_object() && c.contains("metrics") ? c.at("metrics") : json();
    row.created_at = field<std::string>(c, "created_at", where);
    b.checkpoints.push_back(std::move(row));
  }
  i = 0;
  for (const auto& p : array_field(j, "probes")) {
    const auto where = "probes[" + std::to_string(i++) + "]";
    b.probes.push_back(
        {run_id, field<std::int64_t>(p, "step", where), p.is_object() && p.contains("probe") ? p.at("probe") : json()});
  }
  if (j.contains("steps") && !j.at("steps").is_null()) b.steps = field<std::int64_t>(j, "steps", "the file");
  if (j.contains("best_bleu") && !j.at("best_bleu").is_null()) b.best_bleu = field<double>(j, "best_bleu", "the file");
  if (j.contains("device")) b.device = field<std::string>(j, "device", "the file");
  if (j.contains("end") && !j.at("end").is_null()) {
    const auto& e = j.at("end");
    RunEnd end;
    const auto status = field<std::string>(e, "status", "end");
    end.message = field<std::string>(e, "message", "end");
    end.steps = field<std::int64_t>(e, "steps", "end");
    end.ended_at = field<std::string>(e, "ended_at", "end");
    const auto parsed = parse_run_status(status);
    if (!parsed || !is_end_status(*parsed)) throw std::runtime_error("end: unknown status \"" + status + "\"");
    end.status = *parsed;
    b.end = std::move(end);
  }
  return b;
}

}  // namespace

void write_recovery_file(const std::string& path, const RecoveryFile& file) {
  json j{{"format", kFormat},
         {"version", kVersion},
         {"database", file.database},
         {"run_id", file.run_id},
         {"run_started_at", file.run_started_at},
         {"written_at", file.written_at},
         {"reason", file.reason},
         {"history", to_json(file.batch)}};
  // Invalid UTF-8 in a sample (a model's output can hold anything) is replaced, never fatal.
  write_file_atomically(path, j.dump(1, ' ', false, json::error_handler_t::replace) + "\n");
}

RecoveryFile read_recovery_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StoreError(path + ": cannot read the recovery file");
  std::stringstream text;
  text << in.rdbuf();
  const auto j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw StoreError(path + ": not a recovery file (not a JSON object)");
  try {
    if (!j.contains("format") || j.at("format") != kFormat)
      throw std::runtime_error("not a Transformer Studio recovery file");
    if (field<int>(j, "version", "the file") != kVersion)
      throw std::runtime_error("version " + j.at("version").dump() + " is not one this program reads");
    RecoveryFile file;
    file.database = field<std::string>(j, "database", "the file");
    file.run_id = field<std::int64_t>(j, "run_id", "the file");
    file.run_started_at = field<std::string>(j, "run_started_at", "the file");
    file.written_at = field<std::string>(j, "written_at", "the file");
    file.reason = field<std::string>(j, "reason", "the file");
    if (!j.contains("history") || !j.at("history").is_object()) throw std::runtime_error("missing field \"history\"");
    file.batch = from_json(j.at("history"), file.run_id);
    return file;
  } catch (const std::runtime_error& e) {
    throw StoreError(path + ": " + e.what());
  }
}

}  // namespace ts
