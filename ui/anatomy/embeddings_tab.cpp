// SPDX-License-Identifier: GPL-3.0-or-later
// The "Embeddings" tab of Model anatomy (see embeddings_tab.h).
#include "anatomy/embeddings_tab.h"

#include <algorithm>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "anatomy/anatomy_util.h"
#include "widgets/plot_style.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

using anatomy::no_model_message;
using anatomy::note;

namespace {

// Quotes a token for messages, showing subword marks as they are.
// In quotes, in its own direction (an Arabic token inside an English line).
QString quoted(const QString& token) { return QStringLiteral("\u201c") + isolated(token) + QStringLiteral("\u201d"); }

}  // namespace

EmbeddingsTab::EmbeddingsTab(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("embeddingsTab"));
  auto* layout = new QVBoxLayout(this);
  auto* controls = new QHBoxLayout;
  side_ = new QComboBox(this);
  side_->setObjectName(QStringLiteral("embeddingSide"));
  side_->addItem(tr("Source"), false);
  side_->addItem(tr("Target"), true);
  side_->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // the names follow the model's languages
  side_->setToolTip(tr("Which embedding table: the encoder's (source language) or the decoder's (target language)"));
  count_ = new QSpinBox(this);
  count_->setObjectName(QStringLiteral("embeddingCount"));
  count_->setRange(50, 500);
  count_->setSingleStep(50);
  count_->setValue(200);
  count_->setToolTip(tr("How many of the most frequent tokens are projected (special tokens are left out)"));
  controls->addWidget(new QLabel(tr("Embeddings:"), this));
  controls->addWidget(side_);
  controls->addWidget(new QLabel(tr("Most frequent tokens:"), this));
  controls->addWidget(count_);
  controls->addStretch(1);
  layout->addLayout(controls);

  auto* search = new QHBoxLayout;
  search_ = new QLineEdit(this);
  search_->setObjectName(QStringLiteral("embeddingSearch"));
  search_->setPlaceholderText(tr("A token, e.g. Hund"));
  search_->setClearButtonEnabled(true);
  search_->setToolTip(
      tr("Press Enter to list the tokens whose embeddings point the most in the same direction. "
         "A subword's word-initial mark (\u2581) and the case are tried when the token as typed is not found."));
  k_ = new QSpinBox(this);
  k_->setObjectName(QStringLiteral("embeddingK"));
  k_->setRange(1, 50);
  k_->setValue(10);
  k_->setToolTip(tr("How many nearest neighbours are listed"));
  find_ = new QPushButton(tr("Find neighbours"), this);
  find_->setObjectName(QStringLiteral("embeddingFind"));
  search->addWidget(new QLabel(tr("Token:"), this));
  search->addWidget(search_, 1);
  search->addWidget(new QLabel(tr("Neighbours:"), this));
  search->addWidget(k_);
  search->addWidget(find_);
  layout->addLayout(search);
  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("embeddingMessage"));
  message_->setWordWrap(true);
  message_->setTextFormat(Qt::PlainText);
  layout->addWidget(message_);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  scatter_ = new QCustomPlot(splitter);
  scatter_->setObjectName(QStringLiteral("embeddingScatter"));
  scatter_->setMinimumSize(300, 260);
  style_plot(scatter_);
  points_ = scatter_->addGraph();
  points_->setName(tr("tokens"));
  points_->setLineStyle(QCPGraph::lsNone);
  QColor point = series_color(0);
  point.setAlpha(170);
  points_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, point, point, 5));
  neighbour_points_ = scatter_->addGraph();
  neighbour_points_->setName(tr("neighbours"));
  neighbour_points_->setLineStyle(QCPGraph::lsNone);
  neighbour_points_->setScatterStyle(
      QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(series_color(1), 2), Qt::NoBrush, 12));
  query_point_ = scatter_->addGraph();
  query_point_->setName(tr("searched token"));
  query_point_->setLineStyle(QCPGraph::lsNone);
  query_point_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssStar, QPen(series_color(3), 2.5), Qt::NoBrush, 16));
  scatter_->xAxis->setLabel(tr("PC 1"));
  scatter_->yAxis->setLabel(tr("PC 2"));
  // Labels are thinned after every layout (resize, zoom, drag), just before drawing.
  connect(scatter_, &QCustomPlot::afterLayout, this, &EmbeddingsTab::thinScatterLabels);
  connect(scatter_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) { scatterHover(e->position().toPoint()); });
  connect(scatter_, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) { press_ = e->position().toPoint(); });
  connect(scatter_, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
    // A click (not a drag) on a token searches its neighbours.
    const QPoint pos = e->position().toPoint();
    if (e->button() != Qt::LeftButton || (pos - press_).manhattanLength() > 3) return;
    const int i = scatterPointAt(pos);
    if (i >= 0) Q_EMIT tokenChosen(labels_[i].item->text());
  });
  connect(scatter_, &QCustomPlot::mouseDoubleClick, this, [this] { rescaleScatter(); });
  scatter_->installEventFilter(this);
  table_ = new QTableWidget(0, 2, splitter);
  table_->setObjectName(QStringLiteral("embeddingNeighbours"));
  table_->setHorizontalHeaderLabels({tr("Token"), tr("Cosine similarity")});
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setToolTip(tr("Double-click a neighbour to search its own neighbours"));
  table_->setMinimumWidth(180);
  splitter->addWidget(scatter_);
  splitter->addWidget(table_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);
  layout->addWidget(splitter, 1);
  note_ = note(QString(), this);
  note_->setObjectName(QStringLiteral("embeddingNote"));
  layout->addWidget(note_);

  connect(side_, &QComboBox::currentIndexChanged, this, [this] {
    updateScatter();
    // The search belongs to one side: ask the other side's table for the same token.
    if (!search_->text().trimmed().isEmpty()) searchNeighbours();
  });
  connect(count_, &QSpinBox::valueChanged, this, &EmbeddingsTab::tokenCountChanged);
  connect(search_, &QLineEdit::returnPressed, this, &EmbeddingsTab::searchNeighbours);
  connect(find_, &QPushButton::clicked, this, &EmbeddingsTab::searchNeighbours);
  connect(k_, &QSpinBox::valueChanged, this, [this] {
    if (!neighbours_.token.isEmpty()) requestNeighbours(neighbours_.query);
  });
  connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    if (auto* item = table_->item(row, 0)) Q_EMIT tokenChosen(item->text());
  });
}

