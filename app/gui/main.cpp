// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio-app: the desktop app, started by the front transformer-studio (front.cpp).
// Opens with the built-in demo corpus loaded, so Train works at once. Launch options (ts/ui
// shell/launch_options.h) open a corpus, a checkpoint, a comparison or a language model, and train
// or translate at once. Screenshots are taken by a separate tool,
// transformer-studio-screenshots (app/screenshots), which drives the same window from outside.
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>

#include "shell/launch_options.h"
#include "shell/main_window.h"

int main(int argc, char** argv) {
  auto start = ts::ui::prepare_start(argc, argv);
  QApplication app(start.argc, start.args.data());
  ts::ui::name_the_application();
  QCommandLineParser parser;
  ts::ui::LaunchOptions launch(parser, QStringLiteral("Train and explore Transformer translation models."));
  parser.process(app);

  ts::ui::MainWindow window(launch.database());
  QString error;
  if (!launch.apply(window, start.into_english, &error)) {
    std::fprintf(stderr, "error: %s\n", qPrintable(error));
    return 2;
  }
  return app.exec();
}
