// SPDX-License-Identifier: GPL-3.0-or-later
#include "attention_panel.h"

#include <algorithm>

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QStyle>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <nlohmann/json.hpp>
#include <qcustomplot.h>

#include "attention_export.h"
#include "attention_heatmap.h"
#include "attention_thumbnail.h"
#include "plot_style.h"
#include "studio_state.h"
#include "ts/train/data.h"

namespace ts::ui {

namespace {

constexpr int kLayerRole = Qt::UserRole + 1;
constexpr int kHeadRole = Qt::UserRole + 2;
constexpr int kMinThumbSide = 44, kMaxThumbSide = 120;

QString percent(double x) { return QStringLiteral("%1%").arg(qRound(std::clamp(x, 0.0, 1.0) * 100)); }

// Tooltips are rich text when they look like it; tokens such as "<unk>" and "</s>" must show as
// written.
QString plain_tooltip(const QString& text) {
  return QStringLiteral("<p style='white-space:pre'>%1</p>").arg(text.toHtmlEscaped());
}

QStandardItem* number_item(const QString& text, double sort_value) {
  auto* item = new QStandardItem(text);
  item->setData(sort_value, Qt::UserRole);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  item->setEditable(false);
  return item;
}

QString head_name(int head) {
  return head < 0 ? QObject::tr("average of heads") : QObject::tr("head %1").arg(head + 1);
}

}  // namespace

AttentionPanel::AttentionPanel(TranslationService* service, QWidget* parent) : QWidget(parent), service_(service) {
  setObjectName(QStringLiteral("attentionPanel"));
  buildUi();
  connect(service_, &TranslationService::translated, this, &AttentionPanel::showResult);
  connect(service_, &TranslationService::modelChanged, this, &AttentionPanel::updateInputState);
  connect(service_, &TranslationService::loadFailed, this, &AttentionPanel::updateInputState);
  connect(service_, &TranslationService::busyChanged, this, &AttentionPanel::updateInputState);
  updateInputState();
}

void AttentionPanel::buildUi() {
  auto* root = new QVBoxLayout(this);

  // The sentence shown, and another one to translate.
  sentence_ = new QLabel(this);
  sentence_->setObjectName(QStringLiteral("attentionSentence"));
  sentence_->setTextFormat(Qt::PlainText);
  sentence_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // A 60-token sentence is elided to the panel's width (the tooltip has it whole), so the label
  // neither wraps over several lines nor holds the panel wide.
  sentence_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  sentence_->installEventFilter(this);
  sentence_->hide();
  root->addWidget(sentence_);
  auto* input_row = new QHBoxLayout;
  input_ = new QLineEdit(this);
  input_->setObjectName(QStringLiteral("attentionInput"));
  input_->setPlaceholderText(tr("Another sentence to translate and explore…"));
  input_->setClearButtonEnabled(true);
  translate_ = new QPushButton(tr("Translate"), this);
  translate_->setObjectName(QStringLiteral("attentionTranslate"));
  translate_->setToolTip(tr("Translate with the model in memory (greedy) and record its attention"));
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("attentionStatus"));
  status_->setTextFormat(Qt::PlainText);
  status_->setWordWrap(true);
  dev_pairs_ = new QComboBox(this);
  dev_pairs_->setObjectName(QStringLiteral("attentionDevPair"));
  dev_pairs_->setToolTip(tr("A held-out (dev) pair of the corpus: translate its source and compare with the reference"));
  dev_pairs_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  dev_pairs_->setMinimumContentsLength(14);
  dev_pairs_->addItem(tr("Dev pair…"));
  dev_pairs_->setEnabled(false);
  input_row->addWidget(input_, 3);
  input_row->addWidget(dev_pairs_, 1);
  input_row->addWidget(translate_);
  input_row->addWidget(status_, 2);
  root->addLayout(input_row);
  connect(translate_, &QPushButton::clicked, this, [this] { translateText(input_->text()); });
  connect(input_, &QLineEdit::returnPressed, this, [this] { translateText(input_->text()); });
  connect(dev_pairs_, &QComboBox::activated, this, [this](int index) {
    if (index <= 0) return;
    const QString source = dev_pairs_->itemData(index).toString();
    input_->setText(source);
    translateText(source);
  });

