// SPDX-License-Identifier: GPL-3.0-or-later
// The Run history panel's actions: the toolbar and context menu that show them, when each is
// enabled, and the run operations behind them (load a checkpoint, replay the probe, rename, tag,
// untag, delete). The export actions' work is in history_panel_export.cpp.
#include "history/history_panel.h"

#include <set>
#include <string>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFileInfo>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QStyle>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>

#include <qcustomplot.h>

#include "history/history_util.h"
#include "history/run_checkpoint_table.h"
#include "history/run_table_model.h"
#include "services/translation_service.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

using history_util::ids_text;
using history_util::q;

void HistoryPanel::buildToolbar() {
  toolbar_ = new QToolBar(this);
  toolbar_->setObjectName(QStringLiteral("historyToolbar"));
  toolbar_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  toolbar_->setIconSize(QSize(16, 16));
  auto make_action = [this](const QString& name, const QString& text, QStyle::StandardPixmap icon, const QString& tip) {
    auto* action = new QAction(style()->standardIcon(icon), text, this);
    action->setObjectName(name);
    action->setToolTip(tip);
    return action;
  };
  load_ = make_action(QStringLiteral("historyLoad"), tr("Load into Translate"), QStyle::SP_DialogOpenButton,
                      tr("Load the run's best checkpoint (else its last) into the Translate panel"));
  replay_ = make_action(QStringLiteral("historyReplayProbe"), tr("Replay attention"), QStyle::SP_MediaPlay,
                        tr("Replay the probe sentence's cross-attention at every validation of the run"));
  rename_ = make_action(QStringLiteral("historyRename"), tr("Rename…"), QStyle::SP_FileDialogDetailedView,
                        tr("Rename the selected run"));
  tag_ = make_action(QStringLiteral("historyTag"), tr("Tag…"), QStyle::SP_FileDialogNewFolder,
                     tr("Add a tag to the selected runs"));
  untag_ = make_action(QStringLiteral("historyUntag"), tr("Remove tag…"), QStyle::SP_DialogResetButton,
                       tr("Remove a tag from the selected runs"));
  delete_ = make_action(QStringLiteral("historyDelete"), tr("Delete…"), QStyle::SP_TrashIcon,
                        tr("Delete the selected runs from the history (checkpoint files stay on disk)"));
  export_csv_ =
      make_action(QStringLiteral("historyExportCsv"), tr("Export CSV…"), QStyle::SP_DialogSaveButton,
                  tr("Save every metric of the selected runs as CSV (run_id,run_name,step,metric,value,time)"));
  export_report_ = make_action(QStringLiteral("historyExportReport"), tr("Report…"), QStyle::SP_FileDialogContentsView,
                               tr("Save the selected run as one HTML page to share: config, curves, BLEU/chrF, sample "
                                  "translations and attention"));
  export_chart_ = make_action(QStringLiteral("historyExportChart"), tr("Export chart…"), QStyle::SP_DialogSaveButton,
                              tr("Save the chart as PNG or PDF"));
  refresh_ = make_action(QStringLiteral("historyRefresh"), tr("Refresh"), QStyle::SP_BrowserReload,
                         tr("Read the run history again"));
  delete_->setShortcut(QKeySequence::Delete);
  delete_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  // A drop-down button in the toolbar for a few related actions (text beside the icon, the menu at a click).
  const auto add_menu_button = [this](const QString& name, const QString& text, const QIcon& icon, const QString& tip,
                                      std::initializer_list<QAction*> actions) {
    auto* menu = new QMenu(this);
    menu->setObjectName(name + QStringLiteral("Menu"));
    for (QAction* a : actions) menu->addAction(a);
    auto* button = new QToolButton(this);
    button->setObjectName(name + QStringLiteral("Button"));
    button->setText(text);
    button->setIcon(icon);
    button->setToolTip(tip);
    button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    button->setPopupMode(QToolButton::InstantPopup);
    button->setMenu(menu);
    toolbar_->addWidget(button);
  };
  for (QAction* a : {load_, replay_, rename_}) toolbar_->addAction(a);
  // Adding and removing a tag share one drop-down button, so the toolbar fits beside the other
  // panels' docks at 1440 px (it needed 759 px of 705 once the Translate panel stopped widening them).
  add_menu_button(QStringLiteral("historyTag"), tr("Tags"), tag_->icon(),
                  tr("Add a tag to the selected runs, or remove one"), {tag_, untag_});
  toolbar_->addAction(delete_);
  toolbar_->addSeparator();
  // The three exports share one drop-down button: nine buttons with text did not fit beside the
  // chart at 1440 px, and Qt pushed the last ones (Report…) into the overflow menu.
  add_menu_button(QStringLiteral("historyExport"), tr("Export"), style()->standardIcon(QStyle::SP_DialogSaveButton),
                  tr("Save the selected runs as CSV, the selected run as an HTML report, or the chart as an image"),
                  {export_csv_, export_report_, export_chart_});
  connect(load_, &QAction::triggered, this, [this] { loadSelectedCheckpoint(); });
  connect(replay_, &QAction::triggered, this, [this] {
    const auto runs = selectedRuns();
    if (runs.size() == 1) Q_EMIT probeReplayRequested(runs.front().id);
  });
  connect(rename_, &QAction::triggered, this, &HistoryPanel::renameWithDialog);
  connect(tag_, &QAction::triggered, this, &HistoryPanel::tagWithDialog);
  connect(untag_, &QAction::triggered, this, &HistoryPanel::untagWithDialog);
  connect(delete_, &QAction::triggered, this, [this] { deleteSelected(true); });
  connect(export_csv_, &QAction::triggered, this, &HistoryPanel::exportCsvWithDialog);
  connect(export_report_, &QAction::triggered, this, &HistoryPanel::exportReportWithDialog);
  connect(export_chart_, &QAction::triggered, this, &HistoryPanel::exportChartWithDialog);
  connect(refresh_, &QAction::triggered, this, &HistoryPanel::refresh);
}