void EmbeddingsTab::setTranslationService(TranslationService* service) {
  if (service_) disconnect(service_, nullptr, this, nullptr);
  service_ = service;
  neighbours_request_ = 0;
  if (!service) return;
  connect(service, &TranslationService::neighboursReady, this, [this](const TokenNeighbours& result) {
    if (result.id != neighbours_request_) return;
    neighbours_request_ = 0;
    showNeighbours(result);
  });
}

int EmbeddingsTab::tokenCount() const { return count_->value(); }

void EmbeddingsTab::setMessage(const QString& message) { message_->setText(message); }

void EmbeddingsTab::showNoModel(const QString& message) {
  source_ = EmbeddingProjection();
  target_ = EmbeddingProjection();
  neighbours_ = TokenNeighbours();
  message_->setText(message);
  note_->clear();
  table_->setRowCount(0);
  updateScatter();
}

void EmbeddingsTab::showTables(const ModelTables& tables) {
  source_ = tables.source;
  target_ = tables.target;
  shared_ = tables.shared_embeddings;
  const auto side_name = [&](const EmbeddingProjection& side, const QString& kind) {
    return side.language.isEmpty() ? kind : tr("%1 (%2)").arg(kind, side.language);
  };
  side_->setItemText(0, side_name(tables.source, tr("Source")));
  side_->setItemText(1, side_name(tables.target, tr("Target")));
  message_->clear();
  updateScatter();
  // A search shown before was projected on the previous tables: ask again for these.
  if (!neighbours_.query.isEmpty()) requestNeighbours(neighbours_.query);
}

