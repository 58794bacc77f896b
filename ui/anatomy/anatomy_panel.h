// SPDX-License-Identifier: GPL-3.0-or-later
// "Model anatomy": the fixed ingredients of the Transformer shown as plots, following the current
// configuration — the sinusoidal position table (heatmap and chosen dimensions as curves), the
// learning-rate schedule against the Annotated Transformer's Noam comparisons, the label-smoothed
// target distribution the loss trains towards, and the causal and padding masks of an example batch.
// With a TranslationService it also shows the loaded model's own tables: its position table (the
// learned one and the cosine similarity between positions) and its token embeddings (a 2-D PCA of
// the most frequent tokens and the nearest neighbours of a token), computed on the service's thread.
//
// Each tab is a widget of its own (positional_encoding_tab.h, model_positions_tab.h,
// learning_rate_tab.h, label_smoothing_tab.h, masks_tab.h, embeddings_tab.h); the panel holds them
// in its tab widget, hands them the configuration, and requests the model's tables for the two
// tabs that show them.
#pragma once

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include "services/translation_service.h"

class QTabWidget;

namespace ts::ui {

class EmbeddingsTab;
class LabelSmoothingTab;
class LearningRateTab;
class MasksTab;
class ModelPositionsTab;
class PositionalEncodingTab;
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
  const TokenNeighbours& neighbours() const;
  /// The tokens whose labels are drawn in the embedding scatter after thinning.
  QStringList visibleEmbeddingLabels() const;

 public Q_SLOTS:
  /// Opens the Embeddings tab and lists the nearest neighbours of `token` on the chosen side.
  void findToken(const QString& token);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void followConfig();
  void modelChanged();
  void maybeRequestTables();
  void showTables(const ModelTables& tables);
  void showNoModel(const QString& message);

  StudioState* state_;
  QTabWidget* tabs_ = nullptr;
  PositionalEncodingTab* positional_ = nullptr;
  ModelPositionsTab* model_positions_ = nullptr;
  QWidget* model_positions_page_ = nullptr;  // the scroll area holding model_positions_ in tabs_
  LearningRateTab* learning_rate_ = nullptr;
  LabelSmoothingTab* smoothing_ = nullptr;
  MasksTab* masks_ = nullptr;
  EmbeddingsTab* embeddings_ = nullptr;
  // The loaded model's tables
  QPointer<TranslationService> service_;
  ModelTables tables_;
  quint64 tables_request_ = 0;  // id of the request whose answer is awaited (0: none)
  bool tables_stale_ = true;    // the shown tables are not those of the service's model
  QTimer request_timer_;        // gathers spin-box steps into one request
};

}  // namespace ts::ui
