// SPDX-License-Identifier: GPL-3.0-or-later
// lm-train and lm-generate (see lm_commands.h).
#include "lm_commands.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "ts/infer/file_translation.h"
#include "ts/lm/generate.h"
#include "ts/lm/lm_session.h"
#include "ts/lm/lm_trainer.h"
#include "ts/train/model_export.h"
#include "ts/model/errors.h"
#include "ts/store/run_store.h"
#include "ts/train/run_recorder.h"
#include "ts/train/trainer.h"

namespace fs = std::filesystem;

namespace ts::cli {
namespace {

std::atomic<bool> g_lm_stop{false};

void on_lm_sigint(int) {
  if (g_lm_stop.exchange(true)) std::_Exit(130);  // second Ctrl-C: leave at once
  static const char msg[] = "\nstopping after the current step and writing a checkpoint (Ctrl-C again to quit now)\n";
  (void)!::write(2, msg, sizeof msg - 1);
}

// One line per estimate, a line every few seconds of steps, checkpoints and the end.
class LmTerminalObserver : public SessionObserver {
 public:
  LmTrainingSession* session = nullptr;  // for the text's bigram baseline, once its trainer exists

  void on_start(const TrainingStart& s) override {
    const auto& data = session->trainer()->data();
    baseline_ = bigram_cross_entropy(data.train, data.val, static_cast<std::int64_t>(data.codec.vocab().size()), 1.0);
    fmt::print(stderr, "{} parameters on {} ({} threads){}\n", s.parameters, s.device, s.threads,
               s.start_step > 0 ? fmt::format(", resuming at step {}", s.start_step) : "");
    last_ = std::chrono::steady_clock::now();
  }
  void on_step(const TrainingProgress& p) override {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds(5)) return;
    last_ = now;
    fmt::print(stderr, "  step {}: loss {:.4f} ({:.0f} tok/s)\n", p.step, p.smoothed_loss, p.tokens_per_s);
  }
  void on_validation(const ValidationResult& v) override {
    fmt::print(stderr, "step {}: train loss {:.4f}, val loss {:.4f} (bigram baseline {:.4f}){}\n", v.step, v.train_loss,
               v.loss, baseline_, v.improved ? " *" : "");
  }
  void on_checkpoint(const CheckpointEvent& c) override {
    if (c.kind == CheckpointKind::kBest) fmt::print(stderr, "  best checkpoint: {}\n", c.path);
  }
  void on_log(const std::string& line) override { fmt::print(stderr, "{}\n", line); }
  void on_finished(const TrainingSummary& s) override {
    fmt::print(stderr, "{}: {} after {} steps, {:.0f} tok/s on average\n", run_status_name(s.status), s.message,
               s.steps, s.average_tokens_per_s);
    if (!s.last_checkpoint.empty()) fmt::print(stderr, "last checkpoint: {}\n", s.last_checkpoint);
  }

