#include "history_panel.h"

#include <QLabel>
#include <QVBoxLayout>

namespace ts::ui {

HistoryPanel::HistoryPanel(StudioState* state, TranslationService* service, QWidget* parent) : QWidget(parent) {
  (void)state; (void)service;
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(QStringLiteral("HistoryPanel"), this));
}

void HistoryPanel::refresh() {}

}  // namespace ts::ui
