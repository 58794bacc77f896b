// SPDX-License-Identifier: GPL-3.0-or-later
// The Run history panel's layout, its store, the refresh that re-reads it (polling while a run is
// live) and the selection the other parts follow. The toolbar's actions and the run operations are
// in history_panel_actions.cpp, the exports in history_panel_export.cpp.
#include "history/history_panel.h"

#include <algorithm>

#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeWidget>
#include <QtConcurrent/QtConcurrentRun>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "history/history_chart.h"
#include "history/history_util.h"
#include "history/run_checkpoint_table.h"
#include "history/run_config_view.h"
#include "history/run_table_model.h"
#include "services/translation_service.h"
#include "shell/studio_state.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

using history_util::q;

namespace {

constexpr int kPollMs = 2000;

QList<qint64> sorted(QList<qint64> ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

HistoryPanel::HistoryPanel(StudioState* state, TranslationService* service, QWidget* parent)
    : QWidget(parent), state_(state), service_(service) {
  buildUi();
  if (service_) {
    connect(service_, &TranslationService::modelChanged, this, [this](const ModelInfo& info) {
      if (pending_load_.isEmpty()) return;
      if (QFileInfo(info.checkpoint).absoluteFilePath() != QFileInfo(pending_load_).absoluteFilePath()) return;
      setMessage(tr("Loaded %1 into the Translate panel (%2).").arg(QFileInfo(pending_load_).fileName(), info.label));
      pending_load_.clear();
    });
    connect(service_, &TranslationService::loadFailed, this, [this](const QString& path, const QString& message) {
      if (pending_load_.isEmpty() || path != pending_load_) return;
      setMessage(message.contains(path) ? message : path + QStringLiteral(": ") + message, true);
      pending_load_.clear();
    });
  }
  refresh();
}

HistoryPanel::~HistoryPanel() { saveSettings(); }

void HistoryPanel::buildUi() {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);

  // Shown only when the database cannot be opened: the reason and a way to try again.
  auto* bar = new QFrame(this);
  bar->setObjectName(QStringLiteral("historyStoreError"));
  bar->setFrameShape(QFrame::StyledPanel);
  error_bar_ = bar;
  auto* error_layout = new QHBoxLayout(error_bar_);
  auto* error_icon = new QLabel(error_bar_);
  error_icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxWarning).pixmap(24, 24));
  error_label_ = new QLabel(error_bar_);
  error_label_->setObjectName(QStringLiteral("historyStoreErrorText"));
  error_label_->setWordWrap(true);
  error_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  retry_ = new QPushButton(tr("Retry"), error_bar_);
  retry_->setObjectName(QStringLiteral("historyRetry"));
  retry_->setToolTip(tr("Open the run history database again"));
  connect(retry_, &QPushButton::clicked, this, [this] {
    store_.reset();
    refresh();
  });
  error_layout->addWidget(error_icon, 0, Qt::AlignTop);
  error_layout->addWidget(error_label_, 1);
  error_layout->addWidget(retry_, 0, Qt::AlignTop);
  error_bar_->hide();
  layout->addWidget(error_bar_);

  // Filter and actions.
  auto* top = new QHBoxLayout;
  filter_ = new QLineEdit(this);
  filter_->setObjectName(QStringLiteral("historyFilter"));
  filter_->setPlaceholderText(tr("Filter by name, corpus, direction, preset, tag or status"));
  filter_->setToolTip(
      tr("Every word must match the run's name, corpus, direction, preset, tags or status (e.g. \"de-en failed\")"));
  filter_->setClearButtonEnabled(true);
  count_label_ = new QLabel(this);
  count_label_->setObjectName(QStringLiteral("historyCount"));
  top->addWidget(filter_, 1);
  top->addWidget(count_label_);
  layout->addLayout(top);

  buildToolbar();
  layout->addWidget(toolbar_);
  // Refresh sits by the filter, so the toolbar's last button is not the one pushed into overflow.
  auto* refresh_button = new QToolButton(this);
  refresh_button->setDefaultAction(refresh_);
  refresh_button->setToolButtonStyle(Qt::ToolButtonIconOnly);
  refresh_button->setAutoRaise(true);
  top->addWidget(refresh_button);

  // The run table.
  model_ = new RunTableModel(this);
  proxy_ = new RunFilterProxy(this);
  proxy_->setSourceModel(model_);
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("historyTable"));
  table_->setModel(proxy_);
  table_->setItemDelegate(new BidiItemDelegate(table_));  // a run named in Arabic reads right to left
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
  table_->setSortingEnabled(true);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  table_->horizontalHeader()->setSectionsMovable(true);
  table_->setContextMenuPolicy(Qt::CustomContextMenu);
  table_->addAction(delete_);
  const int widths[RunTableModel::ColumnCount] = {40, 170, 90, 92, 100, 66, 76, 60, 76, 124, 84, 60};
  for (int c = 0; c < RunTableModel::ColumnCount; ++c) table_->setColumnWidth(c, widths[c]);
  table_->horizontalHeader()->setStretchLastSection(false);
  table_->sortByColumn(RunTableModel::Id, Qt::DescendingOrder);  // newest first
  connect(table_, &QWidget::customContextMenuRequested, this, &HistoryPanel::showContextMenu);
  // Right-click on the header: choose the columns shown (remembered with the header's state).
  table_->horizontalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(table_->horizontalHeader(), &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
    auto* header = table_->horizontalHeader();
    QMenu menu(this);
    for (int c = 0; c < RunTableModel::ColumnCount; ++c) {
      QAction* a = menu.addAction(model_->headerData(c, Qt::Horizontal).toString());
      a->setCheckable(true);
      a->setChecked(!header->isSectionHidden(c));
      a->setEnabled(c != RunTableModel::Name);
      connect(a, &QAction::toggled, this, [header, c](bool on) { header->setSectionHidden(c, !on); });
    }
    menu.exec(header->mapToGlobal(pos));
  });
  table_->horizontalHeader()->setToolTip(tr("Click to sort; right-click to choose the columns"));
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
    if (restoring_selection_) return;
    auto_selected_ = false;
    onSelectionChanged();
  });
  connect(model_, &RunTableModel::renameRequested, this, &HistoryPanel::rename);
  connect(filter_, &QLineEdit::textChanged, this, [this](const QString& text) {
    proxy_->setSearch(text);
    updateActions();
  });
  connect(proxy_, &QAbstractItemModel::rowsInserted, this, &HistoryPanel::updateActions);
  connect(proxy_, &QAbstractItemModel::rowsRemoved, this, &HistoryPanel::updateActions);
  connect(proxy_, &QAbstractItemModel::modelReset, this, &HistoryPanel::updateActions);

  // Chart of the chosen metric, one line per selected run.
  chart_ = new HistoryChart(this);
  connect(chart_, &HistoryChart::redrawRequested, this, &HistoryPanel::updateChart);
  connect(chart_, &HistoryChart::seriesLoaded, this, &HistoryPanel::onSeriesLoaded);

  // Configuration (full for one run, differences for several) and checkpoints.
  details_tabs_ = new QTabWidget(this);
  details_tabs_->setObjectName(QStringLiteral("historyDetails"));
  config_ = new RunConfigView(details_tabs_);
  connect(config_, &RunConfigView::showAllToggled, this, &HistoryPanel::updateDetails);
  details_tabs_->addTab(config_, tr("Configuration"));

  checkpoints_ = new RunCheckpointTable(details_tabs_);
  connect(checkpoints_, &RunCheckpointTable::loadRequested, this,
          [this](const QString& path, RunKind kind) { loadCheckpointFile(path, kind); });
  details_tabs_->addTab(checkpoints_, tr("Checkpoints"));

  bottom_ = new QSplitter(Qt::Horizontal, this);
  bottom_->setObjectName(QStringLiteral("historyBottomSplitter"));
  bottom_->addWidget(chart_);
  bottom_->addWidget(details_tabs_);
  bottom_->setStretchFactor(0, 3);
  bottom_->setStretchFactor(1, 2);
  bottom_->setChildrenCollapsible(false);

  vertical_ = new QSplitter(Qt::Vertical, this);
  vertical_->setObjectName(QStringLiteral("historySplitter"));
  vertical_->addWidget(table_);
  vertical_->addWidget(bottom_);
  vertical_->setStretchFactor(0, 1);
  vertical_->setStretchFactor(1, 2);
  vertical_->setChildrenCollapsible(false);
  layout->addWidget(vertical_, 1);

  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("historyMessage"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(message_);

  maintenance_ = new QFutureWatcher<Maintenance>(this);
  connect(maintenance_, &QFutureWatcher<Maintenance>::finished, this, &HistoryPanel::onMaintenanceDone);

  poll_ = new QTimer(this);
  poll_->setInterval(kPollMs);
  connect(poll_, &QTimer::timeout, this, [this] {
    if (!isVisible()) return;
    polling_ = true;
    refresh();
  });

  QSettings settings;
  chart_->setPreferredMetric(settings.value(QStringLiteral("history/metric"), QStringLiteral("train_loss")).toString());
  auto* header = table_->horizontalHeader();
  if (header->restoreState(settings.value(QStringLiteral("history/header")).toByteArray())) {
    table_->sortByColumn(header->sortIndicatorSection(), header->sortIndicatorOrder());
    columns_fitted_ = true;  // the user's widths
  }
  vertical_->restoreState(settings.value(QStringLiteral("history/splitter")).toByteArray());
  bottom_->restoreState(settings.value(QStringLiteral("history/bottomSplitter")).toByteArray());
  updateActions();
}

