// SPDX-License-Identifier: GPL-3.0-or-later
// Small helpers shared by the Run history panel's files (internal to ui/history/): the store's
// busy timeout, the metrics in the order a user looks for them with their readable labels, and how
// runs are named in text.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <QCoreApplication>
#include <QLatin1String>
#include <QString>
#include <QStringList>

#include "ts/store/run_store.h"
#include "widgets/qt_text.h"

namespace ts::ui::history_util {

using ts::ui::q;  // widgets/qt_text.h

// Metrics in the order a user looks for them, with readable labels.
inline const std::vector<std::pair<const char*, const char*>>& known_metrics() {
  static const std::vector<std::pair<const char*, const char*>> list = {
      {"train_loss", QT_TRANSLATE_NOOP("ts::ui::HistoryPanel", "train loss")},
      {"dev_loss", QT_TRANSLATE_NOOP("ts::ui::HistoryPanel", "dev loss")},
      {"dev_ppl", QT_TRANSLATE_NOOP("ts::ui::HistoryPanel", "dev perplexity")},
      {"bleu", QT_TRANSLATE_NOOP("ts::ui::HistoryPanel", "BLEU")},
      {"chrf", QT_TRANSLATE_NOOP("ts::ui::HistoryPanel", "chrF")},
      {"lr", QT_TRANSLATE_NOOP("ts::ui::HistoryPanel", "learning rate")},
      {"tokens_per_s", QT_TRANSLATE_NOOP("ts::ui::HistoryPanel", "tokens/s")}};
  return list;
}

/// The readable label of a metric's store name ("train_loss" -> "train loss"); others as they are.
inline QString metric_label(const QString& name) {
  for (const auto& [key, label] : known_metrics())
    if (name == QLatin1String(key)) return QCoreApplication::translate("ts::ui::HistoryPanel", label);
  return name;
}

/// "#3 baseline": a run in chart legends and column headers.
inline QString run_label(const RunInfo& r) { return QStringLiteral("#%1 %2").arg(r.id).arg(q(r.name)); }

/// "#1, #3": the runs an action applied to.
inline QString ids_text(const std::vector<RunInfo>& runs) {
  QStringList ids;
  for (const auto& r : runs) ids << QStringLiteral("#%1").arg(r.id);
  return ids.join(QStringLiteral(", "));
}

}  // namespace ts::ui::history_util