  // Which maps.
  auto* controls = new QHBoxLayout;
  kind_combo_ = new QComboBox(this);
  kind_combo_->setObjectName(QStringLiteral("attentionKind"));
  for (auto kind : {AttentionKind::EncoderSelf, AttentionKind::DecoderSelf, AttentionKind::Cross})
    kind_combo_->addItem(AttentionData::kindName(kind), static_cast<int>(kind));
  kind_combo_->setCurrentIndex(kind_combo_->findData(static_cast<int>(kind_)));
  kind_combo_->setToolTip(tr("Encoder self-attention: source over source. Decoder self-attention: each output step over the "
                             "earlier ones (later tokens are masked). Cross-attention: output over source."));
  layer_combo_ = new QComboBox(this);
  layer_combo_->setObjectName(QStringLiteral("attentionLayerCombo"));
  layer_combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  layer_combo_->setToolTip(tr("Layer shown large"));
  head_combo_ = new QComboBox(this);
  head_combo_->setObjectName(QStringLiteral("attentionHeadCombo"));
  head_combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  head_combo_->setToolTip(tr("One head, or the mean of all heads of the layer"));
  controls->addWidget(new QLabel(tr("Attention:"), this));
  controls->addWidget(kind_combo_);
  controls->addSpacing(8);
  controls->addWidget(new QLabel(tr("Layer:"), this));
  controls->addWidget(layer_combo_);
  controls->addWidget(new QLabel(tr("Head:"), this));
  controls->addWidget(head_combo_);
  controls->addStretch(1);
  export_png_ = new QPushButton(tr("PNG…"), this);
  export_png_->setObjectName(QStringLiteral("attentionExportPng"));
  export_png_->setToolTip(tr("Save the large map as an image"));
  export_svg_ = new QPushButton(tr("SVG…"), this);
  export_svg_->setObjectName(QStringLiteral("attentionExportSvg"));
  export_svg_->setToolTip(tr("Save the large map as SVG (vector cells and token labels)"));
  export_json_ = new QPushButton(tr("JSON…"), this);
  export_json_->setObjectName(QStringLiteral("attentionExportJson"));
  export_json_->setToolTip(tr("Save every attention weight of this translation (all kinds, layers and heads) as JSON"));
  controls->addWidget(new QLabel(tr("Export:"), this));
  controls->addWidget(export_png_);
  controls->addWidget(export_svg_);
  controls->addWidget(export_json_);
  root->addLayout(controls);
  connect(kind_combo_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int index) {
    if (syncing_ || index < 0) return;
    kind_ = static_cast<AttentionKind>(kind_combo_->itemData(index).toInt());
    rebuildForKind();
  });
  connect(layer_combo_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int index) {
    if (!syncing_ && index >= 0) selectHead(index, head_);
  });
  connect(head_combo_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int index) {
    if (!syncing_ && index >= 0) selectHead(layer_, index - 1);
  });
  connect(export_png_, &QPushButton::clicked, this, &AttentionPanel::exportPngClicked);
  connect(export_svg_, &QPushButton::clicked, this, &AttentionPanel::exportSvgClicked);
  connect(export_json_, &QPushButton::clicked, this, &AttentionPanel::exportJsonClicked);

  pages_ = new QStackedWidget(this);
  root->addWidget(pages_, 1);
  empty_ = new QLabel(tr("Translate a sentence to explore its attention."), this);
  empty_->setObjectName(QStringLiteral("attentionEmpty"));
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  empty_->setForegroundRole(QPalette::PlaceholderText);
  pages_->addWidget(empty_);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setObjectName(QStringLiteral("attentionSplitter"));
  split->setChildrenCollapsible(false);
  pages_->addWidget(split);

  // Model view.
  auto* left = new QWidget(split);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  auto* grid_title = new QLabel(tr("Model view: layers × heads (click one to open it)"), left);
  left_layout->addWidget(grid_title);
  grid_scroll_ = new QScrollArea(left);
  grid_scroll_->setWidgetResizable(true);
  grid_scroll_->installEventFilter(this);  // thumbnails grow or shrink with the pane
  grid_ = new QWidget;
  grid_->setObjectName(QStringLiteral("attentionGrid"));
  auto* grid_layout = new QGridLayout(grid_);
  grid_layout->setSpacing(2);
  grid_layout->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  grid_scroll_->setWidget(grid_);
  left_layout->addWidget(grid_scroll_, 1);
  grid_message_ = new QLabel(left);
  grid_message_->setObjectName(QStringLiteral("attentionGridMessage"));
  grid_message_->setWordWrap(true);
  grid_message_->setAlignment(Qt::AlignCenter);
  grid_message_->hide();
  left_layout->addWidget(grid_message_, 1);

  // The chosen map, large, over the per-head summary.
  auto* right = new QSplitter(Qt::Vertical, split);
  right->setChildrenCollapsible(false);
  auto* large_box = new QWidget(right);
  auto* large_layout = new QVBoxLayout(large_box);
  large_layout->setContentsMargins(0, 0, 0, 0);
  head_info_ = new QLabel(large_box);
  head_info_->setObjectName(QStringLiteral("attentionHeadInfo"));
  head_info_->setTextFormat(Qt::PlainText);
  head_info_->setWordWrap(true);
  large_layout->addWidget(head_info_);
  large_ = new AttentionHeatmap(large_box);
  large_->setObjectName(QStringLiteral("attentionLarge"));
  large_->setMinimumSize(280, 220);
  large_layout->addWidget(large_, 1);
  hover_ = new QLabel(large_box);
  hover_->setObjectName(QStringLiteral("attentionHover"));
  hover_->setTextFormat(Qt::PlainText);
  hover_->setForegroundRole(QPalette::PlaceholderText);
  large_layout->addWidget(hover_);
  connect(large_, &AttentionHeatmap::cellHovered, this, &AttentionPanel::onLargeHover);

  table_model_ = new QStandardItemModel(this);
  table_proxy_ = new QSortFilterProxyModel(this);
  table_proxy_->setSourceModel(table_model_);
  table_proxy_->setSortRole(Qt::UserRole);
  table_ = new QTableView(right);
  table_->setObjectName(QStringLiteral("attentionSummary"));
  table_->setModel(table_proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(0, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setAlternatingRowColors(true);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
    if (syncing_ || !current.isValid()) return;
    const QModelIndex first = table_proxy_->index(current.row(), 0);
    selectHead(first.data(kLayerRole).toInt(), first.data(kHeadRole).toInt());
  });
  right->addWidget(large_box);
  right->addWidget(table_);
  right->setStretchFactor(0, 3);
  right->setStretchFactor(1, 1);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);

  hover_->setText(tr("Hover a cell to read its weight."));
  pages_->setCurrentWidget(empty_);
  for (QWidget* w : {static_cast<QWidget*>(kind_combo_), static_cast<QWidget*>(layer_combo_), static_cast<QWidget*>(head_combo_),
                     static_cast<QWidget*>(export_png_), static_cast<QWidget*>(export_svg_), static_cast<QWidget*>(export_json_)})
    w->setEnabled(false);
}

