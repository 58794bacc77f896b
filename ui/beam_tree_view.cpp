// SPDX-License-Identifier: GPL-3.0-or-later
#include "beam_tree_view.h"

#include <algorithm>
#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QEvent>
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsView>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QScrollBar>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStyleOptionGraphicsItem>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>

#include "plot_style.h"

namespace ts::ui {

namespace {

constexpr char32_t kSpaceMark = 0x2581;  // "▁": SentencePiece's (and the char tokenizer's) space
constexpr double kMinZoom = 0.002, kMaxZoom = 4.0;

bool is_cjk(char32_t c) {
  const QChar::Script script = QChar::script(c);
  return script == QChar::Script_Han || script == QChar::Script_Hiragana || script == QChar::Script_Katakana ||
         script == QChar::Script_Hangul || (c >= 0x3000 && c <= 0x303F) || (c >= 0xFF00 && c <= 0xFFEF);
}

bool closes(char32_t c) {
  static const std::u32string kClosing = U".,!?;:%)]}…»";
  return kClosing.find(c) != std::u32string::npos;
}

bool opens(char32_t c) {
  static const std::u32string kOpening = U"([{«¿¡";
  return kOpening.find(c) != std::u32string::npos;
}

bool is_special(const QString& token) {
  return token == QLatin1String("<s>") || token == QLatin1String("</s>") || token == QLatin1String("<pad>");
}

QString format_lp(double v) { return QString::number(v, 'f', 2); }

QString elide(const QString& s, int chars = 80) { return s.size() <= chars ? s : s.left(chars - 1) + QChar(0x2026); }

}  // namespace

// Colours and metrics shared by every item of one scene (taken from the widget's palette and font,
// so light and dark themes both read).
struct BeamStyle {
  QColor base, text, dim_text, border, accent, finished;
  QFont font, small;
  double box_w = 100, line_h = 16, pad = 4, column = 140;
};

// One candidate: a rounded box with its token, cumulative log-probability and, when finished, its
// normalised score and n-best rank. Pruned candidates are one line high (token and log-prob side
// by side) so that the many leaves they make take less room. Painted directly (no child items) so
// thousands stay cheap; pens are cosmetic so the outline survives when the tree is zoomed out.
class BeamNodeItem : public QGraphicsItem {
 public:
  BeamNodeItem(const BeamStyle* style, qint64 id, QStringList lines, bool best, bool finished, bool faded)
      : style_(style), id_(id), lines_(std::move(lines)), best_(best), finished_(finished), faded_(faded) {
    rect_ = QRectF(0, 0, style->box_w, height(*style, faded_ ? 1 : static_cast<int>(lines_.size())));
    rect_.moveCenter(QPointF(0, 0));
    setFlag(ItemIsSelectable);
    if (faded_) setOpacity(0.45);
    setZValue(best_ ? 2 : 1);
  }

  static double height(const BeamStyle& style, int lines) { return lines * style.line_h + 2 * style.pad; }

  QRectF boundingRect() const override { return rect_.adjusted(-2, -2, 2, 2); }
  QRectF box() const { return rect_; }
  qint64 id() const { return id_; }
  const QStringList& lines() const { return lines_; }
  bool best() const { return best_; }
  bool faded() const { return faded_; }

  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
    QColor fill = style_->base;
    if (isSelected()) {
      const QColor a = style_->accent;
      fill = QColor::fromRgbF(0.7 * fill.redF() + 0.3 * a.redF(), 0.7 * fill.greenF() + 0.3 * a.greenF(),
                              0.7 * fill.blueF() + 0.3 * a.blueF());
    }
    QPen pen(best_ ? style_->accent : style_->border, best_ ? 2.5 : 1.0);
    if (faded_) pen.setStyle(Qt::DashLine);
    if (isSelected()) pen = QPen(style_->accent, 3.0);
    pen.setCosmetic(true);
    painter->setPen(pen);
    painter->setBrush(fill);
    if (lod < 0.2) {  // an overview: plain boxes, no text (far cheaper for thousands of nodes)
      painter->drawRect(rect_);
      return;
    }
    painter->drawRoundedRect(rect_, 4, 4);
    if (finished_) {
      // A stripe on the right edge marks a finished hypothesis (ended with </s> or the length limit).
      painter->setPen(Qt::NoPen);
      painter->setBrush(style_->finished);
      painter->drawRect(QRectF(rect_.right() - 5, rect_.top() + 2, 3, rect_.height() - 4));
    }
    const double pad = style_->pad, right = finished_ ? 4 : 0;
    if (faded_ && lines_.size() >= 2) {
      const QRectF line(rect_.left() + pad, rect_.top() + pad, rect_.width() - 2 * pad, style_->line_h);
      painter->setPen(style_->text);
      painter->setFont(style_->font);
      painter->drawText(line, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextSingleLine, lines_[0]);
      painter->setPen(style_->dim_text);
      painter->setFont(style_->small);
      painter->drawText(line, Qt::AlignRight | Qt::AlignVCenter | Qt::TextSingleLine, lines_[1]);
      return;
    }
    for (int i = 0; i < lines_.size(); ++i) {
      painter->setFont(i == 0 ? style_->font : style_->small);
      painter->setPen(i == 0 ? style_->text : style_->dim_text);
      const QRectF line(rect_.left() + pad, rect_.top() + pad + i * style_->line_h, rect_.width() - 2 * pad - right,
                        style_->line_h);
      painter->drawText(line, Qt::AlignCenter | Qt::TextSingleLine, lines_[i]);
    }
  }

