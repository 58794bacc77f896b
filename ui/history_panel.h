// The Run history panel: every run of the SQLite store in a sortable, filterable table; overlay of
// the selected runs' curves, config diff, reload a checkpoint, rename/tag/delete, export.
#pragma once

#include <QWidget>

namespace ts::ui {

class StudioState;
class TranslationService;

class HistoryPanel : public QWidget {
  Q_OBJECT
 public:
  HistoryPanel(StudioState* state, TranslationService* service, QWidget* parent = nullptr);

 public Q_SLOTS:
  /// Re-reads the run list from the store (after a run started or ended).
  void refresh();
};

}  // namespace ts::ui