void EmbeddingsTab::searchToken(const QString& token) {
  search_->setText(token);
  requestNeighbours(token);
}

bool EmbeddingsTab::targetSide() const { return side_->currentData().toBool(); }

const EmbeddingProjection& EmbeddingsTab::currentProjection() const { return targetSide() ? target_ : source_; }

void EmbeddingsTab::updateScatter() {
  for (const auto& label : labels_) scatter_->removeItem(label.item);
  labels_.clear();
  base_labels_ = 0;
  const EmbeddingProjection& side = currentProjection();
  points_->setData(side.x, side.y);  // not sorted by x: QCustomPlot sorts a copy
  const QColor fg = scatter_->palette().color(QPalette::WindowText);
  for (int i = 0; i < side.tokens.size(); ++i) {
    auto* item = new QCPItemText(scatter_);
    item->setText(side.tokens[i]);
    item->position->setCoords(side.x[i], side.y[i]);
    item->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    item->setPadding(QMargins(5, 0, 0, 0));  // beside the point, not on it
    item->setColor(fg);
    item->setSelectable(false);
    item->setClipToAxisRect(true);
    labels_.push_back({item, side.x[i], side.y[i], side.ids.value(i, -1), i, false});
  }
  base_labels_ = static_cast<int>(labels_.size());
  const bool any = !side.tokens.isEmpty();
  scatter_->xAxis->setLabel(any ? tr("PC 1 (%1% of the variance)").arg(100 * side.explained_x, 0, 'f', 1) : tr("PC 1"));
  scatter_->yAxis->setLabel(any ? tr("PC 2 (%1% of the variance)").arg(100 * side.explained_y, 0, 'f', 1) : tr("PC 2"));
  const QString rest =
      tr("projected on the two directions along which their embeddings vary most (PCA). Tokens used "
         "alike tend to lie close together. Hover a point for its token, click it to list its "
         "nearest neighbours; labels are thinned where they would overlap (zoom in to see more).");
  if (any && shared_)
    // One vocabulary and one table for both languages: its most frequent tokens are whichever side's
    // are commoner, and Source and Target show the same points.
    note_->setText(tr("The %1 most frequent tokens of the vocabulary %2 and %3 share (of %4 entries, special "
                      "tokens left out; one embedding table serves both, so Source and Target show the same points), ")
                       .arg(side.tokens.size())
                       .arg(source_.language.isEmpty() ? tr("the source") : source_.language,
                            target_.language.isEmpty() ? tr("the target") : target_.language)
                       .arg(side.vocab_size) +
                   rest);
  else if (any)
    note_->setText(tr("The %1 most frequent tokens of the %2 vocabulary (of %3 entries, special tokens left out), ")
                       .arg(side.tokens.size())
                       .arg(side.language.isEmpty() ? (targetSide() ? tr("target") : tr("source")) : side.language)
                       .arg(side.vocab_size) +
                   rest);
  else
    note_->clear();
  updateHighlights();
}

void EmbeddingsTab::searchNeighbours() { requestNeighbours(search_->text()); }

void EmbeddingsTab::requestNeighbours(const QString& query) {
  if (!service_ || !service_->hasModel()) {
    message_->setText(no_model_message());
    return;
  }
  if (query.trimmed().isEmpty()) {
    neighbours_ = TokenNeighbours();
    table_->setRowCount(0);
    message_->clear();
    updateHighlights();
    return;
  }
  neighbours_request_ = service_->findNeighbours(targetSide(), query, k_->value());
}