void HistoryPanel::updateActions() {
  const auto runs = selectedRuns();
  const std::size_t n = runs.size();
  const bool open = store_ != nullptr;
  bool any_tags = false;
  for (const auto& r : runs) any_tags = any_tags || !r.tags.empty();
  rename_->setEnabled(open && n == 1);
  tag_->setEnabled(open && n >= 1);
  untag_->setEnabled(open && any_tags);
  delete_->setEnabled(open && n >= 1);
  export_csv_->setEnabled(open && n >= 1);
  export_report_->setEnabled(open && n == 1);
  export_chart_->setEnabled(chart()->graphCount() > 0);
  refresh_->setEnabled(true);

  const int total = model_->rowCount(), shown = proxy_->rowCount();
  if (total == 0)
    count_label_->setText(store_error_.isEmpty() ? tr("no runs yet") : QString());
  else if (shown == total)
    count_label_->setText(total == 1 ? tr("1 run") : tr("%1 runs").arg(total));
  else
    count_label_->setText(tr("%1 of %2 runs").arg(shown).arg(total));

  QString tip;
  bool can_load = false;
  if (n != 1) {
    tip = tr("Select one run to load its best checkpoint into the Translate panel");
  } else if (const auto c = preferred_checkpoint(store_.get(), runs.front().id)) {
    const QString path = QDir::toNativeSeparators(q(c->path));
    if (QFileInfo::exists(q(c->path))) {
      can_load = true;
      tip = tr("Load %1 (%2, step %3) into the Translate panel").arg(path, q(c->kind)).arg(c->step);
    } else {
      tip = tr("The checkpoint file is missing (moved or deleted): %1").arg(path);
    }
  } else {
    tip = tr("Run #%1 has no checkpoint yet").arg(runs.front().id);
  }
  load_->setEnabled(open && can_load);
  load_->setToolTip(tip);

  // Replay needs a run that was trained with a probe sentence (train.probe).
  QString probe;
  if (n == 1) {
    const auto& config = runs.front().config;
    if (config.contains("train") && config["train"].contains("probe") && config["train"]["probe"].is_string())
      probe = q(config["train"]["probe"].get<std::string>());
  }
  replay_->setEnabled(open && !probe.isEmpty());
  replay_->setToolTip(n != 1 ? tr("Select one run to replay its probe sentence's attention")
                      : probe.isEmpty()
                          ? tr("This run had no probe sentence (set Training ▸ Probe sentence before training)")
                          : tr("Replay the cross-attention of “%1” at every validation").arg(isolated(probe)));
}

void HistoryPanel::showContextMenu(const QPoint& pos) {
  const QModelIndex index = table_->indexAt(pos);
  if (index.isValid() && !table_->selectionModel()->isRowSelected(index.row(), QModelIndex())) {
    const qint64 id = index.data(RunTableModel::IdRole).toLongLong();
    selectRun(id);
  }
  QMenu menu(this);
  menu.addAction(load_);
  menu.addAction(replay_);
  menu.addSeparator();
  menu.addAction(rename_);
  menu.addAction(tag_);
  menu.addAction(untag_);
  menu.addAction(delete_);
  menu.addSeparator();
  menu.addAction(export_csv_);
  menu.addAction(export_report_);
  menu.addAction(export_chart_);
  const auto runs = selectedRuns();
  if (runs.size() == 1 && !runs.front().out_dir.empty()) {
    const QString dir = q(runs.front().out_dir);
    menu.addSeparator();
    menu.addAction(tr("Copy run directory path"), this, [dir] { QApplication::clipboard()->setText(dir); });
  }
  menu.exec(table_->viewport()->mapToGlobal(pos));
}

