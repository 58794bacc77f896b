// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare panel's list of systems to compare (see system_chooser.h).
#include "compare/system_chooser.h"

#include <algorithm>
#include <vector>

#include <QAbstractItemModel>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QSet>
#include <QToolButton>
#include <QVBoxLayout>

#include "ts/store/run_store.h"
#include "widgets/qt_text.h"

namespace ts::ui {

namespace {

constexpr int kLabelRole = Qt::UserRole + 4;  // the entry's text without the baseline mark
constexpr int kKeyRole = Qt::UserRole + 5;    // "run:12" or "file:3": what a refresh keeps

// The checkpoint a run directory stands for: best.ckpt, else last.ckpt; empty when neither.
QString checkpoint_in(const QString& directory) {
  for (const char* name : {"best.ckpt", "last.ckpt"}) {
    const QString path = QDir(directory).filePath(QString::fromLatin1(name));
    if (QFileInfo(path).isFile()) return path;
  }
  return {};
}

bool is_model_folder(const QString& directory) {
  const QDir dir(directory);
  return QFileInfo(dir.filePath(QStringLiteral("config.json"))).isFile() &&
         QFileInfo(dir.filePath(QStringLiteral("model.safetensors"))).isFile();
}

}  // namespace

SystemChooser::SystemChooser(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* hint = new QLabel(tr("Check the systems to compare; the first checked is the baseline."), this);
  hint->setWordWrap(true);
  layout->addWidget(hint);

  list_ = new QListWidget(this);
  list_->setObjectName(QStringLiteral("compareSystems"));
  list_->setDragDropMode(QAbstractItemView::InternalMove);
  list_->setDefaultDropAction(Qt::MoveAction);
  list_->setSelectionMode(QAbstractItemView::SingleSelection);
  list_->setToolTip(
      tr("Translation runs of the history with a checkpoint, newest first, and models added by hand. "
         "Drag an entry, or use Up and Down, to change the order."));
  layout->addWidget(list_, 1);

  auto* buttons = new QHBoxLayout;
  up_ = new QPushButton(tr("Up"), this);
  down_ = new QPushButton(tr("Down"), this);
  baseline_ = new QPushButton(tr("Make baseline"), this);
  baseline_->setObjectName(QStringLiteral("compareMakeBaseline"));
  baseline_->setToolTip(tr("Move the selected entry to the top (and check it): the others are tested against it"));
  refresh_ = new QPushButton(tr("Refresh"), this);
  refresh_->setToolTip(tr("Read the run history again"));
  add_ = new QToolButton(this);
  add_->setObjectName(QStringLiteral("compareAddCheckpoint"));
  add_->setText(tr("Add checkpoint…"));
  add_->setToolTip(tr("Add a checkpoint file; the arrow also offers an exported model folder or a run directory"));
  add_->setPopupMode(QToolButton::MenuButtonPopup);
  auto* menu = new QMenu(add_);
  menu->addAction(tr("Checkpoint file…"), this, &SystemChooser::addDialog);
  menu->addAction(tr("Exported model folder or run directory…"), this, &SystemChooser::addFolderDialog);
  add_->setMenu(menu);
  connect(add_, &QToolButton::clicked, this, &SystemChooser::addDialog);
  // Two rows: in one, the five buttons need more width than the panel's left pane has at 1280 px,
  // and Qt cut their words ("ke basel").
  for (QWidget* w : std::initializer_list<QWidget*>{up_, down_, baseline_}) buttons->addWidget(w);
  buttons->addStretch(1);
  auto* more = new QHBoxLayout;
  more->addWidget(refresh_);
  more->addStretch(1);
  more->addWidget(add_);
  layout->addLayout(buttons);
  layout->addLayout(more);
  count_ = new QLabel(this);
  count_->setObjectName(QStringLiteral("compareCheckedCount"));
  count_->setWordWrap(true);
  layout->addWidget(count_);

  connect(up_, &QPushButton::clicked, this, [this] { moveEntry(list_->currentRow(), list_->currentRow() - 1); });
  connect(down_, &QPushButton::clicked, this, [this] { moveEntry(list_->currentRow(), list_->currentRow() + 1); });
  connect(baseline_, &QPushButton::clicked, this, [this] { makeBaseline(list_->currentRow()); });
  connect(refresh_, &QPushButton::clicked, this, &SystemChooser::refresh);
  connect(list_, &QListWidget::currentRowChanged, this, &SystemChooser::updateButtons);
  connect(list_, &QListWidget::itemChanged, this, [this] {
    if (updating_) return;
    updateMarks();
  });
  // A drag and drop moves the row: the baseline may change.
  connect(list_->model(), &QAbstractItemModel::rowsMoved, this, [this] {
    if (!updating_) updateMarks();
  });
  connect(list_->model(), &QAbstractItemModel::rowsInserted, this, [this] {
    if (!updating_) updateMarks();
  });
  updateMarks();
}

int SystemChooser::count() const { return list_->count(); }

QListWidgetItem* SystemChooser::newItem(const QString& key, const QString& path, const QString& name, qint64 run) {
  auto* item = new QListWidgetItem;
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable | Qt::ItemIsDragEnabled);
  item->setCheckState(Qt::Unchecked);
  item->setData(kKeyRole, key);
  item->setData(PathRole, path);
  item->setData(NameRole, name);
  item->setData(RunRole, run);
  return item;
}