 private:
  double baseline_ = 0;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace

LmCommands::LmCommands(CLI::App& app) {
  train_ = app.add_subcommand("lm-train", "Train a character-level language model (bigram or GPT) on a text file");
  train_->add_option("--text", args_.text, "UTF-8 text file (e.g. the tiny Shakespeare input.txt)");
  std::string presets;
  for (const auto& n : lm_preset_names()) presets += (presets.empty() ? "" : ", ") + n;
  train_->add_option("--preset", args_.preset, "Preset: " + presets)->check(CLI::IsMember(lm_preset_names()));
  train_->add_option("--max-steps", args_.max_steps, "Stop after this many steps")->check(CLI::NonNegativeNumber);
  train_->add_option("--max-minutes", args_.max_minutes, "Stop after this many minutes of training")
      ->check(CLI::NonNegativeNumber);
  train_->add_option("--out", args_.out, "Run directory for last.ckpt, best.ckpt and config.json");
  train_->add_option("--db", args_.db, "Run history database (default: " + RunStore::default_path() + ")");
  train_->add_option("--name", args_.name, "Name of the run in the history");
  train_->add_flag("--no-history", args_.no_history, "Do not record this run in the history");
  train_
      ->add_option("--history-wait", args_.history_wait,
                   "Seconds a locked or unwritable run history may refuse writes before training stops cleanly, and "
                   "that the end of the run waits for it before leaving its last rows in a recovery file (default 120)")
      ->check(CLI::NonNegativeNumber);
  train_->add_option("--resume", args_.resume, "Continue a run: its directory or a checkpoint");
  train_->add_option("--threads", args_.threads, "CPU threads (default: all cores)")->check(CLI::NonNegativeNumber);
  train_->add_option("--device", args_.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  train_->add_option("--set", args_.sets, "Override a config key: --set n_layer=6 (repeatable)");

  generate_ = app.add_subcommand("lm-generate", "Generate text from a language-model checkpoint, streamed to stdout");
  generate_->add_option("--checkpoint", args_.checkpoint, "A checkpoint written by lm-train")->required();
  generate_->add_option("--prompt", args_.prompt, "Text to continue (empty: start from a newline)");
  generate_->add_option("--length", args_.length, "Tokens to generate")->check(CLI::NonNegativeNumber);
  generate_->add_option("--temperature", args_.temperature, "Sampling temperature (0 = greedy)")
      ->check(CLI::NonNegativeNumber);
  generate_->add_option("--top-k", args_.top_k, "Sample from the k most likely tokens (0 = all)")
      ->check(CLI::NonNegativeNumber);
  generate_->add_option("--top-p", args_.top_p, "Sample from the smallest set reaching this probability (1 = all)")
      ->check(CLI::Range(0.0, 1.0));
  generate_->add_option("--seed", args_.seed, "Sampling seed: the same seed gives the same text");
  generate_->add_option("--device", args_.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  generate_->add_option("--threads", args_.threads, "CPU threads (default: all cores)")->check(CLI::NonNegativeNumber);
}

bool LmCommands::chosen() const { return train_->parsed() || generate_->parsed(); }

int LmCommands::dispatch() { return train_->parsed() ? train() : generate(); }

int LmCommands::train() {
  auto& a = args_;
  LmSessionRequest request;
  // Checked first, so that a bad option never leaves a half-made run directory behind.
  try {
    if (!a.resume.empty()) {
      request.resume_checkpoint = checkpoint_of(a.resume);  // an exported model folder is refused by name later
      request.config = read_lm_checkpoint_meta(request.resume_checkpoint).config;
      if (a.out == "runs/lm") a.out = fs::path(request.resume_checkpoint).parent_path().string();
      request.text_path = a.text;  // "": the checkpoint's
    } else {
      if (a.text.empty()) throw std::invalid_argument("lm-train: --text FILE is required (or --resume)");
      request.config = lm_preset(a.preset);
      request.text_path = fs::absolute(a.text).string();
    }
    for (const auto& s : a.sets) request.config.set(s);
    if (a.max_steps >= 0) request.config.max_steps = a.max_steps;
    if (a.max_minutes >= 0) request.config.max_minutes = a.max_minutes;
    if (a.threads >= 0) request.config.threads = a.threads;
    if (!a.device.empty()) request.config.device = parse_device_choice(a.device);
    request.config.validate();
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", error_message(e));
    return 2;
  }
  request.out_dir = a.out;
  request.record = !a.no_history;
  request.history_db = a.db;
  request.run_name = a.name;
  request.history_wait_seconds = a.history_wait;
  request.stop = &g_lm_stop;
  LmTerminalObserver observer;
  LmTrainingSession session(std::move(request), &observer);
  observer.session = &session;
  std::signal(SIGINT, on_lm_sigint);
  std::signal(SIGTERM, on_lm_sigint);
  TrainingSummary summary;
  try {
    summary = session.run();
  } catch (const std::exception& e) {  // the text or the checkpoint could not be used: nothing was trained
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    fmt::print(stderr, "error: {}\n", error_message(e));
    return 2;
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  return summary.status == RunStatus::kFailed ? 1 : 0;
}

int LmCommands::generate() {
  auto& a = args_;
  const auto device = resolve_device(a.device.empty() ? DeviceChoice::kAuto : parse_device_choice(a.device));
  configure_threads(a.threads >= 0 ? a.threads : 0);
  auto loaded = load_lm_checkpoint(a.checkpoint, device);
  GenerateOptions options;
  options.length = a.length;
  options.temperature = a.temperature;
  options.top_k = a.top_k;
  options.top_p = a.top_p;
  options.seed = a.seed;
  bool prompt_shown = false;  // the prompt is echoed once generation has accepted it
  const auto show_prompt = [&] {
    if (!prompt_shown) std::fputs(a.prompt.c_str(), stdout);
    prompt_shown = true;
  };
  generate_text(loaded.model, loaded.meta.codec, a.prompt, options, [&](const std::string& piece) {
    show_prompt();
    std::fputs(piece.c_str(), stdout);
    std::fflush(stdout);  // streamed: each token appears as soon as it is chosen
  });
  show_prompt();
  std::fputs("\n", stdout);
  return 0;
}

}  // namespace ts::cli
