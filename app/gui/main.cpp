// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio: the desktop app. Opens with the built-in demo corpus loaded, so Train works
// at once. Options let scripts open a corpus, load a checkpoint, train, translate and take
// screenshots (docs/screenshots is made this way under Xvfb).
#include <string>
#include <vector>

#include <QApplication>
#include <QCommandLineParser>
#include <QFontDatabase>
#include <QLineEdit>
#include <QStatusBar>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <unistd.h>

#include "anatomy/anatomy_panel.h"
#include "beam_search/beam_tree_view.h"
#include "compare/compare_panel.h"
#include "compare/system_chooser.h"
#include "services/lm_service.h"
#include "language_model/lm_window.h"
#include "shell/main_window.h"
#include "attention_over_training/probe_panel.h"
#include "shell/studio_state.h"
#include "services/training_controller.h"
#include "training/training_panel.h"
#include "translate/translate_panel.h"
#include "services/translation_service.h"

namespace {

// Chinese and Japanese need a CJK font; without one they render as empty boxes. Qt falls back to
// any installed CJK family on its own, so only warn when there is none.
bool has_cjk_font() {
  for (const auto& family : QFontDatabase::families(QFontDatabase::SimplifiedChinese))
    if (QFontDatabase::writingSystems(family).contains(QFontDatabase::SimplifiedChinese)) return true;
  return false;
}

// Training at full speed while the person uses the computer. LibTorch's and OpenBLAS's OpenMP
// threads spin at the end of every parallel region; with GNU OpenMP's default (300,000 spins,
// then sleep) a run loses 3-9x of its speed as soon as another program wants a core
// (docs/benchmarks.md, "The desktop app's OpenMP wait policy"). A bounded spin keeps most of the
// speed on an idle machine and gives cores back at once. libgomp reads the setting when it is
// loaded, before main(), so the app sets it and starts itself again, once. A setting already in
// the environment (OMP_WAIT_POLICY or GOMP_SPINCOUNT) is respected.
constexpr const char* kDesktopSpinCount = "1000";

void choose_openmp_wait_policy(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT") || std::getenv("TS_OPENMP_POLICY_SET")) return;
  ::setenv("GOMP_SPINCOUNT", kDesktopSpinCount, 1);
  ::setenv("TS_OPENMP_POLICY_SET", "1", 1);
  ::execv("/proc/self/exe", argv);
  // No /proc (or exec refused): carry on with the default policy, which only costs speed.
  std::fprintf(stderr, "transformer-studio: could not restart with GOMP_SPINCOUNT=%s; OpenMP keeps its default\n",
               kDesktopSpinCount);
}

}  // namespace