 private:
  const BeamStyle* style_;
  qint64 id_;
  QStringList lines_;
  bool best_, finished_, faded_;
  QRectF rect_;
};

// Ctrl+wheel zooms around the mouse; the plain wheel scrolls as usual.
class BeamGraphicsView : public QGraphicsView {
 public:
  using QGraphicsView::QGraphicsView;

  void zoomBy(double factor) {
    const double current = transform().m11();
    const double target = std::clamp(current * factor, kMinZoom, kMaxZoom);
    if (std::abs(target - current) < 1e-9) return;
    scale(target / current, target / current);
  }

 protected:
  void wheelEvent(QWheelEvent* event) override {
    if (event->modifiers() & Qt::ControlModifier) {
      setTransformationAnchor(AnchorUnderMouse);
      zoomBy(std::pow(1.0015, event->angleDelta().y()));
      event->accept();
      return;
    }
    QGraphicsView::wheelEvent(event);
  }
};

BeamTreeView::BeamTreeView(TranslationService* service, QWidget* parent)
    : QWidget(parent), service_(service), style_(std::make_unique<BeamStyle>()) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);

  auto* bar = new QHBoxLayout;
  auto* width_label = new QLabel(tr("Beam width:"), this);
  width_ = new QSpinBox(this);
  width_->setObjectName(QStringLiteral("beamWidth"));
  width_->setRange(1, 32);
  width_->setValue(5);
  width_->setToolTip(tr("Hypotheses kept at each step; the n-best list returned has as many entries"));
  width_label->setBuddy(width_);
  run_ = new QPushButton(tr("Decode with beam search"), this);
  run_->setObjectName(QStringLiteral("beamRun"));
  show_pruned_ = new QCheckBox(tr("Show pruned candidates"), this);
  show_pruned_->setObjectName(QStringLiteral("beamShowPruned"));
  show_pruned_->setChecked(true);
  show_pruned_->setToolTip(tr("Candidates that scored among the best 2 × width at a step but were cut from the beam"));
  layout_ = new QComboBox(this);
  layout_->setObjectName(QStringLiteral("beamLayout"));
  layout_->addItem(tr("Tree"));
  layout_->addItem(tr("Ranked by score (compact)"));
  layout_->setToolTip(tr("Tree: every leaf on its own row, nothing crosses. Ranked: each step's candidates in a "
                         "column sorted by log-probability, far shorter for wide beams and long sentences."));
  fit_ = new QToolButton(this);
  fit_->setObjectName(QStringLiteral("beamFit"));
  fit_->setText(tr("Fit"));
  fit_->setToolTip(tr("Fit the whole tree into the view (Ctrl+wheel zooms)"));
  zoom100_ = new QToolButton(this);
  zoom100_->setObjectName(QStringLiteral("beamZoom100"));
  zoom100_->setText(tr("100%"));
  zoom100_->setToolTip(tr("Actual size"));
  bar->addWidget(width_label);
  bar->addWidget(width_);
  bar->addWidget(run_);
  bar->addSpacing(12);
  bar->addWidget(show_pruned_);
  bar->addWidget(layout_);
  bar->addStretch(1);
  bar->addWidget(fit_);
  bar->addWidget(zoom100_);
  layout->addLayout(bar);

  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("beamSummary"));
  summary_->setWordWrap(true);
  summary_->setTextFormat(Qt::PlainText);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(summary_);

  stack_ = new QStackedWidget(this);
  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("beamMessage"));
  message_->setAlignment(Qt::AlignCenter);
  message_->setWordWrap(true);
  message_->setTextFormat(Qt::PlainText);
  message_->setMargin(16);
  message_->setForegroundRole(QPalette::PlaceholderText);
  scene_ = new QGraphicsScene(this);
  view_ = new BeamGraphicsView(scene_, this);
  view_->setObjectName(QStringLiteral("beamTreeView"));
  view_->setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  view_->setDragMode(QGraphicsView::ScrollHandDrag);
  view_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  view_->setMinimumSize(240, 160);
  view_->setToolTip(QString());
  stack_->addWidget(message_);
  stack_->addWidget(view_);
  layout->addWidget(stack_, 1);

  auto* legend = new QLabel(tr("Each box: token and cumulative log-probability. Faded: candidates cut from the beam. "
                               "Accent outline: the best translation. Right stripe: a finished hypothesis with its "
                               "length-normalised score and n-best rank. Hover a box for details, click to select."),
                            this);
  legend->setObjectName(QStringLiteral("beamLegend"));
  legend->setWordWrap(true);
  legend->setForegroundRole(QPalette::PlaceholderText);
  QFont small = legend->font();
  small.setPointSizeF(small.pointSizeF() * 0.9);
  legend->setFont(small);
  layout->addWidget(legend);

  selection_ = new QLabel(this);
  selection_->setObjectName(QStringLiteral("beamSelection"));
  selection_->setWordWrap(true);
  selection_->setTextFormat(Qt::PlainText);
  selection_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(selection_);

  connect(run_, &QPushButton::clicked, this, &BeamTreeView::decodeWithBeam);
  connect(show_pruned_, &QCheckBox::toggled, this, [this] {
    const qint64 selected = selectedNode();
    rebuildScene();
    if (selected >= 0 && items_.contains(selected)) selectNode(selected);
  });
  connect(layout_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
    const qint64 selected = selectedNode();
    rebuildScene();
    initialView();
    if (selected >= 0 && items_.contains(selected)) selectNode(selected);
  });
  connect(layout_, qOverload<int>(&QComboBox::activated), this, [this] { layout_chosen_ = true; });
  connect(fit_, &QToolButton::clicked, this, &BeamTreeView::fitToView);
  connect(zoom100_, &QToolButton::clicked, this, &BeamTreeView::resetZoom);
  connect(scene_, &QGraphicsScene::selectionChanged, this, &BeamTreeView::onSelectionChanged);
  if (service_) connect(service_, &TranslationService::translated, this, &BeamTreeView::showResult);

  showMessage(tr("Translate a sentence with beam search to see every hypothesis it explored, with the chosen one "
                 "highlighted."));
  updateButtons();
}