void AttentionPanel::setDevPairs(const QVector<QPair<QString, QString>>& pairs) {
  const QSignalBlocker block(dev_pairs_);
  dev_pairs_->clear();
  references_.clear();
  dev_pairs_->addItem(pairs.isEmpty() ? tr("No dev pairs") : tr("Dev pair… (%L1)").arg(pairs.size()));
  const QFontMetrics fm(dev_pairs_->font());
  for (const auto& [source, reference] : pairs) {
    dev_pairs_->addItem(fm.elidedText(source, Qt::ElideRight, 420), source);
    dev_pairs_->setItemData(dev_pairs_->count() - 1, tr("%1\nreference: %2").arg(source, reference), Qt::ToolTipRole);
    references_.insert(source.trimmed(), reference);
  }
  updateInputState();
}

void AttentionPanel::followDevSplit(StudioState* state) {
  auto refresh = [this, state] {
    const auto corpus = state->corpus();
    if (!corpus) return;
    const auto direction = state->direction();
    const DataConfig data = state->config().data;
    // Recomputed only when what decides the split changes, not at every configuration edit.
    const QString key = QStringLiteral("%1|%2|%3|%4|%5")
                            .arg(reinterpret_cast<quintptr>(corpus.get()))
                            .arg(QString::fromStdString(direction.str()))
                            .arg(data.dev)
                            .arg(data.test)
                            .arg(data.split_seed);
    if (key == dev_split_key_) return;
    dev_split_key_ = key;
    auto* watcher = new QFutureWatcher<QVector<QPair<QString, QString>>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, key] {
      if (key == dev_split_key_) setDevPairs(watcher->result());  // a newer request supersedes this one
      watcher->deleteLater();
    });
    watcher->setFuture(QtConcurrent::run([corpus, direction, data] {
      QVector<QPair<QString, QString>> out;
      try {
        const auto split = split_corpus(*corpus, direction, data);
        // The first few hundred: enough to browse, cheap to list.
        for (std::size_t i = 0; i < std::min<std::size_t>(split.dev.size(), 500); ++i)
          out.append({QString::fromStdString(split.dev[i].src), QString::fromStdString(split.dev[i].tgt)});
      } catch (const std::exception&) {
        // A corpus too small for the configured split has no dev pairs to offer.
      }
      return out;
    }));
  };
  connect(state, &StudioState::corpusChanged, this, refresh);
  connect(state, &StudioState::directionChanged, this, refresh);
  connect(state, &StudioState::configChanged, this, refresh);
  refresh();
}

