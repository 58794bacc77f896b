// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio-cli: train, translate, evaluate and score from the command line.
// Flag names are a contract shared with scripts and the desktop app.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli_main.h"
#include "help_commands.h"
#include "lm_commands.h"
#include "compare_commands.h"
#include "text_lines.h"
#include "model_commands.h"
#include "runs_commands.h"
#include "terminal_observer.h"
#include "ts/decode/shortlist.h"
#include "ts/decode/translator.h"
#include "ts/host/process.h"
#include "ts/infer/file_translation.h"
#include "ts/infer/translator_file.h"
#include "ts/licence.h"
#include "ts/metrics/bleu.h"
#include "ts/model/errors.h"
#include "ts/text/demo_corpus.h"
#include "ts/text/files.h"
#include "ts/text/line_stream.h"
#include "ts/store/run_store.h"
#include "ts/store/sha256.h"
#include "ts/train/distributed.h"
#include "ts/train/environment.h"
#include "ts/train/model_export.h"
#include "ts/train/run_recorder.h"
#include "ts/train/session.h"
#include "ts/train/trainer.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmath>

namespace fs = std::filesystem;
using namespace ts;
using ts::cli::TerminalObserver;

namespace {

std::atomic<bool> g_stop{false};
bool g_quiet_signals = false;     // data-parallel ranks other than 0: rank 0 says it once
std::vector<std::string> g_args;  // the command line, for --nproc to start the other ranks
double g_command_start = -1;      // when this process started: a --budget counts from here

void on_sigint(int) {
  if (g_stop.exchange(true)) std::_Exit(130);  // second Ctrl-C: leave at once
  static const char msg[] = "\nstopping after the current step and writing a checkpoint (Ctrl-C again to quit now)\n";
  if (!g_quiet_signals) (void)!::write(2, msg, sizeof msg - 1);
}

// A data-parallel rank writing to the socket of a rank that has died (Gloo's sends, the rendezvous
// store's replies) gets SIGPIPE, whose default action ended it silently, so that nothing named the
// dead rank (seen once in about 60 kills on LibTorch 2.6). Caught, the write fails with EPIPE and the
// collective throws. A closed standard output or error (`train ... 2>&1 | head`) still ends the
// process as the signal always did: a pipe whose reader has gone polls as an error.
void on_sigpipe(int) {
  pollfd ours[2] = {{1, POLLOUT, 0}, {2, POLLOUT, 0}};
  if (::poll(ours, 2, 0) > 0 && ((ours[0].revents | ours[1].revents) & POLLERR)) {
    std::signal(SIGPIPE, SIG_DFL);
    ::raise(SIGPIPE);  // delivered, with the default action, once this handler returns
  }
}
void catch_sigpipe_from_sockets() {
  struct sigaction action {};
  action.sa_handler = on_sigpipe;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGPIPE, &action, nullptr);
}

struct TrainArgs {
  std::string corpus, direction, preset = "auto", config_file, out, resume, device, precision;
  std::string budget;    // --budget: "20", "20m", "1h30m" (empty = the preset's own)
  std::string db, name;  // run history
  bool no_history = false;
  double history_wait = ts::RecorderOptions{}.give_up_seconds;
  std::vector<std::string> sets;
  std::optional<std::string> probe;
  int max_steps = -1, threads = -1, extra_steps = -1;
  double max_minutes = -1;
  double machine_speed = 0;  // --machine-speed: the auto recipe sized by this, not by a timing (0 = timed)
  // Data-parallel: --nproc on one machine, or --world-size/--rank per process (several machines).
  int nproc = 1, world_size = -1, rank = -1, master_port = -1;
  std::string master_addr;
  std::string parallel_check;  // hidden: each rank appends the SHA-256 of its final weights here
};

// Ranks other than 0 report nothing but their failure.
struct QuietObserver : SessionObserver {
  int rank = 0;
  void on_finished(const TrainingSummary& s) override {
    if (s.status == RunStatus::kFailed) fmt::print(stderr, "rank {}: training failed: {}\n", rank, s.message);
  }
};