BeamTreeView::~BeamTreeView() {
  scene_->clear();  // items point at the style: remove them first
}

QGraphicsView* BeamTreeView::graphicsView() const { return view_; }

bool BeamTreeView::showsTree() const { return stack_->currentWidget() == view_; }

QString BeamTreeView::message() const { return showsTree() ? QString() : message_->text(); }

void BeamTreeView::showMessage(const QString& text) {
  message_->setText(text);
  stack_->setCurrentWidget(message_);
}

void BeamTreeView::updateButtons() {
  run_->setEnabled(!source_.isEmpty());
  run_->setToolTip(source_.isEmpty() ? tr("Translate a sentence first")
                                     : tr("Translate “%1” again with beam search of the chosen width").arg(source_));
  const bool tree = !nodes_.isEmpty();
  show_pruned_->setEnabled(tree);
  layout_->setEnabled(tree);
  fit_->setEnabled(tree);
  zoom100_->setEnabled(tree);
}

void BeamTreeView::decodeWithBeam() {
  if (!service_ || source_.isEmpty()) return;
  DecodeConfig d = defaults_;
  d.mode = "beam";
  d.beam = width_->value();
  d.nbest = width_->value();
  last_request_ = d;
  request_id_ = service_->translate(source_, d, /*record_attention=*/false);
  nodes_.clear();
  index_.clear();
  best_path_.clear();
  rebuildScene();
  summary_->clear();
  selection_->clear();
  showMessage(tr("Decoding “%1” with beam search (width %2)…").arg(source_).arg(d.beam));
  updateButtons();
}