bool SystemChooser::refresh() {
  std::vector<RunInfo> runs;
  const QString path = database_.isEmpty() ? q(RunStore::default_path()) : database_;
  try {
    RunStore store(QFile::encodeName(path).toStdString(), RunStore::kReaderBusyTimeoutMs, StoreAccess::kReadOnly);
    runs = store.list_runs();
  } catch (const StoreError& e) {
    // Nothing recorded yet, or a database that the History panel upgrades first: no runs to offer yet.
    if (e.problem() != StoreProblem::kMissing && e.problem() != StoreProblem::kOutdated) {
      Q_EMIT message(
          tr("Cannot read the run history %1: %2").arg(QDir::toNativeSeparators(path), QString::fromUtf8(e.what())),
          true);
      return false;
    }
  } catch (const std::exception& e) {
    Q_EMIT message(
        tr("Cannot read the run history %1: %2").arg(QDir::toNativeSeparators(path), QString::fromUtf8(e.what())),
        true);
    return false;
  }
  std::sort(runs.begin(), runs.end(), [](const RunInfo& a, const RunInfo& b) { return a.id > b.id; });

  struct Entry {
    QString key, path, label, tip;
    qint64 id;
  };
  std::vector<Entry> entries;  // newest first
  for (const auto& r : runs) {
    if (r.kind != RunKind::kTranslation) continue;
    const QString checkpoint = checkpoint_in(QFile::decodeName(r.out_dir.c_str()));
    if (checkpoint.isEmpty()) continue;
    QString label = tr("run %1 — %2 · %3 · %4 steps").arg(r.id).arg(q(r.name), q(r.direction)).arg(r.steps);
    if (r.best_bleu) label += tr(" · best BLEU %1").arg(*r.best_bleu, 0, 'f', 1);
    label += QStringLiteral(" · ") + QFileInfo(checkpoint).fileName();
    const QString tip = tr("Run %1 (%2, %3), corpus %4\n%5")
                            .arg(r.id)
                            .arg(QString::fromLatin1(run_status_name(r.status)), q(r.preset), q(r.corpus_path),
                                 QDir::toNativeSeparators(checkpoint));
    entries.push_back({QStringLiteral("run:%1").arg(r.id), checkpoint, label, tip, r.id});
  }

  updating_ = true;
  QSet<QString> wanted;
  for (const auto& e : entries) wanted.insert(e.key);
  QSet<QString> listed;
  for (int row = list_->count() - 1; row >= 0; --row) {
    auto* item = list_->item(row);
    const QString key = item->data(kKeyRole).toString();
    if (item->data(RunRole).toLongLong() > 0 && !wanted.contains(key))
      delete list_->takeItem(row);  // deleted or lost its files
    else
      listed.insert(key);
  }
  int insert_at = 0;
  for (const auto& e : entries) {
    QListWidgetItem* item = nullptr;
    if (listed.contains(e.key)) {
      for (int row = 0; row < list_->count() && !item; ++row)
        if (list_->item(row)->data(kKeyRole).toString() == e.key) item = list_->item(row);
    } else {
      item = newItem(e.key, e.path, tr("run %1").arg(e.id), e.id);
      list_->insertItem(insert_at++, item);  // new runs first, newest first
    }
    item->setData(PathRole, e.path);
    item->setData(kLabelRole, e.label);
    item->setToolTip(e.tip);
  }
  updating_ = false;
  updateMarks();
  return true;
}

QString SystemChooser::uniqueName(const QString& name) const {
  QSet<QString> names;
  for (int row = 0; row < list_->count(); ++row) names.insert(list_->item(row)->data(NameRole).toString());
  if (!names.contains(name)) return name;
  for (int n = 2;; ++n) {
    const QString candidate = QStringLiteral("%1 (%2)").arg(name).arg(n);
    if (!names.contains(candidate)) return candidate;
  }
}

