// SPDX-License-Identifier: GPL-3.0-or-later
#include "shell/launch_options.h"

#include <cstdio>
#include <memory>
#include <string>

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QFontDatabase>
#include <QStatusBar>
#include <QTimer>

#include <unistd.h>

#include "anatomy/anatomy_panel.h"
#include "attention_over_training/probe_panel.h"
#include "compare/compare_panel.h"
#include "compare/system_chooser.h"
#include "configuration/config_panel.h"
#include "language_model/lm_window.h"
#include "services/lm_service.h"
#include "services/training_controller.h"
#include "services/translation_service.h"
#include "shell/main_window.h"
#include "shell/studio_state.h"
#include "training/training_panel.h"
#include "translate/translate_panel.h"
#include "ts/host/blas.h"
#include "ts/host/openmp_policy.h"

namespace ts::ui {

namespace {
constexpr int kMinimumWidth = 320, kMinimumHeight = 240;
constexpr int kNoCjkFontMessageMs = 15000;

// Starts training once the `auto` recipe has been fitted to the corpus just opened and the settings
// given (each fit may change the configuration and start another): a run started before would
// train, and time the machine for, the preset as it stood before its fit.
void start_once_fitted(MainWindow& window) {
  auto* config = window.configPanel();
  if (!config->isFittingRecipe()) {
    window.trainingPanel()->start();
    return;
  }
  auto connection = std::make_shared<QMetaObject::Connection>();
  *connection = QObject::connect(config, &ConfigPanel::recipeFitChanged, &window, [&window, config, connection] {
    if (config->isFittingRecipe()) return;
    QObject::disconnect(*connection);
    window.trainingPanel()->start();
  });
}
}  // namespace

StartArguments take_reverse_flag(int argc, char** argv) {
  StartArguments out;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i > 0 && (arg == "--reverse" || arg == "-reverse")) {
      out.into_english = true;
      continue;
    }
    out.args.push_back(argv[i]);
  }
  out.argc = static_cast<int>(out.args.size());
  out.args.push_back(nullptr);
  return out;
}

StartArguments prepare_start(int argc, char** argv) {
  choose_openmp_wait_policy(argv);
  return take_reverse_flag(argc, argv);
}

void choose_openmp_wait_policy(char** argv) {
  // OpenBLAS's kernels for this CPU are read at load time too: one restart sets both.
  // Started by the desktop front (app/gui/front.cpp) both are set already, and nothing restarts.
  bool restart = set_openblas_core_for_this_cpu();
  if (set_desktop_openmp_policy()) restart = true;
  // Returns only where the restart failed (no /proc, exec refused): the defaults then only cost speed.
  if (restart) restart_this_program(argv);
}

void name_the_application() {
  QApplication::setOrganizationName(QStringLiteral("TransformerStudio"));
  QApplication::setApplicationName(QStringLiteral("transformer-studio"));
  QApplication::setApplicationDisplayName(QStringLiteral("Transformer Studio"));
  QApplication::setApplicationVersion(QStringLiteral(TS_VERSION));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/transformer-studio.svg")));
}

bool has_cjk_font() {
  for (const auto& family : QFontDatabase::families(QFontDatabase::SimplifiedChinese))
    if (QFontDatabase::writingSystems(family).contains(QFontDatabase::SimplifiedChinese)) return true;
  return false;
}

QSize parse_window_size(const QString& text) {
  const QStringList wh = text.split(QLatin1Char('x'));
  bool ok_w = false, ok_h = false;
  const int w = wh.size() == 2 ? wh[0].toInt(&ok_w) : 0, h = wh.size() == 2 ? wh[1].toInt(&ok_h) : 0;
  if (!ok_w || !ok_h || w < kMinimumWidth || h < kMinimumHeight) return {};
  return {w, h};
}

