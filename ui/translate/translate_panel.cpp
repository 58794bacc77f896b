// SPDX-License-Identifier: GPL-3.0-or-later
#include "translate/translate_panel.h"

#include <algorithm>

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>

#include "widgets/attention_heatmap.h"
#include "shell/studio_state.h"
#include "services/training_controller.h"
#include "translate/translate_attention_box.h"
#include "translate/translate_model_box.h"
#include "translate/translate_options_box.h"
#include "translate/translate_output_box.h"

namespace ts::ui {

namespace {

// How long to wait for a requested training snapshot before translating with the model at hand
// (a snapshot comes after the current step; a large model's step can take a few seconds).
constexpr int kSnapshotTimeoutMs = 15000;

// A red that reads on light and dark windows.
QColor error_color(const QPalette& pal) {
  return pal.color(QPalette::Window).lightness() < 128 ? QColor(255, 110, 110) : QColor(200, 30, 30);
}

}  // namespace

TranslatePanel::TranslatePanel(StudioState* state, TranslationService* service, TrainingController* controller,
                               QWidget* parent)
    : QWidget(parent), state_(state), service_(service), controller_(controller) {
  auto* content = new QWidget;
  auto* layout = new QVBoxLayout(content);
  model_box_ = new TranslateModelBox(state_, service_, controller_, this);
  layout->addWidget(model_box_);

  // Input row: language hint, the sentence, the button.
  auto* input_row = new QHBoxLayout;
  direction_ = new QLabel(this);
  direction_->setObjectName(QStringLiteral("translateDirection"));
  direction_->setToolTip(tr("Source → target language of the model that translates"));
  input_ = new QLineEdit(this);
  input_->setObjectName(QStringLiteral("translateInput"));
  input_->setClearButtonEnabled(true);
  QFont input_font = input_->font();
  input_font.setPointSizeF(input_font.pointSizeF() * 1.2);
  input_->setFont(input_font);
  translate_ = new QPushButton(tr("Translate"), this);
  translate_->setObjectName(QStringLiteral("translateButton"));
  input_row->addWidget(direction_);
  input_row->addWidget(input_, 1);
  input_row->addWidget(translate_);
  layout->addLayout(input_row);
  options_box_ = new TranslateOptionsBox(state_, this);
  layout->addWidget(options_box_);

  splitter_ = new QSplitter(Qt::Vertical, this);
  splitter_->setObjectName(QStringLiteral("translateSplitter"));
  splitter_->setChildrenCollapsible(false);
  output_box_ = new TranslateOutputBox(this);
  connect(output_box_, &TranslateOutputBox::tokenClicked, this, &TranslatePanel::focusToken);
  splitter_->addWidget(output_box_);
  attention_box_ = new TranslateAttentionBox(this);
  splitter_->addWidget(attention_box_);
  connect(attention_box_, &TranslateAttentionBox::choiceChanged, this, &TranslatePanel::showAttention);
  splitter_->setStretchFactor(0, 0);  // the output keeps its height, the heatmap takes the rest
  splitter_->setStretchFactor(1, 1);
  connect(splitter_, &QSplitter::splitterMoved, this, [this] { splitter_moved_ = true; });
  layout->addWidget(splitter_, 1);

  // Tall content scrolls instead of squeezing the heatmap when the dock is small.
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(content);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(scroll);

  snapshot_timeout_ = new QTimer(this);
  snapshot_timeout_->setSingleShot(true);
  snapshot_timeout_->setInterval(kSnapshotTimeoutMs);
  connect(snapshot_timeout_, &QTimer::timeout, this, [this] {
    if (!waiting_for_snapshot_) return;
    waiting_for_snapshot_ = false;
    if (service_->hasModel()) {
      send();
    } else {
      output_box_->hideStatus();
      showError(tr("The training model did not arrive in %1 s (training may still be preparing its data). "
                   "Try again in a moment.")
                    .arg(kSnapshotTimeoutMs / 1000));
    }
  });

  connect(input_, &QLineEdit::returnPressed, this, &TranslatePanel::translate);
  connect(translate_, &QPushButton::clicked, this, &TranslatePanel::translate);

  connect(service_, &TranslationService::loading, this, [this](const QString& path) {
    loading_ = true;
    loading_path_ = path;
    updateModelLine();
    updateEnabled();
  });
  connect(service_, &TranslationService::modelChanged, this, [this](const ModelInfo& info) {
    loading_ = false;
    // A checkpoint translates as its configuration says (beam search for `auto`); the model being
    // trained as the Configuration panel says.
    options_box_->setModelDecode(info.decode);
    updateModelLine();
    updateDirectionHint();
    updateEnabled();
    if (waiting_for_snapshot_ || waiting_for_load_) {
      waiting_for_snapshot_ = waiting_for_load_ = waiting_for_model_ = false;
      snapshot_timeout_->stop();
      send();
    } else if (waiting_for_model_) {
      // Asked before there was any model (typed, or --translate at launch while the recipe was still
      // being fitted): the sentence still in the box is translated by the first model that comes.
      waiting_for_model_ = false;
      if (input_->text().trimmed() == pending_text_) send();
    } else if (result_.id != 0 && result_.error.isEmpty() && result_.source == input_->text().trimmed() &&
               !input_->text().trimmed().isEmpty()) {
      // Same sentence, new model: show what this one makes of it (a later step, another checkpoint).
      pending_text_ = result_.source;
      send();
    }
  });
  connect(service_, &TranslationService::loadFailed, this, [this](const QString& path, const QString& message) {
    loading_ = false;
    updateModelLine();
    updateEnabled();
    if (waiting_for_load_) {
      waiting_for_load_ = false;
      output_box_->hideStatus();
      if (service_->hasModel()) send();  // the model in use stays: translate with it
    }
    showError(
        tr("Cannot load checkpoint: %1").arg(message.contains(path) ? message : path + QStringLiteral(": ") + message));
  });
  connect(service_, &TranslationService::translated, this, [this](const TranslationResult& r) {
    if (r.id == latest_id_) showResult(r);  // an older request's answer arriving late is dropped
  });

  connect(controller_, &TrainingController::stateChanged, this, [this](TrainingController::State st) {
    updateEnabled();
    if (st == TrainingController::State::Idle) updateModelLine();  // no copy will come now
  });
  connect(controller_, &TrainingController::started, this, [this] { last_validation_step_ = -1; });
  connect(controller_, &TrainingController::validated, this,
          [this](const ts::ValidationResult& v) { last_validation_step_ = v.step; });

  connect(state_, &StudioState::directionChanged, this, &TranslatePanel::updateDirectionHint);
  connect(state_, &StudioState::corpusChanged, this, &TranslatePanel::updateDirectionHint);

  options_box_->applyDefaults(state_->config().decode);
  updateModelLine();
  updateDirectionHint();
  updateEnabled();
}

DecodeConfig TranslatePanel::decodeConfig() const { return options_box_->decodeConfig(); }
int TranslatePanel::attentionLayer() const { return attention_box_->layer(); }
int TranslatePanel::attentionHead() const { return attention_box_->head(); }
AttentionHeatmap* TranslatePanel::heatmap() const { return attention_box_->heatmap(); }

void TranslatePanel::updateModelLine() { model_box_->updateModelLine(loading_, loading_path_); }

void TranslatePanel::updateDirectionHint() {
  QString src, tgt;
  if (service_->hasModel() && !service_->model().src_language.isEmpty()) {
    src = service_->model().src_language;
    tgt = service_->model().tgt_language;
  } else {
    const QString other = state_->corpus() ? QString::fromStdString(state_->corpus()->other.name) : tr("other");
    const bool english_first = state_->direction().english_is_source;
    src = english_first ? tr("English") : other;
    tgt = english_first ? other : tr("English");
  }
  direction_->setText(QStringLiteral("%1 → %2").arg(src, tgt));
  input_->setPlaceholderText(tr("Type a sentence in %1 and press Enter").arg(src));
  heatmap()->setAxisTitles(tr("output (%1)").arg(tgt), tr("input (%1)").arg(src));
}

void TranslatePanel::updateEnabled() {
  const bool has = service_->hasModel(), training = controller_->isRunning();
  translate_->setEnabled(has || training || loading_);
  translate_->setToolTip(has || training || loading_ ? tr("Translate the sentence (Enter)")
                                                     : TranslateModelBox::noModelText());
  input_->setToolTip(has ? QString() : TranslateModelBox::noModelText());
  model_box_->setTrainingRunning(training);
}

bool TranslatePanel::snapshotIsStale() const {
  const ModelInfo& m = service_->model();
  return controller_->isRunning() && m.checkpoint.isEmpty() && last_validation_step_ > m.step;
}

void TranslatePanel::translateText(const QString& text) {
  input_->setText(text);
  translate();
}

void TranslatePanel::translate() {
  const QString text = input_->text().trimmed();
  if (text.isEmpty()) {
    input_->setFocus();
    return;
  }
  pending_text_ = text;
  const bool training = controller_->isRunning();
  if (loading_) {
    // A checkpoint is on its way: translate with it once it is loaded.
    waiting_for_load_ = true;
    output_box_->hideError();
    output_box_->showStatus(tr("Loading %1…").arg(QFileInfo(loading_path_).fileName()));
    return;
  }
  if (!service_->hasModel() && !training) {
    latest_id_ = 0;  // nothing in flight is wanted any more
    result_ = TranslationResult();
    output_box_->clearResult();
    heatmap()->clear(tr("Translate a sentence to see its attention."));
    showError(TranslateModelBox::noModelText() + tr(". This sentence is translated as soon as there is one."));
    waiting_for_model_ = true;
    fitOutput();
    return;
  }
  waiting_for_model_ = false;
  if (training && (!service_->hasModel() || (model_box_->followTraining() && snapshotIsStale()))) {
    // Take a fresh copy of the training model first; send() runs when it arrives.
    waiting_for_snapshot_ = true;
    controller_->requestSnapshot();
    snapshot_timeout_->start();
    output_box_->hideError();
    output_box_->showStatus(tr("Taking a copy of the training model…"));
    return;
  }
  send();
}

void TranslatePanel::send() {
  if (pending_text_.isEmpty()) return;
  output_box_->hideError();
  latest_id_ = service_->translate(pending_text_, decodeConfig(), true);
  output_box_->showStatus(tr("Translating…"));
}

void TranslatePanel::showError(const QString& message) { output_box_->showError(message, error_color(palette())); }

void TranslatePanel::showResult(const TranslationResult& r) {
  output_box_->hideStatus();
  result_ = r;
  if (!r.error.isEmpty()) {
    output_box_->clearResult();
    heatmap()->clear(tr("No attention: the translation failed."));
    showError(tr("Translation failed: %1").arg(r.error));
    fitOutput();
    return;
  }
  // The service answers in order on one thread, so the model it reported last is the one that
  // translated when the result does not name it.
  const QString model = r.model.isEmpty() ? service_->model().label : r.model;
  output_box_->showResult(r, model);
  heatmap()->highlightRow(-1);  // a new sentence: no token picked
  fitOutput();
  attention_box_->followModel(r);
  showAttention();
}

void TranslatePanel::fitOutput() {
  output_box_->fitNbestTable();
  QTimer::singleShot(0, this, &TranslatePanel::fitSplitter);
}

// QSplitter keeps the sizes it started with; give the output the height it now needs (the heatmap
// the rest) unless the user has placed the handle.
void TranslatePanel::fitSplitter() {
  if (splitter_moved_ || !splitter_->isVisible()) return;
  const auto sizes = splitter_->sizes();
  const int total = sizes.value(0) + sizes.value(1);
  const int rest = splitter_->widget(1)->minimumSizeHint().height();
  const int out = std::max(0, std::min(output_box_->sizeHint().height(), total - rest));
  if (total > 0 && out != sizes.value(0)) splitter_->setSizes({out, total - out});
}

void TranslatePanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  QTimer::singleShot(0, this, &TranslatePanel::fitSplitter);
}

void TranslatePanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  QTimer::singleShot(0, this, &TranslatePanel::fitSplitter);
}

// The heatmap for the chosen layer and head; the token tooltips name what each token attended to in it.
void TranslatePanel::showAttention() {
  attention_box_->showAttention(result_);
  output_box_->updateTokenTips(result_, *heatmap());
  if (output_box_->focusedToken() >= 0) focusToken(output_box_->focusedToken());  // the new layer's or head's weights
}

void TranslatePanel::focusToken(int index) {
  heatmap()->highlightRow(index);
  output_box_->showTokenFocus(index, *heatmap());
  fitOutput();
}

}  // namespace ts::ui