// SHA-256 over every parameter's bytes, in order: equal digests mean bit-identical weights.
std::string parameters_sha256(Transformer& model) {
  std::string bytes;
  for (const auto& p : model->parameters()) {
    const auto t = p.detach().to(at::kCPU).contiguous();
    bytes.append(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
  }
  return sha256_hex(bytes);
}

// One line per rank, appended with a single write so that ranks finishing together do not mix.
void append_parallel_check(const std::string& file, int rank, int world_size, std::int64_t step,
                           const std::string& sha) {
  const auto line = fmt::format("rank {} of {} step {} sha256 {}\n", rank, world_size, step, sha);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0 || ::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    fmt::print(stderr, "rank {}: cannot write --parallel-check {}\n", rank, file);
  if (fd >= 0) ::close(fd);
}

void apply_overrides(ExperimentConfig& config, const TrainArgs& a) {
  for (const auto& s : a.sets) config.set(s);
  if (a.max_steps >= 0) config.train.max_steps = a.max_steps;
  if (a.max_minutes >= 0) config.train.max_minutes = a.max_minutes;
  if (!a.budget.empty())
    config.train.budget_minutes = a.budget == "0" || a.budget == "none" ? 0 : parse_budget_minutes(a.budget);
  if (!a.device.empty()) config.train.device = parse_device_choice(a.device);
  if (a.threads >= 0) config.train.threads = a.threads;
  if (!a.precision.empty()) config.train.precision = parse_precision(a.precision);
  if (a.probe) config.train.probe = *a.probe;
  config.validate();
}

// One rank's (or the only process's) training session: the pipeline is core's (ts/train/session.h);
// this renders it. `distributed` (world size > 1): only rank 0 prints, writes the run directory and
// records the history.
int run_training(SessionRequest request, const TrainArgs& args) {
  TerminalObserver terminal;
  QuietObserver quiet;
  const bool root = !request.distributed || request.distributed->rank == 0;
  quiet.rank = request.distributed ? request.distributed->rank : 0;
  const int world_size = request.distributed ? request.distributed->world_size : 1;
  request.record = !args.no_history;
  request.history_db = args.db;
  request.run_name = args.name;
  request.history_wait_seconds = args.history_wait;
  request.stop = &g_stop;
  request.ranks_on_this_machine = args.nproc > 1;
  request.budget_start = g_command_start;
  TrainingSession session(std::move(request), root ? static_cast<SessionObserver*>(&terminal) : &quiet);
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_sigint);
  const auto summary = session.run();
  std::signal(SIGINT, SIG_DFL);
  if (!args.parallel_check.empty())
    append_parallel_check(args.parallel_check, quiet.rank, world_size, summary.steps,
                          parameters_sha256(session.trainer()->model()));
  return summary.status == RunStatus::kFailed ? 1 : 0;
}

