// SPDX-License-Identifier: GPL-3.0-or-later
// "Model anatomy": the fixed ingredients of the Transformer shown as plots, following the current
// configuration — the sinusoidal position table (heatmap and chosen dimensions as curves), the
// learning-rate schedule against the Annotated Transformer's Noam comparisons, the label-smoothed
// target distribution the loss trains towards, and the causal and padding masks of an example batch.
// With a TranslationService it also shows the loaded model's own tables: its position table (the
// learned one and the cosine similarity between positions) and its token embeddings (a 2-D PCA of
// the most frequent tokens and the nearest neighbours of a token), computed on the service's thread.
#pragma once

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include "translation_service.h"

class QCPColorMap;
class QCPGraph;
class QCPItemText;
class QComboBox;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableWidget;

namespace ts::ui {

class StudioState;

class AnatomyPanel : public QWidget {
  Q_OBJECT
 public:
  explicit AnatomyPanel(StudioState* state, QWidget* parent = nullptr);

  /// The Noam comparisons drawn after the current configuration's curve: {d_model, warmup}.
  static QList<QPair<int, int>> noamComparisons();
  /// The reference targets of the label-smoothing rows (as the Annotated Transformer's figure;
  /// target 0 is the pad id, a row the loss ignores).
  static QList<int> smoothingTargets();

  /// Follows this service's model in the "Model positions" and "Embeddings" tabs (tables are
  /// requested when its model changes and one of those tabs is shown). Without one, those tabs
  /// say how to get a model.
  void setTranslationService(TranslationService* service);
  /// The tables shown last (empty `model` and `error` set when there are none).
  const ModelTables& modelTables() const { return tables_; }
  /// The neighbour search shown last.
  const TokenNeighbours& neighbours() const { return neighbours_; }
  /// The tokens whose labels are drawn in the embedding scatter after thinning.
  QStringList visibleEmbeddingLabels() const;

 public Q_SLOTS:
  /// Opens the Embeddings tab and lists the nearest neighbours of `token` on the chosen side.
  void findToken(const QString& token);

 protected:
  void showEvent(QShowEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  QWidget* buildPositionalTab();
  QWidget* buildLearningRateTab();
  QWidget* buildSmoothingTab();
  QWidget* buildMasksTab();
  QWidget* buildModelPositionsTab();
  QWidget* buildEmbeddingsTab();
  void modelChanged();
  void maybeRequestTables();
  void showTables(const ModelTables& tables);
  void showNoModel(const QString& message);
  void updateEmbeddingScatter();
  void searchNeighbours();
  void requestNeighbours(const QString& query);
  void showNeighbours(const TokenNeighbours& result);
  void updateHighlights();
  void thinScatterLabels();
  void rescaleScatter();
  void scatterHover(const QPoint& pos);
  int scatterPointAt(const QPoint& pos) const;
  const EmbeddingProjection& currentProjection() const;
  bool targetSide() const;
  void followConfig();
  void updatePositional();
  void updateLearningRate();
  void updateSmoothing();
  void updateMasks();

  StudioState* state_;
  QTabWidget* tabs_ = nullptr;
  // Positional encoding
  QSpinBox* pe_positions_ = nullptr;
  QSpinBox* pe_d_model_ = nullptr;
  QLineEdit* pe_dimensions_ = nullptr;
  QLabel* pe_message_ = nullptr;
  QCustomPlot* pe_heatmap_ = nullptr;
  QCPColorMap* pe_map_ = nullptr;
  QCustomPlot* pe_curves_ = nullptr;
  // Learning rate
  QSpinBox* lr_steps_ = nullptr;
  QLabel* lr_summary_ = nullptr;
  QCustomPlot* lr_plot_ = nullptr;
  // Label smoothing
  QDoubleSpinBox* ls_smoothing_ = nullptr;
  QSpinBox* ls_vocab_ = nullptr;
  QCustomPlot* ls_plot_ = nullptr;
  QCPColorMap* ls_map_ = nullptr;
  // Masks
  QSpinBox* mask_length_ = nullptr;
  QCustomPlot* causal_plot_ = nullptr;
  QCPColorMap* causal_map_ = nullptr;
  QCustomPlot* padding_plot_ = nullptr;
  QCPColorMap* padding_map_ = nullptr;
  // The loaded model's tables
  QPointer<TranslationService> service_;
  ModelTables tables_;
  TokenNeighbours neighbours_;
  quint64 tables_request_ = 0;     // id of the request whose answer is awaited (0: none)
  quint64 neighbours_request_ = 0;
  bool tables_stale_ = true;       // the shown tables are not those of the service's model
  QTimer request_timer_;           // gathers spin-box steps into one request
  // Model positions
  QWidget* positions_tab_ = nullptr;
  QLabel* mp_message_ = nullptr;
  QSpinBox* mp_count_ = nullptr;
  QWidget* mp_learned_box_ = nullptr;
  QCustomPlot* mp_learned_ = nullptr;
  QCPColorMap* mp_learned_map_ = nullptr;
  QWidget* mp_similarity_box_ = nullptr;
  QLabel* mp_similarity_title_ = nullptr;
  QCustomPlot* mp_similarity_ = nullptr;
  QCPColorMap* mp_similarity_map_ = nullptr;
  QLabel* mp_note_ = nullptr;
  // Embeddings
  QWidget* embeddings_tab_ = nullptr;
  QComboBox* emb_side_ = nullptr;
  QSpinBox* emb_count_ = nullptr;
  QLineEdit* emb_search_ = nullptr;
  QSpinBox* emb_k_ = nullptr;
  QPushButton* emb_find_ = nullptr;
  QLabel* emb_message_ = nullptr;
  QCustomPlot* emb_scatter_ = nullptr;
  QCPGraph* emb_points_ = nullptr;      // every plotted token
  QCPGraph* emb_neighbours_ = nullptr;  // the neighbours found, ringed
  QCPGraph* emb_query_ = nullptr;       // the searched token
  QTableWidget* emb_table_ = nullptr;
  QLabel* emb_note_ = nullptr;
  struct ScatterLabel {
    QCPItemText* item = nullptr;
    double x = 0, y = 0;
    qint64 id = -1;
    int rank = -1;             // frequency rank among the plotted tokens; -1: a neighbour outside them
    bool highlighted = false;  // the searched token or a neighbour: always labelled, in bold
  };
  QVector<ScatterLabel> emb_labels_;  // the plotted tokens first (in frequency order), then extras
  int emb_base_labels_ = 0;
  QString emb_hover_;
  QPoint emb_press_;
};

}  // namespace ts::ui
