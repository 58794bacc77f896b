// SPDX-License-Identifier: GPL-3.0-or-later
// BeamTreeView, the panel: its controls (beam width, "Decode with beam search", pruned toggle,
// layout, Fit, 100 %), the request it sends to the translation service, each result it receives
// (a tree, or the message saying why there is none) and the summary line. The tree's reading, its
// scene and its framing are in beam_tree_view_read.cpp, beam_tree_view_scene.cpp and
// beam_tree_view_framing.cpp.
#include "beam_search/beam_tree_view.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QGraphicsScene>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStackedWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include "beam_search/beam_format.h"
#include "beam_search/beam_scene_items.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

using beam::format_lp;

namespace {

QString elide(const QString& s, int chars = 80) { return s.size() <= chars ? s : s.left(chars - 1) + QChar(0x2026); }

}  // namespace

BeamTreeView::BeamTreeView(TranslationService* service, QWidget* parent)
    : QWidget(parent), service_(service), style_(std::make_unique<BeamStyle>()) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);

  auto* bar = new QHBoxLayout;
  auto* width_label = new QLabel(tr("Beam width:"), this);
  width_ = new QSpinBox(this);
  width_->setObjectName(QStringLiteral("beamWidth"));
  width_->setRange(1, 32);
  width_->setValue(defaults_.beam);
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
  layout_->setToolTip(
      tr("Tree: every leaf on its own row, nothing crosses. Ranked: each step's candidates in a "
         "column sorted by log-probability, far shorter for wide beams and long sentences."));
  fit_ = new QToolButton(this);
  fit_->setObjectName(QStringLiteral("beamFit"));
  fit_->setText(tr("Fit"));
  fit_->setToolTip(tr("Fit the whole tree into the view (Ctrl+wheel zooms)"));
  zoom100_ = new QToolButton(this);
  zoom100_->setObjectName(QStringLiteral("beamZoom100"));
  zoom100_->setText(tr("100%"));
  zoom100_->setToolTip(tr("Actual size"));
  // Two rows: in one, these controls made the panel (and with it the window) wider than a 1280-pixel screen.
  bar->addWidget(width_label);
  bar->addWidget(width_);
  bar->addWidget(run_);
  bar->addStretch(1);
  bar->addWidget(fit_);
  bar->addWidget(zoom100_);
  auto* view_bar = new QHBoxLayout;
  view_bar->addWidget(show_pruned_);
  view_bar->addWidget(layout_);
  view_bar->addStretch(1);
  layout->addLayout(bar);
  layout->addLayout(view_bar);

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

  connect(width_, qOverload<int>(&QSpinBox::valueChanged), this, [this] { width_chosen_ = true; });
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

  showMessage(
      tr("Translate a sentence with beam search to see every hypothesis it explored, with the chosen one "
         "highlighted."));
  updateButtons();
}

void BeamTreeView::setDecodeDefaults(const DecodeConfig& decode) {
  defaults_ = decode;
  if (width_chosen_) return;
  const QSignalBlocker block(width_);
  width_->setValue(decode.beam);
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
  run_->setToolTip(source_.isEmpty()
                       ? tr("Translate a sentence first")
                       : tr("Translate “%1” again with beam search of the chosen width").arg(isolated(source_)));
  const bool tree = !nodes_.isEmpty();
  show_pruned_->setEnabled(tree);
  layout_->setEnabled(tree);
  fit_->setEnabled(tree);
  zoom100_->setEnabled(tree);
}

void BeamTreeView::decodeWithBeam() {
  if (!service_ || source_.isEmpty()) return;
  DecodeConfig d = defaults_;
  d.mode = DecodeMode::kBeam;
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
  showMessage(tr("Decoding “%1” with beam search (width %2)…").arg(isolated(source_)).arg(d.beam));
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
    showMessage(tr("Translation of “%1” failed: %2").arg(isolated(result.source), result.error));
    updateButtons();
    return;
  }
  const bool has_tree = result.beam_tree.is_object() && result.beam_tree.contains("nodes") &&
                        result.beam_tree["nodes"].is_array() && !result.beam_tree["nodes"].empty();
  if (!has_tree) {
    rebuildScene();
    showMessage(
        left_to_right(tr("“%1” was translated with greedy decoding or sampling, which follow one hypothesis at a time: "
                         "the search tree exists only for beam search.\n\nChoose a width and click “Decode with beam "
                         "search” to see the hypotheses it explores for this sentence.")
                          .arg(isolated(result.source))));
    updateButtons();
    return;
  }
  QString error;
  if (!readTree(result.beam_tree, &error)) {
    nodes_.clear();
    index_.clear();
    best_path_.clear();
    rebuildScene();
    showMessage(tr("The beam search tree of “%1” could not be read: %2").arg(isolated(result.source), error));
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

void BeamTreeView::updateSummary() {
  int pruned = 0, finished = 0, steps = 0;
  for (const auto& n : nodes_) {
    if (n.state == BeamNodeState::kPruned) ++pruned;
    if (n.state == BeamNodeState::kFinished) ++finished;
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
  summary_->setText(
      tr("%1 candidates scored over %2 steps, %3 pruned, %4 finished · best score %5 · “%6” → “%7”")
          .arg(nodes_.size() - 1)
          .arg(steps)
          .arg(pruned)
          .arg(finished)
          .arg(format_lp(best_score))
          .arg(isolated(elide(result_.source)), isolated(elide(best_text))));  // each in its own direction
  summary_->setToolTip(left_to_right(isolated(result_.source)) + QStringLiteral("\n") +
                       left_to_right(QStringLiteral("→ ") + isolated(best_text)));
}

bool BeamTreeView::ranked() const { return layout_->currentIndex() == 1; }

}  // namespace ts::ui