LaunchOptions::LaunchOptions(QCommandLineParser& parser, const QString& description)
    : parser_(parser),
      db_({QStringLiteral("db")}, QStringLiteral("Run history database."), QStringLiteral("file")),
      reverse_({QStringLiteral("reverse")},
               QStringLiteral("Translate into English (the other language is the source); a corpus file opens so "
                              "unless another direction was chosen for it in the app.")),
      from_english_({QStringLiteral("from-english")},
                    QStringLiteral("Translate from English (the demo corpus's direction).")),
      window_size_({QStringLiteral("window-size")},
                   QStringLiteral("Open the window at this size, e.g. 1280x800 (else as last time)."),
                   QStringLiteral("WxH")),
      preset_({QStringLiteral("preset")}, QStringLiteral("Configuration preset."), QStringLiteral("name")),
      set_({QStringLiteral("set")}, QStringLiteral("Hyperparameter, as section.key=value (repeatable)."),
           QStringLiteral("assignment")),
      checkpoint_({QStringLiteral("checkpoint")}, QStringLiteral("Load a checkpoint into the translate panel."),
                  QStringLiteral("file")),
      train_({QStringLiteral("train")}, QStringLiteral("Start training at launch.")),
      compare_({QStringLiteral("compare")},
               QStringLiteral("Compare these models (checkpoints, run directories or model "
                              "folders; repeatable, the first is the baseline) in the Compare panel."),
               QStringLiteral("model")),
      translate_({QStringLiteral("translate")}, QStringLiteral("Translate this text once a model is available."),
                 QStringLiteral("text")),
      replay_({QStringLiteral("replay-probe")},
              QStringLiteral("Show the probe attention a past run recorded (its run id)."), QStringLiteral("run")),
      token_({QStringLiteral("explore-token")},
             QStringLiteral("List this token's nearest neighbours in Model anatomy > Embeddings."),
             QStringLiteral("token")),
      lm_text_({QStringLiteral("lm-text")}, QStringLiteral("Open the language-model window on this text file."),
               QStringLiteral("file")),
      lm_preset_({QStringLiteral("lm-preset")}, QStringLiteral("Language-model preset."), QStringLiteral("name")),
      lm_set_({QStringLiteral("lm-set")}, QStringLiteral("Language-model setting, key=value (repeatable)."),
              QStringLiteral("assignment")),
      lm_train_({QStringLiteral("lm-train")}, QStringLiteral("Train the language model once the text is read.")),
      lm_checkpoint_({QStringLiteral("lm-checkpoint")},
                     QStringLiteral("Load a language-model checkpoint to generate from."), QStringLiteral("file")),
      lm_prompt_({QStringLiteral("lm-prompt")},
                 QStringLiteral("Generate from this prompt once a language model is there."), QStringLiteral("text")) {
  parser_.setApplicationDescription(description);
  parser_.addHelpOption();
  parser_.addVersionOption();
  parser_.addPositionalArgument(QStringLiteral("corpus"),
                                QStringLiteral("Corpus to open (Tatoeba/Anki format); the demo corpus if none."));
  for (const auto* o :
       {&db_, &reverse_, &from_english_, &window_size_, &preset_, &set_, &checkpoint_, &train_, &compare_, &translate_,
        &replay_, &token_, &lm_text_, &lm_preset_, &lm_set_, &lm_train_, &lm_checkpoint_, &lm_prompt_})
    parser_.addOption(*o);
}

QString LaunchOptions::database() const { return parser_.value(db_); }

bool LaunchOptions::languageModel() const { return parser_.isSet(lm_text_) || parser_.isSet(lm_checkpoint_); }

