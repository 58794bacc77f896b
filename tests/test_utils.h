// SPDX-License-Identifier: GPL-3.0-or-later
// Shared helpers for core tests: tiny corpora and configs, tensor comparisons.
#pragma once

#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "temp_dir.h"
#include "ts/text/corpus.h"
#include "ts/train/config.h"
#include "ts/train/data.h"
#include "ts/train/events.h"

namespace ts::test {

/// A small German-English corpus of distinct pairs (English first, as in the Anki files).
inline Corpus tiny_corpus() {
  Corpus c;
  c.path = "tiny-deu.txt";
  c.other = {"de", "German"};
  c.pairs = {{"I see the dog.", "Ich sehe den Hund."},     {"You see the cat.", "Du siehst die Katze."},
             {"He sees the house.", "Er sieht das Haus."}, {"We see the dog.", "Wir sehen den Hund."},
             {"I have a cat.", "Ich habe eine Katze."},    {"She has a house.", "Sie hat ein Haus."},
             {"The dog sleeps.", "Der Hund schläft."},     {"The cat sleeps.", "Die Katze schläft."}};
  c.stats.lines = c.pairs.size();
  return c;
}

/// The tiny preset, with a given number of dev/test pairs.
inline ExperimentConfig tiny_config(double dev = 0, double test = 0) {
  auto c = preset("tiny");
  c.data.dev = dev;
  c.data.test = test;
  return c;
}

inline PreparedData tiny_data(const ExperimentConfig& config, const std::string& direction = "de-en") {
  const auto corpus = tiny_corpus();
  return prepare_data(corpus, parse_direction(direction, corpus), config.data);
}

/// Keeps what a trainer reports: step losses, validations, checkpoints, log lines, finishes.
struct RecordingObserver : TrainingObserver {
  std::vector<double> losses;
  std::vector<ValidationResult> validations;
  std::vector<CheckpointEvent> checkpoints;
  std::vector<std::string> logs;
  int finished = 0;
  void on_step(const TrainingProgress& p) override { losses.push_back(p.loss); }
  void on_validation(const ValidationResult& v) override { validations.push_back(v); }
  void on_checkpoint(const CheckpointEvent& c) override { checkpoints.push_back(c); }
  void on_log(const std::string& line) override { logs.push_back(line); }
  void on_finished(const TrainingSummary&) override { ++finished; }
};

/// What `f` throws: the message of an `E`, "not a <E>: ..." for another exception, "no error".
template <class E>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not the expected error type: ") + e.what();
  }
  return "no error";
}

inline bool tensors_near(const at::Tensor& a, const at::Tensor& b, double atol = 1e-5) {
  return a.sizes() == b.sizes() && at::allclose(a.to(at::kFloat), b.to(at::kFloat), 1e-4, atol);
}

}  // namespace ts::test
