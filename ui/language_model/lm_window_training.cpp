// SPDX-License-Identifier: GPL-3.0-or-later
// LmWindow's training controls: the Run box (Train, Pause, Stop, progress, status), starting a
// run with a new set of curves on the loss chart, following its progress, estimates and end, and
// preparing to resume a checkpoint. The rest of the window is lm_window.cpp.
#include "language_model/lm_window.h"

#include <cmath>

#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QVBoxLayout>

#include "language_model/lm_config_form.h"
#include "language_model/lm_loss_chart.h"
#include "language_model/lm_util.h"
#include "services/lm_service.h"
#include "services/training_controller.h"
#include "shell/studio_state.h"

namespace ts::ui {

using lm_util::number;
using lm_util::q;

QWidget* LmWindow::buildRunControls() {
  auto* run_box = new QGroupBox(tr("Run"));
  auto* run_layout = new QVBoxLayout(run_box);
  auto* buttons = new QHBoxLayout;
  train_ = new QPushButton(tr("Train"));
  train_->setObjectName(QStringLiteral("lmTrain"));
  pause_ = new QPushButton(tr("Pause"));
  pause_->setObjectName(QStringLiteral("lmPause"));
  stop_ = new QPushButton(tr("Stop"));
  stop_->setObjectName(QStringLiteral("lmStop"));
  stop_->setToolTip(tr("Stops after the current step and writes a checkpoint."));
  connect(train_, &QPushButton::clicked, this, [this] { startTraining(); });
  connect(pause_, &QPushButton::clicked, this, [this] {
    if (controller_->state() == TrainingController::State::Paused)
      controller_->resume();
    else
      controller_->pause();
  });
  connect(stop_, &QPushButton::clicked, controller_, &TrainingController::stop);
  buttons->addWidget(train_);
  buttons->addWidget(pause_);
  buttons->addWidget(stop_);
  progress_ = new QProgressBar;
  progress_->setObjectName(QStringLiteral("lmProgress"));
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  progress_->setFormat(QStringLiteral("%p%"));
  run_status_ = new QLabel(tr("Not trained yet."));
  run_status_->setObjectName(QStringLiteral("lmRunStatus"));
  run_status_->setWordWrap(true);
  run_status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  run_layout->addLayout(buttons);
  run_layout->addWidget(progress_);
  run_layout->addWidget(run_status_);
  return run_box;
}

bool LmWindow::startTraining() {
  if (!hasText()) {
    run_status_->setText(tr("Open a text file first."));
    return false;
  }
  if (controller_->isRunning()) return false;
  LmTrainingRequest request;
  request.config = config_;
  request.text_path = info_.path;
  request.database = database_;
  request.resume_checkpoint = resume_checkpoint_;
  request.out_dir =
      !resume_checkpoint_.isEmpty()
          ? QFileInfo(resume_checkpoint_).absolutePath()
          : QDir(runs_directory_)
                .filePath(QStringLiteral("lm-%1-%2")
                              .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")))
                              .arg(++run_counter_));
  if (!controller_->startLanguageModel(request)) return false;
  resume_checkpoint_.clear();
  // A new set of curves for this run, in the next colour.
  const QString label = chart_->addRun(q(config_.kind == LmKind::kBigram ? std::string("bigram") : config_.preset));
  progress_->setValue(0);
  run_status_->setText(tr("Preparing…"));
  log(tr("training %1 on %2").arg(label, info_.path));
  return true;
}

void LmWindow::onStarted() {
  run_status_->setText(tr("Training…"));
  updateButtons();
}

void LmWindow::onProgress(const QVector<ts::TrainingProgress>& steps) {
  if (chart_->curveCount() == 0 || steps.isEmpty()) return;
  for (const auto& p : steps) chart_->addStepLoss(static_cast<double>(p.step), p.loss);
  const auto& p = steps.back();
  if (p.fraction >= 0) progress_->setValue(static_cast<int>(std::lround(p.fraction * 1000)));
  run_status_->setText(tr("step %1 / %2 · loss %3 · %4 tokens/s%5")
                           .arg(number(p.step), number(config_.max_steps))
                           .arg(p.smoothed_loss, 0, 'f', 3)
                           .arg(number(static_cast<qint64>(p.tokens_per_s)))
                           .arg(p.eta_s >= 0 ? tr(" · %1 left").arg(format_duration(p.eta_s)) : QString()));
  chart_->rescale();
  updateBaseline();
}

void LmWindow::onValidated(const ts::ValidationResult& v) {
  if (chart_->curveCount() == 0) return;
  chart_->addEstimate(static_cast<double>(v.step), v.train_loss, v.loss);
  log(tr("step %1: train loss %2, val loss %3%4")
          .arg(v.step)
          .arg(v.train_loss, 0, 'f', 4)
          .arg(v.loss, 0, 'f', 4)
          .arg(v.improved ? tr(" (best)") : QString()));
  chart_->rescale();
  updateBaseline();
}

void LmWindow::onFinished(const ts::TrainingSummary& s) {
  QString text = tr("%1 at step %2: %3.")
                     .arg(QString::fromLatin1(run_status_name(s.status)))
                     .arg(number(s.steps))
                     .arg(q(s.message));
  if (s.validated)
    text += tr(" Last estimate: train %1, val %2 (bigram table %3).")
                .arg(s.last_validation.train_loss, 0, 'f', 3)
                .arg(s.last_validation.loss, 0, 'f', 3)
                .arg(info_.bigram_loss, 0, 'f', 3);
  if (!s.best_checkpoint.empty()) text += tr(" Best checkpoint: %1").arg(q(s.best_checkpoint));
  run_status_->setText(text);
  log(text);
  if (s.status == RunStatus::kFinished) progress_->setValue(progress_->maximum());
  statusBar()->showMessage(tr("Training %1.").arg(QString::fromLatin1(run_status_name(s.status))));
  updateButtons();
  if (close_when_stopped_) {
    close_when_stopped_ = false;
    QMetaObject::invokeMethod(this, &QWidget::close, Qt::QueuedConnection);
  }
}

void LmWindow::onFailed(const QString& message) {
  run_status_->setText(QStringLiteral("⚠ ") + message);
  log(message);
  statusBar()->showMessage(tr("Training could not run."));
  // A run that never started leaves no curves behind.
  chart_->dropEmptyLastRun();
  updateButtons();
  if (close_when_stopped_) {
    close_when_stopped_ = false;
    QMetaObject::invokeMethod(this, &QWidget::close, Qt::QueuedConnection);
  }
}

void LmWindow::chooseResume() {
  const auto path =
      QFileDialog::getOpenFileName(this, tr("Resume training from"), runs_directory_, tr("Checkpoints (*.ckpt)"));
  if (path.isEmpty()) return;
  resumeFrom(path);
}

void LmWindow::resumeFrom(const QString& checkpoint) {
  // The metadata is read (and the file's hash checked) on a worker thread; the weights load on the
  // training thread when the run starts.
  run_status_->setText(tr("Reading %1…").arg(checkpoint));
  service_->inspectCheckpoint(checkpoint);
}

void LmWindow::showResumable(const LmCheckpointInfo& info) {
  config_ = info.config;
  config_form_->showConfig(config_);
  resume_checkpoint_ = info.path;
  resume_text_ = info.text_path;
  QString text = tr("The next run continues %1 from step %2 (set Steps beyond it).")
                     .arg(QFileInfo(info.path).fileName())
                     .arg(info.step);
  if (info.text_path != info_.path) {
    if (QFileInfo(info.text_path).isFile()) {
      pending_text_ = info.text_path;
      service_->inspectText(info.text_path, config_);  // the checkpoint's own tokenizer is used when training
    } else {
      text += tr(" Its text %1 is gone: open it again.").arg(info.text_path);
    }
  }
  run_status_->setText(text);
  log(text);
  updateEstimate();
  Q_EMIT resumeReady();
}

}  // namespace ts::ui