void AttentionPanel::updateInputState() {
  const bool has = service_->hasModel();
  dev_pairs_->setEnabled(has && dev_pairs_->count() > 1);
  input_->setEnabled(has);
  translate_->setEnabled(has);
  if (!has) {
    status_->setText(tr("No model to translate with: train one, or load a checkpoint in the Translate panel."));
    no_model_shown_ = true;
  } else if (no_model_shown_) {
    status_->setText(tr("Model: %1").arg(service_->model().label));
    no_model_shown_ = false;
  }
}

void AttentionPanel::translateText(const QString& text) {
  const QString sentence = text.trimmed();
  if (!service_->hasModel()) {
    updateInputState();
    return;
  }
  if (sentence.isEmpty()) {
    status_->setText(tr("Type a sentence to translate first."));
    return;
  }
  DecodeConfig decode;  // greedy: the attention of the single hypothesis the model prefers step by step
  pending_id_ = service_->translate(sentence, decode, true);
  status_->setText(tr("Translating…"));
}

void AttentionPanel::showResult(const TranslationResult& r) {
  const bool own = r.id != 0 && r.id == pending_id_;
  if (own) pending_id_ = 0;
  if (!r.error.isEmpty()) {
    if (own) status_->setText(tr("Translation failed: %1").arg(r.error));
    return;
  }
  AttentionData data = AttentionData::fromJson(r.attention, r.source_tokens, r.target_tokens);
  if (data.isEmpty()) {
    if (own) status_->setText(tr("The model returned no attention for this sentence."));
    return;
  }
  if (own) status_->setText(tr("Translated in %1 ms.").arg(r.milliseconds, 0, 'f', 0));
  result_ = r;
  data_ = std::move(data);

  const QString model = r.model.isEmpty() ? service_->model().label : r.model;
  sentence_full_ = tr("%1  →  %2").arg(r.source, r.text.isEmpty() ? tr("(empty translation)") : r.text);
  sentence_info_ = tr("%1 source tokens, %2 target tokens").arg(data_.sourceTokens().size()).arg(data_.targetTokens().size());
  if (!model.isEmpty()) sentence_info_ += tr(" · %1").arg(model);
  if (const auto ref = references_.constFind(r.source.trimmed()); ref != references_.constEnd())
    sentence_info_ += tr(" · reference: %1").arg(*ref);
  sentence_->setToolTip(plain_tooltip(sentence_full_ + QLatin1Char('\n') + sentence_info_));
  sentence_->show();
  updateSentenceLine();

  // Kinds this result lacks cannot be chosen; stay on the kind shown when it has maps.
  syncing_ = true;
  auto* kinds = qobject_cast<QStandardItemModel*>(kind_combo_->model());
  for (int i = 0; i < kind_combo_->count(); ++i) {
    const auto kind = static_cast<AttentionKind>(kind_combo_->itemData(i).toInt());
    if (kinds) kinds->item(i)->setEnabled(data_.layers(kind) > 0);
  }
  if (data_.layers(kind_) == 0)
    for (auto kind : {AttentionKind::Cross, AttentionKind::EncoderSelf, AttentionKind::DecoderSelf})
      if (data_.layers(kind) > 0) {
        kind_ = kind;
        break;
      }
  kind_combo_->setCurrentIndex(kind_combo_->findData(static_cast<int>(kind_)));
  syncing_ = false;
  for (QWidget* w : {static_cast<QWidget*>(kind_combo_), static_cast<QWidget*>(layer_combo_), static_cast<QWidget*>(head_combo_),
                     static_cast<QWidget*>(export_png_), static_cast<QWidget*>(export_svg_), static_cast<QWidget*>(export_json_)})
    w->setEnabled(true);
  pages_->setCurrentIndex(1);
  rebuildForKind();
}