// --nproc N: ranks 1..N-1 run as child processes of this binary with the same arguments; rank 0
// is this process. A rank that dies makes the others fail at their next collective; the watcher
// below reports it at once, stops the other ranks and, should rank 0 not end by itself, ends it.
class ChildRanks {
 public:
  ChildRanks(const TrainArgs& a, int port) {
    // Our own data-parallel options are replaced by each child's; everything else is kept.
    const std::vector<std::string> ours{"--nproc",       "--rank",        "--world-size",
                                        "--master-addr", "--master-port", "--threads"};
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < g_args.size(); ++i) {
      const auto& arg = g_args[i];
      bool drop = false;
      for (const auto& o : ours) {
        if (arg == o) {
          drop = true;
          ++i;  // and its value
        } else if (arg.rfind(o + "=", 0) == 0) {
          drop = true;
        }
      }
      if (!drop) kept.push_back(arg);
    }
    for (int rank = 1; rank < a.nproc; ++rank) {
      auto args = kept;
      for (const auto& extra :
           {std::string("--rank"), std::to_string(rank), std::string("--world-size"), std::to_string(a.nproc),
            std::string("--master-addr"), a.master_addr, std::string("--master-port"), std::to_string(port),
            std::string("--threads"), std::to_string(a.threads)})
        args.push_back(extra);
      spawn(rank, args);
    }
    watcher_ = std::thread([this] { watch(); });
  }
  ~ChildRanks() {
    stop_all();
    wait();
  }

  /// Waits for every child; returns the failures as "rank 1 (pid 123) exited with status 2".
  std::vector<std::string> wait() {
    parent_done_ = true;
    if (watcher_.joinable()) watcher_.join();
    return failures_;
  }
  void stop_all() {
    std::lock_guard<std::mutex> lock(mutex_);  // never signal a pid already reaped (and maybe reused)
    stopping_ = true;
    for (auto& c : children_)
      if (!c.done) ::kill(c.pid, SIGTERM);
  }

 private:
  struct Child {
    int rank;
    pid_t pid;
    bool done = false;
  };

  void spawn(int rank, const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(fmt::format("--nproc: cannot start rank {} (fork failed)", rank));
    if (pid == 0) {                        // only async-signal-safe calls until exec
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // rank 0 gone: so are the others
      if (::getppid() != parent) ::_exit(1);
      ::execv("/proc/self/exe", argv.data());
      ::_exit(127);
    }
    children_.push_back({rank, pid});
  }

  void watch() {
    using namespace std::chrono;
    bool failed = false;
    steady_clock::time_point failed_at;
    for (;;) {
      bool running = false;
      std::unique_lock<std::mutex> lock(mutex_);
      for (auto& c : children_) {
        if (c.done) continue;
        int status = 0;
        const pid_t r = ::waitpid(c.pid, &status, WNOHANG);
        if (r == 0) {
          running = true;
          continue;
        }
        c.done = true;
        if (r == c.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        if (stopping_ && r == c.pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) continue;  // we stopped it
        const auto what = r != c.pid          ? std::string("could not be waited for")
                          : WIFEXITED(status) ? fmt::format("exited with status {}", WEXITSTATUS(status))
                                              : fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                                                            ::strsignal(WTERMSIG(status)));
        failures_.push_back(fmt::format("rank {} (pid {}) {}", c.rank, c.pid, what));
        if (!failed && !parent_done_) {
          fmt::print(stderr, "data-parallel: {}: stopping the other ranks\n", failures_.back());
          failed = true;
          failed_at = steady_clock::now();
          g_stop = true;
          stopping_ = true;
          for (auto& other : children_)
            if (!other.done) ::kill(other.pid, SIGTERM);
        }
      }
      lock.unlock();
      if (!running && parent_done_) return;
      // Rank 0 normally fails at its next collective; one busy elsewhere (a long validation) is ended.
      if (failed && !parent_done_ && steady_clock::now() - failed_at > seconds(10)) {
        fmt::print(stderr, "data-parallel: ending rank 0 as well\n");
        std::_Exit(1);
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
  }

  std::mutex mutex_;
  std::vector<Child> children_;
  std::vector<std::string> failures_;
  std::thread watcher_;
  std::atomic<bool> parent_done_{false}, stopping_{false};
};

// Checks the data-parallel options; returns this process's place, or nullopt for one process.
std::optional<DistributedConfig> distributed_config(TrainArgs& a) {
  const bool by_hand = a.world_size >= 0 || a.rank >= 0;
  if (a.nproc > 1 && by_hand)
    throw std::invalid_argument(
        "--nproc starts every rank on this machine: do not combine it with --rank or --world-size "
        "(use those to start each rank yourself, e.g. on several machines)");
  if (a.rank >= 0 && a.world_size < 0) throw std::invalid_argument("--rank needs --world-size");
  if (a.world_size > 1 && a.rank < 0)
    throw std::invalid_argument(fmt::format("--world-size {} needs --rank (0 to {})", a.world_size, a.world_size - 1));
  if (a.rank >= 0 && a.rank >= a.world_size)
    throw std::invalid_argument(fmt::format("--rank {} must be below --world-size {}", a.rank, a.world_size));
  if (a.nproc <= 1 && a.world_size <= 1) {
    if (!a.master_addr.empty() || a.master_port >= 0)
      throw std::invalid_argument("--master-addr and --master-port apply only with --nproc or --world-size");
    return std::nullopt;
  }
  DistributedConfig d;
  if (!a.master_addr.empty()) d.master_addr = a.master_addr;
  a.master_addr = d.master_addr;
  if (a.nproc > 1) {
    d.world_size = a.nproc;
    d.rank = 0;
    if (a.threads < 0) a.threads = 1;  // N processes share the cores
    d.master_port = a.master_port > 0 ? a.master_port : free_port(d.master_addr);
  } else {
    d.world_size = a.world_size;
    d.rank = a.rank;
    if (a.master_port > 0) d.master_port = a.master_port;
  }
  d.validate();
  if (!data_parallel_available())
    throw std::runtime_error(
        "data-parallel training is not available: this build has no c10d Gloo support (install libgloo-dev and reconfigure)");
  return d;
}

int train_one_rank(const TrainArgs& a, const DistributedConfig* distributed);

int cmd_train(TrainArgs a) {
  const auto distributed = distributed_config(a);
  if (distributed) catch_sigpipe_from_sockets();
  if (!distributed || a.nproc <= 1) {
    if (!distributed || distributed->rank == 0) return train_one_rank(a, distributed ? &*distributed : nullptr);
    g_quiet_signals = true;
    try {
      return train_one_rank(a, &*distributed);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("rank {}: {}", distributed->rank, error_message(e)));
    }
  }
  ChildRanks children(a, distributed->master_port);
  int rc = 1;
  try {
    rc = train_one_rank(a, &*distributed);
  } catch (...) {
    children.stop_all();  // they would wait for rank 0 until the timeout
    // A rank that died often makes rank 0's next collective fail before the watcher's next look:
    // name it anyway, before rank 0's own error.
    for (const auto& f : children.wait()) fmt::print(stderr, "data-parallel: {}\n", f);
    throw;
  }
  if (rc != 0) children.stop_all();
  const auto failures = children.wait();
  for (const auto& f : failures) fmt::print(stderr, "data-parallel: {}\n", f);
  return rc != 0 ? rc : (failures.empty() ? 0 : 1);
}

