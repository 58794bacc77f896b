// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio: the desktop app. Opens with the built-in demo corpus loaded, so Train works
// at once. Launch options (ts/ui shell/launch_options.h) open a corpus, a checkpoint, a comparison or
// a language model, and train or translate at once. Screenshots are taken by a separate tool,
// transformer-studio-screenshots (app/screenshots), which drives the same window from outside.
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include "shell/launch_options.h"
#include "shell/main_window.h"

int main(int argc, char** argv) {
  ts::ui::choose_openmp_wait_policy(argv);
  auto start = ts::ui::take_reverse_flag(argc, argv);
  QApplication app(start.argc, start.args.data());
  QApplication::setOrganizationName(QStringLiteral("TransformerStudio"));
  QApplication::setApplicationName(QStringLiteral("transformer-studio"));
  QApplication::setApplicationDisplayName(QStringLiteral("Transformer Studio"));
  QApplication::setApplicationVersion(QStringLiteral(TS_VERSION));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/transformer-studio.svg")));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Train and explore Transformer translation models."));
  parser.addHelpOption();
  parser.addVersionOption();
  ts::ui::LaunchOptions launch(parser);
  parser.process(app);

  ts::ui::MainWindow window(launch.database());
  QString error;
  if (!launch.apply(window, start.into_english, &error)) {
    std::fprintf(stderr, "error: %s\n", qPrintable(error));
    return 2;
  }
  return app.exec();
}
