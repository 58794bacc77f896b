// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare panel's system chooser: the translation runs of the run history that left a
// checkpoint (best.ckpt, else last.ckpt, in their output directory), newest first, plus checkpoints
// and exported model folders added by hand, each with a check box. The checked entries are the
// systems, in list order: the first is the baseline (marked). Entries move by drag and drop, the
// Up and Down buttons, or "Make baseline".
#pragma once

#include <QList>
#include <QString>
#include <QWidget>

#include "services/compare_service.h"

class QLabel;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QToolButton;

namespace ts::ui {

class SystemChooser : public QWidget {
  Q_OBJECT
 public:
  /// Item data: the checkpoint path, the system's name, the run id (0 for an added model).
  static constexpr int PathRole = Qt::UserRole + 1;
  static constexpr int NameRole = Qt::UserRole + 2;
  static constexpr int RunRole = Qt::UserRole + 3;

  explicit SystemChooser(QWidget* parent = nullptr);

  /// The run history to list, and where the file dialogs start.
  void setDatabasePath(const QString& path) { database_ = path; }
  void setStartDirectory(const QString& path) { start_directory_ = path; }
  /// Re-reads the runs, keeping the order and checks of the entries still there; new runs come
  /// first. Returns false (and emits message) when the history cannot be read.
  bool refresh();
  /// Adds a checkpoint file, an exported model folder or a run directory (its best, else last,
  /// checkpoint) at the end, checked. False, with the reason in `error`, for anything else.
  bool addModel(const QString& path, QString* error = nullptr);

  int count() const;
  /// The row of a run, -1 when it is not listed.
  int rowOfRun(qint64 run_id) const;
  void setChecked(int row, bool checked);
  void uncheckAll();
  /// Moves an entry to the top: the baseline when checked.
  void makeBaseline(int row);
  void moveEntry(int from, int to);
  /// The checked entries in list order (the first is the baseline).
  QList<ModelChoice> checkedModels() const;
  QListWidget* list() const { return list_; }

 Q_SIGNALS:
  void checkedChanged(int count);
  void message(const QString& text, bool error);

 private:
  void addDialog();
  void addFolderDialog();
  QListWidgetItem* newItem(const QString& key, const QString& path, const QString& name, qint64 run);
  QString uniqueName(const QString& name) const;
  void updateMarks();
  void updateButtons();

  QString database_, start_directory_;
  int added_ = 0;  // keys of the models added by hand
  bool updating_ = false;
  QListWidget* list_;
  QLabel* count_;
  QPushButton *up_, *down_, *baseline_, *refresh_;
  QToolButton* add_;
};

}  // namespace ts::ui