void BeamTreeView::showResult(const TranslationResult& result) {
  // Every translation anyone asked for arrives here; the latest one decides what is shown.
  result_ = result;
  if (!result.source.isEmpty()) source_ = result.source;
  nodes_.clear();
  index_.clear();
  best_path_.clear();
  selection_->clear();
  summary_->clear();
  if (!result.error.isEmpty()) {
    rebuildScene();
    showMessage(tr("Translation of “%1” failed: %2").arg(result.source, result.error));
    updateButtons();
    return;
  }
  const bool has_tree = result.beam_tree.is_object() && result.beam_tree.contains("nodes") &&
                        result.beam_tree["nodes"].is_array() && !result.beam_tree["nodes"].empty();
  if (!has_tree) {
    rebuildScene();
    showMessage(tr("“%1” was translated with greedy decoding or sampling, which follow one hypothesis at a time: "
                   "the search tree exists only for beam search.\n\nChoose a width and click “Decode with beam "
                   "search” to see the hypotheses it explores for this sentence.")
                    .arg(result.source));
    updateButtons();
    return;
  }
  QString error;
  if (!readTree(result.beam_tree, &error)) {
    nodes_.clear();
    index_.clear();
    best_path_.clear();
    rebuildScene();
    showMessage(tr("The beam search tree of “%1” could not be read: %2").arg(result.source, error));
    updateButtons();
    return;
  }
  if (!layout_chosen_ && ranked()) {
    // Each tree starts in the tree layout unless the person chose one; initialView() switches to
    // the compact layout when the chosen translation does not fit legibly.
    const QSignalBlocker block(layout_);
    layout_->setCurrentIndex(0);
  }
  rebuildScene();
  stack_->setCurrentWidget(view_);
  updateSummary();
  updateButtons();
  initialView();
}

void BeamTreeView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (initial_view_pending_) QTimer::singleShot(0, this, &BeamTreeView::initialView);
}

void BeamTreeView::initialView() {
  // The viewport's size is only known once the view is shown (a hidden dock has none yet).
  initial_view_pending_ = !view_->isVisible();
  if (items_.isEmpty() || initial_view_pending_) return;
  // Start readable: the whole tree when it fits at a legible size, otherwise the best path at a
  // legible size (Fit and Ctrl+wheel give the overview).
  view_->resetTransform();
  const QRectF bounds = scene_->itemsBoundingRect();
  const QSize port = view_->viewport()->size();
  const double fit = std::min(port.width() / std::max(1.0, bounds.width() + 20),
                              port.height() / std::max(1.0, bounds.height() + 20));
  if (fit >= 0.6) {
    fitToView();
    return;
  }
  // Too big for one legible view: frame the best path (the translation chosen), as far as it fits
  // at a legible size, so the chosen hypothesis is what one sees first.
  QRectF path_rect;
  for (qint64 id : best_path_)
    if (auto* item = items_.value(id)) path_rect = path_rect.united(item->sceneBoundingRect());
  if (path_rect.isNull()) {
    if (auto* root = items_.value(nodes_.first().id)) path_rect = root->sceneBoundingRect();
  }
  path_rect.adjust(-40, -40, 40, 40);
  const double path_fit = std::min(port.width() / std::max(1.0, path_rect.width()),
                                   port.height() / std::max(1.0, path_rect.height()));
  if (path_fit >= 0.45) {
    const double s = std::min(path_fit, 1.0);
    view_->scale(s, s);
    view_->centerOn(path_rect.center());
    return;
  }
  // Not even the path fits. Unless the person chose the tree layout, the compact one (each step's
  // candidates ranked in a column) shows the chosen translation whole.
  if (!layout_chosen_ && !ranked()) {
    {
      const QSignalBlocker block(layout_);
      layout_->setCurrentIndex(1);
    }
    rebuildScene();
    initialView();
    return;
  }
  view_->scale(0.6, 0.6);
  BeamNodeItem* focus = best_path_.size() > 1 ? items_.value(best_path_[1]) : nullptr;
  if (!focus) focus = items_.value(nodes_.first().id);
  if (focus) view_->centerOn(focus);
}

