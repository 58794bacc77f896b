// SPDX-License-Identifier: GPL-3.0-or-later
// The attention explorer: every attention map of one translated sentence, as bertviz shows them
// and more. A kind selector (encoder self, decoder self with its causal mask, cross), a model view
// (all layers × heads as small heatmaps plus each layer's head average; click one to open it), the
// chosen map large with token labels and hover, a sortable per-head summary (what each head looks
// at, entropies), and exports (PNG, SVG, JSON of all weights). It shows the latest translation that
// carries attention, whoever asked for it, and can translate another sentence itself.
//
// The panel holds the sentence line, the selection (kind, layer, head) and keeps its parts in step;
// the parts are AttentionHeadGrid (the model view), AttentionMapView (the large map) and
// AttentionSummaryTable (the per-head summary). Its exports are in attention_panel_export.cpp.
#pragma once

#include <vector>

#include <QHash>
#include <QWidget>

#include "attention/attention_data.h"
#include "services/translation_service.h"
#include "ts/analysis/attention_stats.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QStackedWidget;
class QToolButton;

namespace ts::ui {

class AttentionHeadGrid;
class AttentionHeatmap;
class AttentionMapView;
class AttentionSummaryTable;
class AttentionThumbnail;

class StudioState;

class AttentionPanel : public QWidget {
  Q_OBJECT
 public:
  explicit AttentionPanel(TranslationService* service, QWidget* parent = nullptr);

  AttentionKind kind() const { return kind_; }
  void setKind(AttentionKind kind);
  /// The map shown large: layer (0-based) and head (0-based, -1 for the average of the heads).
  int selectedLayer() const { return layer_; }
  int selectedHead() const { return head_; }
  /// The result shown (id 0 when none yet).
  const TranslationResult& result() const { return result_; }
  const AttentionData& data() const { return data_; }
  AttentionHeatmap* largeView() const;
  /// The thumbnail of a layer and head (-1: average), or nullptr.
  AttentionThumbnail* thumbnail(int layer, int head) const;
  /// Summary of a head (-1: average) of the kind shown.
  HeadSummary headSummary(int layer, int head) const;
  /// What hovering a cell of the large view says: "Katze ← cat: 0.620", or "… masked: later
  /// tokens" for the cells the causal mask hides.
  QString largeCellText(int row, int column) const;

  /// Exports of the large view and of the weights (the buttons ask for a path, then call these).
  bool exportPng(const QString& path, QString* error = nullptr);
  bool exportSvg(const QString& path, QString* error = nullptr);
  bool exportJson(const QString& path, QString* error = nullptr) const;

  /// Offers held-out pairs (source, reference) in the "Dev pair" list: choosing one translates its
  /// source and shows the reference under the translation.
  void setDevPairs(const QVector<QPair<QString, QString>>& pairs);
  /// Fills the list from the dev split training uses for the state's corpus, direction and data
  /// settings (computed off the GUI thread), and again whenever they change.
  void followDevSplit(StudioState* state);

 public Q_SLOTS:
  /// Shows a result; one without attention (or failed) is ignored unless this panel asked for it.
  void showResult(const ts::ui::TranslationResult& result);
  /// Opens one map large: head -1 is the average of the layer's heads.
  void selectHead(int layer, int head);
  /// Translates `text` with attention through the service (as the Translate button does).
  void translateText(const QString& text);

 Q_SIGNALS:
  void headSelected(int layer, int head);

 private:
  void buildUi();
  void updateInputState();
  void rebuildForKind();
  void showLarge();
  void syncSelection();
  // attention_panel_export.cpp: the Export menu's items ask for a path, then call exportPng/Svg/Json.
  void exportPngClicked();
  void exportSvgClicked();
  void exportJsonClicked();
  QString viewTitle() const;
  void updateSentenceLine();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  TranslationService* service_;
  TranslationResult result_;
  AttentionData data_;
  AttentionKind kind_ = AttentionKind::Cross;
  int layer_ = -1, head_ = -1;
  quint64 pending_id_ = 0;
  bool syncing_ = false;
  bool no_model_shown_ = false;
  QString sentence_full_, sentence_info_;
  QHash<QString, QString> references_;  // dev source -> reference, for the sentence line
  QString dev_split_key_;               // what the dev list was computed for
  // [layer][head + 1] of the kind shown: index 0 is the head average.
  std::vector<std::vector<HeadSummary>> summaries_;

  QLabel* sentence_ = nullptr;
  QLineEdit* input_ = nullptr;
  QComboBox* dev_pairs_ = nullptr;
  QPushButton* translate_ = nullptr;
  QLabel* status_ = nullptr;
  QComboBox* kind_combo_ = nullptr;
  QComboBox* layer_combo_ = nullptr;
  QComboBox* head_combo_ = nullptr;
  QToolButton* export_ = nullptr;  // its menu: PNG, SVG, JSON
  QStackedWidget* pages_ = nullptr;
  QLabel* empty_ = nullptr;
  AttentionHeadGrid* grid_ = nullptr;
  AttentionMapView* map_ = nullptr;
  AttentionSummaryTable* table_ = nullptr;
};

}  // namespace ts::ui
