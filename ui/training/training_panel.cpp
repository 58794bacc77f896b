// SPDX-License-Identifier: GPL-3.0-or-later
#include "training/training_panel.h"

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QTabWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "ts/train/auto_fit.h"
#include "widgets/bidi_delegate.h"
#include "widgets/plot_style.h"
#include "shell/studio_state.h"
#include "services/training_controller.h"
#include "ts/train/run_recorder.h"

namespace ts::ui {

namespace {
constexpr int kMaxSampleRows = 200;

QString number(double v, int precision = 3) { return QString::number(v, 'g', precision); }

QCPGraph* add_graph(QCustomPlot* chart, const QString& name, QColor color, double width,
                    QCPScatterStyle::ScatterShape scatter = QCPScatterStyle::ssNone) {
  auto* g = chart->addGraph();
  g->setName(name);
  g->setPen(QPen(color, width));
  if (scatter != QCPScatterStyle::ssNone) g->setScatterStyle(QCPScatterStyle(scatter, color, color, 6));
  return g;
}
}  // namespace

TrainingPanel::TrainingPanel(StudioState* state, TrainingController* controller, QWidget* parent)
    : QWidget(parent), state_(state), controller_(controller) {
  start_ = new QPushButton(tr("Start"), this);
  start_->setObjectName(QStringLiteral("trainStart"));
  start_->setToolTip(tr("Train the current corpus, direction and configuration (F5)"));
  pause_ = new QPushButton(tr("Pause"), this);
  pause_->setObjectName(QStringLiteral("trainPause"));
  pause_->setToolTip(tr("Hold training between steps; Resume continues exactly where it stopped (F6)"));
  stop_ = new QPushButton(tr("Stop"), this);
  stop_->setObjectName(QStringLiteral("trainStop"));
  stop_->setToolTip(tr("Stop after the current step and write a checkpoint (Shift+F5)"));
  name_ = new QLineEdit(this);
  name_->setObjectName(QStringLiteral("trainRunName"));
  name_->setPlaceholderText(tr("run name (optional)"));
  name_->setToolTip(tr("Name of the run in the history; a name is generated when empty"));
  status_ = new QLabel(tr("Ready"), this);
  status_->setObjectName(QStringLiteral("trainStatus"));

  // "Train for": the run's time budget (train.budget_minutes), kept in StudioState and QSettings.
  auto* budget_label = new QLabel(tr("Train &for:"), this);
  budget_ = new QComboBox(this);
  budget_->setObjectName(QStringLiteral("trainBudget"));
  // Short budgets first: a newcomer's first run, or a check that a corpus trains at all.
  const QList<QPair<QString, double>> budgets{{tr("1 min"), 1},         {tr("2 min"), 2},          {tr("3 min"), 3},
                                              {tr("5 min"), 5},         {tr("10 min"), 10},        {tr("20 min"), 20},
                                              {tr("30 min"), 30},       {tr("1 h"), 60},           {tr("2 h"), 120},
                                              {tr("custom\u2026"), -1}, {tr("until I stop it"), 0}};
  for (const auto& [text, minutes] : budgets) budget_->addItem(text, minutes);
  budget_minutes_ = new QDoubleSpinBox(this);
  budget_minutes_->setObjectName(QStringLiteral("trainBudgetMinutes"));
  budget_minutes_->setDecimals(2);
  budget_minutes_->setRange(0.01, kMaxBudgetMinutes);
  budget_minutes_->setValue(kDefaultBudgetMinutes);
  budget_minutes_->setSuffix(tr(" min"));
  budget_minutes_->setKeyboardTracking(false);  // applied when typing is done, not at every digit
  budget_minutes_->hide();
  budget_cap_ = new QLabel(this);
  budget_cap_->setObjectName(QStringLiteral("trainBudgetCap"));
  budget_cap_->hide();
  const QString budget_tip =
      tr("How long the run may take. The learning rate (linear and cosine schedules) decays to zero exactly at the "
         "deadline, validations are spread over the budget, and the run ends on time with a final validation. "
         "Validations count towards the budget; paused time does not.\n\n\u201cuntil I stop it\u201d: no budget; the "
         "preset's own limits (max steps, epochs, minutes) apply.");
  budget_->setToolTip(budget_tip);
  budget_minutes_->setToolTip(budget_tip);
  budget_label->setToolTip(budget_tip);
  budget_label->setBuddy(budget_);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(start_);
  buttons->addWidget(budget_label);
  buttons->addWidget(budget_);
  buttons->addWidget(budget_minutes_);
  buttons->addWidget(budget_cap_);
  buttons->addWidget(pause_);
  buttons->addWidget(stop_);
  buttons->addWidget(name_, 1);
  buttons->addWidget(status_);

  progress_ = new QProgressBar(this);
  progress_->setObjectName(QStringLiteral("trainProgress"));
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  // The text stands beside the bar, not on it: on the bar it would be split across the fill edge
  // in two colours. The bar keeps it as its format (for accessibility and tests).
  progress_->setTextVisible(false);
  progress_text_ = new QLabel(this);
  progress_text_->setObjectName(QStringLiteral("trainProgressText"));
  progress_text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  setProgressText(tr("not started"));
  stats_ = new QLabel(this);
  stats_->setObjectName(QStringLiteral("trainStats"));
  stats_->setWordWrap(true);
  stats_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  // A short axis title: the chart can be under 100 px tall, and a longer one was cut there.
  loss_chart_ = makeChart(QStringLiteral("lossChart"), tr("loss / token"));
  loss_chart_->setToolTip(
      tr("Cross-entropy per target token (nats): the training loss at each step, its moving "
         "average, and the dev loss at each validation."));
  add_graph(loss_chart_, tr("train loss"), series_color(0).lighter(140), 1)->setAdaptiveSampling(true);
  add_graph(loss_chart_, tr("smoothed"), series_color(0), 2);
  add_graph(loss_chart_, tr("dev loss"), series_color(1), 2, QCPScatterStyle::ssCircle);
  legend_above_plot(loss_chart_);
  lr_chart_ = makeChart(QStringLiteral("lrChart"), tr("learning rate"));
  add_graph(lr_chart_, tr("learning rate"), series_color(4), 2);
  {
    // Why the curve steps down at each validation: a budgeted schedule follows the clock, and a
    // validation takes time but no steps.
    const QString why =
        tr("With a time budget the rate follows the clock and reaches zero at the deadline; a validation "
           "takes time but no steps, so the curve steps down across each one.");
    auto* note = lr_note_ = new QCPTextElement(lr_chart_, tr("follows the clock: steps down across each validation"),
                                               QFont(font().family(), std::max(7, font().pointSize() - 1)));
    note->setObjectName(QStringLiteral("lrChartNote"));
    note->setTextColor(palette().color(QPalette::PlaceholderText));
    lr_chart_->plotLayout()->addElement(lr_chart_->plotLayout()->rowCount(), 0, note);
    lr_chart_->plotLayout()->setRowStretchFactor(lr_chart_->plotLayout()->rowCount() - 1, 0.001);
    lr_chart_->setToolTip(why);
  }
  metric_chart_ = makeChart(QStringLiteral("metricChart"), tr("dev score"));
  add_graph(metric_chart_, tr("BLEU"), series_color(2), 2, QCPScatterStyle::ssDisc);
  add_graph(metric_chart_, tr("chrF"), series_color(3), 2, QCPScatterStyle::ssSquare);
  legend_above_plot(metric_chart_);

  samples_ = new QTableWidget(0, 4, this);
  samples_->setObjectName(QStringLiteral("trainSamples"));
  samples_->setItemDelegate(new BidiItemDelegate(samples_));  // an Arabic sentence reads right to left
  samples_->setHorizontalHeaderLabels({tr("step"), tr("source"), tr("reference"), tr("model output")});
  // Step as narrow as it can be; source, reference and output share the rest equally.
  samples_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  samples_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  samples_->verticalHeader()->hide();
  samples_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  samples_->setWordWrap(true);
  log_ = new QPlainTextEdit(this);
  log_->setObjectName(QStringLiteral("trainLog"));
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(5000);
  log_->setLineWrapMode(QPlainTextEdit::WidgetWidth);  // long lines (the recipe, the budget) readable without scrolling
  auto* bottom = new QTabWidget(this);
  bottom->addTab(samples_, tr("Samples"));
  bottom->addTab(log_, tr("Log"));

  auto* small_charts = new QSplitter(Qt::Horizontal, this);
  small_charts->addWidget(lr_chart_);
  small_charts->addWidget(metric_chart_);
  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(loss_chart_);
  splitter->addWidget(small_charts);
  splitter->addWidget(bottom);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  splitter->setStretchFactor(2, 2);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  auto* progress_row = new QHBoxLayout;
  progress_row->addWidget(progress_, 2);
  progress_row->addWidget(progress_text_, 3);
  layout->addLayout(progress_row);
  layout->addWidget(stats_);
  layout->addWidget(splitter, 1);

  connect(start_, &QPushButton::clicked, this, &TrainingPanel::start);
  connect(pause_, &QPushButton::clicked, this, &TrainingPanel::togglePause);
  connect(stop_, &QPushButton::clicked, this, &TrainingPanel::stop);
  connect(budget_, &QComboBox::currentIndexChanged, this, &TrainingPanel::onBudgetChosen);
  connect(budget_minutes_, &QDoubleSpinBox::valueChanged, this, [this](double minutes) {
    if (budget_->currentData().toDouble() < 0) state_->setBudgetMinutes(minutes);
  });
  connect(state_, &StudioState::configChanged, this, &TrainingPanel::showBudget);
  connect(controller_, &TrainingController::stateChanged, this, &TrainingPanel::onState);
  connect(controller_, &TrainingController::phaseChanged, this, &TrainingPanel::onPhase);
  connect(controller_, &TrainingController::started, this, &TrainingPanel::onStarted);
  connect(controller_, &TrainingController::progress, this, &TrainingPanel::onProgress);
  connect(controller_, &TrainingController::validated, this, &TrainingPanel::onValidated);
  connect(controller_, &TrainingController::finished, this, &TrainingPanel::onFinished);
  connect(controller_, &TrainingController::logLine, this, &TrainingPanel::appendLog);
  connect(controller_, &TrainingController::checkpointSaved, this, [this](const ts::CheckpointEvent& c) {
    appendLog(tr("checkpoint %1 (%2) at step %3")
                  .arg(QString::fromStdString(c.path), QString::fromLatin1(ts::checkpoint_kind_name(c.kind)))
                  .arg(c.step));
  });
  connect(controller_, &TrainingController::failed, this, [this](const QString& message) {
    status_->setText(tr("Failed"));
    appendLog(tr("error: %1").arg(message));
    if (!controller_->isRunning()) setProgressText(tr("failed: %1").arg(message.section(QLatin1Char('\n'), 0, 0)));
  });
  showBudget();
  onState();
}

double TrainingPanel::budgetMinutes() const {
  const double minutes = budget_->currentData().toDouble();
  return minutes < 0 ? budget_minutes_->value() : minutes;
}

// The control follows the configuration's budget (a preset keeps it; a loaded file or the
// Configuration panel may change it). A value not in the list shows as a custom number of minutes.
void TrainingPanel::showBudget() {
  const double minutes = state_->budgetMinutes();
  // The configuration's own time limit (the demo preset's 2 minutes) ends the run before the budget
  // does: said beside the control, so that "Train for: 20 min" does not promise what the run won't do.
  const double cap = state_->config().train.max_minutes;
  const bool capped = cap > 0 && (minutes <= 0 || cap < minutes);
  if (capped) {
    const QString limit = QString::fromStdString(ts::minutes_text(cap));
    budget_cap_->setText(tr("ends at %1 (time limit)").arg(limit));
    budget_cap_->setToolTip(
        tr("This configuration's own time limit, train.max_minutes = %1, ends the run before \u201cTrain for\u201d "
           "does%2. Change or clear it in the Configuration panel.")
            .arg(cap)
            .arg(minutes > 0 ? tr(": the budget's deadline moves to %1 (its validations, and a linear or cosine "
                                  "learning rate's decay to zero)")
                                   .arg(limit)
                             : QString()));
  }
  budget_cap_->setVisible(capped);
  if (std::abs(budgetMinutes() - minutes) < 1e-9) return;
  const QSignalBlocker block_choice(budget_), block_minutes(budget_minutes_);
  int index = -1;
  for (int i = 0; i < budget_->count() && index < 0; ++i) {
    const double choice = budget_->itemData(i).toDouble();
    if (choice >= 0 && std::abs(choice - minutes) < 1e-9) index = i;
  }
  const bool custom = index < 0;
  if (custom) {
    index = budget_->findData(-1.0);
    budget_minutes_->setValue(minutes);
  }
  budget_->setCurrentIndex(index);
  budget_minutes_->setVisible(custom);
}

void TrainingPanel::onBudgetChosen() {
  const double minutes = budget_->currentData().toDouble();
  const bool custom = minutes < 0;
  budget_minutes_->setVisible(custom);
  if (!custom) {
    state_->setBudgetMinutes(minutes);
    return;
  }
  // A custom number of minutes starts from the budget in force.
  if (state_->budgetMinutes() > 0) {
    const QSignalBlocker block(budget_minutes_);
    budget_minutes_->setValue(state_->budgetMinutes());
  }
  state_->setBudgetMinutes(budget_minutes_->value());
  budget_minutes_->setFocus();
  budget_minutes_->selectAll();
}

QCustomPlot* TrainingPanel::makeChart(const QString& object_name, const QString& y_label) {
  auto* chart = new QCustomPlot(this);
  chart->setObjectName(object_name);
  chart->setMinimumHeight(140);
  style_plot(chart);
  chart->xAxis->setLabel(tr("step"));
  chart->yAxis->setLabel(y_label);
  return chart;
}

void TrainingPanel::setProgressText(const QString& text) {
  progress_->setFormat(text);
  progress_text_->setText(text);
}

void TrainingPanel::start() {
  if (controller_->isRunning()) return;
  if (state_->isLoading()) {
    status_->setText(tr("Wait for the corpus to finish loading"));
    return;
  }
  const auto& direction = state_->direction();
  TrainingRequest request;
  request.corpus = state_->corpus();
  request.corpus_path = state_->corpusPath();
  request.direction = direction;
  request.config = state_->config();  // train.budget_minutes is "Train for" (the control sets it in the state)
  // An `auto` configuration is fitted again on the training thread (see TrainingController::work);
  // the fit the Configuration panel made it from tells the person's own edits from the recipe's.
  if (request.config.preset == "auto") request.auto_fit = state_->autoFit();
  request.database = state_->databasePath();
  request.name = name_->text().trimmed();
  request.out_dir = QString::fromStdString(
      default_run_directory(state_->runsDirectory().toStdString(), request.corpus_path.toStdString(), direction.str()));
  clearCharts();
  best_bleu_ = last_bleu_ = last_chrf_ = last_dev_loss_ = -1;
  have_progress_ = false;
  first_step_ = 0;
  samples_->setRowCount(0);
  const double budget = request.config.train.budget_minutes;
  lr_note_->setVisible(budget > 0);  // without a budget the rate follows the steps
  appendLog(tr("starting: %1, %2, preset %3, %4")
                .arg(state_->isDemo() ? tr("demo corpus") : QFileInfo(state_->corpusPath()).fileName(),
                     QString::fromStdString(direction.str()), QString::fromStdString(request.config.preset),
                     budget > 0 ? tr("for %1").arg(format_budget(budget)) : tr("until stopped")));
  controller_->start(request);
}

void TrainingPanel::togglePause() {
  if (controller_->state() == TrainingController::State::Paused)
    controller_->resume();
  else
    controller_->pause();
}

void TrainingPanel::stop() { controller_->stop(); }

void TrainingPanel::onState() {
  using S = TrainingController::State;
  const S s = controller_->state();
  start_->setEnabled(s == S::Idle);
  name_->setEnabled(s == S::Idle);
  budget_->setEnabled(s == S::Idle);
  budget_minutes_->setEnabled(s == S::Idle);
  pause_->setEnabled(s == S::Training || s == S::Paused);
  pause_->setText(s == S::Paused ? tr("Resume") : tr("Pause"));
  stop_->setEnabled(s == S::Preparing || s == S::Training || s == S::Paused);
  switch (s) {
    case S::Idle:
      break;  // onFinished / failed say how it ended
    case S::Preparing:
      status_->setText(tr("Preparing data…"));
      progress_->setRange(0, 0);  // indeterminate while tokenizers and vocabularies are built
      break;
    case S::Training:
      status_->setText(tr("Training"));
      break;
    case S::Paused:
      status_->setText(tr("Paused"));
      break;
    case S::Stopping:
      status_->setText(tr("Stopping: writing a checkpoint…"));
      break;
  }
  if (s != S::Preparing && progress_->maximum() == 0) progress_->setRange(0, 1000);
}

void TrainingPanel::onStarted(const ts::TrainingStart& start) {
  start_info_ = start;
  first_step_ = start.start_step;
  progress_->setRange(0, 1000);
  appendLog(
      tr("training %L1 parameters on %2 (%3 threads): %L4 train / %L5 dev / %L6 test pairs, %L7 batches per epoch%8")
          .arg(start.parameters)
          .arg(QString::fromStdString(start.device))
          .arg(start.threads)
          .arg(static_cast<qulonglong>(start.train_pairs))
          .arg(static_cast<qulonglong>(start.dev_pairs))
          .arg(static_cast<qulonglong>(start.test_pairs))
          .arg(start.batches_per_epoch)
          .arg(start.start_step > 0 ? tr(", resuming at step %1").arg(start.start_step) : QString()));
}

void TrainingPanel::onProgress(const QVector<ts::TrainingProgress>& steps) {
  if (steps.isEmpty()) return;
  auto* raw = loss_chart_->graph(0);
  auto* smooth = loss_chart_->graph(1);
  auto* lr = lr_chart_->graph(0);
  for (const auto& p : steps) {
    raw->addData(static_cast<double>(p.step), p.loss);
    smooth->addData(static_cast<double>(p.step), p.smoothed_loss);
    lr->addData(static_cast<double>(p.step), p.lr);
  }
  const auto& p = steps.back();
  const int max_steps = state_->config().train.max_steps;
  QString text = max_steps > 0 ? tr("step %L1 / %L2").arg(p.step).arg(max_steps) : tr("step %L1").arg(p.step);
  text += tr(" · epoch %1 (%2%)")
              .arg(p.epoch + 1)
              .arg(p.batches_per_epoch > 0 ? 100 * p.batch_in_epoch / p.batches_per_epoch : 0);
  text += tr(" · %L1 tok/s").arg(static_cast<qlonglong>(std::lround(p.tokens_per_s)));
  if (p.budget_left_s >= 0) {
    text += tr(" · %1 left in the budget").arg(format_duration(p.budget_left_s));
    // Another limit (max steps, epochs or minutes) ends the run before the budget does.
    if (p.eta_s >= 0 && p.eta_s < p.budget_left_s - 1) text += tr(" · ETA %1").arg(format_duration(p.eta_s));
  } else if (p.eta_s >= 0) {
    text += tr(" · ETA %1").arg(format_duration(p.eta_s));
  }
  // The bar follows the nearest limit (the budget, when there is one: core sets the fraction from
  // it); without a step/time/epoch limit or budget, it shows progress through the current epoch.
  const double fraction =
      p.fraction >= 0 ? p.fraction : (p.batches_per_epoch > 0 ? double(p.batch_in_epoch) / p.batches_per_epoch : 0);
  progress_->setValue(static_cast<int>(std::lround(1000 * fraction)));
  setProgressText(text);
  last_progress_ = p;
  have_progress_ = true;
  showStats();
  rescale(loss_chart_);
  rescale(lr_chart_);
}

// The summary under the bar: the latest step, and the latest validation (each one, the final one
// included, replaces the one before) with the best BLEU so far.
void TrainingPanel::showStats() {
  QStringList parts;
  if (have_progress_) {
    const auto& p = last_progress_;
    parts << tr("loss %1 (smoothed %2) · lr %3 · elapsed %4")
                 .arg(number(p.loss, 4), number(p.smoothed_loss, 4), number(p.lr, 3), format_duration(p.elapsed_s));
  }
  if (last_dev_loss_ >= 0) {
    QString validation = tr("dev loss %1").arg(number(last_dev_loss_, 4));
    if (last_bleu_ >= 0)
      validation +=
          tr(" · BLEU %1, chrF %2").arg(QString::number(last_bleu_, 'f', 2), QString::number(last_chrf_, 'f', 2));
    if (best_bleu_ > last_bleu_ + 1e-9) validation += tr(" (best %1)").arg(QString::number(best_bleu_, 'f', 2));
    parts << validation;
  }
  if (start_info_.parameters > 0)
    parts << tr("%L1 parameters on %2").arg(start_info_.parameters).arg(QString::fromStdString(start_info_.device));
  stats_->setText(parts.join(QStringLiteral(" · ")));
}

void TrainingPanel::onValidated(const ts::ValidationResult& v) {
  if (!v.scored) {  // no dev pairs: a checkpoint only, no point for the charts
    appendLog(tr("checkpoint at step %1: no dev pairs to validate on (data.dev = 0), so best.ckpt follows the latest "
                 "weights")
                  .arg(v.step));
    return;
  }
  last_dev_loss_ = v.loss;
  if (v.sentences > 0) {  // BLEU and chrF only when dev sentences were decoded
    last_bleu_ = v.bleu;
    last_chrf_ = v.chrf;
    best_bleu_ = std::max(best_bleu_, v.bleu);
  }
  showStats();
  loss_chart_->graph(2)->addData(static_cast<double>(v.step), v.loss);
  metric_chart_->graph(0)->addData(static_cast<double>(v.step), v.bleu);
  metric_chart_->graph(1)->addData(static_cast<double>(v.step), v.chrf);
  rescale(loss_chart_);
  rescale(metric_chart_);
  for (auto it = v.samples.rbegin(); it != v.samples.rend(); ++it) {
    samples_->insertRow(0);
    const QStringList cells{QString::number(v.step), QString::fromStdString(it->source),
                            QString::fromStdString(it->reference), QString::fromStdString(it->hypothesis)};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      item->setToolTip(cells[c]);
      samples_->setItem(0, c, item);
    }
  }
  while (samples_->rowCount() > kMaxSampleRows) samples_->removeRow(samples_->rowCount() - 1);
  // With weight averaging, the final validation also scores the weights as trained.
  QString as_trained;
  if (v.bleu_as_trained >= 0) {
    as_trained = tr(" (weights as trained: BLEU %1").arg(QString::number(v.bleu_as_trained, 'f', 2));
    if (v.chrf_as_trained >= 0) as_trained += tr(", chrF %1").arg(QString::number(v.chrf_as_trained, 'f', 2));
    as_trained += QLatin1Char(')');
  }
  appendLog(tr("validation at step %1: dev loss %2, perplexity %3, BLEU %4, chrF %5 (%6 sentences, %7 s)%8")
                .arg(v.step)
                .arg(number(v.loss, 4), number(v.perplexity, 4), QString::number(v.bleu, 'f', 2),
                     QString::number(v.chrf, 'f', 2))
                .arg(static_cast<qulonglong>(v.sentences))
                .arg(QString::number(v.seconds, 'f', 1))
                .arg(v.improved ? tr(", best so far") : QString()) +
            as_trained);
}

