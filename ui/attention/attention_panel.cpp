// SPDX-License-Identifier: GPL-3.0-or-later
// AttentionPanel: its layout, the sentence line (the result shown, another sentence to translate,
// the dev pairs), and the selection of kind, layer and head that its parts follow: the model view
// (attention_head_grid.*), the large map (attention_map_view.*) and the per-head summary
// (attention_summary_table.*). Its exports are in attention_panel_export.cpp.
#include "attention/attention_panel.h"

#include <algorithm>

#include <QComboBox>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QToolButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "attention/attention_head_grid.h"
#include "attention/attention_map_view.h"
#include "attention/attention_summary_table.h"
#include "attention/attention_util.h"
#include "shell/studio_state.h"
#include "ts/train/data.h"
#include "widgets/attention_heatmap.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

using attention_util::head_name;
using attention_util::plain_tooltip;

AttentionPanel::AttentionPanel(TranslationService* service, QWidget* parent) : QWidget(parent), service_(service) {
  setObjectName(QStringLiteral("attentionPanel"));
  buildUi();
  connect(service_, &TranslationService::translated, this, &AttentionPanel::showResult);
  connect(service_, &TranslationService::modelChanged, this, [this] {
    updateInputState();
    // The line names the model the next translation uses: a checkpoint loaded, then the model being
    // trained, then another checkpoint (it kept naming the first one).
    if (service_->hasModel() && pending_id_ == 0) status_->setText(tr("Model: %1").arg(service_->model().label));
  });
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
  dev_pairs_->setToolTip(
      tr("A held-out (dev) pair of the corpus: translate its source and compare with the reference"));
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
  kind_combo_->setToolTip(
      tr("Encoder self-attention: source over source. Decoder self-attention: each output step over the "
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
  // One button with a menu: three beside the combo boxes cut "Layer 2 (last)" at the default size.
  export_ = new QToolButton(this);
  export_->setText(tr("Export"));
  export_->setObjectName(QStringLiteral("attentionExport"));
  export_->setToolTip(tr("Save the large map (PNG, SVG) or every attention weight of this translation (JSON)"));
  export_->setPopupMode(QToolButton::InstantPopup);
  auto* export_menu = new QMenu(export_);
  export_menu->addAction(tr("Map as PNG image…"), this, &AttentionPanel::exportPngClicked);
  export_menu->addAction(tr("Map as SVG (vector cells and token labels)…"), this, &AttentionPanel::exportSvgClicked);
  export_menu->addAction(tr("All weights as JSON (every kind, layer and head)…"), this,
                         &AttentionPanel::exportJsonClicked);
  export_->setMenu(export_menu);
  controls->addWidget(export_);
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
  grid_ = new AttentionHeadGrid(split);
  connect(grid_, &AttentionHeadGrid::headClicked, this, &AttentionPanel::selectHead);

  // The chosen map, large, over the per-head summary.
  auto* right = new QSplitter(Qt::Vertical, split);
  right->setChildrenCollapsible(false);
  map_ = new AttentionMapView(right);
  table_ = new AttentionSummaryTable(right);
  connect(table_, &AttentionSummaryTable::currentHeadChanged, this, [this](int layer, int head) {
    if (!syncing_) selectHead(layer, head);
  });
  right->addWidget(map_);
  right->addWidget(table_);
  right->setStretchFactor(0, 3);
  right->setStretchFactor(1, 1);
  split->addWidget(grid_);
  split->addWidget(right);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);

  pages_->setCurrentWidget(empty_);
  for (QWidget* w : {static_cast<QWidget*>(kind_combo_), static_cast<QWidget*>(layer_combo_),
                     static_cast<QWidget*>(head_combo_), static_cast<QWidget*>(export_)})
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
  // Each side in its own direction, the line left to right: source, then translation.
  sentence_full_ =
      tr("%1  →  %2").arg(isolated(r.source), isolated(r.text.isEmpty() ? tr("(empty translation)") : r.text));
  sentence_info_ =
      tr("%1 source tokens, %2 target tokens").arg(data_.sourceTokens().size()).arg(data_.targetTokens().size());
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
  for (QWidget* w : {static_cast<QWidget*>(kind_combo_), static_cast<QWidget*>(layer_combo_),
                     static_cast<QWidget*>(head_combo_), static_cast<QWidget*>(export_)})
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

  grid_->rebuild(data_, kind_, summaries_);
  table_->setSummaries(summaries_, kind_ == AttentionKind::Cross);
  syncSelection();
  showLarge();
}

void AttentionPanel::updateSentenceLine() {
  const int width = std::max(80, sentence_->contentsRect().width());
  const QFontMetrics fm(sentence_->font());
  sentence_->setText(left_to_right(fm.elidedText(sentence_full_, Qt::ElideRight, width)) + QLatin1Char('\n') +
                     fm.elidedText(sentence_info_, Qt::ElideRight, width));
}

bool AttentionPanel::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Resize && watched == sentence_ && !sentence_full_.isEmpty()) updateSentenceLine();
  return QWidget::eventFilter(watched, event);
}

AttentionThumbnail* AttentionPanel::thumbnail(int layer, int head) const { return grid_->thumbnail(layer, head); }

AttentionHeatmap* AttentionPanel::largeView() const { return map_->heatmap(); }

HeadSummary AttentionPanel::headSummary(int layer, int head) const {
  if (layer < 0 || layer >= static_cast<int>(summaries_.size())) return {};
  const auto& row = summaries_[static_cast<std::size_t>(layer)];
  return head + 1 >= 0 && head + 1 < static_cast<int>(row.size()) ? row[static_cast<std::size_t>(head + 1)]
                                                                  : HeadSummary();
}

void AttentionPanel::selectHead(int layer, int head) {
  if (layer < 0 || layer >= data_.layers(kind_) || head < -1 || head >= data_.heads(kind_)) return;
  if (layer == layer_ && head == head_ && largeView()->cellCount() > 0) return;
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
  grid_->setSelected(layer_, head_);
  table_->setCurrentHead(layer_, head_);
  syncing_ = false;
}

QString AttentionPanel::viewTitle() const {
  return tr("%1 · layer %2 · %3").arg(AttentionData::kindName(kind_)).arg(layer_ + 1).arg(head_name(head_));
}

void AttentionPanel::showLarge() {
  map_->showMap(data_, kind_, layer_, head_, headSummary(layer_, head_), viewTitle());
}

QString AttentionPanel::largeCellText(int row, int column) const { return map_->cellText(row, column); }

}  // namespace ts::ui