bool BeamTreeView::readTree(const nlohmann::json& tree, QString* error) {
  try {
    const auto& nodes = tree.at("nodes");
    nodes_.reserve(static_cast<int>(nodes.size()));
    QVector<QStringList> tokens;  // prefix tokens per node (root excluded)
    tokens.reserve(static_cast<int>(nodes.size()));
    for (const auto& j : nodes) {
      Node n;
      n.id = j.at("id").get<qint64>();
      n.parent = j.value("parent", qint64(-1));
      n.token = QString::fromStdString(j.value("token", std::string()));
      n.token_id = j.value("token_id", qint64(0));
      n.step = j.value("step", 0);
      n.token_log_prob = j.value("token_log_prob", 0.0);
      n.log_prob = j.value("log_prob", 0.0);
      n.score = j.value("score", n.log_prob);
      n.state = QString::fromStdString(j.value("state", std::string("kept")));
      n.rank = j.value("rank", -1);
      if (index_.contains(n.id)) {
        *error = tr("node %1 appears twice").arg(n.id);
        return false;
      }
      QStringList prefix;
      if (n.parent >= 0) {
        // Parents come before their children (the contract): this also rules out cycles.
        const auto it = index_.constFind(n.parent);
        if (it == index_.constEnd()) {
          *error = tr("node %1 names parent %2, which does not come before it").arg(n.id).arg(n.parent);
          return false;
        }
        prefix = tokens[*it];
        prefix << n.token;
      }
      if (n.token.isEmpty() && n.parent >= 0) n.token = QStringLiteral("#%1").arg(n.token_id);
      index_.insert(n.id, nodes_.size());
      tokens.push_back(prefix);
      nodes_.push_back(n);
    }
    // Joining needs to know whether the vocabulary uses "▁" pieces, which any token may reveal.
    bool pieces = false;
    for (const auto& n : nodes_)
      if (n.token.contains(QChar(kSpaceMark))) {
        pieces = true;
        break;
      }
    for (int i = 0; i < nodes_.size(); ++i) {
      QStringList t = tokens[i];
      if (pieces && !t.isEmpty() && !t.first().contains(QChar(kSpaceMark))) t.first().prepend(QChar(kSpaceMark));
      nodes_[i].prefix = joinTokens(t);
    }
    if (tree.contains("best_path") && tree["best_path"].is_array())
      for (const auto& id : tree["best_path"]) best_path_ << id.get<qint64>();
  } catch (const std::exception& e) {
    *error = QString::fromStdString(e.what());
    return false;
  }
  if (nodes_.isEmpty()) {
    *error = tr("it has no nodes");
    return false;
  }
  return true;
}

QString BeamTreeView::joinTokens(const QStringList& tokens) {
  bool pieces = false;
  for (const auto& t : tokens)
    if (t.contains(QChar(kSpaceMark))) {
      pieces = true;
      break;
    }
  QString out;
  if (pieces) {
    for (const auto& t : tokens)
      if (!is_special(t)) out += t;
    out.replace(QChar(kSpaceMark), QLatin1Char(' '));
    return out.simplified();
  }
  char32_t last = 0;
  for (const auto& t : tokens) {
    if (is_special(t) || t.isEmpty()) continue;
    const auto u = t.toUcs4();
    const char32_t first = u.isEmpty() ? 0 : static_cast<char32_t>(u.first());
    if (!out.isEmpty() && !closes(first) && !opens(last) && !(is_cjk(last) && is_cjk(first))) out += QLatin1Char(' ');
    out += t;
    last = u.isEmpty() ? last : static_cast<char32_t>(u.last());
  }
  return out;
}

QString BeamTreeView::toolTipFor(int i) const {
  const Node& n = nodes_[i];
  const auto esc = [](const QString& s) { return s.toHtmlEscaped(); };
  QStringList lines;
  lines << QStringLiteral("<b>%1</b>").arg(n.prefix.isEmpty() ? tr("(start of the sentence)") : esc(n.prefix));
  if (n.parent < 0) {
    lines << tr("Root: the decoder starts from %1").arg(esc(n.token));
  } else {
    lines << tr("Token “%1” (id %2) at step %3").arg(esc(n.token)).arg(n.token_id).arg(n.step);
    lines << tr("P(token | prefix) = %1 (log %2)").arg(std::exp(n.token_log_prob), 0, 'f', 3).arg(format_lp(n.token_log_prob));
    lines << tr("Cumulative log-prob %1").arg(format_lp(n.log_prob));
  }
  if (n.state == QLatin1String("finished")) {
    lines << tr("Finished: score %1 (log-prob / length penalty)").arg(format_lp(n.score));
    lines << (n.rank >= 0 ? tr("n-best rank #%1").arg(n.rank + 1) : tr("Not among the n-best returned"));
  } else if (n.state == QLatin1String("pruned")) {
    lines << tr("Pruned: scored, but cut because the beam was full");
  } else if (n.state == QLatin1String("kept")) {
    lines << tr("Kept in the beam (score %1)").arg(format_lp(n.score));
  }
  if (best_path_.contains(n.id)) lines << tr("On the path of the best translation");
  return lines.join(QStringLiteral("<br>"));
}