void HistoryPanel::saveSettings() const {
  QSettings settings;
  settings.setValue(QStringLiteral("history/header"), table_->horizontalHeader()->saveState());
  settings.setValue(QStringLiteral("history/splitter"), vertical_->saveState());
  settings.setValue(QStringLiteral("history/bottomSplitter"), bottom_->saveState());
  const QString preferred_metric = chart_->preferredMetric();
  if (!preferred_metric.isEmpty()) settings.setValue(QStringLiteral("history/metric"), preferred_metric);
}

void HistoryPanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refresh();  // runs recorded by another process while the panel was hidden
}

bool HistoryPanel::openStore() {
  const QString path = state_ ? state_->databasePath() : QString::fromStdString(RunStore::default_path());
  store_.reset();
  try {
    store_ = std::make_unique<RunStore>(QFile::encodeName(path).toStdString(), RunStore::kReaderBusyTimeoutMs,
                                        StoreAccess::kReadOnly);
  } catch (const StoreError& e) {
    if (e.problem() == StoreProblem::kMissing || e.problem() == StoreProblem::kOutdated) {
      // Nothing recorded yet (looking must not create the file), or a database an older version
      // wrote, which the maintenance off the GUI thread upgrades before the panel reads it.
      error_bar_->hide();
      store_error_.clear();
      restoring_selection_ = true;
      model_->setRuns({});
      restoring_selection_ = false;
      onSelectionChanged();
      if (e.problem() == StoreProblem::kOutdated) {
        setMessage(tr("Upgrading the run history %1…").arg(QDir::toNativeSeparators(path)));
        startMaintenance(path);
      } else {
        setMessage(tr("No runs recorded yet in %1.").arg(QDir::toNativeSeparators(path)));
        no_runs_message_ = true;
      }
      return false;
    }
    QString message = QString::fromUtf8(e.what());
    if (!message.contains(path)) message = path + QStringLiteral(": ") + message;
    showStoreError(message);
    return false;
  } catch (const std::exception& e) {
    QString message = QString::fromUtf8(e.what());
    if (!message.contains(path)) message = path + QStringLiteral(": ") + message;
    showStoreError(message);
    return false;
  }
  store_error_.clear();
  error_bar_->hide();
  if (maintained_path_ != path) startMaintenance(path);  // once per database the panel opens
  return true;
}

