// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare panel's sentence table as a Qt item model: one row per test pair with its source, its
// reference, and per system the output, its sentence score and (models) its confidence, the mean
// token log-probability, coloured from unsure to sure; then (two systems or more) the
// difference of the last system's score against the baseline's. Outputs carry HTML that marks the
// words the baseline's output lacks (the baseline's: the words the last system's lacks). The proxy
// sorts numbers as numbers and keeps the rows whose text holds every word typed in the search box.
#pragma once

#include <vector>

#include <QAbstractTableModel>
#include <QColor>
#include <QStringList>

#include "services/compare_service.h"
#include "widgets/word_filter_proxy.h"

namespace ts::ui {

class SentenceTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum FixedColumn { Index, Source, Reference, FixedColumns };
  /// Numbers for the number columns, text otherwise: what the proxy sorts on.
  static constexpr int SortRole = Qt::UserRole + 1;
  /// The cell as HTML with the differing words marked (outputs only; empty otherwise).
  static constexpr int HtmlRole = Qt::UserRole + 2;
  /// The system a column belongs to (its output or score), -1 for the others (any row).
  static constexpr int SystemRole = Qt::UserRole + 3;
  /// The row's index into the test set (any column).
  static constexpr int SentenceRole = Qt::UserRole + 4;

  explicit SentenceTableModel(QObject* parent = nullptr);

  void setResult(const CompareResult& result);
  void clear();

  int systems() const { return static_cast<int>(names_.size()); }
  /// Whether the systems came with confidences (models do; text files do not).
  bool hasConfidence() const { return has_confidence_; }
  int outputColumn(int system) const { return FixedColumns + perSystem() * system; }
  int scoreColumn(int system) const { return FixedColumns + perSystem() * system + 1; }
  /// A system's confidence column; -1 without confidences.
  int confidenceColumn(int system) const { return has_confidence_ ? FixedColumns + perSystem() * system + 2 : -1; }
  /// The column of the last system's score minus the baseline's; -1 with one system.
  int differenceColumn() const { return systems() > 1 ? FixedColumns + perSystem() * systems() : -1; }
  /// The system of a column: its output or score column; the last system for the difference
  /// column; -1 for the index, source and reference.
  int systemOfColumn(int column) const;
  QString source(int row) const;
  /// Sentence score of a system on a row; the difference last − baseline (0 with one system).
  double score(int row, int system) const;
  double difference(int row) const;
  /// A system's confidence on a row (NaN when it has none).
  double confidence(int row, int system) const;
  /// Lower-case text the search matches: source, reference and every output.
  const QString& searchText(int row) const { return search_[static_cast<std::size_t>(row)]; }

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  QString output(int row, int system) const {
    return outputs_[static_cast<std::size_t>(system)][static_cast<std::size_t>(row)];
  }
  /// The system whose output a system's words are compared with (-1: none).
  int counterpart(int system) const;
  int perSystem() const { return has_confidence_ ? 3 : 2; }
  /// What a column holds: 0 output, 1 score, 2 confidence; -1 for the others.
  int kindOfColumn(int column) const;

  QStringList names_;
  QString metric_;  // "BLEU" or "chrF"
  std::vector<QString> sources_, references_;
  std::vector<std::vector<QString>> outputs_;     // [system][row]
  std::vector<std::vector<double>> scores_;       // [system][row]
  std::vector<std::vector<double>> confidences_;  // [system][row]; empty for a system without
  bool has_confidence_ = false;
  std::vector<QString> search_;
  std::vector<QColor> colors_;  // per system, as in the charts
};

/// Sorts on SentenceTableModel::SortRole (ties by test-set order); every whitespace-separated word
/// of the search must occur in the row's source, reference or an output (case-insensitive).
class SentenceFilterProxy : public WordFilterProxy {
  Q_OBJECT
 public:
  explicit SentenceFilterProxy(QObject* parent = nullptr);
};

}  // namespace ts::ui
