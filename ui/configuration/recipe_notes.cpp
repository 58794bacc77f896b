// SPDX-License-Identifier: GPL-3.0-or-later
// The `auto` recipe's box in the Configuration panel (see recipe_notes.h).
#include "configuration/recipe_notes.h"

#include <algorithm>
#include <exception>

#include <QFont>
#include <QFutureWatcher>
#include <QLabel>
#include <QScrollArea>
#include <QStringList>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "ts/train/auto_fit.h"
#include "shell/studio_state.h"

namespace ts::ui {

namespace {

// The reasons scroll when the panel is short (a 1280 x 800 screen: the whole text made the
// Configuration dock, and with it the window, 930 px tall) and show whole when there is room: as
// tall as the wrapped text wants, at least five lines.
class ReasonsArea : public QScrollArea {
 public:
  explicit ReasonsArea(QLabel* text, QWidget* parent) : QScrollArea(parent), text_(text) {
    setWidget(text);
    setWidgetResizable(true);
    setFrameShape(QFrame::NoFrame);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  }
  QSize sizeHint() const override {
    const int width = std::max(200, viewport()->width());
    return {QScrollArea::sizeHint().width(), text_->heightForWidth(width) + 2 * frameWidth()};
  }
  QSize minimumSizeHint() const override { return {100, 5 * fontMetrics().lineSpacing()}; }

 protected:
  void resizeEvent(QResizeEvent* event) override {
    QScrollArea::resizeEvent(event);
    updateGeometry();  // the wrapped text's height depends on the width
  }

 private:
  QLabel* text_;
};

}  // namespace

RecipeNotes::RecipeNotes(StudioState* state, QWidget* parent) : QFrame(parent), state_(state) {
  setObjectName(QStringLiteral("recipeNotes"));
  setFrameShape(QFrame::StyledPanel);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 6, 8, 6);
  layout->setSpacing(2);
  title_ = new QLabel(this);
  title_->setObjectName(QStringLiteral("recipeTitle"));
  title_->setWordWrap(true);
  title_->setTextFormat(Qt::PlainText);
  QFont bold = title_->font();
  bold.setBold(true);
  title_->setFont(bold);
  reasons_ = new QLabel(this);
  reasons_->setObjectName(QStringLiteral("recipeReasons"));
  reasons_->setWordWrap(true);
  reasons_->setTextFormat(Qt::PlainText);
  reasons_->setTextInteractionFlags(Qt::TextSelectableByMouse);  // read-only, but can be copied
  layout->addWidget(title_);
  layout->addWidget(new ReasonsArea(reasons_, this), 1);
  setToolTip(
      tr("The auto preset is fitted to the corpus, the translation direction, the \u201cTrain for\u201d budget "
         "(Training panel) and this machine. Fields you change yourself are kept when it is fitted again."));

  last_preset_ = state_->config().preset;  // the preset at start is a default, not a choice
  connect(state_, &StudioState::corpusChanged, this, &RecipeNotes::onCorpusChanged);
  connect(state_, &StudioState::directionChanged, this, &RecipeNotes::update);
  connect(state_, &StudioState::configChanged, this, &RecipeNotes::update);
  update();
}

// A fit still running keeps its own copies of the corpus and configuration and just ends; its
// watcher is a child of this widget and goes with it.
RecipeNotes::~RecipeNotes() = default;

void RecipeNotes::onCorpusChanged() {
  // `auto` is the default for a corpus the person opens. The built-in demo corpus keeps its preset
  // (`demo` at start), and a preset the person chose stays, even one chosen before the file was
  // read (`transformer-studio --preset NAME FILE`). An `auto` configuration is fitted again to the
  // new corpus, keeping the fields the person changed.
  if (!state_->isDemo() && !explicit_preset_ && state_->config().preset != "auto") {
    switching_ = true;
    state_->applyPreset(QStringLiteral("auto"));
    switching_ = false;
  }
  update();
}

std::shared_ptr<const AutoFit> RecipeNotes::currentFit() const {
  const auto fit = state_->autoFit();
  const auto corpus = state_->corpus();
  const ExperimentConfig& c = state_->config();
  if (!fit || !corpus || c.preset != "auto" || fit->key != auto_fit_key(*corpus, state_->direction(), c))
    return nullptr;
  return fit;
}

bool RecipeNotes::resetToFit() {
  const auto fit = currentFit();
  if (!fit || !fit->ok()) return false;
  state_->setConfig(fit->config);  // its device, threads and budget are the current ones (same key)
  return true;
}