void BeamTreeView::rebuildScene() {
  QElapsedTimer clock;
  clock.start();
  scene_->clear();
  items_.clear();
  edges_.clear();
  highlighted_edges_ = 0;
  if (nodes_.isEmpty()) {
    scene_->setSceneRect(QRectF());
    layout_ms_ = 0;
    return;
  }

  BeamStyle& st = *style_;
  const QPalette pal = palette();
  st.base = pal.color(QPalette::Base);
  st.text = pal.color(QPalette::Text);
  st.dim_text = st.text;  // PlaceholderText is not always readable in custom dark palettes
  st.dim_text.setAlpha(170);
  st.border = pal.color(QPalette::Text);
  st.border.setAlpha(150);
  st.accent = pal.color(QPalette::Highlight);
  st.finished = series_color(2);
  st.font = font();
  st.small = font();
  st.small.setPointSizeF(st.font.pointSizeF() * 0.85);
  const QFontMetricsF fm(st.font);
  st.line_h = std::ceil(fm.height()) + 1;
  st.pad = 4;
  st.box_w = std::max(100.0, std::ceil(fm.horizontalAdvance(QLatin1Char('M')) * 8));
  st.column = st.box_w + 44;

  const bool show_pruned = show_pruned_->isChecked();
  const int n = nodes_.size();
  // Which nodes are drawn: pruned candidates only on request, and never a node whose parent is not.
  QVector<char> visible(n, 0);
  QVector<QVector<int>> children(n);
  QVector<int> roots;
  for (int i = 0; i < n; ++i) {
    const Node& node = nodes_[i];
    const int p = node.parent >= 0 ? index_.value(node.parent, -1) : -1;
    const bool self = show_pruned || node.state != QLatin1String("pruned");
    visible[i] = self && (p < 0 || visible[p]);
    if (!visible[i]) continue;
    if (p < 0) roots << i;
    else children[p] << i;
  }
  // Most probable continuation on top.
  for (auto& c : children)
    std::stable_sort(c.begin(), c.end(), [&](int a, int b) { return nodes_[a].log_prob > nodes_[b].log_prob; });

  // Box heights: pruned candidates take one line, finished ones three, the others two.
  const auto box_height = [&](int i) {
    const QString& state = nodes_[i].state;
    return BeamNodeItem::height(st, state == QLatin1String("pruned") ? 1 : state == QLatin1String("finished") ? 3 : 2);
  };
  const double gap = 6;
  QVector<double> y(n, 0);
  QVector<int> depth(n, 0);
  QVector<int> preorder;
  preorder.reserve(n);
  QVector<int> stack;
  for (int r = roots.size() - 1; r >= 0; --r) stack << roots[r];
  while (!stack.isEmpty()) {
    const int i = stack.takeLast();
    preorder << i;
    const Node& node = nodes_[i];
    const int p = node.parent >= 0 ? index_.value(node.parent, -1) : -1;
    depth[i] = p < 0 ? 0 : depth[p] + 1;
    for (int c = children[i].size() - 1; c >= 0; --c) stack << children[i][c];
  }
  if (ranked()) {
    // Compact: each step is a column of its candidates sorted by log-probability, centred on the
    // root's row. Edges may cross, but the height is that of one step's candidates.
    QHash<int, QVector<int>> columns;
    for (int i : preorder) columns[depth[i]] << i;
    const double pitch = BeamNodeItem::height(st, 3) + gap;
    for (auto it = columns.begin(); it != columns.end(); ++it) {
      auto& column = it.value();
      std::stable_sort(column.begin(), column.end(), [&](int a, int b) { return nodes_[a].log_prob > nodes_[b].log_prob; });
      for (int k = 0; k < column.size(); ++k) y[column[k]] = (k - (column.size() - 1) / 2.0) * pitch;
    }
  } else {
    // Tree: leaves are stacked in depth-first order, each on its own row; a parent sits midway
    // between its first and last child, so subtrees occupy disjoint bands. Two adjacent leaves
    // with the same parent only need room for themselves; otherwise an inner node (two lines) may
    // sit level with either, so a one-line leaf is spaced as if it had two. Then no two boxes of a
    // column overlap (the test checks it on a 10 × 60 tree).
    const double inner_h = BeamNodeItem::height(st, 2);
    double next = 0, previous_h = -1;
    int previous = -1;
    for (int i : preorder) {
      if (!children[i].isEmpty()) continue;
      const double h = box_height(i);
      if (previous >= 0) {
        const bool siblings = nodes_[previous].parent == nodes_[i].parent;
        next += siblings ? (previous_h + h) / 2 + gap : (std::max(previous_h, inner_h) + std::max(h, inner_h)) / 2 + gap;
      }
      y[i] = next;
      previous_h = h;
      previous = i;
    }
    for (int k = preorder.size() - 1; k >= 0; --k) {
      const int i = preorder[k];
      if (!children[i].isEmpty()) y[i] = (y[children[i].first()] + y[children[i].last()]) / 2;
    }
  }

  const QSet<qint64> best(best_path_.cbegin(), best_path_.cend());
  int max_depth = 0;
  for (int i : preorder) {
    const Node& node = nodes_[i];
    max_depth = std::max(max_depth, depth[i]);
    QStringList lines;
    const QFontMetricsF bold(st.font);
    lines << bold.elidedText(node.token, Qt::ElideMiddle, st.box_w - 2 * st.pad - 4);
    lines << format_lp(node.log_prob);
    const bool finished = node.state == QLatin1String("finished");
    if (finished)
      lines << (node.rank >= 0 ? tr("%1 · #%2").arg(format_lp(node.score)).arg(node.rank + 1) : format_lp(node.score));
    const bool faded = node.state == QLatin1String("pruned");
    auto* item = new BeamNodeItem(&st, node.id, lines, best.contains(node.id), finished, faded);
    item->setPos(depth[i] * st.column, y[i]);
    item->setToolTip(toolTipFor(i));
    scene_->addItem(item);
    items_.insert(node.id, item);
  }

  // Edges: a curve from the right side of the parent's box to the left side of the child's.
  QPen normal(st.border, 1.0);
  QPen accent(st.accent, 3.0);
  normal.setCosmetic(true);  // lines stay visible when the tree is zoomed out to an overview
  accent.setCosmetic(true);
  for (int i : preorder) {
    const Node& node = nodes_[i];
    if (node.parent < 0) continue;
    BeamNodeItem* parent = items_.value(node.parent);
    BeamNodeItem* child = items_.value(node.id);
    if (!parent || !child) continue;
    const QPointF a(parent->pos().x() + st.box_w / 2, parent->pos().y());
    const QPointF b(child->pos().x() - st.box_w / 2, child->pos().y());
    QPainterPath path(a);
    const double dx = (b.x() - a.x()) / 2;
    path.cubicTo(a + QPointF(dx, 0), b - QPointF(dx, 0), b);
    const bool on_best = best.contains(node.id) && best.contains(node.parent);
    auto* edge = scene_->addPath(path, on_best ? accent : normal);
    edge->setZValue(on_best ? 0.5 : 0);
    edge->setData(0, node.id);
    if (node.state == QLatin1String("pruned")) {
      QPen dashed = normal;
      dashed.setStyle(Qt::DashLine);
      edge->setPen(dashed);
      edge->setOpacity(0.4);
    }
    if (on_best) ++highlighted_edges_;
    edges_ << edge;
  }

  // Step numbers above the columns.
  double top = 0;
  for (auto* item : std::as_const(items_)) top = std::min(top, item->pos().y() + item->box().top());
  for (int d = 1; d <= max_depth; ++d) {
    auto* label = scene_->addSimpleText(tr("step %1").arg(d), st.small);
    label->setBrush(st.dim_text);
    const QRectF r = label->boundingRect();
    label->setPos(d * st.column - r.width() / 2, top - gap - r.height());
  }
  scene_->setSceneRect(scene_->itemsBoundingRect().adjusted(-20, -20, 20, 20));
  layout_ms_ = clock.nsecsElapsed() / 1e6;
}