void AttentionPanel::setKind(AttentionKind kind) {
  const int index = kind_combo_->findData(static_cast<int>(kind));
  if (index < 0) return;
  if (kind_combo_->currentIndex() == index) {
    kind_ = kind;
    rebuildForKind();
  } else {
    kind_combo_->setCurrentIndex(index);  // rebuilds through the signal
  }
}

void AttentionPanel::rebuildForKind() {
  const int layers = data_.layers(kind_), heads = data_.heads(kind_);
  summaries_.assign(static_cast<std::size_t>(layers), {});
  for (int l = 0; l < layers; ++l) {
    auto& row = summaries_[static_cast<std::size_t>(l)];
    row.push_back(summarize_head(data_.matrix(kind_, l, -1), kind_));
    for (const auto& m : data_.layerHeads(kind_, l)) row.push_back(summarize_head(m, kind_));
  }
  // The previous choice is kept when it exists here; otherwise the last layer's average, where
  // the clearest patterns usually are.
  if (layer_ < 0 || layer_ >= layers) layer_ = layers - 1;
  if (head_ >= heads) head_ = -1;

  syncing_ = true;
  layer_combo_->clear();
  for (int l = 0; l < layers; ++l)
    layer_combo_->addItem(l + 1 == layers && layers > 1 ? tr("Layer %1 (last)").arg(l + 1) : tr("Layer %1").arg(l + 1));
  head_combo_->clear();
  if (layers > 0) {
    head_combo_->addItem(tr("Average of heads"));
    for (int h = 0; h < heads; ++h) head_combo_->addItem(tr("Head %1").arg(h + 1));
  }
  syncing_ = false;

  rebuildGrid();
  rebuildSummaryTable();
  syncSelection();
  showLarge();
}

void AttentionPanel::rebuildGrid() {
  auto* layout = static_cast<QGridLayout*>(grid_->layout());
  grid_->setUpdatesEnabled(false);
  qDeleteAll(grid_->findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly));
  thumbs_.clear();
  const int layers = data_.layers(kind_), heads = data_.heads(kind_);
  const bool causal = kind_ == AttentionKind::DecoderSelf;
  if (layers == 0 || heads == 0) {
    grid_message_->setText(data_.isEmpty() ? tr("Translate a sentence to explore its attention.")
                                           : tr("This translation has no %1.").arg(AttentionData::kindName(kind_).toLower()));
    grid_scroll_->hide();
    grid_message_->show();
    grid_->setUpdatesEnabled(true);
    return;
  }
  grid_message_->hide();
  grid_scroll_->show();

  // Column 1 is the layer's head average, column 2 a gap, heads from column 3 on.
  const auto column_of = [](int head) { return head < 0 ? 1 : head + 3; };
  const auto header = [&](const QString& text, const QString& tip, int row, int column) {
    auto* label = new QLabel(text, grid_);
    label->setAlignment(Qt::AlignCenter);
    label->setToolTip(tip);
    layout->addWidget(label, row, column);
  };
  header(tr("avg"), tr("Average of the layer's heads"), 0, column_of(-1));
  for (int h = 0; h < heads; ++h) header(tr("H%1").arg(h + 1), tr("Head %1").arg(h + 1), 0, column_of(h));
  layout->setColumnMinimumWidth(2, 6);
  thumbs_.assign(static_cast<std::size_t>(layers), std::vector<AttentionThumbnail*>(static_cast<std::size_t>(heads + 1), nullptr));
  for (int l = 0; l < layers; ++l) {
    header(tr("L%1").arg(l + 1), tr("Layer %1").arg(l + 1), l + 1, 0);
    for (int h = -1; h < heads; ++h) {
      auto* thumb = new AttentionThumbnail(l, h, grid_);
      thumb->setSide(thumb_side_);
      thumb->setMatrix(data_.matrix(kind_, l, h), causal);
      const HeadSummary& s = summaries_[static_cast<std::size_t>(l)][static_cast<std::size_t>(h + 1)];
      thumb->setCaption(QString::fromStdString(s.caption));
      QString tip = tr("Layer %1, %2: %3").arg(l + 1).arg(head_name(h), QString::fromStdString(s.description));
      tip += QLatin1Char('\n') + tr("mean entropy %1 nats (%2 of the maximum)").arg(s.mean_entropy, 0, 'f', 2).arg(percent(s.normalized_entropy));
      tip += QLatin1Char('\n') + tr("Click to open it large.");
      thumb->setToolTip(plain_tooltip(tip));
      connect(thumb, &AttentionThumbnail::clicked, this, &AttentionPanel::selectHead);
      layout->addWidget(thumb, l + 1, column_of(h));
      thumbs_[static_cast<std::size_t>(l)][static_cast<std::size_t>(h + 1)] = thumb;
    }
  }
  grid_->setUpdatesEnabled(true);
  updateThumbnailSide();
}