void EmbeddingsTab::showNeighbours(const TokenNeighbours& result) {
  neighbours_ = result;
  table_->setRowCount(0);
  if (!result.error.isEmpty()) {
    message_->setText(result.error);
  } else {
    const EmbeddingProjection& side = result.target ? target_ : source_;
    const auto language = [](const EmbeddingProjection& p, const QString& kind) {
      return p.language.isEmpty() ? kind : p.language;
    };
    // A shared table is both languages' space: naming one of them said the German space of English tokens.
    const QString space =
        shared_ ? tr("the embedding space %1 and %2 share")
                      .arg(language(source_, tr("the source")), language(target_, tr("the target")))
                : tr("the %1 embedding space").arg(language(side, result.target ? tr("target") : tr("source")));
    message_->setText(tr("The %1 tokens nearest to %2 (id %3) in %4, by cosine similarity.")
                          .arg(result.tokens.size())
                          .arg(quoted(result.token))
                          .arg(result.token_id)
                          .arg(space));
    table_->setRowCount(result.tokens.size());
    for (int i = 0; i < result.tokens.size(); ++i) {
      auto* token = new QTableWidgetItem(result.tokens[i]);
      token->setToolTip(tr("id %1").arg(result.ids.value(i)));
      auto* similarity = new QTableWidgetItem(QString::number(result.similarities.value(i), 'f', 3));
      similarity->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      similarity->setData(Qt::UserRole, result.similarities.value(i));
      table_->setItem(i, 0, token);
      table_->setItem(i, 1, similarity);
    }
  }
  updateHighlights();
}

void EmbeddingsTab::updateHighlights() {
  // Labels added for neighbours outside the plotted tokens go; the plotted ones lose their bold.
  while (labels_.size() > base_labels_) {
    scatter_->removeItem(labels_.back().item);
    labels_.pop_back();
  }
  QFont plain = scatter_->font(), bold = plain;
  bold.setBold(true);
  for (auto& label : labels_) {
    label.highlighted = false;
    label.item->setFont(plain);
  }
  QVector<double> nx, ny, qx, qy;
  const TokenNeighbours& n = neighbours_;
  const bool shown = n.error.isEmpty() && !n.token.isEmpty() && n.projected && n.target == targetSide() &&
                     !currentProjection().tokens.isEmpty();
  if (shown) {
    auto mark = [&](qint64 id, const QString& token, double x, double y) {
      for (int i = 0; i < base_labels_; ++i)
        if (labels_[i].id == id) {
          labels_[i].highlighted = true;
          labels_[i].item->setFont(bold);
          return;
        }
      auto* item = new QCPItemText(scatter_);
      item->setText(token);
      item->position->setCoords(x, y);
      item->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
      item->setPadding(QMargins(5, 0, 0, 0));
      item->setColor(scatter_->palette().color(QPalette::WindowText));
      item->setFont(bold);
      item->setSelectable(false);
      item->setClipToAxisRect(true);
      labels_.push_back({item, x, y, id, -1, true});
    };
    mark(n.token_id, n.token, n.x, n.y);
    qx << n.x;
    qy << n.y;
    for (int i = 0; i < n.tokens.size() && i < n.xs.size(); ++i) {
      mark(n.ids.value(i), n.tokens[i], n.xs[i], n.ys.value(i));
      nx << n.xs[i];
      ny << n.ys.value(i);
    }
  }
  neighbour_points_->setData(nx, ny);
  query_point_->setData(qx, qy);
  rescaleScatter();
}

void EmbeddingsTab::rescaleScatter() {
  if (labels_.isEmpty()) {  // nothing plotted: a neutral frame rather than a microscopic one
    scatter_->xAxis->setRange(-1, 1);
    scatter_->yAxis->setRange(-1, 1);
    scatter_->replot();
    return;
  }
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  bool first = true;
  for (const auto& label : labels_) {
    if (first) {
      x0 = x1 = label.x;
      y0 = y1 = label.y;
      first = false;
    }
    x0 = std::min(x0, label.x);
    x1 = std::max(x1, label.x);
    y0 = std::min(y0, label.y);
    y1 = std::max(y1, label.y);
  }
  const double w = std::max(x1 - x0, 1e-6), h = std::max(y1 - y0, 1e-6);
  // Room on the right for the labels written beside the points.
  scatter_->xAxis->setRange(x0 - 0.06 * w, x1 + 0.2 * w);
  scatter_->yAxis->setRange(y0 - 0.08 * h, y1 + 0.08 * h);
  scatter_->replot();
}

