// SPDX-License-Identifier: GPL-3.0-or-later
// The Translate panel's model source chooser: the model line, the training-copy and checkpoint buttons.
#include "translate/translate_model_box.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>

#include "services/training_controller.h"
#include "services/translation_service.h"
#include "shell/studio_state.h"

namespace ts::ui {

namespace {

QString format_parameters(qint64 n) {
  if (n >= 1000000) return TranslateModelBox::tr("%1 M parameters").arg(n / 1e6, 0, 'f', 2);
  if (n >= 1000) return TranslateModelBox::tr("%1 k parameters").arg(n / 1e3, 0, 'f', 1);
  return TranslateModelBox::tr("%1 parameters").arg(n);
}

}  // namespace

TranslateModelBox::TranslateModelBox(StudioState* state, TranslationService* service, TrainingController* controller,
                                     QWidget* parent)
    : QGroupBox(parent), state_(state), service_(service), controller_(controller) {
  // No title: the model line says what it is, and height is scarce.
  auto* grid = new QGridLayout(this);
  model_ = new QLabel(this);
  model_->setObjectName(QStringLiteral("translateModel"));
  model_->setWordWrap(true);
  model_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  model_->setMinimumWidth(200);
  use_training_ = new QPushButton(tr("Use current training model"), this);
  use_training_->setObjectName(QStringLiteral("translateUseTraining"));
  use_training_->setToolTip(tr("Translate with a copy of the model being trained, at its current step"));
  load_ = new QPushButton(tr("Load checkpoint…"), this);
  load_->setObjectName(QStringLiteral("translateLoadCheckpoint"));
  load_->setToolTip(tr("Translate with a saved checkpoint (*.ckpt), e.g. best.ckpt of a run"));
  follow_training_ = new QCheckBox(tr("Refresh the training model after each validation"), this);
  follow_training_->setObjectName(QStringLiteral("translateFollowTraining"));
  follow_training_->setChecked(true);
  follow_training_->setToolTip(
      tr("While training, translating first takes a fresh copy of the model when a "
         "validation has run since the copy in use was taken"));
  grid->addWidget(model_, 0, 0, 2, 1);
  grid->addWidget(use_training_, 0, 1);
  grid->addWidget(load_, 0, 2);
  grid->addWidget(follow_training_, 1, 1, 1, 2);
  grid->setColumnStretch(0, 1);

  connect(use_training_, &QPushButton::clicked, this, [this] {
    controller_->requestSnapshot();  // the copy arrives through the service's modelChanged
    model_->setText(tr("Taking a copy of the training model…"));
  });
  connect(load_, &QPushButton::clicked, this, [this] {
    QString start = service_->model().checkpoint.isEmpty() ? state_->runsDirectory()
                                                           : QFileInfo(service_->model().checkpoint).absolutePath();
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Load checkpoint"), start, tr("Checkpoints (*.ckpt);;All files (*)"));
    if (!path.isEmpty()) service_->loadCheckpoint(path);
  });
}

QString TranslateModelBox::noModelText() { return tr("No model yet: train one (Training panel) or load a checkpoint"); }

void TranslateModelBox::updateModelLine(bool loading, const QString& loading_path) {
  if (loading) {
    model_->setText(tr("Loading %1…").arg(QFileInfo(loading_path).fileName().toHtmlEscaped()));
    model_->setToolTip(loading_path);
    return;
  }
  if (!service_->hasModel()) {
    model_->setText(noModelText());
    model_->setToolTip(QString());
    return;
  }
  const ModelInfo& m = service_->model();
  QStringList details;
  if (!m.src_language.isEmpty()) details << QStringLiteral("%1 → %2").arg(m.src_language, m.tgt_language);
  details << tr("step %L1").arg(m.step) << format_parameters(m.parameters)
          << tr("%1+%2 layers, %3 heads").arg(m.encoder_layers).arg(m.decoder_layers).arg(m.heads);
  model_->setText(QStringLiteral("<b>%1</b><br>%2")
                      .arg(m.label.toHtmlEscaped(), details.join(QStringLiteral(" · ")).toHtmlEscaped()));
  model_->setToolTip(m.checkpoint.isEmpty() ? tr("A copy of the model being trained") : m.checkpoint);
}

void TranslateModelBox::setTrainingRunning(bool training) {
  use_training_->setEnabled(training);
  use_training_->setToolTip(training ? tr("Translate with a copy of the model being trained, at its current step")
                                     : tr("Available while a model is training"));
  follow_training_->setEnabled(training);
}

bool TranslateModelBox::followTraining() const { return follow_training_->isChecked(); }

}  // namespace ts::ui