bool LaunchOptions::apply(MainWindow& window, bool into_english, QString* error) {
  auto fail = [error](const QString& text) {
    if (error) *error = text;
    return false;
  };
  auto* state = window.state();
  QString why;
  if (parser_.isSet(preset_) && !state->applyPreset(parser_.value(preset_), &why))
    return fail(QStringLiteral("--preset: %1").arg(why));
  for (const auto& assignment : parser_.values(set_))
    if (!state->applySetting(assignment, &why)) return fail(QStringLiteral("--set %1: %2").arg(assignment, why));
  QSize size;
  if (parser_.isSet(window_size_)) {
    size = parse_window_size(parser_.value(window_size_));
    if (!size.isValid())
      return fail(
          QStringLiteral("--window-size %1: expected WIDTHxHEIGHT, e.g. 1280x800").arg(parser_.value(window_size_)));
  }
  // A direction from the command line holds for this start only (not remembered for the file); with
  // a corpus file it is applied once the file is read, which would otherwise open in its own.
  const int direction_flag = into_english || parser_.isSet(reverse_) ? 0 : parser_.isSet(from_english_) ? 1 : -1;
  const auto apply_direction_flag = [state, direction_flag] {
    if (direction_flag >= 0) state->setEnglishIsSource(direction_flag == 1, /*remember=*/false);
  };
  const QStringList corpus = parser_.positionalArguments();
  if (corpus.isEmpty()) apply_direction_flag();

  window.show();
  // After show(): before it, the docks' layouts claim more height than they need once shown, and a
  // resize then is clamped to that (1280 x 800 became 1280 x 932).
  if (size.isValid()) {
    window.resize(size);
    // As a first start on a screen of that size lays the docks out (the first show sized them for
    // the screen the window opened on).
    if (!window.hasSavedLayout()) window.applyDefaultDockWidths();
  }
  if (!has_cjk_font())
    window.statusBar()->showMessage(QObject::tr("No CJK font installed: Chinese and Japanese text will show as boxes "
                                                "(install fonts-noto-cjk)."),
                                    kNoCjkFontMessageMs);

  if (!corpus.isEmpty()) {
    // Train only once the corpus is read. A corpus file without --preset switches to the `auto`
    // recipe once it is read: the --set values (checked above) are applied again then, as edits the
    // recipe keeps.
    const QStringList sets_after_open = parser_.isSet(preset_) ? QStringList() : parser_.values(set_);
    QObject::connect(state, &StudioState::corpusChanged, &window,
                     [&window, state, apply_direction_flag, start = parser_.isSet(train_), sets = sets_after_open,
                      first = true]() mutable {
                       if (first) apply_direction_flag();
                       first = false;
                       for (const auto& assignment : sets) state->applySetting(assignment);
                       sets.clear();
                       if (start) start_once_fitted(window);
                       start = false;
                     });
    window.openCorpus(corpus.first());
  } else if (parser_.isSet(train_)) {
    QTimer::singleShot(0, window.trainingPanel(), &TrainingPanel::start);
  }
  if (parser_.isSet(checkpoint_)) window.translation()->loadCheckpoint(parser_.value(checkpoint_));
  // The panel translates once a model is there (a checkpoint still loading, or a trained model).
  if (parser_.isSet(translate_)) window.translatePanel()->translateText(parser_.value(translate_));
  if (parser_.isSet(token_)) {
    // Once a model is there (a checkpoint still loading, or the first training snapshot).
    QObject::connect(window.translation(), &TranslationService::modelChanged, window.anatomyPanel(),
                     [&window, text = parser_.value(token_)] { window.anatomyPanel()->findToken(text); });
  }
  if (languageModel() && !applyLanguageModel(window, error)) return false;
  if (parser_.isSet(compare_)) {
    auto* panel = window.comparePanel();
    panel->chooser()->uncheckAll();
    for (const auto& model : parser_.values(compare_))
      if (!panel->chooser()->addModel(model, &why)) return fail(QStringLiteral("--compare %1: %2").arg(model, why));
    window.showPanel(panel);
    panel->compare();
  }
  if (parser_.isSet(replay_)) {
    bool ok = false;
    const qint64 run = parser_.value(replay_).toLongLong(&ok);
    if (!ok || run <= 0)
      return fail(QStringLiteral("--replay-probe %1: expected a run id (a positive number; see the Run history)")
                      .arg(parser_.value(replay_)));
    window.probePanel()->loadRun(state->databasePath(), run);
  }
  return true;
}

bool LaunchOptions::applyLanguageModel(MainWindow& window, QString* error) {
  auto* lm = window.languageModelWindow();
  QString why;
  if (parser_.isSet(lm_preset_) && !lm->applyPreset(parser_.value(lm_preset_), &why)) {
    if (error) *error = QStringLiteral("--lm-preset: %1").arg(why);
    return false;
  }
  for (const auto& assignment : parser_.values(lm_set_)) {
    if (!lm->applySetting(assignment, &why)) {
      if (error) *error = QStringLiteral("--lm-set %1: %2").arg(assignment, why);
      return false;
    }
  }
  if (parser_.isSet(lm_text_)) {
    QObject::connect(lm, &LmWindow::textReady, lm, [lm, start = parser_.isSet(lm_train_)]() mutable {
      if (start && lm->hasText()) lm->startTraining();
      start = false;
    });
    lm->openText(parser_.value(lm_text_));
  }
  if (parser_.isSet(lm_checkpoint_)) lm->openCheckpoint(parser_.value(lm_checkpoint_));
  if (parser_.isSet(lm_prompt_)) {
    // Generate once, from the first model there (a loaded checkpoint, or the trained one).
    lm->setPrompt(parser_.value(lm_prompt_));
    auto* once = new QObject(lm);
    const auto try_generate = [lm, once] {
      if (!once->property("done").toBool() && lm->service()->hasModel() && !lm->controller()->isRunning()) {
        once->setProperty("done", true);
        lm->generate();
      }
    };
    QObject::connect(lm->service(), &LmService::modelChanged, once, try_generate);
    QObject::connect(lm->controller(), &TrainingController::stateChanged, once, try_generate);
  }
  window.showLanguageModelWindow();
  // --window-size applies to this window too (after show(): the first show fits it to the screen).
  if (parser_.isSet(window_size_)) {
    const QSize size = parse_window_size(parser_.value(window_size_));
    if (size.isValid()) lm->resize(size);
  }
  return true;
}

}  // namespace ts::ui
