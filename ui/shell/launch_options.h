// SPDX-License-Identifier: GPL-3.0-or-later
// What the app does at launch, from its command line: open a corpus, a checkpoint, a comparison or a
// language model, apply a preset and settings, train, translate. The desktop app and the screenshot
// tool (app/screenshots) share these options; the tool adds its own and drives the window from outside.
#pragma once

#include <vector>

#include <QCommandLineOption>
#include <QSize>
#include <QString>

class QCommandLineParser;

namespace ts::ui {

class MainWindow;

/// Qt reads -reverse (and --reverse) itself and mirrors the whole interface right to left; ours means
/// "translate into English". `args` is argv without it (null-terminated, for QApplication), and
/// `into_english` says whether it was there.
struct StartArguments {
  std::vector<char*> args;
  int argc = 0;
  bool into_english = false;
};
StartArguments take_reverse_flag(int argc, char** argv);
/// What a desktop binary does first: choose_openmp_wait_policy (which may start the program again),
/// then take_reverse_flag.
StartArguments prepare_start(int argc, char** argv);

/// Training at full speed while the person uses the computer: the desktop OpenMP setting
/// (ts/host/openmp_policy.h) and OpenBLAS's kernels for a CPU it does not know (ts/host/blas.h). Both
/// are read as the libraries load, before main(): the desktop front (app/gui/front.cpp) sets them
/// before it starts the app, and an app started otherwise (transformer-studio-app run directly, the
/// screenshot tool) sets them and starts itself again, once. A setting already in the environment is
/// respected.
void choose_openmp_wait_policy(char** argv);

/// Names the application (organisation, name, display name, version, icon): where QSettings keep the
/// person's choices, and what the window title and --version say. Both desktop binaries call it.
void name_the_application();

/// Whether a font for Chinese and Japanese is installed (without one they render as empty boxes).
bool has_cjk_font();

/// The launch options, added to `parser` on construction. After `parser.process()`, `apply` acts on
/// a window created with `database()`.
class LaunchOptions {
 public:
  /// Also adds --help (with `description`) and --version.
  LaunchOptions(QCommandLineParser& parser, const QString& description);

  /// The run history the window opens (--db); empty = the default.
  QString database() const;
  /// Checks the values and applies them to `window`, which is shown (at --window-size if given).
  /// Returns false with `error` naming the option when a value is refused; the caller exits with 2.
  bool apply(MainWindow& window, bool into_english, QString* error);
  /// Whether the launch opened the language-model window (--lm-text or --lm-checkpoint).
  bool languageModel() const;

 private:
  bool applyLanguageModel(MainWindow& window, QString* error);

  QCommandLineParser& parser_;
  QCommandLineOption db_, reverse_, from_english_, window_size_, preset_, set_, checkpoint_, train_, compare_,
      translate_, replay_, token_, lm_text_, lm_preset_, lm_set_, lm_train_, lm_checkpoint_, lm_prompt_;
};

/// Parses "1280x800"; an invalid size (at least 320 x 240) when the text is not one.
QSize parse_window_size(const QString& text);

}  // namespace ts::ui