int train_one_rank(const TrainArgs& a, const DistributedConfig* distributed) {
  SessionRequest request;
  if (distributed) request.distributed = *distributed;
  if (!a.resume.empty()) {
    if (a.machine_speed > 0)
      throw std::invalid_argument("--machine-speed sizes a new run's auto recipe; --resume continues the run's own");
    const auto ckpt = checkpoint_of(a.resume);
    auto meta = read_checkpoint_meta(ckpt);
    request.config = meta.config;
    apply_overrides(request.config, a);
    if (a.extra_steps >= 0) request.config.train.max_steps = static_cast<int>(meta.position.step) + a.extra_steps;
    const std::string corpus_path = a.corpus.empty() ? meta.corpus_path : a.corpus;
    if (corpus_path.empty()) throw std::invalid_argument("--resume: the checkpoint names no corpus; pass --corpus");
    const auto corpus = corpus_path == "<demo>" ? demo_corpus() : read_corpus(corpus_path);
    request.corpus = &corpus;
    request.direction = TextPipeline::from_json(meta.pipeline).direction;
    const std::string out = a.out.empty() ? fs::path(ckpt).parent_path().string() : a.out;
    request.out_dir = out.empty() ? "." : out;
    request.resume_checkpoint = ckpt;
    return run_training(std::move(request), a);
  }
  if (a.corpus.empty() || a.direction.empty())
    throw std::invalid_argument("train needs --corpus FILE and --direction SRC-TGT (or --resume)");
  const auto corpus = read_corpus(a.corpus);
  request.corpus = &corpus;
  request.direction = parse_direction(a.direction, corpus);
  // The default, `auto`: the session fits it to this corpus, direction, budget and the machine it
  // times (inside the budget, which starts with the command); the flags are applied on top. A
  // configuration file is trained as it is, even one that a fitted `auto` run wrote.
  request.fit_recipe = a.config_file.empty() && (a.preset.empty() || a.preset == "auto");
  request.config =
      a.config_file.empty() ? preset(a.preset.empty() ? "auto" : a.preset) : load_config_file(a.config_file);
  apply_overrides(request.config, a);
  request.keep_own_settings = [&a](const AutoFit& fit) {
    ExperimentConfig c = fit.config;
    apply_overrides(c, a);
    return c;
  };
  request.recipe_note = "--preset NAME or --config FILE to choose another; --set to change one value";
  if (a.machine_speed > 0 && !request.fit_recipe)
    throw std::invalid_argument("--machine-speed sizes the auto recipe; " +
                                (a.config_file.empty() ? "--preset " + a.preset : "--config " + a.config_file) +
                                " is trained as it is");
  request.machine_speed = a.machine_speed;
  request.out_dir = a.out.empty() ? default_run_directory("runs", a.corpus, request.direction.str()) : a.out;
  return run_training(std::move(request), a);
}

struct DecodeArgs {
  std::string checkpoint, attention_json, device = "auto", weights;  // weights: empty = the command's default
  std::string input;  // translate: a file of sentences (empty: standard input)
  int batch = -1;     // translate: sentences decoded together (-1: the device's, or 1 when typing at a terminal)
  int beam = 0, top_k = 0, nbest = 1, threads = 0;  // beam 0: not given
  bool sample = false, shortlist = false;
  double temperature = 1.0, top_p = 1.0, length_penalty = -1;  // -1: not given
  std::uint64_t seed = 0;
  /// The model's own decoding settings (`c`, the decode section of its configuration) with what the
  /// command line gives on top: without --beam, --nbest or --sample the model's mode and beam stay.
  DecodeConfig config(DecodeConfig c) const {
    if (sample) {
      c.mode = DecodeMode::kSample;
      c.temperature = temperature;
      c.top_k = top_k;
      c.top_p = top_p;
      c.seed = seed;
    } else if (beam > 0 || nbest > 1) {
      c.beam = std::max({beam, nbest, 1});
      c.mode = c.beam > 1 ? DecodeMode::kBeam : DecodeMode::kGreedy;
    } else if (c.mode == DecodeMode::kSample) {
      c.mode = DecodeMode::kGreedy;  // sampling is asked for on the command line, never inherited
    }
    c.nbest = nbest;
    if (length_penalty >= 0) c.length_penalty = length_penalty;
    if (!weights.empty()) c.weights = parse_decode_weights(weights);
    if (shortlist) c.shortlist = true;
    return c;
  }
};

// With decode.shortlist: the run's lexical shortlist (made by the shortlist command), attached to
// the model it was made for. Asked for on the command line, a missing one is an error; asked for by
// the model's own configuration, a note (the whole vocabulary is scored).
void attach_shortlist(const DecodeArgs& a, const DecodeConfig& config, const std::string& checkpoint,
                      LoadedModel& loaded) {
  if (!config.shortlist) return;
  auto shortlist = shortlist_beside(checkpoint, loaded.model->src_vocab_size(), loaded.model->tgt_vocab_size());
  if (!shortlist) {
    const auto message = missing_shortlist_message(shortlist_file(checkpoint), a.checkpoint, a.shortlist);
    if (a.shortlist) throw std::invalid_argument(message);
    fmt::print(stderr, "note: {}\n", message);
  }
  loaded.model->set_shortlist(std::move(shortlist));
}

// The checkpoint's translator file (ts/infer/translator_file.h), for transformer-studio-translate,
// which translates without loading LibTorch: written beside the checkpoint when it is missing or was
// made from an earlier state of the checkpoint or of the run's lexical shortlist. A cache: when it
// cannot be written, a note says why.
void write_translator_file_if_stale(const LoadedModel& loaded, const std::string& checkpoint) {
  const auto path = translator_file_for(checkpoint);
  try {
    if (fs::exists(path)) {
      const auto file = read_translator_file(path);
      if (file.made_from == CheckpointStamp::of(checkpoint) &&
          file.shortlist_made_from == CheckpointStamp::of(shortlist_file(checkpoint)))
        return;
    }
  } catch (const std::exception&) {
    // unreadable: written again below
  }
  try {
    export_translator(loaded, checkpoint);
  } catch (const std::exception& e) {
    fmt::print(stderr, "note: no translator file for transformer-studio-translate: {}\n", e.what());
  }
}