void RecipeNotes::update() {
  const ExperimentConfig& c = state_->config();
  const auto corpus = state_->corpus();
  if (c.preset != last_preset_) {
    if (!switching_) explicit_preset_ = true;  // the list, a loaded file, --preset
    last_preset_ = c.preset;
  }
  if (c.preset != "auto" || !corpus) {
    setHidden(true);
    return;
  }
  setHidden(false);
  const std::string key = auto_fit_key(*corpus, state_->direction(), c);
  const auto fit = state_->autoFit();
  if (fit && fit->key == key) {
    if (!pending_key_.empty()) {  // back to inputs already fitted: a fit for others is moot
      ++serial_;
      pending_key_.clear();
      fitting_ = false;
    }
    // `auto` just chosen (or the plain preset applied): the fit for these inputs is known already.
    if (fit->ok() && is_plain_auto(c)) apply(*fit, nullptr);
    showFit(*fit);
    return;
  }
  if (key != pending_key_) startFit(key);
  showFitting();
}

void RecipeNotes::startFit(const std::string& key) {
  pending_key_ = key;
  fitting_ = true;
  const int serial = ++serial_;
  using Result = std::shared_ptr<const AutoFit>;
  auto* watcher = new QFutureWatcher<Result>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, serial] {
    watcher->deleteLater();
    if (serial != serial_) return;  // superseded by a fit for newer inputs
    fitting_ = false;
    pending_key_.clear();
    onFitted(watcher->result());
  });
  // The task holds its own copies: the corpus (shared), the direction and the configuration.
  watcher->setFuture(QtConcurrent::run(
      [corpus = state_->corpus(), direction = state_->direction(), config = state_->config()]() -> Result {
        return std::make_shared<const AutoFit>(fit_auto(*corpus, direction, config));
      }));
}

void RecipeNotes::onFitted(std::shared_ptr<const AutoFit> fit) {
  if (!fit) return;
  const auto previous = state_->autoFit();
  state_->setAutoFit(fit);
  const ExperimentConfig& c = state_->config();
  const auto corpus = state_->corpus();
  // Applied only to an `auto` configuration with the same inputs: a preset chosen meanwhile stays.
  if (fit->ok() && corpus && c.preset == "auto" && fit->key == auto_fit_key(*corpus, state_->direction(), c))
    apply(*fit, previous.get());
  update();
  Q_EMIT fitChanged();
}

void RecipeNotes::apply(const AutoFit& fit, const AutoFit* previous) {
  const ExperimentConfig current = state_->config();
  try {
    const ExperimentConfig* base = previous && previous->ok() ? &previous->config : nullptr;
    const ExperimentConfig next = refit_auto(current, fit.config, base);
    if (next.to_json() != current.to_json()) state_->setConfig(next);
  } catch (const std::exception&) {
    // Not expected: the merge takes the configs' own keys and types. The configuration stays as it is.
  }
}

void RecipeNotes::showFit(const AutoFit& fit) {
  if (!fit.ok()) {
    title_->setText(tr("The auto recipe could not be fitted: %1").arg(QString::fromStdString(fit.error)));
    reasons_->clear();
    reasons_->hide();
    return;
  }
  const double budget = fit.config.train.budget_minutes;
  const QString machine = QString::fromStdString(fit.machine);
  const QString what = budget > 0 ? tr("%1 of training").arg(format_budget(budget)) : tr("training until you stop it");
  title_->setText(machine.isEmpty() ? tr("What auto chose for this corpus and %1, and why:").arg(what)
                                    : tr("What auto chose for this corpus and %1 on %2, and why:").arg(what, machine));
  QStringList lines;
  for (const auto& reason : fit.reasons) lines << QStringLiteral("\u2022 ") + QString::fromStdString(reason);
  reasons_->setText(lines.join(QLatin1Char('\n')));
  reasons_->setVisible(!lines.isEmpty());
}

void RecipeNotes::showFitting() {
  title_->setText(tr("Fitting auto to this corpus, direction, budget and machine\u2026"));
  reasons_->clear();
  reasons_->hide();
}

QString RecipeNotes::reasonsText() const {
  const auto fit = currentFit();
  if (!fit || !fit->ok()) return {};
  QStringList lines;
  for (const auto& reason : fit->reasons) lines << QString::fromStdString(reason);
  return lines.join(QLatin1Char('\n'));
}

}  // namespace ts::ui
