#include "config_panel.h"

#include <QLabel>
#include <QVBoxLayout>

namespace ts::ui {

ConfigPanel::ConfigPanel(StudioState* state, QWidget* parent) : QWidget(parent) {
  (void)state;
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(QStringLiteral("ConfigPanel"), this));
}

}  // namespace ts::ui