std::unique_ptr<RunStore> HistoryPanel::writableStore() const {
  if (!store_) throw StoreError(tr("the run history is not open").toStdString());
  return std::make_unique<RunStore>(store_->path(), RunStore::kReaderBusyTimeoutMs);
}

void HistoryPanel::startMaintenance(const QString& path) {
  if (maintenance_->isRunning()) return;
  maintained_path_ = path;
  const std::string file = QFile::encodeName(path).toStdString();
  maintenance_->setFuture(QtConcurrent::run([file] {
    Maintenance done;
    try {
      RunStore store(file);  // a writer: migrates an older schema
      done.closed = static_cast<int>(store.mark_interrupted_runs().size());
    } catch (const StoreError& e) {
      // A database this user may only read (a shared or archived history) is listed as it is.
      if (e.problem() != StoreProblem::kReadOnly) done.error = QString::fromUtf8(e.what());
    } catch (const std::exception& e) {
      done.error = QString::fromUtf8(e.what());
    }
    return done;
  }));
}

void HistoryPanel::onMaintenanceDone() {
  const Maintenance done = maintenance_->result();
  if (!done.error.isEmpty()) {
    setMessage(tr("The runs whose training process died could not be closed yet: %1").arg(done.error), true);
    return;
  }
  if (done.closed > 0 || !store_) refresh();
}