int cmd_translate(const DecodeArgs& a) {
  configure_threads(a.threads);
  std::ifstream file;
  if (!a.input.empty()) open_sentences_file(a.input, file);
  std::istream& in = a.input.empty() ? std::cin : file;
  const auto checkpoint = checkpoint_of(a.checkpoint);
  const auto device = resolve_device(parse_device_choice(a.device));
  auto loaded = load_checkpoint(checkpoint, device);
  write_translator_file_if_stale(loaded, checkpoint);
  const auto config = a.config(loaded.meta.config.decode);
  attach_shortlist(a, config, checkpoint, loaded);
  Translator translator(loaded.model, std::move(loaded.pipeline));
  std::ofstream attention;
  if (!a.attention_json.empty()) {
    attention.open(a.attention_json);
    if (!attention) throw std::runtime_error(a.attention_json + ": cannot write");
  }
  // Sentences decoded together (length-sorted batches; the same outputs as one at a time) unless
  // someone types at a terminal and waits for each answer, or the n-best list or attention is asked
  // for (those come from the one-at-a-time path).
  const bool typing = a.input.empty() && ::isatty(STDIN_FILENO);
  const int batch = a.batch > 0 ? a.batch : typing ? 1 : static_cast<int>(default_decode_batch(device, config));
  if (batch > 1 && a.nbest <= 1 && !attention.is_open()) {
    // A progress line on a terminal when translating a file (its size is known).
    std::size_t total = 0;
    if (!a.input.empty()) {
      std::ifstream count(a.input);
      std::string skip;
      while (std::getline(count, skip)) ++total;
    }
    const bool show = total > 0 && ::isatty(STDERR_FILENO);
    const auto started = std::chrono::steady_clock::now();
    std::size_t done_before = 0;
    std::vector<std::string> lines;
    while (read_line_chunk(in, static_cast<std::size_t>(batch) * 16, lines)) {
      const auto outputs =
          translator.translate_all(lines, config, static_cast<std::size_t>(batch), nullptr, [&](std::size_t done) {
            if (!show) return;
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            fmt::print(stderr, "{}", sentences_progress(done_before + done, total, s));
          });
      for (const auto& text : outputs) std::cout << text << "\n";
      std::cout.flush();
      done_before += lines.size();
    }
    if (show) fmt::print(stderr, "\n");
    return 0;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto t = translator.translate(line, config, attention.is_open());
    if (a.nbest > 1) {
      for (const auto& c : t.nbest) std::cout << fmt::format("{:.4f}\t{}\n", c.score, c.text);
      std::cout << "\n";
    } else {
      std::cout << t.text << "\n";
    }
    std::cout.flush();
    if (attention.is_open()) {  // one JSON object per line; beam search adds the tree it explored
      auto j = t.attention_json();
      if (!t.beam_tree.nodes.empty()) j["beam_tree"] = t.beam_tree_json();
      attention << j.dump() << "\n";
    }
  }
  return 0;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  if (path.empty()) return;
  std::ofstream out(path);
  for (const auto& line : lines) out << line << "\n";
  if (!out) throw std::runtime_error(path + ": cannot write");
}

/// The held-out part `eval` scores: test (what a figure reports) or dev (what a setting is chosen on).
enum class HeldOut { kTest, kDev };

struct EvalArgs {
  std::string corpus, hyp_out, ref_out;
  HeldOut split = HeldOut::kTest;
  int batch = 0;  // sentences decoded together (0: the device's default)
};