// As large as the pane allows for all heads side by side, between a legible minimum (the pane
// scrolls below it) and a maximum past which thumbnails only take room from the large map. The
// scroll bar's width is always set aside, so its appearing cannot change the size back and forth.
void AttentionPanel::updateThumbnailSide() {
  const int heads = data_.heads(kind_);
  if (heads == 0) return;
  const auto* layout = static_cast<QGridLayout*>(grid_->layout());
  const QMargins m = layout->contentsMargins();
  const int label = fontMetrics().horizontalAdvance(QStringLiteral("L00")) + 6;
  const int available = grid_scroll_->width() - 2 * grid_scroll_->frameWidth() - style()->pixelMetric(QStyle::PM_ScrollBarExtent) -
                        m.left() - m.right() - label - 6 - layout->horizontalSpacing() * (heads + 2);
  const int side = std::clamp(available / (heads + 1) - 6, kMinThumbSide, kMaxThumbSide);
  if (side == thumb_side_) return;  // new thumbnails are made with thumb_side_ already
  thumb_side_ = side;
  for (const auto& row : thumbs_)
    for (auto* thumb : row)
      if (thumb) thumb->setSide(side);
}

void AttentionPanel::updateSentenceLine() {
  const int width = std::max(80, sentence_->contentsRect().width());
  const QFontMetrics fm(sentence_->font());
  sentence_->setText(fm.elidedText(sentence_full_, Qt::ElideRight, width) + QLatin1Char('\n') +
                     fm.elidedText(sentence_info_, Qt::ElideRight, width));
}

bool AttentionPanel::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Resize) {
    if (watched == sentence_ && !sentence_full_.isEmpty()) updateSentenceLine();
    if (watched == grid_scroll_) updateThumbnailSide();
  }
  return QWidget::eventFilter(watched, event);
}

void AttentionPanel::rebuildSummaryTable() {
  table_model_->clear();
  const bool cross = kind_ == AttentionKind::Cross;
  table_model_->setHorizontalHeaderLabels({tr("Layer"), tr("Head"), tr("Pattern"), tr("Strength"), tr("Entropy (nats)"),
                                           tr("Normalised entropy"), tr("Monotonicity")});
  const QStringList tips = {tr("Layer (1 = first)"), tr("Head"), tr("What the head mostly looks at"),
                            tr("Mean weight the pattern explains (for “broad”: the normalised entropy)"),
                            tr("Mean entropy of the rows, in nats"), tr("Entropy divided by its maximum, log(number of keys): 0 = one key, 1 = uniform"),
                            tr("Cross-attention: share of steps whose aligned source position does not move backwards")};
  for (int c = 0; c < tips.size(); ++c) table_model_->setHeaderData(c, Qt::Horizontal, tips[c], Qt::ToolTipRole);
  for (std::size_t l = 0; l < summaries_.size(); ++l) {
    for (std::size_t h = 1; h < summaries_[l].size(); ++h) {
      const HeadSummary& s = summaries_[l][h];
      auto* layer = number_item(QString::number(l + 1), static_cast<double>(l + 1));
      auto* head = number_item(QString::number(h), static_cast<double>(h));
      layer->setData(static_cast<int>(l), kLayerRole);
      layer->setData(static_cast<int>(h) - 1, kHeadRole);
      const QString name = QString::fromStdString(attention_pattern_name(s.pattern));
      auto* pattern = new QStandardItem(name);
      pattern->setData(name, Qt::UserRole);
      pattern->setToolTip(plain_tooltip(QString::fromStdString(s.description)));
      pattern->setEditable(false);
      // Where the rows have no peak to follow (spread out, parked on </s>) the figure means nothing.
      const bool follows_peak = s.pattern == AttentionPattern::Alignment || s.pattern == AttentionPattern::Reordering ||
                                s.pattern == AttentionPattern::Mixed;
      auto* monotone = cross && follows_peak && s.monotonicity >= 0 ? number_item(percent(s.monotonicity), s.monotonicity)
                                                                    : number_item(QStringLiteral("–"), -1);
      table_model_->appendRow({layer, head, pattern, number_item(percent(s.strength), s.strength),
                               number_item(QString::number(s.mean_entropy, 'f', 2), s.mean_entropy),
                               number_item(QString::number(s.normalized_entropy, 'f', 2), s.normalized_entropy), monotone});
    }
  }
  table_->setColumnHidden(6, !cross);
  table_->resizeColumnsToContents();
}