void BeamTreeView::updateSummary() {
  int pruned = 0, finished = 0, steps = 0;
  for (const auto& n : nodes_) {
    if (n.state == QLatin1String("pruned")) ++pruned;
    if (n.state == QLatin1String("finished")) ++finished;
    steps = std::max(steps, n.step);
  }
  QString best_text = result_.text;
  double best_score = result_.score;
  if (!best_path_.isEmpty() && index_.contains(best_path_.last())) {
    const Node& leaf = nodes_[index_.value(best_path_.last())];
    if (best_text.isEmpty()) best_text = leaf.prefix;
    best_score = leaf.score;
  }
  // The numbers first: they stay visible however long the sentences are.
  summary_->setText(tr("%1 candidates scored over %2 steps, %3 pruned, %4 finished · best score %5 · “%6” → “%7”")
                        .arg(nodes_.size() - 1)
                        .arg(steps)
                        .arg(pruned)
                        .arg(finished)
                        .arg(format_lp(best_score))
                        .arg(elide(result_.source), elide(best_text)));
  summary_->setToolTip(QStringLiteral("%1\n→ %2").arg(result_.source, best_text));
}

QList<qint64> BeamTreeView::drawnNodeIds() const {
  QList<qint64> ids;
  for (const auto& n : nodes_)
    if (items_.contains(n.id)) ids << n.id;
  return ids;
}

