// SPDX-License-Identifier: GPL-3.0-or-later
// The attention explorer's model view: layers × heads as thumbnails (see attention_head_grid.h).
#include "attention/attention_head_grid.h"

#include <algorithm>

#include <QEvent>
#include <QGridLayout>
#include <QLabel>
#include <QScrollArea>
#include <QStyle>
#include <QVBoxLayout>

#include "attention/attention_util.h"
#include "widgets/attention_thumbnail.h"

namespace ts::ui {

using attention_util::head_name;
using attention_util::percent;
using attention_util::plain_tooltip;

namespace {

constexpr int kMinThumbSide = 44, kMaxThumbSide = 120;

}  // namespace

AttentionHeadGrid::AttentionHeadGrid(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* title = new QLabel(tr("Model view: layers × heads (click one to open it)"), this);
  layout->addWidget(title);
  scroll_ = new QScrollArea(this);
  scroll_->setWidgetResizable(true);
  scroll_->installEventFilter(this);  // thumbnails grow or shrink with the pane
  grid_ = new QWidget;
  grid_->setObjectName(QStringLiteral("attentionGrid"));
  auto* grid_layout = new QGridLayout(grid_);
  grid_layout->setSpacing(2);
  grid_layout->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  scroll_->setWidget(grid_);
  layout->addWidget(scroll_, 1);
  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("attentionGridMessage"));
  message_->setWordWrap(true);
  message_->setAlignment(Qt::AlignCenter);
  message_->hide();
  layout->addWidget(message_, 1);
}

void AttentionHeadGrid::rebuild(const AttentionData& data, AttentionKind kind,
                                const std::vector<std::vector<HeadSummary>>& summaries) {
  auto* layout = static_cast<QGridLayout*>(grid_->layout());
  grid_->setUpdatesEnabled(false);
  qDeleteAll(grid_->findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly));
  thumbs_.clear();
  const int layers = data.layers(kind), heads = data.heads(kind);
  heads_ = heads;
  const bool causal = kind == AttentionKind::DecoderSelf;
  if (layers == 0 || heads == 0) {
    message_->setText(data.isEmpty() ? tr("Translate a sentence to explore its attention.")
                                     : tr("This translation has no %1.").arg(AttentionData::kindName(kind).toLower()));
    scroll_->hide();
    message_->show();
    grid_->setUpdatesEnabled(true);
    return;
  }
  message_->hide();
  scroll_->show();

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
  thumbs_.assign(static_cast<std::size_t>(layers),
                 std::vector<AttentionThumbnail*>(static_cast<std::size_t>(heads + 1), nullptr));
  for (int l = 0; l < layers; ++l) {
    header(tr("L%1").arg(l + 1), tr("Layer %1").arg(l + 1), l + 1, 0);
    for (int h = -1; h < heads; ++h) {
      auto* thumb = new AttentionThumbnail(l, h, grid_);
      thumb->setSide(thumb_side_);
      thumb->setMatrix(data.matrix(kind, l, h), causal);
      const HeadSummary& s = summaries[static_cast<std::size_t>(l)][static_cast<std::size_t>(h + 1)];
      thumb->setCaption(QString::fromStdString(s.caption));
      QString tip = tr("Layer %1, %2: %3").arg(l + 1).arg(head_name(h), QString::fromStdString(s.description));
      tip += QLatin1Char('\n') + tr("mean entropy %1 nats (%2 of the maximum)")
                                     .arg(s.mean_entropy, 0, 'f', 2)
                                     .arg(percent(s.normalized_entropy));
      tip += QLatin1Char('\n') + tr("Click to open it large.");
      thumb->setToolTip(plain_tooltip(tip));
      connect(thumb, &AttentionThumbnail::clicked, this, &AttentionHeadGrid::headClicked);
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
void AttentionHeadGrid::updateThumbnailSide() {
  if (heads_ == 0) return;
  const auto* layout = static_cast<QGridLayout*>(grid_->layout());
  const QMargins m = layout->contentsMargins();
  const int label = fontMetrics().horizontalAdvance(QStringLiteral("L00")) + 6;
  const int available = scroll_->width() - 2 * scroll_->frameWidth() -
                        style()->pixelMetric(QStyle::PM_ScrollBarExtent) - m.left() - m.right() - label - 6 -
                        layout->horizontalSpacing() * (heads_ + 2);
  const int side = std::clamp(available / (heads_ + 1) - 6, kMinThumbSide, kMaxThumbSide);
  if (side == thumb_side_) return;  // new thumbnails are made with thumb_side_ already
  thumb_side_ = side;
  for (const auto& row : thumbs_)
    for (auto* thumb : row)
      if (thumb) thumb->setSide(side);
}

bool AttentionHeadGrid::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Resize && watched == scroll_) updateThumbnailSide();
  return QWidget::eventFilter(watched, event);
}

AttentionThumbnail* AttentionHeadGrid::thumbnail(int layer, int head) const {
  if (layer < 0 || layer >= static_cast<int>(thumbs_.size())) return nullptr;
  const auto& row = thumbs_[static_cast<std::size_t>(layer)];
  return head + 1 >= 0 && head + 1 < static_cast<int>(row.size()) ? row[static_cast<std::size_t>(head + 1)] : nullptr;
}

void AttentionHeadGrid::setSelected(int layer, int head) {
  for (const auto& row : thumbs_)
    for (auto* thumb : row)
      if (thumb) thumb->setSelected(thumb->layer() == layer && thumb->head() == head);
  if (auto* thumb = thumbnail(layer, head)) scroll_->ensureWidgetVisible(thumb, 4, 4);
}

}  // namespace ts::ui
