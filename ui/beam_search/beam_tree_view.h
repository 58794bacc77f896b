// SPDX-License-Identifier: GPL-3.0-or-later
// The beam search tree of one translation, as in Seq2Seq-Vis: decoding steps from left to right,
// one box per candidate the search scored (its token and cumulative log-probability), an edge from
// each prefix to its extensions, candidates cut from the beam drawn faded, finished hypotheses
// marked with their length-normalised score and n-best rank, and the chosen translation's path in
// the accent colour. Each leaf has its own row and parents sit centred over their children, so
// nothing overlaps however wide the beam; a compact "ranked" layout (each step's candidates in one
// column, sorted by log-probability) keeps wide beams over long sentences short. Greedy and sampled
// results have no tree: the view says so and offers to decode the same sentence with beam search.
// Its definitions are spread by part: beam_tree_view.cpp (controls, request, results, summary),
// beam_tree_view_read.cpp (reading the JSON), beam_tree_view_scene.cpp (the drawn scene, selection)
// and beam_tree_view_framing.cpp (first view, Fit, zoom); layout and painting have their own files.
#pragma once

#include <memory>

#include <QHash>
#include <QList>
#include <QPointer>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include "services/translation_service.h"
#include "ts/decode/beam_node_state.h"
#include "ts/train/config.h"

class QCheckBox;
class QComboBox;
class QGraphicsPathItem;
class QGraphicsScene;
class QGraphicsView;
class QLabel;
class QPushButton;
class QSpinBox;
class QStackedWidget;
class QToolButton;

namespace ts::ui {

class BeamNodeItem;
class BeamGraphicsView;
struct BeamStyle;

class BeamTreeView : public QWidget {
  Q_OBJECT
 public:
  /// One node of the tree as read from TranslationResult::beam_tree.
  struct Node {
    qint64 id = -1;
    qint64 parent = -1;
    QString token;
    qint64 token_id = 0;
    int step = 0;
    double token_log_prob = 0;
    double log_prob = 0;
    double score = 0;
    BeamNodeState state = BeamNodeState::kKept;
    int rank = -1;   // n-best position, -1 when not returned
    QString prefix;  // the hypothesis text up to and including this node
  };

  explicit BeamTreeView(TranslationService* service, QWidget* parent = nullptr);
  ~BeamTreeView() override;

  /// The decoding options used when this view asks for a beam search (length penalty, length
  /// limits); mode and n-best come from the view itself. The beam width box follows decode.beam (the
  /// recipe's, as the Translate panel's does) until the person sets a width of their own.
  void setDecodeDefaults(const DecodeConfig& decode);

  // For tests and for the main window's screenshots.
  /// True when a tree is shown (false: the message page).
  bool showsTree() const;
  /// The text of the message shown instead of a tree.
  QString message() const;
  /// Nodes and edges currently drawn (pruned ones only when "Show pruned candidates" is on).
  int nodeCount() const { return static_cast<int>(items_.size()); }
  int edgeCount() const { return static_cast<int>(edges_.size()); }
  /// Every node of the tree, drawn or not, in the order of the JSON.
  const QVector<Node>& nodes() const { return nodes_; }
  /// Ids of the nodes drawn, in the order of the JSON.
  QList<qint64> drawnNodeIds() const;
  /// Ids of the nodes drawn highlighted (the best path), root first.
  QList<qint64> highlightedPath() const;
  /// Number of edges drawn highlighted.
  int highlightedEdgeCount() const;
  /// The box of a drawn node in scene coordinates (null when it is not drawn).
  QRectF nodeRect(qint64 id) const;
  /// The lines of text drawn in a node's box.
  QStringList nodeLabel(qint64 id) const;
  /// The tooltip of a node (prefix, token probability, log-prob, score).
  QString nodeToolTip(qint64 id) const;
  /// Whether a drawn node is painted faded (a pruned candidate).
  bool nodeFaded(qint64 id) const;
  /// The hypothesis text from the root to a node (tokens joined as the tokenizer would).
  QString prefixText(qint64 id) const;
  /// Selects a node as a click would (-1 clears the selection).
  void selectNode(qint64 id);
  qint64 selectedNode() const;
  /// True when the compact layout (candidates of a step ranked in a column) is chosen instead of
  /// the tree (combo "beamLayout").
  bool ranked() const;
  /// The scale of the view (1 = 100 %).
  double zoom() const;
  /// Milliseconds the last layout took.
  double layoutMilliseconds() const { return layout_ms_; }
  /// The request made by the "Decode with beam search" button, and its id (0 when none).
  const DecodeConfig& lastRequest() const { return last_request_; }
  quint64 lastRequestId() const { return request_id_; }
  QGraphicsView* graphicsView() const;

  /// Joins tokens into text: SentencePiece/char pieces ("▁" marks a space) are concatenated,
  /// words are separated by spaces except between CJK characters and before closing punctuation.
  static QString joinTokens(const QStringList& tokens);

 public Q_SLOTS:
  /// Shows the tree of a beam search result, or the reason there is none.
  void showResult(const ts::ui::TranslationResult& result);
  /// Fits the whole tree into the view.
  void fitToView();
  /// Back to 100 %.
  void resetZoom();
  /// Asks the service for a beam search of the last sentence, with the width from the spin box.
  void decodeWithBeam();

 Q_SIGNALS:
  /// A node was selected (-1 and an empty text when the selection was cleared).
  void nodeSelected(qint64 id, const QString& prefix);

 protected:
  void changeEvent(QEvent* event) override;
  void showEvent(QShowEvent* event) override;

 private:
  void showMessage(const QString& text);
  bool readTree(const nlohmann::json& tree, QString* error);
  void rebuildScene();
  void initialView();
  void onSelectionChanged();
  void updateSummary();
  void updateButtons();
  QString toolTipFor(int index) const;

  TranslationService* service_;
  std::unique_ptr<BeamStyle> style_;  // colours and metrics the node items paint with
  DecodeConfig defaults_;
  DecodeConfig last_request_;
  quint64 request_id_ = 0;
  QString source_;  // the sentence of the last result (what "Decode with beam search" decodes)
  TranslationResult result_;

  QStackedWidget* stack_ = nullptr;
  QLabel* message_ = nullptr;
  BeamGraphicsView* view_ = nullptr;
  QGraphicsScene* scene_ = nullptr;
  QCheckBox* show_pruned_ = nullptr;
  QComboBox* layout_ = nullptr;
  bool layout_chosen_ = false;  // the person picked a layout: keep it; else it follows the tree's size
  QSpinBox* width_ = nullptr;
  bool width_chosen_ = false;  // the person set the width: the configuration's no longer replaces it
  QPushButton* run_ = nullptr;
  QToolButton* fit_ = nullptr;
  QToolButton* zoom100_ = nullptr;
  QLabel* summary_ = nullptr;
  QLabel* selection_ = nullptr;

  QVector<Node> nodes_;
  QHash<qint64, int> index_;  // node id -> index in nodes_
  QList<qint64> best_path_;
  QHash<qint64, BeamNodeItem*> items_;
  QList<QGraphicsPathItem*> edges_;
  int highlighted_edges_ = 0;
  double layout_ms_ = 0;
  bool initial_view_pending_ = false;
};

}  // namespace ts::ui