QList<qint64> BeamTreeView::highlightedPath() const {
  QList<QPair<double, qint64>> marked;
  for (auto* item : items_)
    if (item->best()) marked << qMakePair(item->pos().x(), item->id());
  std::sort(marked.begin(), marked.end());
  QList<qint64> ids;
  for (const auto& m : marked) ids << m.second;
  return ids;
}

int BeamTreeView::highlightedEdgeCount() const { return highlighted_edges_; }

QRectF BeamTreeView::nodeRect(qint64 id) const {
  auto* item = items_.value(id);
  return item ? item->mapRectToScene(item->box()) : QRectF();
}

QStringList BeamTreeView::nodeLabel(qint64 id) const {
  auto* item = items_.value(id);
  return item ? item->lines() : QStringList();
}

QString BeamTreeView::nodeToolTip(qint64 id) const {
  auto* item = items_.value(id);
  return item ? item->toolTip() : QString();
}

bool BeamTreeView::nodeFaded(qint64 id) const {
  auto* item = items_.value(id);
  return item && item->faded();
}

QString BeamTreeView::prefixText(qint64 id) const {
  const int i = index_.value(id, -1);
  return i < 0 ? QString() : nodes_[i].prefix;
}

void BeamTreeView::selectNode(qint64 id) {
  scene_->clearSelection();
  if (auto* item = items_.value(id)) {
    item->setSelected(true);
    view_->ensureVisible(item);
  }
}

qint64 BeamTreeView::selectedNode() const {
  const auto selected = scene_->selectedItems();
  if (selected.isEmpty()) return -1;
  return static_cast<BeamNodeItem*>(selected.first())->id();
}

void BeamTreeView::onSelectionChanged() {
  const qint64 id = selectedNode();
  const int i = index_.value(id, -1);
  if (i < 0) {
    selection_->clear();
    Q_EMIT nodeSelected(-1, QString());
    return;
  }
  const Node& n = nodes_[i];
  QString details = tr("step %1 · log-prob %2").arg(n.step).arg(format_lp(n.log_prob));
  if (n.state == QLatin1String("finished"))
    details += n.rank >= 0 ? tr(" · finished, score %1, n-best #%2").arg(format_lp(n.score)).arg(n.rank + 1)
                           : tr(" · finished, score %1").arg(format_lp(n.score));
  else if (n.state == QLatin1String("pruned"))
    details += tr(" · pruned");
  selection_->setText(tr("Selected hypothesis: “%1” (%2)").arg(n.prefix.isEmpty() ? tr("start") : n.prefix, details));
  Q_EMIT nodeSelected(n.id, n.prefix);
}

double BeamTreeView::zoom() const { return view_->transform().m11(); }

bool BeamTreeView::ranked() const { return layout_->currentIndex() == 1; }

void BeamTreeView::fitToView() {
  if (items_.isEmpty()) return;
  view_->fitInView(scene_->sceneRect(), Qt::KeepAspectRatio);
  // A small tree is not blown up beyond what reading needs; a little slack keeps rounding from
  // bringing the scroll bars back.
  const double s = view_->transform().m11();
  const double target = std::min(1.5, s * 0.98);
  view_->scale(target / s, target / s);
}

void BeamTreeView::resetZoom() {
  view_->setTransformationAnchor(QGraphicsView::AnchorViewCenter);
  view_->resetTransform();
}

void BeamTreeView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if ((event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) && !nodes_.isEmpty()) {
    const qint64 selected = selectedNode();
    const QTransform t = view_->transform();
    rebuildScene();
    view_->setTransform(t);
    if (selected >= 0) selectNode(selected);
  }
}

}  // namespace ts::ui
