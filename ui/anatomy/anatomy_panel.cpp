// SPDX-License-Identifier: GPL-3.0-or-later
// The Model anatomy panel: its tabs, the configuration they follow, and the loaded model's tables
// requested for the Model positions and Embeddings tabs (see anatomy_panel.h).
#include "anatomy/anatomy_panel.h"

#include <QScrollArea>
#include <QTabWidget>
#include <QVBoxLayout>

#include "anatomy/anatomy_util.h"
#include "anatomy/embeddings_tab.h"
#include "anatomy/label_smoothing_tab.h"
#include "anatomy/learning_rate_tab.h"
#include "anatomy/masks_tab.h"
#include "anatomy/model_positions_tab.h"
#include "anatomy/positional_encoding_tab.h"
#include "shell/studio_state.h"

namespace ts::ui {

using anatomy::no_model_message;

namespace {

QWidget* scrolled(QWidget* content) {
  auto* area = new QScrollArea;
  area->setWidgetResizable(true);
  area->setFrameShape(QFrame::NoFrame);
  area->setWidget(content);
  return area;
}

}  // namespace

QList<QPair<int, int>> AnatomyPanel::noamComparisons() { return LearningRateTab::noamComparisons(); }

QList<int> AnatomyPanel::smoothingTargets() { return LabelSmoothingTab::smoothingTargets(); }

AnatomyPanel::AnatomyPanel(StudioState* state, QWidget* parent) : QWidget(parent), state_(state) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  tabs_ = new QTabWidget(this);
  tabs_->setObjectName(QStringLiteral("anatomyTabs"));
  positional_ = new PositionalEncodingTab;
  tabs_->addTab(positional_, tr("Positional encoding"));
  model_positions_ = new ModelPositionsTab;
  model_positions_page_ = scrolled(model_positions_);
  model_positions_page_->setObjectName(QStringLiteral("modelPositionsTab"));
  tabs_->addTab(model_positions_page_, tr("Model positions"));
  learning_rate_ = new LearningRateTab(state_);
  tabs_->addTab(learning_rate_, tr("Learning rate"));
  smoothing_ = new LabelSmoothingTab;
  tabs_->addTab(smoothing_, tr("Label smoothing"));
  masks_ = new MasksTab(state_);
  QWidget* masks_page = scrolled(masks_);
  masks_page->setObjectName(QStringLiteral("masksTab"));
  tabs_->addTab(masks_page, tr("Masks"));
  embeddings_ = new EmbeddingsTab;
  tabs_->addTab(embeddings_, tr("Embeddings"));
  layout->addWidget(tabs_);

  // The model's tables are read when one of their tabs is shown (they cost a pass over the
  // embeddings on the translation thread); spin-box steps are gathered into one request.
  request_timer_.setSingleShot(true);
  request_timer_.setInterval(150);
  connect(&request_timer_, &QTimer::timeout, this, &AnatomyPanel::maybeRequestTables);
  connect(tabs_, &QTabWidget::currentChanged, this, &AnatomyPanel::maybeRequestTables);
  const auto tables_outdated = [this] {
    tables_stale_ = true;
    request_timer_.start();
  };
  connect(model_positions_, &ModelPositionsTab::positionCountChanged, this, tables_outdated);
  connect(embeddings_, &EmbeddingsTab::tokenCountChanged, this, tables_outdated);
  connect(embeddings_, &EmbeddingsTab::tokenChosen, this, &AnatomyPanel::findToken);
  showNoModel(no_model_message());

  connect(state_, &StudioState::configChanged, this, &AnatomyPanel::followConfig);
  connect(state_, &StudioState::corpusChanged, masks_, &MasksTab::redraw);
  connect(state_, &StudioState::directionChanged, masks_, &MasksTab::redraw);
  followConfig();
}

void AnatomyPanel::followConfig() {
  const ExperimentConfig& config = state_->config();
  positional_->followConfig(config);
  learning_rate_->redraw();
  smoothing_->followConfig(config);
  masks_->redraw();
}

// ---- The loaded model's tables ----------------------------------------------------------------

void AnatomyPanel::setTranslationService(TranslationService* service) {
  if (service_) disconnect(service_, nullptr, this, nullptr);
  service_ = service;
  tables_request_ = 0;
  tables_stale_ = true;
  embeddings_->setTranslationService(service);  // for its neighbour searches
  if (!service) {
    showNoModel(no_model_message());
    return;
  }
  connect(service, &TranslationService::modelChanged, this, &AnatomyPanel::modelChanged);
  connect(service, &TranslationService::tablesReady, this, [this](const ModelTables& tables) {
    if (tables.id != tables_request_) return;  // an older request, or someone else's
    tables_request_ = 0;
    showTables(tables);
  });
  if (service->hasModel())
    maybeRequestTables();
  else
    showNoModel(no_model_message());
}

void AnatomyPanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  maybeRequestTables();
}

void AnatomyPanel::modelChanged() {
  tables_stale_ = true;
  const QString reading = tr("Reading the tables of %1\u2026").arg(service_ ? service_->model().label : QString());
  if (tables_.model.isEmpty()) {  // otherwise the previous model's tables stay until the new ones come
    model_positions_->setMessage(reading);
    embeddings_->setMessage(reading);
  }
  maybeRequestTables();
}

void AnatomyPanel::maybeRequestTables() {
  if (!service_ || !service_->hasModel()) return;
  QWidget* current = tabs_->currentWidget();
  if (!tables_stale_ || !isVisible() || (current != model_positions_page_ && current != embeddings_)) return;
  tables_stale_ = false;
  tables_request_ = service_->requestTables(model_positions_->positionCount(), embeddings_->tokenCount());
}

void AnatomyPanel::showNoModel(const QString& message) {
  tables_ = ModelTables();
  tables_.error = message;
  model_positions_->showNoModel(message);
  embeddings_->showNoModel(message);
}

void AnatomyPanel::showTables(const ModelTables& tables) {
  if (!tables.error.isEmpty()) {
    showNoModel(tables.error);
    return;
  }
  tables_ = tables;
  model_positions_->showTables(tables);
  embeddings_->showTables(tables);
}

const TokenNeighbours& AnatomyPanel::neighbours() const { return embeddings_->neighbours(); }

QStringList AnatomyPanel::visibleEmbeddingLabels() const { return embeddings_->visibleLabels(); }

void AnatomyPanel::findToken(const QString& token) {
  tabs_->setCurrentWidget(embeddings_);
  embeddings_->searchToken(token);
}

}  // namespace ts::ui