void TrainingPanel::onFinished(const ts::TrainingSummary& s) {
  const QString status = QString::fromLatin1(run_status_name(s.status));
  status_->setText(s.status == RunStatus::kFailed ? tr("Failed") : tr("Done: %1").arg(status));
  if (s.status == RunStatus::kFinished) progress_->setValue(1000);
  setProgressText(tr("%1 at step %L2 · %3 · %L4 tok/s on average")
                      .arg(status)
                      .arg(s.steps)
                      .arg(QString::fromStdString(s.message))
                      .arg(static_cast<qlonglong>(std::lround(s.average_tokens_per_s))));
  appendLog(tr("%1: %2 (%3 steps, %4 of training)")
                .arg(status, QString::fromStdString(s.message))
                .arg(s.steps)
                .arg(format_duration(s.seconds)));
  if (!s.best_checkpoint.empty()) appendLog(tr("best checkpoint: %1").arg(QString::fromStdString(s.best_checkpoint)));
}

// Before the first step the status says what the session is doing: timing the machine for the
// recipe can take seconds, tokenizers on a large corpus longer.
void TrainingPanel::onPhase(ts::SessionPhase phase) {
  using P = ts::SessionPhase;
  if (controller_->state() != TrainingController::State::Preparing) return;
  switch (phase) {
    case P::kFittingRecipe:
      status_->setText(tr("Timing this machine and fitting the recipe\u2026"));
      break;
    case P::kPreparingData:
      status_->setText(tr("Preparing data: split, tokenizers, encoding\u2026"));
      break;
    case P::kConnecting:
      status_->setText(tr("Connecting the data-parallel ranks\u2026"));
      break;
    case P::kStartingHistory:
      status_->setText(tr("Opening the run history\u2026"));
      break;
    case P::kTraining:
      status_->setText(tr("Building the model\u2026"));
      break;
  }
}

