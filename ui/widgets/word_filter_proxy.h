// SPDX-License-Identifier: GPL-3.0-or-later
// The sort and search of a table with a search box (the run history, the Compare panel's
// sentences): rows sorted on a role holding numbers (compared as numbers) or text (compared as the
// locale says), ties broken by the table's own order; a search keeps the rows whose search text
// holds every whitespace-separated word of it, ignoring case.
#pragma once

#include <functional>

#include <QSortFilterProxyModel>
#include <QStringList>

namespace ts::ui {

class WordFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  /// `search_text(row)`: the source row's text, lower case. `tie_role`: the role whose integer
  /// breaks ties (-1: the source row).
  WordFilterProxy(int sort_role, int tie_role, std::function<QString(int row)> search_text, QObject* parent = nullptr);
  void setSearch(const QString& text);

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  int tie_role_;
  std::function<QString(int)> search_text_;
  QStringList words_;
};

}  // namespace ts::ui
