#include "translate_panel.h"

#include <QLabel>
#include <QVBoxLayout>

namespace ts::ui {

TranslatePanel::TranslatePanel(StudioState* state, TranslationService* service, TrainingController* controller, QWidget* parent) : QWidget(parent) {
  (void)state; (void)service; (void)controller;
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(QStringLiteral("TranslatePanel"), this));
}

void TranslatePanel::translateText(const QString& text) { (void)text; }

}  // namespace ts::ui
