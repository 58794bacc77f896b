// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare panel's "Sentences" tab: every test pair side by side with each system's output and
// sentence score (and, for models, confidence), sortable by any column (by default the last system's difference against the
// baseline, or with one system its score, worst first), a search box over all the text, and the
// words where the outputs differ marked. With one system it is the held-out browser: the model's
// output for every test pair. A double-click opens the sentence with the system of the column
// clicked (the baseline's for the source and reference) in the Attention and Beam search panels.
#pragma once

#include <QList>
#include <QString>
#include <QWidget>

#include "services/compare_service.h"

class QLabel;
class QLineEdit;
class QTableView;

namespace ts::ui {

class SentenceTableModel;
class SentenceFilterProxy;

class SentenceBrowser : public QWidget {
  Q_OBJECT
 public:
  explicit SentenceBrowser(QWidget* parent = nullptr);

  /// Shows a comparison's sentences; `models` gives each system's checkpoint.
  void setResult(const CompareResult& result);
  void clear();
  /// Sorts by a system's confidence, least confident first (nothing without confidences).
  void sortByConfidence(int system);
  /// Filters the rows (the search box's text).
  void setSearch(const QString& text);
  /// Opens the sentence of a view index as a double-click does: emits openSentence.
  void activate(const QModelIndex& view_index);

  QTableView* view() const { return view_; }
  SentenceTableModel* model() const { return model_; }
  SentenceFilterProxy* proxy() const { return proxy_; }
  QLineEdit* searchBox() const { return search_; }

 Q_SIGNALS:
  void openSentence(const QString& source, const QString& checkpoint);

 private:
  void updateCount();

  QList<ModelChoice> models_;
  QLineEdit* search_;
  QLabel* count_;
  QTableView* view_;
  SentenceTableModel* model_;
  SentenceFilterProxy* proxy_;
};

}  // namespace ts::ui