int cmd_eval(const DecodeArgs& a, const EvalArgs& e) {
  configure_threads(a.threads);
  const auto device = resolve_device(parse_device_choice(a.device));
  auto loaded = load_checkpoint(checkpoint_of(a.checkpoint), device);
  const auto& p = loaded.pipeline;
  std::vector<SentencePair> pairs;
  std::string what, split_line;
  if (!e.corpus.empty()) {
    pairs = oriented_pairs(read_corpus(e.corpus), p.direction);
    what = fmt::format("all {} pairs of {}", pairs.size(), e.corpus);
  } else {
    const auto split = checkpoint_split(loaded);
    const bool dev = e.split == HeldOut::kDev;
    pairs = dev ? split.dev : split.test;
    what = fmt::format("the {} {} pairs of {}", pairs.size(), dev ? "dev" : "test", loaded.meta.corpus_path);
    split_line = "split: " + describe_split(split.stats) + "\n";
    if (pairs.empty())
      throw std::invalid_argument(fmt::format("nothing to evaluate: the {} split is empty", dev ? "dev" : "test"));
  }
  if (pairs.empty()) throw std::invalid_argument("nothing to evaluate: " + e.corpus + " holds no pairs");
  std::vector<Example> examples;
  for (const auto& pair : pairs) examples.push_back(p.encode(pair));
  if (loaded.meta.config.model.positions == Positions::kLearned) {
    // A learned position table has no row past its end: such pairs cannot be scored (validation
    // leaves them out the same way).
    const auto positions = static_cast<std::size_t>(loaded.model->max_length());
    if (const auto dropped = drop_pairs_longer_than(examples, pairs, positions); dropped > 0) {
      fmt::print(stderr,
                 "{} of {} pairs are longer than the model's {} learned positions and are left out, as in validation\n",
                 dropped, dropped + pairs.size(), positions);
      what += fmt::format(" ({} scored)", pairs.size());
    }
    if (pairs.empty())
      throw std::invalid_argument("nothing to evaluate: every pair is longer than the model's positions");
  }
  std::vector<std::string> sources, refs;
  for (const auto& pair : pairs) {
    sources.push_back(pair.src);
    refs.push_back(pair.tgt);
  }
  Translator translator(loaded.model, p);
  auto config = a.config(loaded.meta.config.decode);
  if (a.weights.empty())
    config.weights = DecodeWeights::kFloat32;  // the scores are the model's own unless asked otherwise
  attach_shortlist(a, config, checkpoint_of(a.checkpoint), loaded);
  const auto decode_start = std::chrono::steady_clock::now();
  const auto hyps = translator.translate_all(sources, config, static_cast<std::size_t>(e.batch));
  const double decode_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - decode_start).count();
  write_lines(e.hyp_out, hyps);
  write_lines(e.ref_out, refs);
  const double loss = evaluate_loss(loaded.model, examples, device);
  const auto tok = bleu_tokenize_for(p.tgt_language.code);
  const std::string decoding = config.mode == DecodeMode::kBeam ? fmt::format("beam search of {}, length penalty {}",
                                                                              config.beam, config.length_penalty)
                               : config.mode == DecodeMode::kSample ? std::string("sampling")
                                                                    : std::string("greedy decoding");
  fmt::print("evaluated {} ({}, {})\n{}loss {:.4f} | ppl {:.2f}\n{}\n{}\n", what, p.direction.str(), decoding,
             split_line, loss, std::exp(loss), corpus_bleu(hyps, {refs}, tok).to_string(),
             corpus_chrf(hyps, {refs}).to_string());
  fmt::print("translated {} sentences on {} in {:.3f} s: {:.0f} sentences/s (the decoding alone, without loading)\n",
             hyps.size(), device.str(), decode_s, static_cast<double>(hyps.size()) / std::max(decode_s, 1e-9));
  return 0;
}

int cmd_score(const std::string& hyp, const std::vector<std::string>& refs, const std::string& tokenize) {
  const auto hyps = ts::cli::read_text_lines(hyp);
  std::vector<std::vector<std::string>> streams;
  for (const auto& r : refs) {
    streams.push_back(ts::cli::read_text_lines(r));
    if (streams.back().size() != hyps.size())
      throw std::invalid_argument(
          fmt::format("{} has {} lines but {} has {}", r, streams.back().size(), hyp, hyps.size()));
  }
  fmt::print("{}\n{}\n", corpus_bleu(hyps, streams, tokenize).to_string(), corpus_chrf(hyps, streams).to_string());
  return 0;
}

int cmd_demo(const TrainArgs& a) {
  auto config = preset("demo");
  apply_overrides(config, a);
  auto corpus = demo_corpus();
  corpus.path = "<demo>";
  fmt::print(stderr, "training the demo preset on the built-in German-English corpus ({} pairs)\n",
             corpus.pairs.size());
  const std::string out = a.out.empty() ? "runs/demo" : a.out;
  SessionRequest request;
  request.corpus = &corpus;
  request.direction = parse_direction("de-en", corpus);
  request.config = config;
  request.out_dir = out;
  const int rc = run_training(std::move(request), a);
  if (rc != 0) return rc;
  const auto best = (fs::path(out) / "best.ckpt").string();
  DecodeArgs d;
  d.checkpoint = best;
  d.threads = a.threads > 0 ? a.threads : 0;
  cmd_eval(d, {});
  auto translator = load_translator(best, at::Device(at::kCPU));
  auto split = split_corpus(corpus, translator.pipeline().direction, config.data);
  fmt::print("\nsample translations from the held-out test pairs:\n");
  for (std::size_t i = 0; i < std::min<std::size_t>(8, split.test.size()); ++i) {
    fmt::print("  {}\n  -> {}\n     (reference: {})\n", split.test[i].src,
               translator.translate(split.test[i].src, {}).text, split.test[i].tgt);
  }
  fmt::print("\ntry it: echo \"Der Hund sieht die Katze.\" | transformer-studio-cli translate --checkpoint {}\n", best);
  return 0;
}