AttentionThumbnail* AttentionPanel::thumbnail(int layer, int head) const {
  if (layer < 0 || layer >= static_cast<int>(thumbs_.size())) return nullptr;
  const auto& row = thumbs_[static_cast<std::size_t>(layer)];
  return head + 1 >= 0 && head + 1 < static_cast<int>(row.size()) ? row[static_cast<std::size_t>(head + 1)] : nullptr;
}

HeadSummary AttentionPanel::headSummary(int layer, int head) const {
  if (layer < 0 || layer >= static_cast<int>(summaries_.size())) return {};
  const auto& row = summaries_[static_cast<std::size_t>(layer)];
  return head + 1 >= 0 && head + 1 < static_cast<int>(row.size()) ? row[static_cast<std::size_t>(head + 1)] : HeadSummary();
}

void AttentionPanel::selectHead(int layer, int head) {
  if (layer < 0 || layer >= data_.layers(kind_) || head < -1 || head >= data_.heads(kind_)) return;
  if (layer == layer_ && head == head_ && large_->cellCount() > 0) return;
  layer_ = layer;
  head_ = head;
  syncSelection();
  showLarge();
  Q_EMIT headSelected(layer_, head_);
}

// Combos, thumbnails and the table row follow the one selection.
void AttentionPanel::syncSelection() {
  syncing_ = true;
  if (layer_ >= 0 && layer_ < layer_combo_->count()) layer_combo_->setCurrentIndex(layer_);
  if (head_ + 1 < head_combo_->count()) head_combo_->setCurrentIndex(head_ + 1);
  for (const auto& row : thumbs_)
    for (auto* thumb : row)
      if (thumb) thumb->setSelected(thumb->layer() == layer_ && thumb->head() == head_);
  if (auto* thumb = thumbnail(layer_, head_)) grid_scroll_->ensureWidgetVisible(thumb, 4, 4);
  // The head average has no row: no current row either, so clicking any row selects it again.
  table_->selectionModel()->setCurrentIndex(QModelIndex(), QItemSelectionModel::Clear);
  for (int r = 0; r < table_proxy_->rowCount(); ++r) {
    const QModelIndex index = table_proxy_->index(r, 0);
    if (index.data(kLayerRole).toInt() == layer_ && index.data(kHeadRole).toInt() == head_) {
      table_->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
      table_->scrollTo(index);
      break;
    }
  }
  syncing_ = false;
}

QString AttentionPanel::viewTitle() const {
  return tr("%1 · layer %2 · %3").arg(AttentionData::kindName(kind_)).arg(layer_ + 1).arg(head_name(head_));
}

void AttentionPanel::showLarge() {
  const AttentionMatrix m = data_.matrix(kind_, layer_, head_);
  if (m.empty() || attention_columns(m) == 0) {
    large_->clear(data_.isEmpty() ? tr("Translate a sentence to explore its attention.")
                                  : tr("No %1 in this translation.").arg(AttentionData::kindName(kind_).toLower()));
    head_info_->clear();
    return;
  }
  large_->setAxisTitles(AttentionData::rowTitle(kind_), AttentionData::columnTitle(kind_));
  large_->setMatrix(data_.rowLabels(kind_), data_.columnLabels(kind_), to_qvector(m));

  // The causal mask: cells of later tokens are transparent over a hatched background, so they
  // read as "not there" rather than as weight 0.
  if (auto* map = qobject_cast<QCPColorMap*>(large_->plot()->plottable(0))) {
    map->data()->clearAlpha();
    const int rows = large_->rowCount(), columns = large_->columnCount();
    if (kind_ == AttentionKind::DecoderSelf && rows >= 2 && columns >= 2)
      for (int r = 0; r < rows; ++r)
        for (int c = r + 1; c < columns; ++c) map->data()->setAlpha(c, r, 0);
  }
  QColor hatch = palette().color(QPalette::Mid);
  large_->plot()->axisRect()->setBackground(QBrush(hatch, Qt::BDiagPattern));
  large_->plot()->replot(QCustomPlot::rpQueuedReplot);

  const HeadSummary s = headSummary(layer_, head_);
  head_info_->setText(tr("%1: %2 · mean entropy %3 nats (%4 of the maximum)")
                          .arg(viewTitle(), QString::fromStdString(s.description))
                          .arg(s.mean_entropy, 0, 'f', 2)
                          .arg(percent(s.normalized_entropy)));
  hover_->setText(hoverHint());
}

