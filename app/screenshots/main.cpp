// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio-screenshots: the desktop app, opened as its launch options say (the same
// options as transformer-studio), then after a delay one PNG of each panel and tab saved into a
// folder, and quit. docs/screenshots is made this way under Xvfb (scripts/screenshots.sh). A tool for
// the project's own pictures and checks: it is not installed with the app.
#include <algorithm>
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include "beam_search/beam_tree_view.h"
#include "language_model/lm_window.h"
#include "screenshots/screenshot_tour.h"
#include "services/training_controller.h"
#include "services/translation_service.h"
#include "shell/launch_options.h"
#include "shell/main_window.h"
#include "translate/translate_panel.h"

namespace {
constexpr int kBeamBeforeShotsMs = 5000;  // the beam tree is decoded this long before the first grab
constexpr int kPickBeforeShotsMs = 1000;  // and the picked token this long
constexpr int kStopWaitMs = 30000;        // training stops within this (a checkpoint is written first)
}  // namespace

int main(int argc, char** argv) {
  auto start = ts::ui::prepare_start(argc, argv);
  QApplication app(start.argc, start.args.data());
  ts::ui::name_the_application();
  QCommandLineParser parser;
  ts::ui::LaunchOptions launch(
      parser,
      QStringLiteral("Open Transformer Studio as the options say, then save a PNG of each panel and tab and quit."));
  const QCommandLineOption screenshots({QStringLiteral("screenshots")},
                                       QStringLiteral("Save a PNG of each panel into this directory (required)."),
                                       QStringLiteral("dir"));
  const QCommandLineOption delay({QStringLiteral("screenshot-delay")},
                                 QStringLiteral("Seconds to wait before the screenshots (default 3)."),
                                 QStringLiteral("seconds"), QStringLiteral("3"));
  const QCommandLineOption pick_token(
      {QStringLiteral("pick-token")},
      QStringLiteral("Before the screenshots, pick this output token (from 0) of the translation, as a click does."),
      QStringLiteral("index"));
  for (const auto& o : {screenshots, delay, pick_token}) parser.addOption(o);
  parser.process(app);
  if (!parser.isSet(screenshots)) {
    std::fprintf(stderr, "error: --screenshots DIR is required\n");
    return 2;
  }
  bool ok = false;
  const double seconds = parser.value(delay).toDouble(&ok);
  if (!ok || seconds < 0) {
    std::fprintf(stderr, "error: --screenshot-delay %s: expected a number of seconds\n",
                 qPrintable(parser.value(delay)));
    return 2;
  }
  int token = -1;
  if (parser.isSet(pick_token)) {
    token = parser.value(pick_token).toInt(&ok);
    if (!ok || token < 0) {
      std::fprintf(stderr, "error: --pick-token %s: expected a token index (0 or more)\n",
                   qPrintable(parser.value(pick_token)));
      return 2;
    }
  }

  ts::ui::MainWindow window(launch.database());
  QString error;
  if (!launch.apply(window, start.into_english, &error)) {
    std::fprintf(stderr, "error: %s\n", qPrintable(error));
    return 2;
  }
  const int ms = static_cast<int>(seconds * 1000);
  // A few seconds before the screenshots, the translated sentence is decoded again with beam
  // search, so the beam view has its tree.
  QTimer::singleShot(std::max(0, ms - kBeamBeforeShotsMs), &window, [&window] {
    if (window.translation()->hasModel() && !window.translatePanel()->result().source.isEmpty())
      window.beamTreeView()->decodeWithBeam();
  });
  if (token >= 0)
    QTimer::singleShot(std::max(0, ms - kPickBeforeShotsMs), &window,
                       [&window, token] { window.translatePanel()->focusToken(token); });

  const bool language_model = launch.languageModel();
  QWidget* shot = language_model ? static_cast<QWidget*>(window.languageModelWindow()) : &window;
  ts::ui::ScreenshotTour tour(shot, parser.value(screenshots));
  QObject::connect(&tour, &ts::ui::ScreenshotTour::finished, &app, [&](const QString& tour_error) {
    if (!tour_error.isEmpty()) std::fprintf(stderr, "error: %s\n", qPrintable(tour_error));
    // The language-model window alone, or the main window's panels: stop what trains before leaving.
    auto* controller = language_model ? window.languageModelWindow()->controller() : window.controller();
    controller->stop();
    if (!controller->waitForFinished(kStopWaitMs)) std::fprintf(stderr, "warning: training did not stop in 30 s\n");
    for (const auto& path : tour.written()) std::printf("%s\n", qPrintable(path));
    QApplication::exit(tour_error.isEmpty() ? 0 : 1);
  });
  QTimer::singleShot(ms, &window, [&] {
    if (language_model)
      ts::ui::add_language_model_views(tour, *window.languageModelWindow());
    else
      ts::ui::add_main_window_views(tour, window);
    tour.start();
  });
  return app.exec();
}