bool HistoryPanel::loadSelectedCheckpoint() {
  const auto runs = selectedRuns();
  if (runs.size() != 1) {
    setMessage(tr("Select one run to load its checkpoint."), true);
    return false;
  }
  const auto c = preferred_checkpoint(store_.get(), runs.front().id);
  if (!c) {
    setMessage(tr("Run #%1 \"%2\" has no checkpoint yet.").arg(runs.front().id).arg(isolated(q(runs.front().name))),
               true);
    return false;
  }
  return loadCheckpointFile(q(c->path), runs.front().kind);
}

bool HistoryPanel::loadCheckpointFile(const QString& path, RunKind kind) {
  if (path.isEmpty()) return false;
  if (!QFileInfo::exists(path)) {
    setMessage(tr("%1: the checkpoint file is missing (moved or deleted), so it cannot be loaded.")
                   .arg(QDir::toNativeSeparators(path)),
               true);
    return false;
  }
  if (kind == RunKind::kLanguageModel) {
    setMessage(tr("Opening %1 in the language-model window…").arg(QDir::toNativeSeparators(path)));
    Q_EMIT languageModelCheckpointRequested(path);
    return true;
  }
  if (!service_) {
    setMessage(tr("No translation service to load %1 into.").arg(path), true);
    return false;
  }
  pending_load_ = path;
  setMessage(tr("Loading %1 into the Translate panel…").arg(QDir::toNativeSeparators(path)));
  service_->loadCheckpoint(path);
  Q_EMIT checkpointRequested(path);
  return true;
}

void HistoryPanel::rename(qint64 id, const QString& name) {
  if (!store_) return;
  const QString trimmed = name.trimmed();
  if (trimmed.isEmpty()) {
    setMessage(tr("A run name cannot be empty."), true);
    return;
  }
  try {
    writableStore()->rename_run(id, trimmed.toStdString());
  } catch (const std::exception& e) {
    setMessage(tr("Cannot rename run #%1: %2").arg(id).arg(QString::fromUtf8(e.what())), true);
    return;
  }
  setMessage(tr("Run #%1 renamed to \"%2\".").arg(id).arg(isolated(trimmed)));
  QTimer::singleShot(0, this, &HistoryPanel::refresh);  // not inside the view's commit of the edit
}

bool HistoryPanel::renameSelected(const QString& name) {
  const auto runs = selectedRuns();
  if (runs.size() != 1) {
    setMessage(tr("Select one run to rename."), true);
    return false;
  }
  const QString trimmed = name.trimmed();
  if (trimmed.isEmpty()) {
    setMessage(tr("A run name cannot be empty."), true);
    return false;
  }
  try {
    writableStore()->rename_run(runs.front().id, trimmed.toStdString());
  } catch (const std::exception& e) {
    setMessage(tr("Cannot rename run #%1: %2").arg(runs.front().id).arg(QString::fromUtf8(e.what())), true);
    return false;
  }
  setMessage(tr("Run #%1 renamed to \"%2\".").arg(runs.front().id).arg(isolated(trimmed)));
  refresh();
  return true;
}

bool HistoryPanel::tagSelected(const QString& tag) {
  const auto runs = selectedRuns();
  const QString t = tag.trimmed();
  if (runs.empty() || !store_) {
    setMessage(tr("Select the runs to tag."), true);
    return false;
  }
  if (t.isEmpty()) {
    setMessage(tr("A tag cannot be empty."), true);
    return false;
  }
  try {
    auto writer = writableStore();
    for (const auto& r : runs) writer->add_tag(r.id, t.toStdString());
  } catch (const std::exception& e) {
    setMessage(tr("Cannot tag: %1").arg(QString::fromUtf8(e.what())), true);
    refresh();
    return false;
  }
  setMessage(tr("Tagged %1 with \"%2\".").arg(ids_text(runs), isolated(t)));
  refresh();
  return true;
}

