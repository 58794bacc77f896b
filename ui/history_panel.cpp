// SPDX-License-Identifier: GPL-3.0-or-later
#include "history_panel.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStandardPaths>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <qcustomplot.h>

#include "device_info.h"
#include "plot_style.h"
#include "run_table_model.h"
#include "studio_state.h"
#include "translation_service.h"
#include "ts/store/html_report.h"

namespace ts::ui {

namespace {

constexpr int kPollMs = 2000;
constexpr int kBusyTimeoutMs = 200;

QString q(const std::string& s) { return QString::fromStdString(s); }

// Metrics in the order a user looks for them, with readable labels.
const std::vector<std::pair<const char*, const char*>>& known_metrics() {
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

QString metric_label(const QString& name) {
  for (const auto& [key, label] : known_metrics())
    if (name == QLatin1String(key)) return HistoryPanel::tr(label);
  return name;
}

int metric_rank(const std::string& name) {
  const auto& list = known_metrics();
  for (std::size_t i = 0; i < list.size(); ++i)
    if (name == list[i].first) return static_cast<int>(i);
  return static_cast<int>(list.size());
}

QString run_label(const RunInfo& r) { return QStringLiteral("#%1 %2").arg(r.id).arg(q(r.name)); }

// A config value as a person reads it: strings without JSON quotes.
QString value_text(const nlohmann::json& j) { return j.is_string() ? q(j.get<std::string>()) : q(j.dump()); }

// {"a": {"b": 1}} -> {"a.b": "1"}, as `runs compare` does.
void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, QString>& out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& item : j.items()) flatten(item.value(), prefix.empty() ? item.key() : prefix + "." + item.key(), out);
  } else if (!prefix.empty()) {
    out[prefix] = value_text(j);
  }
}

void add_json_items(QTreeWidgetItem* parent, const nlohmann::json& j) {
  for (const auto& item : j.items()) {
    auto* child = new QTreeWidgetItem(parent, {q(item.key())});
    if (item.value().is_object()) add_json_items(child, item.value());
    else child->setText(1, value_text(item.value()));
  }
}

QString csv_field(const QString& s) {
  if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) && !s.contains(QLatin1Char('\n'))) return s;
  QString out = s;
  out.replace(QLatin1String("\""), QLatin1String("\"\""));
  return QLatin1Char('"') + out + QLatin1Char('"');
}

QString bleu_text(const RunInfo& r) { return r.best_bleu ? QString::number(*r.best_bleu, 'f', 2) : QStringLiteral("–"); }

