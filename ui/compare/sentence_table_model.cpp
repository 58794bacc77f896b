// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare panel's sentence table model and its sort/search proxy (see sentence_table_model.h).
#include "compare/sentence_table_model.h"

#include <cmath>
#include <limits>

#include "compare/word_highlight.h"
#include "widgets/plot_style.h"
#include "widgets/qt_text.h"

namespace ts::ui {

SentenceTableModel::SentenceTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void SentenceTableModel::clear() {
  beginResetModel();
  names_.clear();
  sources_.clear();
  references_.clear();
  outputs_.clear();
  scores_.clear();
  confidences_.clear();
  has_confidence_ = false;
  search_.clear();
  colors_.clear();
  endResetModel();
}

void SentenceTableModel::setResult(const CompareResult& result) {
  beginResetModel();
  const auto& in = result.input;
  const auto& c = result.comparison;
  names_.clear();
  for (const auto& n : in.names) names_ << q(n);
  metric_ = q(c.sentence_metric);
  const std::size_t n = in.references.size();
  references_.assign(n, QString());
  sources_.assign(n, QString());
  for (std::size_t i = 0; i < n; ++i) {
    references_[i] = q(in.references[i]);
    if (i < in.sources.size()) sources_[i] = q(in.sources[i]);
  }
  outputs_.assign(in.systems.size(), {});
  scores_.assign(in.systems.size(), std::vector<double>(n, 0.0));
  colors_.clear();
  for (std::size_t s = 0; s < in.systems.size(); ++s) {
    for (const auto& line : in.systems[s]) outputs_[s].push_back(q(line));
    outputs_[s].resize(n);
    if (s < c.sentence_scores.size() && c.sentence_scores[s].size() == n) scores_[s] = c.sentence_scores[s];
    colors_.push_back(series_color(static_cast<int>(s)));
  }
  confidences_.assign(in.systems.size(), {});
  has_confidence_ = false;
  for (std::size_t s = 0; s < in.systems.size() && s < in.confidences.size(); ++s)
    if (in.confidences[s].size() == n) {
      confidences_[s] = in.confidences[s];
      has_confidence_ = true;
    }
  search_.assign(n, QString());
  for (std::size_t i = 0; i < n; ++i) {
    QString text = sources_[i] + QLatin1Char('\n') + references_[i];
    for (const auto& out : outputs_) text += QLatin1Char('\n') + out[i];
    search_[i] = text.toLower();
  }
  endResetModel();
}

int SentenceTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(references_.size());
}

int SentenceTableModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid() || names_.isEmpty()) return 0;
  return FixedColumns + perSystem() * systems() + (systems() > 1 ? 1 : 0);
}

int SentenceTableModel::systemOfColumn(int column) const {
  if (column < FixedColumns || names_.isEmpty()) return -1;
  if (column == differenceColumn()) return systems() - 1;
  const int s = (column - FixedColumns) / perSystem();
  return s < systems() ? s : -1;
}

int SentenceTableModel::kindOfColumn(int column) const {
  if (column < FixedColumns || column == differenceColumn() || systemOfColumn(column) < 0) return -1;
  return (column - FixedColumns) % perSystem();
}

double SentenceTableModel::confidence(int row, int system) const {
  const auto& c = confidences_[static_cast<std::size_t>(system)];
  return c.empty() ? std::numeric_limits<double>::quiet_NaN() : c[static_cast<std::size_t>(row)];
}

int SentenceTableModel::counterpart(int system) const {
  if (systems() < 2) return -1;
  return system == 0 ? systems() - 1 : 0;
}

QString SentenceTableModel::source(int row) const {
  return row >= 0 && row < rowCount() ? sources_[static_cast<std::size_t>(row)] : QString();
}

double SentenceTableModel::score(int row, int system) const {
  return scores_[static_cast<std::size_t>(system)][static_cast<std::size_t>(row)];
}

double SentenceTableModel::difference(int row) const {
  return systems() > 1 ? score(row, systems() - 1) - score(row, 0) : 0.0;
}

