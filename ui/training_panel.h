// The Training panel: Start / Pause / Resume / Stop, a progress bar with step, epoch, tokens/s and
// ETA, live charts (train loss raw and smoothed, dev loss, learning rate, BLEU/chrF), samples and a log.
#pragma once

#include <QWidget>

namespace ts::ui {

class StudioState;
class TrainingController;

class TrainingPanel : public QWidget {
  Q_OBJECT
 public:
  TrainingPanel(StudioState* state, TrainingController* controller, QWidget* parent = nullptr);

 public Q_SLOTS:
  /// Starts training the current corpus/direction/config (the Start button; F5).
  void start();
};

}  // namespace ts::ui