QString AttentionPanel::hoverHint() const {
  return kind_ == AttentionKind::DecoderSelf ? tr("Hover a cell to read its weight; hatched cells are later tokens, hidden by the causal mask.")
                                             : tr("Hover a cell to read its weight.");
}

QString AttentionPanel::largeCellText(int row, int column) const {
  if (row < 0 || column < 0 || row >= large_->rowCount() || column >= large_->columnCount()) return {};
  if (AttentionData::isMasked(kind_, row, column))
    return tr("%1 ← %2: masked: later tokens").arg(large_->rowLabels().value(row), large_->columnLabels().value(column));
  return large_->cellText(row, column);
}

void AttentionPanel::onLargeHover(int row, int column, double) {
  if (row < 0) {
    hover_->setText(hoverHint());
    return;
  }
  const QString text = largeCellText(row, column);
  hover_->setText(text);
  // The heatmap's own tooltip would show the weight 0; say why there is none.
  if (AttentionData::isMasked(kind_, row, column))
    QToolTip::showText(large_->plot()->mapToGlobal(large_->cellCenter(row, column)), plain_tooltip(text), large_->plot());
}

bool AttentionPanel::exportPng(const QString& path, QString* error) {
  if (large_->cellCount() == 0) {
    if (error) *error = tr("Nothing to export: no attention map is shown.");
    return false;
  }
  QString target = path;
  if (QFileInfo(target).suffix().isEmpty()) target += QStringLiteral(".png");
  return export_plot(large_->plot(), target, error);
}

bool AttentionPanel::exportSvg(const QString& path, QString* error) {
  const AttentionMatrix m = data_.matrix(kind_, layer_, head_);
  if (m.empty()) {
    if (error) *error = tr("Nothing to export: no attention map is shown.");
    return false;
  }
  AttentionSvgInput in;
  in.title = viewTitle();
  in.subtitle = result_.text.isEmpty() ? result_.source : tr("%1  →  %2").arg(result_.source, result_.text);
  in.row_title = AttentionData::rowTitle(kind_);
  in.column_title = AttentionData::columnTitle(kind_);
  in.rows = data_.rowLabels(kind_);
  in.columns = data_.columnLabels(kind_);
  in.values = to_qvector(m);
  in.causal = kind_ == AttentionKind::DecoderSelf;
  return write_export_file(path, attention_svg(in).toUtf8(), error);
}

bool AttentionPanel::exportJson(const QString& path, QString* error) const {
  if (data_.isEmpty()) {
    if (error) *error = tr("Nothing to export: no translation with attention is shown.");
    return false;
  }
  const std::string text = attention_export_json(result_).dump() + "\n";
  return write_export_file(path, QByteArray::fromStdString(text), error);
}

void AttentionPanel::exportPngClicked() {
  const QString name = QStringLiteral("attention-%1-L%2-%3.png")
                           .arg(QString::fromLatin1(AttentionData::jsonKey(kind_)))
                           .arg(layer_ + 1)
                           .arg(head_ < 0 ? QStringLiteral("avg") : QStringLiteral("H%1").arg(head_ + 1));
  const QString path = QFileDialog::getSaveFileName(this, tr("Export attention map as PNG"), name, tr("PNG images (*.png)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportPng(path, &error)) QMessageBox::warning(this, tr("Cannot export the image"), error);
}

void AttentionPanel::exportSvgClicked() {
  const QString name = QStringLiteral("attention-%1-L%2-%3.svg")
                           .arg(QString::fromLatin1(AttentionData::jsonKey(kind_)))
                           .arg(layer_ + 1)
                           .arg(head_ < 0 ? QStringLiteral("avg") : QStringLiteral("H%1").arg(head_ + 1));
  const QString path = QFileDialog::getSaveFileName(this, tr("Export attention map as SVG"), name, tr("SVG images (*.svg)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportSvg(path, &error)) QMessageBox::warning(this, tr("Cannot export the SVG"), error);
}

void AttentionPanel::exportJsonClicked() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export attention weights as JSON"), QStringLiteral("attention.json"),
                                                    tr("JSON files (*.json)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportJson(path, &error)) QMessageBox::warning(this, tr("Cannot export the weights"), error);
}

}  // namespace ts::ui