void HistoryPanel::showStoreError(const QString& message) {
  store_error_ = message;
  error_label_->setText(tr("<b>The run history cannot be opened.</b><br>%1").arg(message.toHtmlEscaped()));
  error_bar_->show();
  restoring_selection_ = true;
  model_->setRuns({});
  restoring_selection_ = false;
  onSelectionChanged();
  // A database locked by a long write clears by itself: try again shortly.
  const QString lower = message.toLower();
  if (lower.contains(QLatin1String("locked")) || lower.contains(QLatin1String("busy")))
    poll_->start();
  else
    poll_->stop();
}

void HistoryPanel::setMessage(const QString& text, bool error) {
  no_runs_message_ = false;
  message_->setText(text);
  message_->setProperty("error", error);
  QPalette pal = palette();
  if (error) pal.setColor(QPalette::WindowText, RunTableModel::statusColor(RunStatus::kFailed));
  message_->setPalette(pal);
  message_->setToolTip(error ? tr("Error") : QString());
}

QString HistoryPanel::message() const { return message_->text(); }

void HistoryPanel::refresh() {
  const bool polling = polling_;
  polling_ = false;
  const QString path = state_ ? state_->databasePath() : QString();
  if (!store_ || (state_ && QFile::encodeName(path).toStdString() != store_->path())) {
    const bool had_store = store_ != nullptr;
    if (!openStore()) return;
    // The first run recorded has created the database: "No runs recorded yet" is out of date.
    if (had_store || no_runs_message_ || message_->text().isEmpty())
      setMessage(tr("Run history: %1").arg(QDir::toNativeSeparators(path)));
  }
  std::vector<RunInfo> runs;
  try {
    runs = store_->list_runs();
  } catch (const std::exception& e) {
    setMessage(tr("Cannot read the run history: %1").arg(QString::fromUtf8(e.what())), true);
    return;
  }

  const QList<qint64> previous = selectedRunIds();
  qint64 newest = 0;
  for (const auto& r : runs) newest = std::max<qint64>(newest, r.id);
  bool any_running = false;
  for (const auto& r : runs) any_running = any_running || r.status == RunStatus::kRunning;

  // Which runs to select afterwards: the same ones, or the newest when the selection was the
  // default (first look, or following the newest run as new runs start).
  QList<qint64> wanted;
  bool was_default = auto_selected_ || (previous.isEmpty() && model_->rowCount() == 0);
  if (!was_default) {
    for (qint64 id : previous)
      if (std::any_of(runs.begin(), runs.end(), [id](const RunInfo& r) { return r.id == id; })) wanted << id;
  } else if (newest > 0) {
    wanted << newest;
  }

  restoring_selection_ = true;
  model_->setRuns(std::move(runs));
  if (!columns_fitted_ && model_->rowCount() > 0) {
    // First look without remembered widths: fit the columns to their contents, within bounds.
    columns_fitted_ = true;
    table_->resizeColumnsToContents();
    for (int c = 0; c < RunTableModel::ColumnCount; ++c)
      table_->setColumnWidth(c, std::clamp(table_->columnWidth(c), 40, c == RunTableModel::Name ? 260 : 180));
  }
  if (sorted(wanted) != sorted(selectedRunIds())) selectRuns(wanted);
  restoring_selection_ = false;
  auto_selected_ = was_default && !wanted.isEmpty();

  count_label_->setToolTip(QDir::toNativeSeparators(path));
  if (any_running) {
    poll_->start();
    if (polling) startMaintenance(path);  // is a "running" run's process still alive?
  } else {
    poll_->stop();
  }

  const bool selection_changed = sorted(previous) != sorted(selectedRunIds());
  if (selection_changed) chart_->forgetUserZoom();
  const QString signature = detailsSignature();
  const bool moved = signature != details_signature_;
  if (selection_changed || !polling || moved) updateMetricChoices();
  // Polling only re-reads the curves that moved, off the GUI thread: a live run's train_loss can
  // hold 100k points.
  if (selection_changed || !polling)
    updateChart(selection_changed);
  else
    pollChart();
  if (selection_changed || !polling || moved) {
    // Keep the reader's place in the lists while a live run updates them.
    const int tree_scroll = config_->tree()->verticalScrollBar()->value();
    const int checkpoint_scroll = checkpoints_->verticalScrollBar()->value();
    updateDetails();
    updateCheckpoints();
    if (!selection_changed) {
      QTimer::singleShot(0, this, [this, tree_scroll, checkpoint_scroll] {
        config_->tree()->verticalScrollBar()->setValue(tree_scroll);
        checkpoints_->verticalScrollBar()->setValue(checkpoint_scroll);
      });
    }
  }
  updateActions();
}