QList<qint64> sorted(QList<qint64> ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

QString ids_text(const std::vector<RunInfo>& runs) {
  QStringList ids;
  for (const auto& r : runs) ids << QStringLiteral("#%1").arg(r.id);
  return ids.join(QStringLiteral(", "));
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

HistoryPanel::~HistoryPanel() {
  series_watcher_->waitForFinished();
  saveSettings();
}

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
  filter_->setToolTip(tr("Every word must match the run's name, corpus, direction, preset, tags or status (e.g. \"de-en failed\")"));
  filter_->setClearButtonEnabled(true);
  count_label_ = new QLabel(this);
  count_label_->setObjectName(QStringLiteral("historyCount"));
  top->addWidget(filter_, 1);
  top->addWidget(count_label_);
  layout->addLayout(top);

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
  rename_ = make_action(QStringLiteral("historyRename"), tr("Rename…"), QStyle::SP_FileDialogDetailedView, tr("Rename the selected run"));
  tag_ = make_action(QStringLiteral("historyTag"), tr("Tag…"), QStyle::SP_FileDialogNewFolder, tr("Add a tag to the selected runs"));
  untag_ = make_action(QStringLiteral("historyUntag"), tr("Remove tag…"), QStyle::SP_DialogResetButton,
                       tr("Remove a tag from the selected runs"));
  delete_ = make_action(QStringLiteral("historyDelete"), tr("Delete…"), QStyle::SP_TrashIcon,
                        tr("Delete the selected runs from the history (checkpoint files stay on disk)"));
  export_csv_ = make_action(QStringLiteral("historyExportCsv"), tr("Export CSV…"), QStyle::SP_DialogSaveButton,
                            tr("Save every metric of the selected runs as CSV (run_id,run_name,step,metric,value,time)"));
  export_report_ = make_action(QStringLiteral("historyExportReport"), tr("Report…"), QStyle::SP_FileDialogContentsView,
                               tr("Save the selected run as one HTML page to share: config, curves, BLEU/chrF, sample "
                                  "translations and attention"));
  export_chart_ = make_action(QStringLiteral("historyExportChart"), tr("Export chart…"), QStyle::SP_DialogSaveButton,
                              tr("Save the chart as PNG or PDF"));
  refresh_ = make_action(QStringLiteral("historyRefresh"), tr("Refresh"), QStyle::SP_BrowserReload, tr("Read the run history again"));
  delete_->setShortcut(QKeySequence::Delete);
  delete_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  for (QAction* a : {load_, replay_, rename_, tag_, untag_, delete_}) toolbar_->addAction(a);
  toolbar_->addSeparator();
  // The three exports share one drop-down button: nine buttons with text did not fit beside the
  // chart at 1440 px, and Qt pushed the last ones (Report…) into the overflow menu.
  auto* export_menu = new QMenu(this);
  export_menu->setObjectName(QStringLiteral("historyExportMenu"));
  for (QAction* a : {export_csv_, export_report_, export_chart_}) export_menu->addAction(a);
  auto* export_button = new QToolButton(this);
  export_button->setObjectName(QStringLiteral("historyExportButton"));
  export_button->setText(tr("Export"));
  export_button->setIcon(style()->standardIcon(QStyle::SP_DialogSaveButton));
  export_button->setToolTip(tr("Save the selected runs as CSV, the selected run as an HTML report, or the chart as an image"));
  export_button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  export_button->setPopupMode(QToolButton::InstantPopup);
  export_button->setMenu(export_menu);
  toolbar_->addWidget(export_button);
  layout->addWidget(toolbar_);
  // Refresh sits by the filter, so the toolbar's last button is not the one pushed into overflow.
  auto* refresh_button = new QToolButton(this);
  refresh_button->setDefaultAction(refresh_);
  refresh_button->setToolButtonStyle(Qt::ToolButtonIconOnly);
  refresh_button->setAutoRaise(true);
  top->addWidget(refresh_button);
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

  // The run table.
  model_ = new RunTableModel(this);
  proxy_ = new RunFilterProxy(this);
  proxy_->setSourceModel(model_);
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("historyTable"));
  table_->setModel(proxy_);
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
    proxy_->setFilterWords(text);
    updateActions();
  });
  connect(proxy_, &QAbstractItemModel::rowsInserted, this, &HistoryPanel::updateActions);
  connect(proxy_, &QAbstractItemModel::rowsRemoved, this, &HistoryPanel::updateActions);
  connect(proxy_, &QAbstractItemModel::modelReset, this, &HistoryPanel::updateActions);

  // Chart of the chosen metric, one line per selected run.
  auto* chart_box = new QWidget(this);
  auto* chart_layout = new QVBoxLayout(chart_box);
  chart_layout->setContentsMargins(0, 0, 0, 0);
  auto* chart_bar = new QHBoxLayout;
  auto* metric_label_widget = new QLabel(tr("Metric:"), chart_box);
  metric_combo_ = new QComboBox(chart_box);
  metric_combo_->setObjectName(QStringLiteral("historyMetric"));
  metric_combo_->setToolTip(tr("The metric drawn for every selected run, against the training step"));
  metric_combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  metric_label_widget->setBuddy(metric_combo_);
  auto* log_scale = new QCheckBox(tr("Log scale"), chart_box);
  log_scale->setObjectName(QStringLiteral("historyLogScale"));
  log_scale->setToolTip(tr("Logarithmic y axis (useful for losses and perplexity)"));
  chart_bar->addWidget(metric_label_widget);
  chart_bar->addWidget(metric_combo_);
  chart_bar->addWidget(log_scale);
  chart_bar->addStretch(1);
  chart_layout->addLayout(chart_bar);
  chart_ = new QCustomPlot(chart_box);
  chart_->setObjectName(QStringLiteral("historyChart"));
  chart_->setMinimumSize(260, 180);
  chart_->setToolTip(tr("Drag to pan, wheel to zoom, double-click to fit"));
  style_plot(chart_);
  chart_->xAxis->setLabel(tr("step"));
  chart_->legend->setVisible(false);
  QFont legend_font = chart_->font();
  legend_font.setPointSizeF(legend_font.pointSizeF() * 0.9);
  chart_->legend->setFont(legend_font);
  chart_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  chart_hint_ = new QCPItemText(chart_);
  chart_hint_->position->setType(QCPItemPosition::ptAxisRectRatio);
  chart_hint_->position->setCoords(0.5, 0.5);
  chart_hint_->setClipToAxisRect(false);
  QColor hint_color = palette().color(QPalette::WindowText);
  hint_color.setAlpha(150);
  chart_hint_->setColor(hint_color);
  chart_layout->addWidget(chart_, 1);
  connect(metric_combo_, &QComboBox::currentIndexChanged, this, [this] {
    preferred_metric_ = metric();
    user_zoomed_ = false;
    updateChart(true);
  });
  connect(log_scale, &QCheckBox::toggled, this, [this](bool on) {
    chart_->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (on) chart_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    else chart_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    updateChart(true);
  });
  connect(chart_, &QCustomPlot::mousePress, this, [this] { user_zoomed_ = true; });
  connect(chart_, &QCustomPlot::mouseWheel, this, [this] { user_zoomed_ = true; });
  connect(chart_, &QCustomPlot::mouseDoubleClick, this, [this] {
    user_zoomed_ = false;
    updateChart(true);
  });

  // Configuration (full for one run, differences for several) and checkpoints.
  details_tabs_ = new QTabWidget(this);
  details_tabs_->setObjectName(QStringLiteral("historyDetails"));
  auto* config_page = new QWidget(details_tabs_);
  auto* config_layout = new QVBoxLayout(config_page);
  config_layout->setContentsMargins(4, 4, 4, 4);
  auto* config_bar = new QHBoxLayout;
  config_note_ = new QLabel(config_page);
  config_note_->setObjectName(QStringLiteral("historyConfigNote"));
  config_note_->setWordWrap(true);
  config_all_ = new QCheckBox(tr("All settings"), config_page);
  config_all_->setObjectName(QStringLiteral("historyConfigAll"));
  config_all_->setToolTip(tr("With several runs selected, list every setting, not only those that differ"));
  config_bar->addWidget(config_note_, 1);
  config_bar->addWidget(config_all_);
  config_layout->addLayout(config_bar);
  config_tree_ = new QTreeWidget(config_page);
  config_tree_->setObjectName(QStringLiteral("historyConfig"));
  config_tree_->setAlternatingRowColors(true);
  config_tree_->setUniformRowHeights(true);
  config_tree_->header()->setSectionResizeMode(QHeaderView::Interactive);
  config_layout->addWidget(config_tree_, 1);
  connect(config_all_, &QCheckBox::toggled, this, &HistoryPanel::updateDetails);
  details_tabs_->addTab(config_page, tr("Configuration"));

  checkpoints_ = new QTableWidget(0, 6, details_tabs_);
  checkpoints_->setObjectName(QStringLiteral("historyCheckpoints"));
  checkpoints_->setHorizontalHeaderLabels({tr("Run"), tr("Kind"), tr("Step"), tr("BLEU"), tr("File"), tr("State")});
  checkpoints_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  checkpoints_->setSelectionBehavior(QAbstractItemView::SelectRows);
  checkpoints_->setSelectionMode(QAbstractItemView::SingleSelection);
  checkpoints_->verticalHeader()->hide();
  checkpoints_->verticalHeader()->setDefaultSectionSize(checkpoints_->fontMetrics().height() + 8);
  checkpoints_->horizontalHeader()->setStretchLastSection(true);
  checkpoints_->setWordWrap(false);
  checkpoints_->setToolTip(tr("Double-click a checkpoint to load it into the Translate panel"));
  connect(checkpoints_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    if (auto* item = checkpoints_->item(row, 4))
      loadCheckpointFile(item->data(Qt::UserRole).toString(), item->data(Qt::UserRole + 1).toString());
  });
  details_tabs_->addTab(checkpoints_, tr("Checkpoints"));

  bottom_ = new QSplitter(Qt::Horizontal, this);
  bottom_->setObjectName(QStringLiteral("historyBottomSplitter"));
  bottom_->addWidget(chart_box);
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

  poll_ = new QTimer(this);
  poll_->setInterval(kPollMs);
  connect(poll_, &QTimer::timeout, this, [this] {
    if (!isVisible()) return;
    polling_ = true;
    refresh();
  });
  series_watcher_ = new QFutureWatcher<HistorySeriesBatch>(this);
  connect(series_watcher_, &QFutureWatcherBase::finished, this, &HistoryPanel::onSeriesLoaded);

  QSettings settings;
  preferred_metric_ = settings.value(QStringLiteral("history/metric"), QStringLiteral("train_loss")).toString();
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
  if (!preferred_metric_.isEmpty()) settings.setValue(QStringLiteral("history/metric"), preferred_metric_);
}

void HistoryPanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refresh();  // runs recorded by another process while the panel was hidden
}

bool HistoryPanel::openStore() {
  const QString path = state_ ? state_->databasePath() : QString::fromStdString(RunStore::default_path());
  store_.reset();
  try {
    store_ = std::make_unique<RunStore>(QFile::encodeName(path).toStdString(), kBusyTimeoutMs);
  } catch (const std::exception& e) {
    QString message = QString::fromUtf8(e.what());
    if (!message.contains(path)) message = path + QStringLiteral(": ") + message;
    showStoreError(message);
    return false;
  }
  store_error_.clear();
  error_bar_->hide();
  return true;
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
  if (lower.contains(QLatin1String("locked")) || lower.contains(QLatin1String("busy"))) poll_->start();
  else poll_->stop();
}

void HistoryPanel::setMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setProperty("error", error);
  QPalette pal = palette();
  if (error) pal.setColor(QPalette::WindowText, RunTableModel::statusColor(QStringLiteral("failed")));
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
    if (had_store || message_->text().isEmpty()) setMessage(tr("Run history: %1").arg(QDir::toNativeSeparators(path)));
  }
  std::vector<RunInfo> runs;
  try {
    store_->mark_interrupted_runs();  // a run whose process died since the last look
  } catch (const std::exception&) {
    // Best effort: a busy or read-only store can still be listed.
  }
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
  for (const auto& r : runs) any_running = any_running || r.status == "running";

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
  if (any_running) poll_->start();
  else poll_->stop();

  const bool selection_changed = sorted(previous) != sorted(selectedRunIds());
  if (selection_changed) user_zoomed_ = false;
  const QString signature = detailsSignature();
  const bool moved = signature != details_signature_;
  if (selection_changed || !polling || moved) updateMetricChoices();
  // Polling only re-reads the curves that moved, off the GUI thread: a live run's train_loss can
  // hold 100k points.
  if (selection_changed || !polling) updateChart(selection_changed);
  else pollChart();
  if (selection_changed || !polling || moved) {
    // Keep the reader's place in the lists while a live run updates them.
    const int tree_scroll = config_tree_->verticalScrollBar()->value();
    const int checkpoint_scroll = checkpoints_->verticalScrollBar()->value();
    updateDetails();
    updateCheckpoints();
    if (!selection_changed) {
      QTimer::singleShot(0, this, [this, tree_scroll, checkpoint_scroll] {
        config_tree_->verticalScrollBar()->setValue(tree_scroll);
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
  user_zoomed_ = false;
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
                 .arg(q(r.name), q(r.status))
                 .arg(r.steps)
                 .arg(r.best_bleu ? *r.best_bleu : -1)
                 .arg(tags.join(QLatin1Char(',')));
  }
  return parts.join(QLatin1Char('\n'));
}

void HistoryPanel::updateMetricChoices() {
  std::set<std::string> names;
  if (store_) {
    for (const auto& r : selectedRuns()) {
      try {
        for (auto& n : store_->metric_names(r.id)) names.insert(n);
      } catch (const std::exception&) {
      }
    }
  }
  if (names.empty())  // nothing recorded (yet): offer the usual metrics so the choice persists
    for (const auto& m : known_metrics()) names.insert(m.first);
  std::vector<std::string> ordered(names.begin(), names.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const std::string& a, const std::string& b) { return metric_rank(a) < metric_rank(b); });
  QStringList wanted;
  for (const auto& n : ordered) wanted << q(n);
  QStringList current;
  for (int i = 0; i < metric_combo_->count(); ++i) current << metric_combo_->itemData(i).toString();
  if (wanted != current) {
    const QSignalBlocker block(metric_combo_);
    metric_combo_->clear();
    for (const QString& n : wanted) metric_combo_->addItem(metric_label(n), n);
  }
  int index = metric_combo_->findData(preferred_metric_);
  if (index < 0) index = 0;
  if (metric_combo_->currentIndex() != index) {
    const QSignalBlocker block(metric_combo_);
    metric_combo_->setCurrentIndex(index);
  }
}

QString HistoryPanel::metric() const { return metric_combo_->currentData().toString(); }

bool HistoryPanel::setMetric(const QString& name) {
  preferred_metric_ = name;
  const int index = metric_combo_->findData(name);
  if (index < 0) return false;
  metric_combo_->setCurrentIndex(index);  // redraws through currentIndexChanged
  return true;
}

void HistoryPanel::updateChart(bool rescale) {
  chart_->clearGraphs();
  chart_steps_.clear();
  const QString name = metric();
  const auto runs = selectedRuns();
  QString error;
  for (std::size_t i = 0; i < runs.size() && store_; ++i) {
    std::vector<MetricPoint> points;
    try {
      points = store_->metric(runs[i].id, name.toStdString());
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    chart_steps_[runs[i].id] = runs[i].steps;
    if (points.empty()) continue;
    QVector<double> x(static_cast<int>(points.size())), y(static_cast<int>(points.size()));
    for (std::size_t p = 0; p < points.size(); ++p) {
      x[static_cast<int>(p)] = static_cast<double>(points[p].step);
      y[static_cast<int>(p)] = points[p].value;
    }
    QCPGraph* graph = chart_->addGraph();
    graph->setName(run_label(runs[i]));
    graph->setProperty("runId", QVariant::fromValue<qint64>(runs[i].id));
    graph->setPen(QPen(series_color(static_cast<int>(i)), 1.6));
    // Sparse series (validation metrics) read better with their points marked.
    if (points.size() <= 40) graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    // Steps come sorted from the store: QCustomPlot then samples long series per pixel.
    graph->setData(x, y, true);
  }
  if (!error.isEmpty()) setMessage(tr("Cannot read the metrics: %1").arg(error), true);
  chart_->yAxis->setLabel(metric_label(name));
  chart_->legend->setVisible(chart_->graphCount() > 0);
  if (chart_->graphCount() == 0) {
    if (runs.empty()) chart_hint_->setText(model_->rowCount() ? tr("Select one or more runs to compare their curves")
                                                              : tr("No runs recorded yet: train a model and it appears here"));
    else chart_hint_->setText(tr("No %1 recorded for the selected runs").arg(metric_label(name)));
    chart_hint_->setVisible(true);
  } else {
    chart_hint_->setVisible(false);
  }
  fitChart(rescale);
  chart_->replot(QCustomPlot::rpQueuedReplot);
  export_chart_->setEnabled(chart_->graphCount() > 0);
}

void HistoryPanel::fitChart(bool force) {
  if (force || !user_zoomed_) {
    if (chart_->graphCount() > 0) {
      chart_->rescaleAxes();
      // A little room above and below so lines do not sit on the frame.
      const QCPRange y = chart_->yAxis->range();
      if (chart_->yAxis->scaleType() == QCPAxis::stLinear) {
        const double pad = y.size() > 0 ? y.size() * 0.05 : std::max(1e-6, std::abs(y.center()) * 0.05);
        chart_->yAxis->setRange(y.lower - pad, y.upper + pad);
      }
      int max_points = 0;  // over all graphs
      for (int i = 0; i < chart_->graphCount(); ++i) max_points = std::max(max_points, chart_->graph(i)->data()->size());
      // End markers stay whole; a single point gets a range around it.
      const QCPRange x = chart_->xAxis->range();
      const double x_pad = max_points == 1 && x.size() == 0 ? 1.0 : x.size() * 0.03;
      chart_->xAxis->setRange(x.lower - x_pad, x.upper + x_pad);
    } else {
      chart_->xAxis->setRange(0, 1);
      chart_->yAxis->setRange(chart_->yAxis->scaleType() == QCPAxis::stLogarithmic ? 0.1 : 0, 1);
    }
  }
}

void HistoryPanel::pollChart() {
  if (!store_) return;
  std::vector<qint64> ids;
  for (const auto& r : selectedRuns()) {
    const auto it = chart_steps_.find(r.id);
    if (r.status == "running" || it == chart_steps_.end() || it->second != r.steps) ids.push_back(r.id);
  }
  if (ids.empty()) return;
  if (series_watcher_->isRunning()) {
    series_dirty_ = true;
    return;
  }
  series_dirty_ = false;
  for (qint64 id : ids)
    if (const RunInfo* r = model_->run(id)) chart_steps_[id] = r->steps;
  const std::string path = store_->path(), name = metric().toStdString();
  series_watcher_->setFuture(QtConcurrent::run([reader = reader_, path, ids, name]() {
    HistorySeriesBatch batch;
    batch.metric = QString::fromStdString(name);
    try {
      if (!reader->store || reader->path != path) {
        reader->store.reset();
        reader->store = std::make_unique<RunStore>(path, kBusyTimeoutMs);
        reader->path = path;
      }
      for (qint64 id : ids) {
        const auto points = reader->store->metric(id, name);
        HistorySeries s;
        s.run = id;
        s.x.resize(static_cast<int>(points.size()));
        s.y.resize(static_cast<int>(points.size()));
        for (std::size_t p = 0; p < points.size(); ++p) {
          s.x[static_cast<int>(p)] = static_cast<double>(points[p].step);
          s.y[static_cast<int>(p)] = points[p].value;
        }
        batch.series.push_back(std::move(s));
      }
    } catch (const std::exception& e) {
      batch.error = QString::fromUtf8(e.what());
      reader->store.reset();
    }
    return batch;
  }));
}

void HistoryPanel::onSeriesLoaded() {
  const HistorySeriesBatch batch = series_watcher_->result();
  if (batch.metric == metric() && batch.error.isEmpty()) {
    const QList<qint64> selected = selectedRunIds();
    bool new_curve = false;
    for (const auto& s : batch.series) {
      QCPGraph* graph = nullptr;
      for (int i = 0; i < chart_->graphCount() && !graph; ++i)
        if (chart_->graph(i)->property("runId").toLongLong() == s.run) graph = chart_->graph(i);
      if (!graph) {
        new_curve = new_curve || (!s.x.isEmpty() && selected.contains(s.run));  // first points of a live run
        continue;
      }
      graph->setData(s.x, s.y, true);
      graph->setScatterStyle(s.x.size() <= 40 ? QCPScatterStyle(QCPScatterStyle::ssDisc, 5) : QCPScatterStyle());
    }
    if (new_curve) {
      updateChart(false);
    } else {
      fitChart(false);
      chart_->replot(QCustomPlot::rpQueuedReplot);
    }
  }
  if (series_dirty_) pollChart();
}

void HistoryPanel::updateDetails() {
  details_signature_ = detailsSignature();
  config_tree_->clear();
  const auto runs = selectedRuns();
  config_all_->setVisible(runs.size() >= 2);
  if (runs.empty()) {
    config_tree_->setColumnCount(2);
    config_tree_->setHeaderLabels({tr("Setting"), tr("Value")});
    config_note_->setText(model_->rowCount() ? tr("Select a run to see its configuration, or several to compare them.")
                                             : QString());
    return;
  }
  QFont bold = config_tree_->font();
  bold.setBold(true);

  if (runs.size() == 1) {
    const RunInfo& r = runs.front();
    config_tree_->setColumnCount(2);
    config_tree_->setHeaderLabels({tr("Setting"), run_label(r)});
    auto* run_item = new QTreeWidgetItem(config_tree_, {tr("run")});
    auto add = [run_item](const QString& key, const QString& value, const QString& tip = {}) {
      auto* item = new QTreeWidgetItem(run_item, {key, value});
      item->setToolTip(1, tip.isEmpty() ? value : tip);
      return item;
    };
    auto* status = add(tr("status"), q(r.status) + (r.message.empty() ? QString() : QStringLiteral(" — ") + q(r.message)));
    status->setForeground(1, RunTableModel::statusColor(q(r.status)));
    add(tr("corpus"), q(r.corpus_path));
    add(tr("pairs"), QString::number(r.corpus_pairs));
    if (!r.corpus_sha256.empty()) add(tr("corpus SHA-256"), q(r.corpus_sha256).left(16) + QStringLiteral("…"), q(r.corpus_sha256));
    add(tr("direction"), q(r.direction));
    add(tr("preset"), q(r.preset));
    add(tr("steps"), QString::number(r.steps));
    add(tr("best BLEU"), bleu_text(r));
    add(tr("started"), RunTableModel::localTime(r.started_at, true));
    if (!r.ended_at.empty()) add(tr("ended"), RunTableModel::localTime(r.ended_at, true));
    add(tr("device"), q(r.device));
    add(tr("machine"), q(r.machine));
    add(tr("directory"), q(r.out_dir));
    if (!r.tags.empty()) add(tr("tags"), model_->data(model_->index(model_->rowOf(r.id), RunTableModel::Tags)).toString());
    if (r.config.is_object()) {
      for (const auto& section : r.config.items()) {
        auto* item = new QTreeWidgetItem(config_tree_, {q(section.key())});
        if (section.value().is_object()) add_json_items(item, section.value());
        else item->setText(1, value_text(section.value()));
      }
    }
    config_tree_->expandAll();
    config_tree_->resizeColumnToContents(0);
    config_note_->setText(tr("Full configuration of run #%1. Select several runs to compare them.").arg(r.id));
    return;
  }

  // Several runs: one column per run, the settings that differ (or all of them).
  QStringList headers{tr("Setting")};
  for (const auto& r : runs) headers << run_label(r);
  config_tree_->setColumnCount(headers.size());
  config_tree_->setHeaderLabels(headers);
  auto add_row = [&](QTreeWidgetItem* parent, const QString& key, const std::vector<QString>& values, bool differs) {
    QStringList texts{key};
    for (const auto& v : values) texts << v;
    auto* item = parent ? new QTreeWidgetItem(parent, texts) : new QTreeWidgetItem(config_tree_, texts);
    for (int c = 0; c < texts.size(); ++c) item->setToolTip(c, texts[c]);
    if (differs)
      for (int c = 0; c < texts.size(); ++c) item->setFont(c, bold);
    return item;
  };
  auto differs = [](const std::vector<QString>& values) {
    return std::any_of(values.begin(), values.end(), [&](const QString& v) { return v != values.front(); });
  };
  auto* summary = new QTreeWidgetItem(config_tree_, {tr("run")});
  auto summary_row = [&](const QString& key, auto value_of) {
    std::vector<QString> values;
    for (const auto& r : runs) values.push_back(value_of(r));
    add_row(summary, key, values, differs(values));
  };
  summary_row(tr("status"), [](const RunInfo& r) { return q(r.status); });
  summary_row(tr("corpus"), [](const RunInfo& r) {
    return r.corpus_path == StudioState::kDemoPath ? QStringLiteral("<demo>") : QFileInfo(q(r.corpus_path)).fileName();
  });
  summary_row(tr("direction"), [](const RunInfo& r) { return q(r.direction); });
  summary_row(tr("preset"), [](const RunInfo& r) { return q(r.preset); });
  summary_row(tr("steps"), [](const RunInfo& r) { return QString::number(r.steps); });
  summary_row(tr("best BLEU"), [](const RunInfo& r) { return bleu_text(r); });
  for (const char* m : {"chrf", "dev_loss"}) {
    summary_row(tr("last %1").arg(metric_label(QLatin1String(m))), [this, m](const RunInfo& r) {
      try {
        const auto points = store_ ? store_->metric(r.id, m) : std::vector<MetricPoint>{};
        return points.empty() ? QStringLiteral("–") : QString::number(points.back().value, 'f', 3);
      } catch (const std::exception&) {
        return QStringLiteral("?");
      }
    });
  }
  summary_row(tr("device"), [](const RunInfo& r) { return q(r.device); });

  std::vector<std::map<std::string, QString>> flat(runs.size());
  std::set<std::string> keys;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    flatten(runs[i].config, "", flat[i]);
    for (const auto& kv : flat[i]) keys.insert(kv.first);
  }
  auto* config = new QTreeWidgetItem(config_tree_, {tr("configuration")});
  int differing = 0;
  for (const auto& key : keys) {
    std::vector<QString> values;
    for (const auto& f : flat) {
      const auto it = f.find(key);
      values.push_back(it == f.end() ? QStringLiteral("–") : it->second);
    }
    const bool d = differs(values);
    differing += d ? 1 : 0;
    if (d || config_all_->isChecked()) add_row(config, q(key), values, d);
  }
  if (config->childCount() == 0) new QTreeWidgetItem(config, {tr("(identical)")});
  config_tree_->expandAll();
  config_tree_->resizeColumnToContents(0);
  config_note_->setText(differing == 0 ? tr("The %1 selected runs have the same configuration.").arg(runs.size())
                        : differing == 1 ? tr("1 setting differs (in bold).")
                                         : tr("%1 settings differ (in bold).").arg(differing));
}

std::vector<CheckpointRow> HistoryPanel::currentCheckpoints(qint64 run_id) const {
  std::vector<CheckpointRow> rows;
  if (!store_) return rows;
  std::map<std::string, CheckpointRow> latest;  // the newest registration of each file is what it holds now
  try {
    for (auto& c : store_->checkpoints(run_id)) latest[c.path] = std::move(c);
  } catch (const std::exception&) {
    return rows;
  }
  for (auto& kv : latest) rows.push_back(std::move(kv.second));
  auto rank = [](const std::string& kind) { return kind == "best" ? 0 : kind == "last" ? 1 : 2; };
  std::sort(rows.begin(), rows.end(), [&](const CheckpointRow& a, const CheckpointRow& b) {
    if (rank(a.kind) != rank(b.kind)) return rank(a.kind) < rank(b.kind);
    return a.step > b.step;
  });
  return rows;
}

std::optional<CheckpointRow> HistoryPanel::preferredCheckpoint(qint64 run_id) const {
  const auto rows = currentCheckpoints(run_id);
  if (rows.empty()) return std::nullopt;
  return rows.front();  // best, else last, else the latest step-N
}

void HistoryPanel::updateCheckpoints() {
  checkpoints_->setRowCount(0);
  const auto runs = selectedRuns();
  checkpoints_->setColumnHidden(0, runs.size() < 2);
  int row = 0;
  const QColor missing = RunTableModel::statusColor(QStringLiteral("failed"));
  for (const auto& r : runs) {
    for (const auto& c : currentCheckpoints(r.id)) {
      checkpoints_->insertRow(row);
      const QString path = q(c.path);
      const QFileInfo info(path);
      const bool exists = info.exists();
      QString bleu = QStringLiteral("–");
      if (c.metrics.is_object() && c.metrics.contains("bleu") && c.metrics["bleu"].is_number())
        bleu = QString::number(c.metrics["bleu"].get<double>(), 'f', 2);
      QString state = exists ? tr("ok") : tr("missing");
      QString state_tip = exists ? tr("The file is on disk") : tr("The file was moved or deleted");
      if (exists && c.bytes > 0 && info.size() != c.bytes) {
        state = tr("changed");
        state_tip = tr("The file's size differs from the one recorded (%1 now, %2 recorded): it was replaced")
                        .arg(format_bytes(static_cast<double>(info.size())), format_bytes(static_cast<double>(c.bytes)));
      }
      auto* run_item = new QTableWidgetItem(QStringLiteral("#%1").arg(r.id));
      run_item->setToolTip(q(r.name));
      auto* step_item = new QTableWidgetItem;
      step_item->setData(Qt::DisplayRole, QVariant::fromValue<qint64>(c.step));
      auto* file_item = new QTableWidgetItem(info.fileName());
      file_item->setData(Qt::UserRole, path);
      file_item->setData(Qt::UserRole + 1, q(r.kind));
      file_item->setToolTip(QDir::toNativeSeparators(path));
      auto* state_item = new QTableWidgetItem(state);
      state_item->setToolTip(state_tip);
      if (!exists) state_item->setForeground(missing);
      checkpoints_->setItem(row, 0, run_item);
      checkpoints_->setItem(row, 1, new QTableWidgetItem(q(c.kind)));
      checkpoints_->setItem(row, 2, step_item);
      checkpoints_->setItem(row, 3, new QTableWidgetItem(bleu));
      checkpoints_->setItem(row, 4, file_item);
      checkpoints_->setItem(row, 5, state_item);
      ++row;
    }
  }
  checkpoints_->resizeColumnsToContents();
  details_tabs_->setTabText(1, row ? tr("Checkpoints (%1)").arg(row) : tr("Checkpoints"));
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
  export_chart_->setEnabled(chart_->graphCount() > 0);
  refresh_->setEnabled(true);

  const int total = model_->rowCount(), shown = proxy_->rowCount();
  if (total == 0) count_label_->setText(store_ ? tr("no runs yet") : QString());
  else if (shown == total) count_label_->setText(total == 1 ? tr("1 run") : tr("%1 runs").arg(total));
  else count_label_->setText(tr("%1 of %2 runs").arg(shown).arg(total));

  QString tip;
  bool can_load = false;
  if (n != 1) {
    tip = tr("Select one run to load its best checkpoint into the Translate panel");
  } else if (const auto c = preferredCheckpoint(runs.front().id)) {
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
                      : probe.isEmpty() ? tr("This run had no probe sentence (set Training ▸ Probe sentence before training)")
                                        : tr("Replay the cross-attention of “%1” at every validation").arg(probe));
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
  const auto c = preferredCheckpoint(runs.front().id);
  if (!c) {
    setMessage(tr("Run #%1 \"%2\" has no checkpoint yet.").arg(runs.front().id).arg(q(runs.front().name)), true);
    return false;
  }
  return loadCheckpointFile(q(c->path), q(runs.front().kind));
}

bool HistoryPanel::loadCheckpointFile(const QString& path, const QString& kind) {
  if (path.isEmpty()) return false;
  if (!QFileInfo::exists(path)) {
    setMessage(tr("%1: the checkpoint file is missing (moved or deleted), so it cannot be loaded.")
                   .arg(QDir::toNativeSeparators(path)),
               true);
    return false;
  }
  if (kind == QLatin1String("language-model")) {
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
    store_->rename_run(id, trimmed.toStdString());
  } catch (const std::exception& e) {
    setMessage(tr("Cannot rename run #%1: %2").arg(id).arg(QString::fromUtf8(e.what())), true);
    return;
  }
  setMessage(tr("Run #%1 renamed to \"%2\".").arg(id).arg(trimmed));
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
    store_->rename_run(runs.front().id, trimmed.toStdString());
  } catch (const std::exception& e) {
    setMessage(tr("Cannot rename run #%1: %2").arg(runs.front().id).arg(QString::fromUtf8(e.what())), true);
    return false;
  }
  setMessage(tr("Run #%1 renamed to \"%2\".").arg(runs.front().id).arg(trimmed));
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
    for (const auto& r : runs) store_->add_tag(r.id, t.toStdString());
  } catch (const std::exception& e) {
    setMessage(tr("Cannot tag: %1").arg(QString::fromUtf8(e.what())), true);
    refresh();
    return false;
  }
  setMessage(tr("Tagged %1 with \"%2\".").arg(ids_text(runs), t));
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
    for (const auto& r : runs) store_->remove_tag(r.id, t.toStdString());
  } catch (const std::exception& e) {
    setMessage(tr("Cannot remove the tag: %1").arg(QString::fromUtf8(e.what())), true);
    refresh();
    return false;
  }
  setMessage(tr("Removed the tag \"%1\" from %2.").arg(t, ids_text(runs)));
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
    if (r.status == "running") running << QStringLiteral("#%1 \"%2\"").arg(r.id).arg(q(r.name));
  if (!running.isEmpty()) {
    const QString text = tr("%1 still running: stop the training before deleting it.").arg(running.join(QStringLiteral(", ")));
    setMessage(text, true);
    if (confirm) QMessageBox::warning(this, tr("Cannot delete a running run"), text);
    return false;
  }
  if (confirm) {
    QStringList names;
    for (std::size_t i = 0; i < runs.size() && i < 12; ++i)
      names << QStringLiteral("#%1 \"%2\" (%3, %4 steps)").arg(runs[i].id).arg(q(runs[i].name), q(runs[i].status)).arg(runs[i].steps);
    if (runs.size() > 12) names << tr("… and %1 more").arg(runs.size() - 12);
    QMessageBox box(QMessageBox::Question, tr("Delete runs"),
                    runs.size() == 1 ? tr("Delete run #%1 and its recorded metrics, samples and checkpoint records?").arg(runs.front().id)
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
      store_->delete_run(r.id);
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

bool HistoryPanel::exportReport(const QString& path, QString* error) {
  auto fail = [&](const QString& message) {
    if (error) *error = message;
    setMessage(message, true);
    return false;
  };
  const auto runs = selectedRuns();
  if (runs.size() != 1 || !store_) return fail(tr("Select the one run to report on."));
  QByteArray html;
  try {
    ReportOptions options;
    options.version = version_with_commit().toStdString();
    html = QByteArray::fromStdString(html_report(*store_, runs.front().id, options));
  } catch (const std::exception& e) {
    return fail(tr("Cannot read the run: %1").arg(QString::fromUtf8(e.what())));
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(html) != html.size() || !file.commit())
    return fail(tr("Cannot write %1: %2").arg(path, file.errorString()));
  setMessage(tr("Report of run %1 saved to %2").arg(runs.front().id).arg(path), false);
  return true;
}

bool HistoryPanel::exportMetricsCsv(const QString& path, QString* error) {
  auto fail = [&](const QString& message) {
    if (error) *error = message;
    setMessage(message, true);
    return false;
  };
  const auto runs = selectedRuns();
  if (runs.empty() || !store_) return fail(tr("Select the runs whose metrics to export."));
  QByteArray out = "run_id,run_name,step,metric,value,time\n";
  std::size_t rows = 0;
  try {
    for (const auto& r : runs) {
      const QString prefix = QString::number(r.id) + QLatin1Char(',') + csv_field(q(r.name)) + QLatin1Char(',');
      for (const auto& m : store_->all_metrics(r.id)) {
        out += (prefix + QString::number(m.step) + QLatin1Char(',') + csv_field(q(m.name)) + QLatin1Char(',') +
                QString::number(m.value, 'g', QLocale::FloatingPointShortest) + QLatin1Char(',') +
                QString::number(m.time, 'f', 3) + QLatin1Char('\n'))
                   .toUtf8();
        ++rows;
      }
    }
  } catch (const std::exception& e) {
    return fail(tr("Cannot read the metrics: %1").arg(QString::fromUtf8(e.what())));
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(out) != out.size() || !file.commit())
    return fail(tr("%1: cannot write (%2)").arg(QDir::toNativeSeparators(path), file.errorString()));
  setMessage(tr("Exported %1 metric rows of %2 to %3.").arg(rows).arg(ids_text(runs), QDir::toNativeSeparators(path)));
  return true;
}

bool HistoryPanel::exportChart(const QString& path, QString* error) {
  QString message;
  if (chart_->graphCount() == 0) {
    message = tr("Nothing to export: select runs with %1 recorded first.").arg(metric_label(metric()));
  } else {
    chart_->replot(QCustomPlot::rpImmediateRefresh);
    if (export_plot(chart_, path, &message)) {
      setMessage(tr("Saved the chart to %1.").arg(QDir::toNativeSeparators(path)));
      return true;
    }
  }
  if (error) *error = message;
  setMessage(message, true);
  return false;
}

namespace {
QString export_dir() {
  QSettings settings;
  const QString dir = settings.value(QStringLiteral("history/exportDir")).toString();
  if (!dir.isEmpty() && QFileInfo(dir).isDir()) return dir;
  return QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
}
void remember_export_dir(const QString& file) {
  QSettings().setValue(QStringLiteral("history/exportDir"), QFileInfo(file).absolutePath());
}
QString ids_file_part(const std::vector<RunInfo>& runs) {
  QStringList ids;
  for (const auto& r : runs) ids << QString::number(r.id);
  return (runs.size() == 1 ? QStringLiteral("run-") : QStringLiteral("runs-")) + ids.join(QLatin1Char('-'));
}
}  // namespace

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
  const QString tag = QInputDialog::getItem(this, tr("Tag runs"), tr("Tag for %1:").arg(ids_text(runs)), items, -1, true, &ok);
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
  const QString tag =
      QInputDialog::getItem(this, tr("Remove tag"), tr("Tag to remove from %1:").arg(ids_text(runs)), items, 0, false, &ok);
  if (ok) untagSelected(tag);
}

void HistoryPanel::exportCsvWithDialog() {
  const auto runs = selectedRuns();
  if (runs.empty()) return;
  const QString suggested = QDir(export_dir()).filePath(ids_file_part(runs) + QStringLiteral("-metrics.csv"));
  QString path = QFileDialog::getSaveFileName(this, tr("Export metrics"), suggested, tr("CSV files (*.csv)"));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".csv");
  remember_export_dir(path);
  QString error;
  if (!exportMetricsCsv(path, &error)) QMessageBox::warning(this, tr("Export metrics"), error);
}

