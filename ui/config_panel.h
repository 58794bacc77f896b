// The Configuration panel: presets, every hyperparameter with a tooltip (what it does, its
// default), problems flagged live, parameter count and estimated memory, device and threads,
// save/load as JSON.
#pragma once

#include <QWidget>

namespace ts::ui {

class StudioState;

class ConfigPanel : public QWidget {
  Q_OBJECT
 public:
  ConfigPanel(StudioState* state, QWidget* parent = nullptr);
};

}  // namespace ts::ui