QVariant SentenceTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
  const int row = index.row(), col = index.column();
  const auto r = static_cast<std::size_t>(row);
  if (role == SentenceRole) return row;
  if (role == SystemRole) return systemOfColumn(col);
  const int kind = kindOfColumn(col);
  const bool is_output = kind == 0, is_score = kind == 1, is_confidence = kind == 2;
  const int system = systemOfColumn(col);

  if (is_confidence) {
    const double c = confidence(row, system);
    if (role == SortRole) return std::isfinite(c) ? c : -std::numeric_limits<double>::infinity();
    if (role == Qt::DisplayRole) return std::isfinite(c) ? QString::number(c, 'f', 2) : QStringLiteral("–");
    if (role == Qt::BackgroundRole && std::isfinite(c)) return confidence_color(std::exp(c));
    if (role == Qt::ForegroundRole && std::isfinite(c)) return QColor(0x1f, 0x29, 0x33);
    if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && std::isfinite(c))
      return tr("%1's mean token log-probability on this output: %2 (a token probability of %3 on average, the geometric mean)")
          .arg(names_[system])
          .arg(c, 0, 'f', 3)
          .arg(std::exp(c), 0, 'f', 2);
    return {};
  }

  if (role == Qt::DisplayRole || role == SortRole) {
    if (col == Index) return role == SortRole ? QVariant(static_cast<double>(row + 1)) : QVariant(row + 1);
    if (col == Source) return sources_[r];
    if (col == Reference) return references_[r];
    if (is_output) return output(row, system);
    const double value = is_score ? score(row, system) : difference(row);
    if (role == SortRole) return value;
    return col == differenceColumn()
               ? QStringLiteral("%1%2").arg(value > 0 ? QStringLiteral("+") : QString()).arg(value, 0, 'f', 1)
               : QString::number(value, 'f', 1);
  }
  if (role == HtmlRole && is_output) {
    const int other = counterpart(system);
    if (other < 0) return {};
    return highlight_words(output(row, system), output(row, other), colors_[static_cast<std::size_t>(system)]);
  }
  if (role == Qt::ToolTipRole) {
    if (col == Source || col == Reference) return col == Source ? sources_[r] : references_[r];
    if (is_output) {
      QString tip = QStringLiteral("%1: %2").arg(names_[system], output(row, system));
      const int other = counterpart(system);
      if (other >= 0) {
        QStringList marked;
        highlight_words(output(row, system), output(row, other), Qt::black, &marked);
        if (!marked.isEmpty())
          tip += QLatin1Char('\n') + tr("Not in %1's output: %2").arg(names_[other], marked.join(QLatin1Char(' ')));
      }
      return tip + QLatin1Char('\n') +
             tr("Double-click to open this sentence with %1 in Attention and Beam search").arg(names_[system]);
    }
    return {};
  }
  if (role == Qt::ForegroundRole && col == differenceColumn()) {
    const double d = difference(row);
    if (d > 0) return QColor(0x2e, 0x8b, 0x57);
    if (d < 0) return QColor(0xc0, 0x39, 0x2b);
    return {};
  }
  if (role == Qt::TextAlignmentRole) {
    if (col == Index || is_score || col == differenceColumn()) return int(Qt::AlignRight | Qt::AlignVCenter);
    return int(Qt::AlignLeft | Qt::AlignVCenter);
  }
  return {};
}

QVariant SentenceTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
  const int system = systemOfColumn(section);
  const int kind = kindOfColumn(section);
  const bool is_score = kind == 1;
  if (kind == 2) {
    if (role == Qt::DisplayRole) return tr("%1 log p").arg(names_[system]);
    if (role == Qt::ToolTipRole)
      return tr("%1's confidence: the mean token log-probability of its output (0 = certain; lower = less sure). Sort "
                "ascending for the least confident sentences first")
          .arg(names_[system]);
    return {};
  }
  if (role == Qt::DisplayRole) {
    if (section == Index) return tr("#");
    if (section == Source) return tr("Source");
    if (section == Reference) return tr("Reference");
    if (section == differenceColumn()) return tr("Δ %1 − %2").arg(names_.back(), names_.front());
    if (is_score) return tr("%1 s%2").arg(names_[system], metric_);
    return names_[system];
  }
  if (role == Qt::ToolTipRole) {
    if (section == Index) return tr("Position in the test split");
    if (section == differenceColumn())
      return tr("Sentence %1 of %2 minus that of %3 (the baseline): negative where %2 does worse")
          .arg(metric_, names_.back(), names_.front());
    if (is_score) return tr("Sentence %1 of %2 against the reference (0-100)").arg(metric_, names_[system]);
    if (system >= 0) {
      const int other = counterpart(system);
      return other < 0
                 ? tr("The output of %1").arg(names_[system])
                 : tr("The output of %1; in colour the words %2's output lacks").arg(names_[system], names_[other]);
    }
  }
  return {};
}

SentenceFilterProxy::SentenceFilterProxy(QObject* parent)
    : WordFilterProxy(
          SentenceTableModel::SortRole, -1,
          [this](int row) {
            const auto* model = qobject_cast<const SentenceTableModel*>(sourceModel());
            return model ? model->searchText(row) : QString();
          },
          parent) {}

}  // namespace ts::ui
