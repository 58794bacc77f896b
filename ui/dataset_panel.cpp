#include "dataset_panel.h"

#include <QLabel>
#include <QVBoxLayout>

namespace ts::ui {

DatasetPanel::DatasetPanel(StudioState* state, QWidget* parent) : QWidget(parent) {
  (void)state;
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(QStringLiteral("DatasetPanel"), this));
}

}  // namespace ts::ui
