// SPDX-License-Identifier: GPL-3.0-or-later
#include "screenshots/screenshot_tour.h"

#include <utility>

#include <QComboBox>
#include <QDir>
#include <QRegularExpression>
#include <QTabWidget>
#include <QTimer>

#include "anatomy/anatomy_panel.h"
#include "attention/attention_panel.h"
#include "attention_over_training/probe_panel.h"
#include "beam_search/beam_tree_view.h"
#include "compare/compare_panel.h"
#include "compare/confidence_view.h"
#include "configuration/config_panel.h"
#include "dataset/dataset_panel.h"
#include "history/history_panel.h"
#include "language_model/lm_window.h"
#include "shell/main_window.h"
#include "training/training_panel.h"
#include "translate/translate_panel.h"

namespace ts::ui {

namespace {
// The anatomy's model positions and embeddings are computed on request, when their tab shows.
constexpr int kComputedTabSettleMs = 1900;
}  // namespace

ScreenshotTour::ScreenshotTour(QWidget* window, QString directory, QObject* parent)
    : QObject(parent), window_(window), directory_(std::move(directory)) {}

void ScreenshotTour::add(const QString& name, std::function<void()> prepare, int settle_ms) {
  stops_.push_back({name, std::move(prepare), settle_ms});
}

void ScreenshotTour::start() {
  index_ = 0;
  written_.clear();
  if (!QDir().mkpath(directory_)) {
    QTimer::singleShot(0, this, [this] { Q_EMIT finished(tr("%1: the folder could not be made").arg(directory_)); });
    return;
  }
  QTimer::singleShot(0, this, &ScreenshotTour::next);
}

void ScreenshotTour::next() {
  if (index_ >= stops_.size()) {
    Q_EMIT finished(QString());
    return;
  }
  if (!window_) {
    Q_EMIT finished(tr("the window was closed before the screenshots were taken"));
    return;
  }
  const Stop& stop = stops_[index_];
  if (stop.prepare) stop.prepare();
  if (stop.name.isEmpty()) {
    ++index_;
    QTimer::singleShot(0, this, &ScreenshotTour::next);
    return;
  }
  QTimer::singleShot(stop.settle_ms, this, [this] {
    if (!window_) {
      Q_EMIT finished(tr("the window was closed before the screenshots were taken"));
      return;
    }
    const QString path = QDir(directory_).filePath(stops_[index_].name + QStringLiteral(".png"));
    if (!window_->grab().save(path)) {
      Q_EMIT finished(tr("%1: could not be written").arg(path));
      return;
    }
    written_ << path;
    ++index_;
    next();
  });
}

void add_main_window_views(ScreenshotTour& tour, MainWindow& window) {
  MainWindow* w = &window;
  const QList<QPair<QWidget*, QString>> panels{
      {w->datasetPanel(), QStringLiteral("dataset")},     {w->configPanel(), QStringLiteral("configuration")},
      {w->trainingPanel(), QStringLiteral("training")},   {w->translatePanel(), QStringLiteral("translate")},
      {w->historyPanel(), QStringLiteral("history")},     {w->comparePanel(), QStringLiteral("compare")},
      {w->attentionPanel(), QStringLiteral("attention")}, {w->probePanel(), QStringLiteral("attention-over-training")},
      {w->beamTreeView(), QStringLiteral("beam-search")}, {w->anatomyPanel(), QStringLiteral("anatomy")}};
  for (const auto& [panel, name] : panels) tour.add(name, [w, panel = panel] { w->showPanel(panel); });

  // The beam tree again in its compact layout (each step's candidates ranked by score).
  auto* beam = w->beamTreeView();
  if (auto* layout = beam->findChild<QComboBox*>(QStringLiteral("beamLayout")); layout && layout->count() > 1) {
    const int was = layout->currentIndex();
    tour.add(QStringLiteral("beam-search-ranked"), [w, beam, layout] {
      w->showPanel(beam);
      layout->setCurrentIndex(1);
    });
    tour.add(QString(), [layout, was] { layout->setCurrentIndex(was); });
  }
  // The Compare panel's confidence tab, when a comparison of models is shown.
  auto* compare = w->comparePanel();
  if (compare->hasResult()) {
    const int was = compare->tabs()->currentIndex();
    tour.add(QStringLiteral("compare-confidence"), [w, compare] {
      w->showPanel(compare);
      compare->tabs()->setCurrentWidget(compare->confidence());
    });
    tour.add(QString(), [compare, was] { compare->tabs()->setCurrentIndex(was); });
  }
  // The decoder's self-attention, where the causal mask shows.
  auto* attention = w->attentionPanel();
  const auto kind = attention->kind();
  tour.add(QStringLiteral("attention-decoder-self"), [w, attention] {
    w->showPanel(attention);
    attention->setKind(AttentionKind::DecoderSelf);
  });
  tour.add(QString(), [attention, kind] { attention->setKind(kind); });
  // Every tab of the anatomy panel.
  auto* anatomy = w->anatomyPanel();
  if (auto* tabs = anatomy->findChild<QTabWidget*>()) {
    const int current = tabs->currentIndex();
    for (int i = 0; i < tabs->count(); ++i) {
      QString slug = tabs->tabText(i).toLower().remove(QLatin1Char('&'));
      slug.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
      tour.add(
          QStringLiteral("anatomy-") + slug,
          [w, anatomy, tabs, i] {
            w->showPanel(anatomy);
            tabs->setCurrentIndex(i);
          },
          kComputedTabSettleMs);
    }
    tour.add(QString(), [tabs, current] { tabs->setCurrentIndex(current); });
  }
}

void add_language_model_views(ScreenshotTour& tour, LmWindow& window) {
  auto* tabs = window.tabs();
  const int current = tabs->currentIndex();
  tour.add(QStringLiteral("lm-generate"), [tabs] { tabs->setCurrentIndex(0); });
  tour.add(QStringLiteral("lm-attention"), [tabs] { tabs->setCurrentIndex(1); });
  tour.add(QString(), [tabs, current] { tabs->setCurrentIndex(current); });
}

}  // namespace ts::ui