bool SystemChooser::addModel(const QString& path, QString* error) {
  const QFileInfo info(path);
  QString model = info.absoluteFilePath(), name;
  if (!info.exists()) {
    if (error) *error = tr("%1 does not exist").arg(QDir::toNativeSeparators(path));
    return false;
  }
  if (info.isDir()) {
    if (is_model_folder(model)) {
      name = info.fileName();
    } else if (const QString checkpoint = checkpoint_in(model); !checkpoint.isEmpty()) {
      model = checkpoint;
      name = info.fileName() + QLatin1Char('/') + QFileInfo(checkpoint).fileName();
    } else {
      if (error)
        *error = tr("%1 is neither an exported model folder (config.json and model.safetensors) nor a run directory "
                    "with best.ckpt or last.ckpt")
                     .arg(QDir::toNativeSeparators(path));
      return false;
    }
  } else {
    name = info.absoluteDir().dirName() + QLatin1Char('/') + info.fileName();
  }
  name = uniqueName(name);
  updating_ = true;
  auto* item = newItem(QStringLiteral("file:%1").arg(++added_), model, name, 0);
  item->setData(kLabelRole, tr("%1 — %2").arg(name, QDir::toNativeSeparators(model)));
  item->setToolTip(QDir::toNativeSeparators(model));
  item->setCheckState(Qt::Checked);
  list_->addItem(item);
  updating_ = false;
  updateMarks();
  return true;
}

void SystemChooser::addDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Add a checkpoint to compare"), start_directory_,
                                                    tr("Checkpoints (*.ckpt);;All files (*)"));
  if (path.isEmpty()) return;
  QString error;
  if (!addModel(path, &error)) Q_EMIT message(error, true);
}

void SystemChooser::addFolderDialog() {
  const QString dir =
      QFileDialog::getExistingDirectory(this, tr("Add an exported model folder or a run directory"), start_directory_);
  if (dir.isEmpty()) return;
  QString error;
  if (!addModel(dir, &error)) Q_EMIT message(error, true);
}

void SystemChooser::setChecked(int row, bool checked) {
  if (auto* item = list_->item(row)) item->setCheckState(checked ? Qt::Checked : Qt::Unchecked);  // itemChanged marks
}

void SystemChooser::uncheckAll() {
  updating_ = true;
  for (int row = 0; row < list_->count(); ++row) list_->item(row)->setCheckState(Qt::Unchecked);
  updating_ = false;
  updateMarks();
}

void SystemChooser::moveEntry(int from, int to) {
  if (from < 0 || from >= list_->count() || to < 0 || to >= list_->count() || from == to) return;
  updating_ = true;
  auto* item = list_->takeItem(from);
  list_->insertItem(to, item);
  list_->setCurrentRow(to);
  updating_ = false;
  updateMarks();
}

void SystemChooser::makeBaseline(int row) {
  auto* item = list_->item(row);
  if (!item) return;
  updating_ = true;
  item->setCheckState(Qt::Checked);
  updating_ = false;
  if (row == 0)
    updateMarks();
  else
    moveEntry(row, 0);
}

QList<ModelChoice> SystemChooser::checkedModels() const {
  QList<ModelChoice> out;
  for (int row = 0; row < list_->count(); ++row) {
    const auto* item = list_->item(row);
    if (item->checkState() == Qt::Checked)
      out.push_back({item->data(NameRole).toString(), item->data(PathRole).toString()});
  }
  return out;
}

int SystemChooser::rowOfRun(qint64 run_id) const {
  for (int row = 0; row < list_->count(); ++row)
    if (list_->item(row)->data(RunRole).toLongLong() == run_id) return row;
  return -1;
}

void SystemChooser::updateMarks() {
  updating_ = true;
  bool baseline_seen = false;
  int checked = 0;
  QString baseline;
  for (int row = 0; row < list_->count(); ++row) {
    auto* item = list_->item(row);
    const bool on = item->checkState() == Qt::Checked;
    const bool is_baseline = on && !baseline_seen;
    if (is_baseline) baseline = item->data(NameRole).toString();
    baseline_seen = baseline_seen || on;
    checked += on ? 1 : 0;
    const QString label = item->data(kLabelRole).toString();
    const QString text = is_baseline ? tr("%1   (baseline)").arg(label) : label;
    if (item->text() != text) item->setText(text);
    QFont font = item->font();
    if (font.bold() != is_baseline) {
      font.setBold(is_baseline);
      item->setFont(font);
    }
  }
  updating_ = false;
  if (checked == 0)
    count_->setText(tr("Nothing checked."));
  else if (checked == 1)
    count_->setText(tr("One system: %1's output for every test pair, worst first.").arg(baseline));
  else
    count_->setText(tr("%1 systems, tested against %2.").arg(checked).arg(baseline));
  updateButtons();
  Q_EMIT checkedChanged(checked);
}

void SystemChooser::updateButtons() {
  const int row = list_->currentRow(), n = list_->count();
  up_->setEnabled(row > 0);
  down_->setEnabled(row >= 0 && row + 1 < n);
  baseline_->setEnabled(row > 0 || (row == 0 && list_->item(0)->checkState() != Qt::Checked));
}

}  // namespace ts::ui