void HistoryPanel::selectRuns(const QList<qint64>& ids) {
  auto* selection = table_->selectionModel();
  QItemSelection items;
  QModelIndex first;
  for (qint64 id : ids) {
    const int row = model_->rowOf(id);
    if (row < 0) continue;
    const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
    if (!index.isValid()) continue;  // filtered out
    items.select(index, index.siblingAtColumn(RunTableModel::ColumnCount - 1));
    if (!first.isValid()) first = index;
  }
  const bool was_restoring = restoring_selection_;
  restoring_selection_ = true;
  selection->select(items, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  if (first.isValid()) {
    selection->setCurrentIndex(first, QItemSelectionModel::NoUpdate);
    table_->scrollTo(first);
  }
  restoring_selection_ = was_restoring;
  if (!was_restoring) {
    auto_selected_ = false;
    onSelectionChanged();
  }
}

QList<qint64> HistoryPanel::selectedRunIds() const {
  QList<qint64> ids;
  auto rows = table_->selectionModel()->selectedRows();
  std::sort(rows.begin(), rows.end(), [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
  for (const QModelIndex& index : rows) ids << index.data(RunTableModel::IdRole).toLongLong();
  return ids;
}

std::vector<RunInfo> HistoryPanel::selectedRuns() const {
  std::vector<RunInfo> runs;
  for (qint64 id : selectedRunIds())
    if (const RunInfo* r = model_->run(id)) runs.push_back(*r);
  return runs;
}

void HistoryPanel::onSelectionChanged() {
  chart_->forgetUserZoom();
  updateMetricChoices();
  updateChart(true);
  updateDetails();
  updateCheckpoints();
  updateActions();
}

QString HistoryPanel::detailsSignature() const {
  QStringList parts;
  for (const auto& r : selectedRuns()) {
    QStringList tags;
    for (const auto& t : r.tags) tags << q(t);
    parts << QStringLiteral("%1|%2|%3|%4|%5|%6")
                 .arg(r.id)
                 .arg(q(r.name), QString::fromLatin1(run_status_name(r.status)))
                 .arg(r.steps)
                 .arg(r.best_bleu ? *r.best_bleu : -1)
                 .arg(tags.join(QLatin1Char(',')));
  }
  return parts.join(QLatin1Char('\n'));
}

void HistoryPanel::updateMetricChoices() { chart_->updateMetricChoices(selectedRuns(), store_.get()); }

QString HistoryPanel::metric() const { return chart_->metric(); }

bool HistoryPanel::setMetric(const QString& name) { return chart_->setMetric(name); }

QCustomPlot* HistoryPanel::chart() const { return chart_->plot(); }

void HistoryPanel::updateChart(bool rescale) {
  const QString error = chart_->draw(selectedRuns(), store_.get(), model_->rowCount() > 0, rescale);
  if (!error.isEmpty()) setMessage(tr("Cannot read the metrics: %1").arg(error), true);
  export_chart_->setEnabled(chart()->graphCount() > 0);
}

void HistoryPanel::pollChart() {
  if (store_) chart_->poll(selectedRuns(), *store_);
}

void HistoryPanel::onSeriesLoaded() {
  if (chart_->applyLoadedSeries(selectedRunIds())) updateChart(false);
  if (chart_->pollPending()) pollChart();
}

void HistoryPanel::updateDetails() {
  details_signature_ = detailsSignature();
  config_->showRuns(selectedRuns(), *model_, store_.get());
}

void HistoryPanel::updateCheckpoints() {
  const int rows = checkpoints_->showRuns(selectedRuns(), store_.get());
  details_tabs_->setTabText(1, rows ? tr("Checkpoints (%1)").arg(rows) : tr("Checkpoints"));
}

}  // namespace ts::ui