void add_train_limits(CLI::App* cmd, TrainArgs& a) {
  cmd->add_option("--set", a.sets, "Override a config value, e.g. --set train.lr=0.5 --set model.heads=4");
  cmd->add_option("--max-steps", a.max_steps, "Stop after this many optimizer steps");
  cmd->add_option("--probe", a.probe,
                  "A source sentence translated at every validation; its cross-attention is kept in the run history");
  cmd->add_option("--max-minutes", a.max_minutes, "Stop after this many minutes of wall clock");
  cmd->add_option("--budget", a.budget,
                  "Time budget: 20 (minutes), 20m, 1h30m; the learning rate decays to zero at the deadline and the run "
                  "ends on time (validations count, pauses do not; 0 = none). With --resume: the same budget continues "
                  "where it stood, another one starts a new schedule over it");
  cmd->add_option("--device", a.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_option("--threads", a.threads, "CPU threads (default: all cores)")->check(CLI::NonNegativeNumber);
  cmd->add_option(
         "--precision", a.precision,
         "auto (on a CPU with AMX, AVX-512 BF16 or AVX-512 FP16, bf16 or fp16 where a timing of their products "
         "finds them at least 1.2x as fast as fp32's, else fp32; on a GPU bf16 or fp16 as a timing of products "
         "finds faster), fp32, bf16 (mixed precision) or fp16 (a GPU, or a CPU with AVX-512 FP16)")
      ->check(CLI::IsMember({"auto", "fp32", "bf16", "fp16"}));
  cmd->add_option("--out", a.out, "Run directory for checkpoints (default runs/<corpus>-<direction>-<time>)");
  cmd->add_option("--db", a.db, "Run history database (default: " + RunStore::default_path() + ")");
  cmd->add_option("--name", a.name, "Name of the run in the history");
  cmd->add_flag("--no-history", a.no_history, "Do not record this run in the history");
  cmd->add_option("--history-wait", a.history_wait,
                  "Seconds a locked or unwritable run history may refuse writes before training stops cleanly, and "
                  "that the end of the run waits for it before leaving its last rows in a recovery file that the next "
                  "program to open the history imports (default 120)")
      ->check(CLI::NonNegativeNumber);
}

void add_decode_options(CLI::App* cmd, DecodeArgs& d) {
  cmd->add_option("--checkpoint", d.checkpoint, "Checkpoint file or run directory (uses its last.ckpt)")->required();
  cmd->add_option("--beam", d.beam, "Beam width (1 = greedy; default: the model's own decode settings)")
      ->check(CLI::Range(1, 256));
  cmd->add_option(
         "--length-penalty", d.length_penalty,
         "Beam search's length normalisation (GNMT alpha: 0 = raw log-probability, 1 = per token; default: the model's)")
      ->check(CLI::Range(0.0, 5.0));
  cmd->add_flag("--sample", d.sample, "Sample instead of searching");
  cmd->add_option("--temperature", d.temperature, "Sampling temperature")->check(CLI::PositiveNumber);
  cmd->add_option("--top-k", d.top_k, "Sample among the k most likely tokens (0 = all)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-p", d.top_p, "Nucleus sampling mass (1 = off)")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--seed", d.seed, "Sampling seed");
  cmd->add_option("--nbest", d.nbest, "Print the N best outputs with their scores")->check(CLI::Range(1, 256));
  cmd->add_option("--device", d.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_option("--threads", d.threads, "CPU threads (default: all cores)")->check(CLI::NonNegativeNumber);
  cmd->add_option(
         "--weights", d.weights,
         "Weights for translating on the CPU: bf16 (translate's default; on AMX tiles where the CPU has them), "
         "int8 (fastest without AMX), fp32 (eval's "
         "default), or libtorch (LibTorch's operations on the model's own weights)")
      ->check(CLI::IsMember({"int8", "bf16", "fp32", "libtorch"}));
  cmd->add_flag("--shortlist", d.shortlist,
                "Score only each sentence's lexical shortlist of target tokens (made by the shortlist command): "
                "faster, and a little different");
}

}  // namespace

int cli_main(int argc, char** argv) {
  // From the process's start, not main's: loading LibTorch's libraries takes 0.5 s from a warm page
  // cache and tens of seconds from a cold one, and a --budget is the command's whole time.
  g_command_start = steady_seconds() - process_age_seconds();
  g_args.assign(argv, argv + argc);
  CLI::App app{"Transformer Studio: train and explore Transformer translation models"};
  // The version, commit, LibTorch, devices and threads (what a bug report needs), then the licence
  // and the third-party components with theirs.
  app.set_version_flag("--version", std::function<std::string()>([] {
                         auto text = version_text("transformer-studio-cli") + licence_text(Program::cli);
                         text.pop_back();  // CLI11 adds the final newline
                         return text;
                       }));
  app.require_subcommand(1);
  TrainArgs train_args, demo_args;
  auto* train = app.add_subcommand("train", "Train a model on a parallel corpus (Tatoeba/Anki format)");
  train->add_option("--corpus", train_args.corpus, "Corpus file: english<TAB>other[<TAB>attribution] per line");
  train->add_option("--direction", train_args.direction, "Translation direction, e.g. de-en or en-de");
  auto* preset_opt = train->add_option("--preset", train_args.preset,
                                       "Preset: auto (fitted to the corpus, the budget and this machine), annotated, "
                                       "annotated-debug, nanogpt-deu, scratch-bpe, demo, tiny");
  train->add_option("--config", train_args.config_file, "JSON config file (instead of a preset)")->excludes(preset_opt);
  train->add_option("--resume", train_args.resume, "Continue a run: its directory or a checkpoint");
  train
      ->add_option("--machine-speed", train_args.machine_speed,
                   "Size the auto recipe by this training speed of its reference model, in target tokens/s (what a "
                   "run's log gives after \"measured here:\"), instead of timing the machine at the start: the same "
                   "recipe run after run (default: timed)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0)
              return "give a positive number of target tokens per second, not " + text +
                     ", e.g. 3900 (what a run's log says after \"measured here:\")";
            return {};
          },
          "TOKENS/S"));
  train->add_option("--extra-steps", train_args.extra_steps, "With --resume: train this many more steps")
      ->check(CLI::NonNegativeNumber);
  add_train_limits(train, train_args);
  train
      ->add_option("--nproc", train_args.nproc,
                   "Data-parallel: train with N processes on this machine (Gloo on CPU, NCCL on CUDA); "
                   "each uses --threads (default 1)")
      ->check(CLI::Range(1, 1024));
  train
      ->add_option("--world-size", train_args.world_size,
                   "Data-parallel across machines: the number of processes in all")
      ->check(CLI::Range(1, 65536));
  train
      ->add_option("--rank", train_args.rank,
                   "Data-parallel across machines: this process's rank, 0 to world size - 1 "
                   "(rank 0 writes checkpoints and the history)")
      ->check(CLI::NonNegativeNumber);
  train->add_option("--master-addr", train_args.master_addr, "Data-parallel: rank 0's address (default 127.0.0.1)");
  train
      ->add_option("--master-port", train_args.master_port,
                   "Data-parallel: rank 0's rendezvous port (default: a free port "
                   "with --nproc, 29500 otherwise)")
      ->check(CLI::Range(1, 65535));
  train
      ->add_option("--parallel-check", train_args.parallel_check,
                   "For tests: each rank appends the SHA-256 of its final weights to this file")
      ->group("");  // hidden

  DecodeArgs translate_args, eval_args;
  auto* translate =
      app.add_subcommand("translate", "Translate stdin (or --input FILE) to stdout, one sentence per line");
  add_decode_options(translate, translate_args);
  translate->add_option("--input", translate_args.input,
                        "Translate this file instead of standard input (with a progress "
                        "line on a terminal)");
  translate
      ->add_option("--batch", translate_args.batch,
                   "Sentences decoded together (default on a CPU 32 greedily, 8 with a beam of 4: 32 hypotheses a "
                   "step; 512 on a GPU; 1 when typing at a terminal: each line is answered at once). The outputs "
                   "are the same as one at a time")
      ->check(CLI::Range(1, 4096));
  translate->add_option("--attention-json", translate_args.attention_json,
                        "Write attention weights (and the beam search tree), one JSON object per line");

  EvalArgs eval_extra;
  auto* eval = app.add_subcommand("eval", "Loss, BLEU and chrF of a checkpoint on its test split or a given corpus");
  add_decode_options(eval, eval_args);
  eval->add_option("--corpus", eval_extra.corpus, "Evaluate on every pair of this file instead of the test split");
  eval->add_option("--split", eval_extra.split,
                   "Which held-out pairs of the run's split: test (report a figure; the default) or dev (choose a "
                   "setting without looking at test)")
      ->transform(
          CLI::CheckedTransformer(std::map<std::string, HeldOut>{{"test", HeldOut::kTest}, {"dev", HeldOut::kDev}}))
      ->excludes("--corpus");
  eval->add_option("--hyp-out", eval_extra.hyp_out, "Write the translations here, one per line");
  eval->add_option("--ref-out", eval_extra.ref_out, "Write the references here, one per line");
  eval->add_option("--batch", eval_extra.batch,
                   "Sentences decoded together (default on a CPU 32 greedily, 8 with a beam of 4; 512 on a GPU). The "
                   "outputs are the same as one at a time")
      ->check(CLI::Range(1, 4096));

  std::string hyp, tokenize = "13a";
  std::vector<std::string> refs;
  auto* score =
      app.add_subcommand("score", "BLEU and chrF of a hypothesis file against reference files (sacreBLEU-compatible)");
  score->add_option("--hyp", hyp, "Hypotheses, one per line")->required()->check(CLI::ExistingFile);
  score->add_option("--ref", refs, "Reference file(s), one per line")->required()->check(CLI::ExistingFile);
  score->add_option("--tokenize", tokenize, "BLEU tokenisation")->check(CLI::IsMember({"13a", "zh", "char", "none"}));

  auto* demo = app.add_subcommand("demo", "Train on the built-in German-English corpus and show translations");
  add_train_limits(demo, demo_args);

  auto* presets = app.add_subcommand("presets", "List the presets with their settings");
  ts::cli::RunsCommands runs(app);
  ts::cli::LmCommands lm(app);
  ts::cli::ModelCommands models(app);
  ts::cli::CompareCommand compare(app);
  ts::cli::HelpCommands help(app);
  ts::cli::document_defaults(app);

  CLI11_PARSE(app, argc, argv);
  try {
    if (*train) return cmd_train(train_args);
    if (*translate) return cmd_translate(translate_args);
    if (*eval) return cmd_eval(eval_args, eval_extra);
    if (*score) return cmd_score(hyp, refs, tokenize);
    if (*demo) return cmd_demo(demo_args);
    if (runs.chosen()) return runs.dispatch();
    if (compare.chosen()) return compare.dispatch();
    if (lm.chosen()) return lm.dispatch();
    if (models.chosen()) return models.dispatch();
    if (help.chosen()) return help.dispatch();
    if (*presets) {
      for (const auto& name : preset_names()) fmt::print("{:16} {}\n", name, preset_description(name));
      return 0;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", error_message(e));
    return 2;
  }
  return 0;
}