void TrainingPanel::appendLog(const QString& line) {
  log_->appendPlainText(QStringLiteral("[%1] %2").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")), line));
}

void TrainingPanel::clearCharts() {
  for (auto* chart : {loss_chart_, lr_chart_, metric_chart_}) {
    for (int i = 0; i < chart->graphCount(); ++i) chart->graph(i)->data()->clear();
    chart->xAxis->setRange(0, 1);  // nothing of the last run's scale stays
    chart->yAxis->setRange(0, 1);
    chart->replot();
  }
  progress_->setValue(0);
  setProgressText(tr("starting…"));
  stats_->clear();
}

// The axes from this run's data alone: QCustomPlot keeps an axis's old range where there is no data
// and keeps its old size around a single point, so a new run's first validation would be drawn on the
// last run's steps. The x-axis runs from the run's first step; a little headroom on the right and
// above and below so that the last markers are not cut by the frame.
void TrainingPanel::rescale(QCustomPlot* chart) {
  bool has_data = false;
  for (int i = 0; i < chart->graphCount(); ++i) has_data = has_data || !chart->graph(i)->data()->isEmpty();
  if (has_data) chart->rescaleAxes();
  const double first = static_cast<double>(first_step_);
  const double last = has_data ? std::max(chart->xAxis->range().upper, first + 1) : first + 1;
  chart->xAxis->setRange(first, last + 0.03 * (last - first));
  auto y = has_data ? chart->yAxis->range() : QCPRange(0, 1);
  if (y.size() <= 0)
    y = QCPRange(y.lower - std::max(0.5, 0.05 * std::abs(y.lower)), y.upper + std::max(0.5, 0.05 * std::abs(y.upper)));
  chart->yAxis->setRange(y.lower - 0.05 * y.size(), y.upper + 0.05 * y.size());
  chart->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace ts::ui