void HistoryPanel::exportReportWithDialog() {
  const auto runs = selectedRuns();
  if (runs.size() != 1) return;
  const QString suggested = QDir(export_dir()).filePath(ids_file_part(runs) + QStringLiteral("-report.html"));
  QString path = QFileDialog::getSaveFileName(this, tr("Export report"), suggested, tr("HTML pages (*.html)"));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".html");
  remember_export_dir(path);
  QString error;
  if (!exportReport(path, &error)) QMessageBox::warning(this, tr("Export report"), error);
}

void HistoryPanel::exportChartWithDialog() {
  const auto runs = selectedRuns();
  if (chart_->graphCount() == 0) return;
  const QString png = tr("PNG image (*.png)"), pdf = tr("PDF document (*.pdf)");
  QString filter = png;
  const QString suggested = QDir(export_dir()).filePath(ids_file_part(runs) + QLatin1Char('-') + metric() + QStringLiteral(".png"));
  QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), suggested, png + QStringLiteral(";;") + pdf, &filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += filter == pdf ? QStringLiteral(".pdf") : QStringLiteral(".png");
  remember_export_dir(path);
  QString error;
  if (!exportChart(path, &error)) QMessageBox::warning(this, tr("Export chart"), error);
}

}  // namespace ts::ui