bool HistoryPanel::untagSelected(const QString& tag) {
  const auto runs = selectedRuns();
  const QString t = tag.trimmed();
  if (runs.empty() || !store_ || t.isEmpty()) {
    setMessage(tr("Select the runs and the tag to remove."), true);
    return false;
  }
  try {
    auto writer = writableStore();
    for (const auto& r : runs) writer->remove_tag(r.id, t.toStdString());
  } catch (const std::exception& e) {
    setMessage(tr("Cannot remove the tag: %1").arg(QString::fromUtf8(e.what())), true);
    refresh();
    return false;
  }
  setMessage(tr("Removed the tag \"%1\" from %2.").arg(isolated(t), ids_text(runs)));
  refresh();
  return true;
}

bool HistoryPanel::deleteSelected(bool confirm) {
  const auto runs = selectedRuns();
  if (runs.empty() || !store_) {
    setMessage(tr("Select the runs to delete."), true);
    return false;
  }
  QStringList running;
  for (const auto& r : runs)
    if (r.status == RunStatus::kRunning) running << QStringLiteral("#%1 \"%2\"").arg(r.id).arg(isolated(q(r.name)));
  if (!running.isEmpty()) {
    const QString text =
        tr("%1 still running: stop the training before deleting it.").arg(running.join(QStringLiteral(", ")));
    setMessage(text, true);
    if (confirm) QMessageBox::warning(this, tr("Cannot delete a running run"), text);
    return false;
  }
  if (confirm) {
    QStringList names;
    for (std::size_t i = 0; i < runs.size() && i < 12; ++i)
      names << QStringLiteral("#%1 \"%2\" (%3, %4 steps)")
                   .arg(runs[i].id)
                   .arg(isolated(q(runs[i].name)), QString::fromLatin1(run_status_name(runs[i].status)))
                   .arg(runs[i].steps);
    if (runs.size() > 12) names << tr("… and %1 more").arg(runs.size() - 12);
    QMessageBox box(
        QMessageBox::Question, tr("Delete runs"),
        runs.size() == 1
            ? tr("Delete run #%1 and its recorded metrics, samples and checkpoint records?").arg(runs.front().id)
            : tr("Delete %1 runs and their recorded metrics, samples and checkpoint records?").arg(runs.size()),
        QMessageBox::Cancel, this);
    box.setInformativeText(names.join(QLatin1Char('\n')) + QStringLiteral("\n\n") +
                           tr("Checkpoint files stay on disk. This cannot be undone."));
    auto* yes = box.addButton(tr("Delete"), QMessageBox::DestructiveRole);
    box.setDefaultButton(QMessageBox::Cancel);
    box.exec();
    if (box.clickedButton() != yes) return false;
  }
  QStringList deleted;
  for (const auto& r : runs) {
    try {
      writableStore()->delete_run(r.id);
      deleted << QStringLiteral("#%1").arg(r.id);
    } catch (const std::exception& e) {
      setMessage(tr("Cannot delete run #%1: %2").arg(r.id).arg(QString::fromUtf8(e.what())), true);
      refresh();
      return false;
    }
  }
  setMessage(tr("Deleted %1 (checkpoint files stay on disk).").arg(deleted.join(QStringLiteral(", "))));
  refresh();
  return true;
}

void HistoryPanel::renameWithDialog() {
  const auto runs = selectedRuns();
  if (runs.size() != 1) return;
  bool ok = false;
  const QString name = QInputDialog::getText(this, tr("Rename run"), tr("New name of run #%1:").arg(runs.front().id),
                                             QLineEdit::Normal, q(runs.front().name), &ok);
  if (ok) renameSelected(name);
}

void HistoryPanel::tagWithDialog() {
  const auto runs = selectedRuns();
  if (runs.empty()) return;
  std::set<std::string> known;
  for (const auto& r : model_->runs())
    for (const auto& t : r.tags) known.insert(t);
  QStringList items;
  for (const auto& t : known) items << q(t);
  bool ok = false;
  const QString tag =
      QInputDialog::getItem(this, tr("Tag runs"), tr("Tag for %1:").arg(ids_text(runs)), items, -1, true, &ok);
  if (ok) tagSelected(tag);
}

void HistoryPanel::untagWithDialog() {
  const auto runs = selectedRuns();
  std::set<std::string> present;
  for (const auto& r : runs)
    for (const auto& t : r.tags) present.insert(t);
  if (present.empty()) return;
  QStringList items;
  for (const auto& t : present) items << q(t);
  bool ok = false;
  const QString tag = QInputDialog::getItem(this, tr("Remove tag"), tr("Tag to remove from %1:").arg(ids_text(runs)),
                                            items, 0, false, &ok);
  if (ok) untagSelected(tag);
}

}  // namespace ts::ui
