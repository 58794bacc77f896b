// SPDX-License-Identifier: GPL-3.0-or-later
// Sort and word search for tables (see word_filter_proxy.h).
#include "widgets/word_filter_proxy.h"

#include <utility>

#include <QRegularExpression>

namespace ts::ui {

WordFilterProxy::WordFilterProxy(int sort_role, int tie_role, std::function<QString(int row)> search_text,
                                 QObject* parent)
    : QSortFilterProxyModel(parent), tie_role_(tie_role), search_text_(std::move(search_text)) {
  setSortRole(sort_role);
  setDynamicSortFilter(true);
}

void WordFilterProxy::setSearch(const QString& text) {
  auto words = text.toLower().split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
#if QT_VERSION >= QT_VERSION_CHECK(6, 10, 0)  // invalidateFilter() is deprecated there
  beginFilterChange();
  words_ = std::move(words);
  endFilterChange(QSortFilterProxyModel::Direction::Rows);
#else
  words_ = std::move(words);
  invalidateFilter();
#endif
}

bool WordFilterProxy::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const {
  if (words_.isEmpty() || source_parent.isValid() || !search_text_) return true;
  const QString text = search_text_(source_row);
  for (const QString& w : words_)
    if (!text.contains(w)) return false;
  return true;
}

bool WordFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const QVariant a = left.data(sortRole()), b = right.data(sortRole());
  if (a.typeId() == QMetaType::Double && b.typeId() == QMetaType::Double) {
    if (a.toDouble() != b.toDouble()) return a.toDouble() < b.toDouble();
  } else {
    const int c = QString::localeAwareCompare(a.toString(), b.toString());
    if (c != 0) return c < 0;
  }
  // Ties in the table's own order, so sorting is stable across refreshes.
  if (tie_role_ < 0) return left.row() < right.row();
  return left.data(tie_role_).toLongLong() < right.data(tie_role_).toLongLong();
}

}  // namespace ts::ui