void EmbeddingsTab::thinScatterLabels() {
  // The searched token is always labelled; then its neighbours by rank, then the other tokens in
  // frequency order, each only where it overlaps no label already placed and fits in the axis rect.
  const QRect area = scatter_->axisRect()->rect();
  QVector<int> order;
  order.reserve(labels_.size());
  QVector<bool> taken(labels_.size(), false);
  QVector<qint64> highlight_ids{neighbours_.token_id};
  highlight_ids += neighbours_.ids;
  for (qint64 id : highlight_ids)
    for (int i = 0; i < labels_.size(); ++i)
      if (!taken[i] && labels_[i].highlighted && labels_[i].id == id) {
        order << i;
        taken[i] = true;
        break;
      }
  for (int i = 0; i < labels_.size(); ++i)
    if (!taken[i]) order << i;
  QVector<QRect> placed;
  for (int n = 0; n < order.size(); ++n) {
    const ScatterLabel& label = labels_[order[n]];
    const QPoint at(qRound(scatter_->xAxis->coordToPixel(label.x)), qRound(scatter_->yAxis->coordToPixel(label.y)));
    const QFontMetrics metrics(label.item->font());
    const QRect box(at.x() + 5, at.y() - metrics.height() / 2, metrics.horizontalAdvance(label.item->text()),
                    metrics.height());
    const bool searched = n == 0 && label.highlighted && label.id == neighbours_.token_id;
    bool visible = area.contains(at);
    if (visible && !searched) {
      visible = area.contains(box);
      for (const QRect& other : placed)
        if (visible && other.intersects(box)) visible = false;
    }
    label.item->setVisible(visible);
    if (visible) placed << box.adjusted(-3, -1, 3, 1);
  }
}

QStringList EmbeddingsTab::visibleLabels() const {
  QStringList out;
  for (const auto& label : labels_)
    if (label.item->visible()) out << label.item->text();
  return out;
}

int EmbeddingsTab::scatterPointAt(const QPoint& pos) const {
  int best = -1;
  double best_d2 = 8.0 * 8.0;  // within 8 pixels
  for (int i = 0; i < labels_.size(); ++i) {
    const double dx = scatter_->xAxis->coordToPixel(labels_[i].x) - pos.x();
    const double dy = scatter_->yAxis->coordToPixel(labels_[i].y) - pos.y();
    if (dx * dx + dy * dy < best_d2) {
      best_d2 = dx * dx + dy * dy;
      best = i;
    }
  }
  return best;
}

void EmbeddingsTab::scatterHover(const QPoint& pos) {
  const int i = scatterPointAt(pos);
  QString text;
  if (i >= 0) {
    const ScatterLabel& label = labels_[i];
    text = label.item->text();
    if (label.rank >= 0)
      text += tr("\nfrequency rank %1 (id %2)").arg(label.rank + 1).arg(label.id);
    else
      text += tr("\nid %1 (not among the most frequent tokens shown)").arg(label.id);
    if (label.id == neighbours_.token_id && label.highlighted) text += tr("\nthe searched token");
    const int n = neighbours_.ids.indexOf(label.id);
    if (n >= 0 && label.highlighted)
      text += tr("\ncosine similarity to %1: %2")
                  .arg(quoted(neighbours_.token))
                  .arg(neighbours_.similarities.value(n), 0, 'f', 3);
    text += tr("\nPC 1 %1, PC 2 %2").arg(label.x, 0, 'f', 3).arg(label.y, 0, 'f', 3);
  }
  hover_ = text;
  scatter_->setProperty("hoverText", text);
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(scatter_->mapToGlobal(pos), text, scatter_);
}

bool EmbeddingsTab::eventFilter(QObject* watched, QEvent* event) {
  if (watched == scatter_ && event->type() == QEvent::Leave && !hover_.isEmpty()) {
    hover_.clear();
    scatter_->setProperty("hoverText", QString());
    QToolTip::hideText();
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace ts::ui
