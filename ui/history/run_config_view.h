// SPDX-License-Identifier: GPL-3.0-or-later
// The Run history panel's Configuration tab: the full configuration of one selected run as a tree;
// for several, one column per run with the settings that differ in bold (or every setting, with
// "All settings"), flattened to "model.d_model" keys as `runs compare` prints them.
#pragma once

#include <vector>

#include <QWidget>

#include "ts/store/run_store.h"

class QCheckBox;
class QLabel;
class QTreeWidget;

namespace ts::ui {

class RunTableModel;

class RunConfigView : public QWidget {
  Q_OBJECT
 public:
  explicit RunConfigView(QWidget* parent = nullptr);

  /// Shows `runs` (the selection, in table order). `model` lists every run of the history (the
  /// tags' text, and whether there is any run at all); `store`, which may be null, gives the last
  /// chrF and dev loss compared across several runs.
  void showRuns(const std::vector<RunInfo>& runs, const RunTableModel& model, const RunStore* store);
  QTreeWidget* tree() const { return tree_; }

 Q_SIGNALS:
  /// "All settings" was switched: the panel shows its selection again (showRuns).
  void showAllToggled(bool on);

 private:
  QLabel* note_;
  QCheckBox* all_;
  QTreeWidget* tree_;
};

}  // namespace ts::ui
