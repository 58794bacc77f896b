#include "training_panel.h"

#include <QLabel>
#include <QVBoxLayout>

namespace ts::ui {

TrainingPanel::TrainingPanel(StudioState* state, TrainingController* controller, QWidget* parent) : QWidget(parent) {
  (void)state; (void)controller;
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(QStringLiteral("TrainingPanel"), this));
}

void TrainingPanel::start() {}

}  // namespace ts::ui
