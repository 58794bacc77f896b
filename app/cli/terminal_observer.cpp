// SPDX-License-Identifier: GPL-3.0-or-later
// Terminal rendering of training progress (see terminal_observer.h).
#include "terminal_observer.h"

#include <unistd.h>

#include <cmath>

#include <fmt/format.h>

namespace ts::cli {

std::string format_duration(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds)) return "?";
  const auto s = static_cast<long>(std::lround(seconds));
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

TerminalObserver::TerminalObserver(std::FILE* out) : out_(out), tty_(::isatty(::fileno(out)) != 0) {}

void TerminalObserver::clear_line() {
  if (bar_shown_) {
    std::fputs("\r\033[2K", out_);
    bar_shown_ = false;
  }
}

void TerminalObserver::on_start(const TrainingStart& s) {
  clear_line();
  fmt::print(
      out_,
      "model: {:.2f} M parameters on {} ({} thread{}); {} train / {} dev / {} test pairs; {} batches per epoch{}\n",
      s.parameters / 1e6, s.device, s.threads, s.threads == 1 ? "" : "s", s.train_pairs, s.dev_pairs, s.test_pairs,
      s.batches_per_epoch, s.start_step > 0 ? fmt::format("; resuming at step {}", s.start_step) : "");
  std::fflush(out_);
}

void TerminalObserver::on_step(const TrainingProgress& p) {
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  if (since < (tty_ ? 0.1 : 10.0)) return;
  last_draw_ = now;
  std::string bar;
  if (p.fraction >= 0) {
    const int width = 24, filled = static_cast<int>(p.fraction * width);
    bar = fmt::format("[{}{}] {:3.0f}% ", std::string(filled, '#'), std::string(width - filled, '.'), p.fraction * 100);
  }
  const std::string line =
      fmt::format("{}step {} | epoch {} ({}/{}) | loss {:.3f} (avg {:.3f}) | lr {:.2e} | {:.0f} tok/s | {} elapsed{}",
                  bar, p.step, p.epoch + 1, p.batch_in_epoch, p.batches_per_epoch, p.loss, p.smoothed_loss, p.lr,
                  p.tokens_per_s, format_duration(p.elapsed_s),
                  p.budget_left_s >= 0 ? " | " + format_duration(p.budget_left_s) + " left in the budget"
                  : p.eta_s >= 0       ? " | ETA " + format_duration(p.eta_s)
                                       : "");
  if (tty_) {
    fmt::print(out_, "\r\033[2K{}", line);
    bar_shown_ = true;
  } else {
    fmt::print(out_, "{}\n", line);
  }
  std::fflush(out_);
}

void TerminalObserver::on_validation(const ValidationResult& v) {
  clear_line();
  if (!v.scored) {
    fmt::print(
        out_,
        "checkpoint at step {}: no dev pairs to validate on (data.dev = 0), so best.ckpt follows the latest weights\n",
        v.step);
    std::fflush(out_);
    return;
  }
  fmt::print(
      out_,
      "validation at step {}: dev loss {:.3f} | ppl {:.2f} | BLEU {:.2f} | chrF {:.2f} on {} sentences{} ({:.1f} s)\n",
      v.step, v.loss, v.perplexity, v.bleu, v.chrf, v.sentences, v.improved ? " | new best" : "", v.seconds);
  for (const auto& s : v.samples)
    fmt::print(out_, "  src: {}\n  ref: {}\n  out: {}\n", s.source, s.reference, s.hypothesis);
  std::fflush(out_);
}

void TerminalObserver::on_checkpoint(const CheckpointEvent& c) {
  if (c.kind == CheckpointKind::kLast) return;  // written at every validation: not worth a line
  clear_line();
  fmt::print(out_, "checkpoint ({}) written: {}\n", checkpoint_kind_name(c.kind), c.path);
  std::fflush(out_);
}

void TerminalObserver::on_log(const std::string& line) {
  clear_line();
  fmt::print(out_, "{}\n", line);
  std::fflush(out_);
}

void TerminalObserver::on_finished(const TrainingSummary& s) {
  clear_line();
  fmt::print(out_, "{}: {} after {} steps, {} of training, {:.0f} tok/s on average", run_status_name(s.status),
             s.message, s.steps, format_duration(s.seconds), s.average_tokens_per_s);
  if (s.model_flops_per_s > 0)
    fmt::print(out_, ", {:.1f} GFLOP/s in the model's matrix products", s.model_flops_per_s / 1e9);
  fmt::print(out_, "\n");
  if (s.validated)
    fmt::print(out_, "last validation: BLEU {:.2f}, chrF {:.2f}, dev loss {:.3f}\n", s.last_validation.bleu,
               s.last_validation.chrf, s.last_validation.loss);
  if (!s.best_checkpoint.empty()) fmt::print(out_, "best checkpoint: {}\n", s.best_checkpoint);
  if (!s.last_checkpoint.empty()) fmt::print(out_, "last checkpoint: {}\n", s.last_checkpoint);
  std::fflush(out_);
}

}  // namespace ts::cli
