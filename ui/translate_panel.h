// The Translate panel: a text box (Enter translates), decoding options, the translation with its
// score, the n-best list, latency, and which source tokens each output token attended to.
#pragma once

#include <QWidget>

namespace ts::ui {

class StudioState;
class TrainingController;
class TranslationService;

class TranslatePanel : public QWidget {
  Q_OBJECT
 public:
  TranslatePanel(StudioState* state, TranslationService* service, TrainingController* controller, QWidget* parent = nullptr);

 public Q_SLOTS:
  /// Puts `text` in the input box and translates it with the current options.
  void translateText(const QString& text);
};

}  // namespace ts::ui