int main(int argc, char** argv) {
  choose_openmp_wait_policy(argv);
  // Qt reads -reverse (and --reverse) itself and mirrors the whole interface right to left; ours
  // means "translate into English". It is taken out before QApplication sees it.
  bool into_english = false;
  std::vector<char*> qt_args;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i > 0 && (arg == "--reverse" || arg == "-reverse")) {
      into_english = true;
      continue;
    }
    qt_args.push_back(argv[i]);
  }
  int qt_argc = static_cast<int>(qt_args.size());
  qt_args.push_back(nullptr);
  QApplication app(qt_argc, qt_args.data());
  QApplication::setOrganizationName(QStringLiteral("TransformerStudio"));
  QApplication::setApplicationName(QStringLiteral("transformer-studio"));
  QApplication::setApplicationDisplayName(QStringLiteral("Transformer Studio"));
  QApplication::setApplicationVersion(QStringLiteral(TS_VERSION));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/transformer-studio.svg")));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Train and explore Transformer translation models."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("corpus"),
                               QStringLiteral("Corpus to open (Tatoeba/Anki format); the demo corpus if none."));
  const QCommandLineOption db({QStringLiteral("db")}, QStringLiteral("Run history database."), QStringLiteral("file"));
  const QCommandLineOption reverse(
      {QStringLiteral("reverse")},
      QStringLiteral("Translate into English (the other language is the source); a corpus file opens so "
                     "unless another direction was chosen for it in the app."));
  const QCommandLineOption from_english({QStringLiteral("from-english")},
                                        QStringLiteral("Translate from English (the demo corpus's direction)."));
  const QCommandLineOption preset_opt({QStringLiteral("preset")}, QStringLiteral("Configuration preset."),
                                      QStringLiteral("name"));
  const QCommandLineOption set_opt({QStringLiteral("set")},
                                   QStringLiteral("Hyperparameter, as section.key=value (repeatable)."),
                                   QStringLiteral("assignment"));
  const QCommandLineOption checkpoint({QStringLiteral("checkpoint")},
                                      QStringLiteral("Load a checkpoint into the translate panel."),
                                      QStringLiteral("file"));
  const QCommandLineOption train({QStringLiteral("train")}, QStringLiteral("Start training at launch."));
  const QCommandLineOption compare_opt(
      {QStringLiteral("compare")},
      QStringLiteral("Compare these models (checkpoints, run directories or model "
                     "folders; repeatable, the first is the baseline) in the Compare panel."),
      QStringLiteral("model"));
  const QCommandLineOption translate({QStringLiteral("translate")},
                                     QStringLiteral("Translate this text once a model is available."),
                                     QStringLiteral("text"));
  const QCommandLineOption pick_token(
      {QStringLiteral("pick-token")},
      QStringLiteral("Before the screenshots, pick this output token (from 0) of the translation, as a click does."),
      QStringLiteral("index"));
  const QCommandLineOption screenshots({QStringLiteral("screenshots")},
                                       QStringLiteral("Save a PNG of each panel into this directory, then quit."),
                                       QStringLiteral("dir"));
  const QCommandLineOption window_size(
      {QStringLiteral("window-size")},
      QStringLiteral("Open the window at this size, e.g. 1280x800 (else as last time)."), QStringLiteral("WxH"));
  const QCommandLineOption delay({QStringLiteral("screenshot-delay")},
                                 QStringLiteral("Seconds to wait before the screenshots (default 3)."),
                                 QStringLiteral("seconds"), QStringLiteral("3"));
  const QCommandLineOption replay({QStringLiteral("replay-probe")},
                                  QStringLiteral("Show the probe attention a past run recorded (its run id)."),
                                  QStringLiteral("run"));
  const QCommandLineOption token({QStringLiteral("explore-token")},
                                 QStringLiteral("List this token's nearest neighbours in Model anatomy > Embeddings."),
                                 QStringLiteral("token"));
  // Language models (File ▸ New language model).
  const QCommandLineOption lm_text({QStringLiteral("lm-text")},
                                   QStringLiteral("Open the language-model window on this text file."),
                                   QStringLiteral("file"));
  const QCommandLineOption lm_preset({QStringLiteral("lm-preset")}, QStringLiteral("Language-model preset."),
                                     QStringLiteral("name"));
  const QCommandLineOption lm_set({QStringLiteral("lm-set")},
                                  QStringLiteral("Language-model setting, key=value (repeatable)."),
                                  QStringLiteral("assignment"));
  const QCommandLineOption lm_train({QStringLiteral("lm-train")},
                                    QStringLiteral("Train the language model once the text is read."));
  const QCommandLineOption lm_checkpoint({QStringLiteral("lm-checkpoint")},
                                         QStringLiteral("Load a language-model checkpoint to generate from."),
                                         QStringLiteral("file"));
  const QCommandLineOption lm_prompt({QStringLiteral("lm-prompt")},
                                     QStringLiteral("Generate from this prompt once a language model is there."),
                                     QStringLiteral("text"));
  for (const auto& o : {db,    reverse,     from_english, window_size, preset_opt,  set_opt,       checkpoint,
                        train, compare_opt, translate,    pick_token,  screenshots, delay,         replay,
                        token, lm_text,     lm_preset,    lm_set,      lm_train,    lm_checkpoint, lm_prompt})
    parser.addOption(o);
  parser.process(app);

  ts::ui::MainWindow window(parser.value(db));
  auto* state = window.state();
  QString error;
  if (parser.isSet(preset_opt) && !state->applyPreset(parser.value(preset_opt), &error)) {
    std::fprintf(stderr, "error: --preset: %s\n", qPrintable(error));
    return 2;
  }
  for (const auto& assignment : parser.values(set_opt)) {
    if (!state->applySetting(assignment, &error)) {
      std::fprintf(stderr, "error: --set %s: %s\n", qPrintable(assignment), qPrintable(error));
      return 2;
    }
  }
  // A direction from the command line holds for this start only (not remembered for the file); with
  // a corpus file it is applied once the file is read, which would otherwise open in its own.
  const int direction_flag = into_english || parser.isSet(reverse) ? 0 : parser.isSet(from_english) ? 1 : -1;
  const auto apply_direction_flag = [state, direction_flag] {
    if (direction_flag >= 0) state->setEnglishIsSource(direction_flag == 1, /*remember=*/false);
  };
  if (parser.positionalArguments().isEmpty()) apply_direction_flag();
  QSize window_size_wanted;
  if (parser.isSet(window_size)) {
    const QStringList wh = parser.value(window_size).split(QLatin1Char('x'));
    bool ok_w = false, ok_h = false;
    const int w = wh.size() == 2 ? wh[0].toInt(&ok_w) : 0, h = wh.size() == 2 ? wh[1].toInt(&ok_h) : 0;
    if (!ok_w || !ok_h || w < 320 || h < 240) {
      std::fprintf(stderr, "error: --window-size %s: expected WIDTHxHEIGHT, e.g. 1280x800\n",
                   qPrintable(parser.value(window_size)));
      return 2;
    }
    window_size_wanted = QSize(w, h);
  }
  window.show();
  // After show(): before it, the docks' layouts claim more height than they need once shown, and a
  // resize then is clamped to that (1280 x 800 became 1280 x 932).
  if (window_size_wanted.isValid()) window.resize(window_size_wanted);
  if (!has_cjk_font())
    window.statusBar()->showMessage(QObject::tr("No CJK font installed: Chinese and Japanese text will show as boxes "
                                                "(install fonts-noto-cjk)."),
                                    15000);

  if (!parser.positionalArguments().isEmpty()) {
    // Train only once the corpus is read.
    // A corpus file without --preset switches to the `auto` recipe once it is read: the --set
    // values (checked above) are applied again then, as edits the recipe keeps.
    QStringList sets_after_open = parser.isSet(preset_opt) ? QStringList() : parser.values(set_opt);
    QObject::connect(state, &ts::ui::StudioState::corpusChanged, &window,
                     [&, start = parser.isSet(train), sets = sets_after_open, first = true]() mutable {
                       if (first) apply_direction_flag();
                       first = false;
                       for (const auto& assignment : sets) state->applySetting(assignment);
                       sets.clear();
                       if (start) window.trainingPanel()->start();
                       start = false;
                     });
    window.openCorpus(parser.positionalArguments().first());
  } else if (parser.isSet(train)) {
    QTimer::singleShot(0, window.trainingPanel(), &ts::ui::TrainingPanel::start);
  }
  if (parser.isSet(checkpoint)) window.translation()->loadCheckpoint(parser.value(checkpoint));
  // The panel translates once a model is there (a checkpoint still loading, or a trained model).
  if (parser.isSet(translate)) window.translatePanel()->translateText(parser.value(translate));
  if (parser.isSet(token)) {
    // Once a model is there (a checkpoint still loading, or the first training snapshot).
    QObject::connect(window.translation(), &ts::ui::TranslationService::modelChanged, window.anatomyPanel(),
                     [&window, text = parser.value(token)] { window.anatomyPanel()->findToken(text); });
  }
  const bool language_model = parser.isSet(lm_text) || parser.isSet(lm_checkpoint);
  if (language_model) {
    auto* lm = window.languageModelWindow();
    if (parser.isSet(lm_preset) && !lm->applyPreset(parser.value(lm_preset), &error)) {
      std::fprintf(stderr, "error: --lm-preset: %s\n", qPrintable(error));
      return 2;
    }
    for (const auto& assignment : parser.values(lm_set)) {
      if (!lm->applySetting(assignment, &error)) {
        std::fprintf(stderr, "error: --lm-set %s: %s\n", qPrintable(assignment), qPrintable(error));
        return 2;
      }
    }
    if (parser.isSet(lm_text)) {
      QObject::connect(lm, &ts::ui::LmWindow::textReady, lm, [lm, start = parser.isSet(lm_train)]() mutable {
        if (start && lm->hasText()) lm->startTraining();
        start = false;
      });
      lm->openText(parser.value(lm_text));
    }
    if (parser.isSet(lm_checkpoint)) lm->openCheckpoint(parser.value(lm_checkpoint));
    if (parser.isSet(lm_prompt)) {
      // Generate once, from the first model there (a loaded checkpoint, or the trained one).
      lm->findChild<QLineEdit*>(QStringLiteral("lmPrompt"))->setText(parser.value(lm_prompt));
      auto* once = new QObject(lm);
      const auto try_generate = [lm, once] {
        if (!once->property("done").toBool() && lm->service()->hasModel() && !lm->controller()->isRunning()) {
          once->setProperty("done", true);
          lm->generate();
        }
      };
      QObject::connect(lm->service(), &ts::ui::LmService::modelChanged, once, try_generate);
      QObject::connect(lm->controller(), &ts::ui::TrainingController::stateChanged, once, try_generate);
    }
    window.showLanguageModelWindow();
  }
  if (parser.isSet(compare_opt)) {
    auto* panel = window.comparePanel();
    panel->chooser()->uncheckAll();
    for (const auto& model : parser.values(compare_opt)) {
      if (!panel->chooser()->addModel(model, &error)) {
        std::fprintf(stderr, "error: --compare %s: %s\n", qPrintable(model), qPrintable(error));
        return 2;
      }
    }
    window.showPanel(panel);
    panel->compare();
  }
  if (parser.isSet(replay))
    window.probePanel()->loadRun(window.state()->databasePath(), parser.value(replay).toLongLong());
  if (parser.isSet(screenshots)) {
    const QString dir = parser.value(screenshots);
    const int ms = static_cast<int>(parser.value(delay).toDouble() * 1000);
    // A few seconds before the screenshots, the translated sentence is decoded again with beam
    // search, so the beam view has its tree.
    QTimer::singleShot(std::max(0, ms - 5000), &window, [&window] {
      if (window.translation()->hasModel() && !window.translatePanel()->result().source.isEmpty())
        window.beamTreeView()->decodeWithBeam();
    });
    if (parser.isSet(pick_token))
      QTimer::singleShot(std::max(0, ms - 1000), &window, [&window, index = parser.value(pick_token).toInt()] {
        window.translatePanel()->focusToken(index);
      });
    QTimer::singleShot(ms, &window, [&window, dir, language_model] {
      QString error;
      if (language_model) {
        // The language-model window alone: its loss chart with the generation, then the attention.
        auto* lm = window.languageModelWindow();
        if (!lm->saveScreenshots(dir, &error)) std::fprintf(stderr, "error: %s\n", qPrintable(error));
        lm->controller()->stop();
        lm->controller()->waitForFinished(30000);
        QApplication::exit(error.isEmpty() ? 0 : 1);
        return;
      }
      if (!window.saveScreenshots(dir, &error)) std::fprintf(stderr, "error: %s\n", qPrintable(error));
      window.controller()->stop();
      if (!window.controller()->waitForFinished(30000))
        std::fprintf(stderr, "warning: training did not stop in 30 s\n");
      QApplication::exit(error.isEmpty() ? 0 : 1);
    });
  }
  return app.exec();
}
