// SPDX-License-Identifier: GPL-3.0-or-later
// The "Embeddings" tab of Model anatomy: a 2-D PCA scatter of the loaded model's most frequent
// tokens (source or target side), labelled where the labels do not overlap, and the nearest
// neighbours of a searched or clicked token, listed beside it and ringed in the scatter. The panel
// requests the projections and hands them over; the neighbour searches are asked of the
// TranslationService here.
#pragma once

#include <QPoint>
#include <QPointer>
#include <QVector>
#include <QWidget>

#include "services/translation_service.h"

class QCPGraph;
class QCPItemText;
class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace ts::ui {

class EmbeddingsTab : public QWidget {
  Q_OBJECT
 public:
  explicit EmbeddingsTab(QWidget* parent = nullptr);

  /// Asks this service for the neighbour searches (without one, or without its model, a search
  /// says how to get a model).
  void setTranslationService(TranslationService* service);
  /// How many of the most frequent tokens are to be projected.
  int tokenCount() const;
  /// The neighbour search shown last.
  const TokenNeighbours& neighbours() const { return neighbours_; }
  /// The tokens whose labels are drawn in the scatter after thinning.
  QStringList visibleLabels() const;
  /// Replaces the line above the scatter (e.g. while the tables are read).
  void setMessage(const QString& message);
  /// Empties the scatter and the neighbour list and says `message` instead.
  void showNoModel(const QString& message);
  /// Plots the projections of `tables` (which has no error); a search shown is asked again.
  void showTables(const ModelTables& tables);
  /// Writes `token` in the search field and lists its nearest neighbours on the chosen side.
  void searchToken(const QString& token);

 Q_SIGNALS:
  /// The user changed tokenCount(): the tables are to be requested again.
  void tokenCountChanged();
  /// A token was clicked in the scatter or double-clicked in the neighbour list.
  void tokenChosen(const QString& token);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void updateScatter();
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

  QPointer<TranslationService> service_;
  EmbeddingProjection source_, target_;  // the projections shown (empty: none)
  bool shared_ = false;                  // one table for both sides (ModelTables::shared_embeddings)
  TokenNeighbours neighbours_;
  quint64 neighbours_request_ = 0;  // id of the search whose answer is awaited (0: none)
  QComboBox* side_ = nullptr;
  QSpinBox* count_ = nullptr;
  QLineEdit* search_ = nullptr;
  QSpinBox* k_ = nullptr;
  QPushButton* find_ = nullptr;
  QLabel* message_ = nullptr;
  QCustomPlot* scatter_ = nullptr;
  QCPGraph* points_ = nullptr;            // every plotted token
  QCPGraph* neighbour_points_ = nullptr;  // the neighbours found, ringed
  QCPGraph* query_point_ = nullptr;       // the searched token
  QTableWidget* table_ = nullptr;
  QLabel* note_ = nullptr;
  struct ScatterLabel {
    QCPItemText* item = nullptr;
    double x = 0, y = 0;
    qint64 id = -1;
    int rank = -1;             // frequency rank among the plotted tokens; -1: a neighbour outside them
    bool highlighted = false;  // the searched token or a neighbour: always labelled, in bold
  };
  QVector<ScatterLabel> labels_;  // the plotted tokens first (in frequency order), then extras
  int base_labels_ = 0;
  QString hover_;
  QPoint press_;
};

}  // namespace ts::ui
