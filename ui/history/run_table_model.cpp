// SPDX-License-Identifier: GPL-3.0-or-later
#include "history/run_table_model.h"

#include <algorithm>

#include <QApplication>
#include <QDateTime>
#include <QTimeZone>
#include <QFileInfo>
#include <QFont>
#include <QPalette>

#include "shell/studio_state.h"
#include "widgets/qt_text.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

namespace {

QString tagsText(const RunInfo& r) {
  QStringList tags;
  for (const auto& t : r.tags) tags << q(t);
  return tags.join(QStringLiteral(", "));
}

QDateTime parseUtc(const std::string& iso) {
  if (iso.empty()) return {};
  QDateTime t = QDateTime::fromString(q(iso), Qt::ISODate);
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)  // setTimeSpec is deprecated from 6.9
  if (t.isValid() && t.timeSpec() != Qt::UTC) t.setTimeZone(QTimeZone::UTC);
#else
  if (t.isValid() && t.timeSpec() != Qt::UTC) t.setTimeSpec(Qt::UTC);
#endif
  return t;
}

QString statusTip(RunStatus status) {
  switch (status) {
    case RunStatus::kRunning:
      return QObject::tr("Training now (updated every 2 s)");
    case RunStatus::kFinished:
      return QObject::tr("Reached its step, epoch or time limit");
    case RunStatus::kStopped:
      return QObject::tr("Stopped by the user; a checkpoint was saved");
    case RunStatus::kEarlyStopped:
      return QObject::tr("Stopped early: the dev metric stopped improving");
    case RunStatus::kFailed:
      return QObject::tr("Ended with an error");
    case RunStatus::kInterrupted:
      return QObject::tr(
          "The training process ended without closing the run (killed or crashed); it can be resumed from "
          "its last checkpoint");
    case RunStatus::kUnknown:
      return QObject::tr("A status this version of Transformer Studio does not know");
  }
  return {};
}

}  // namespace

RunTableModel::RunTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunTableModel::setRuns(std::vector<RunInfo> runs) {
  bool same_ids = runs.size() == runs_.size();
  for (std::size_t i = 0; same_ids && i < runs.size(); ++i) same_ids = runs[i].id == runs_[i].id;
  if (same_ids) {
    runs_ = std::move(runs);
    if (!runs_.empty()) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    return;
  }
  beginResetModel();
  runs_ = std::move(runs);
  endResetModel();
}

int RunTableModel::rowOf(qint64 id) const {
  for (std::size_t i = 0; i < runs_.size(); ++i)
    if (runs_[i].id == id) return static_cast<int>(i);
  return -1;
}

const RunInfo* RunTableModel::run(qint64 id) const {
  const int row = rowOf(id);
  return row < 0 ? nullptr : &runs_[static_cast<std::size_t>(row)];
}

QString RunTableModel::searchText(int row) const {
  const RunInfo& r = runs_[static_cast<std::size_t>(row)];
  return QStringList{q(r.name),
                     q(r.corpus_path),
                     q(r.direction),
                     q(r.preset),
                     tagsText(r),
                     QString::fromLatin1(run_status_name(r.status)),
                     QStringLiteral("#%1").arg(r.id)}
      .join(QLatin1Char('\n'))
      .toLower();
}

int RunTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int RunTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QColor RunTableModel::statusColor(RunStatus status) {
  QColor c;
  switch (status) {
    case RunStatus::kRunning:
      c = QColor(31, 119, 180);
      break;
    case RunStatus::kFinished:
      c = QColor(44, 150, 44);
      break;
    case RunStatus::kEarlyStopped:
      c = QColor(20, 150, 160);
      break;
    case RunStatus::kStopped:
      c = QColor(210, 120, 0);
      break;
    case RunStatus::kFailed:
      c = QColor(214, 39, 40);
      break;
    case RunStatus::kInterrupted:
      c = QColor(148, 103, 189);
      break;
    case RunStatus::kUnknown:
      return QApplication::palette().color(QPalette::Text);
  }
  // On a dark base the saturated mid tones are too dim: lighten them.
  if (QApplication::palette().color(QPalette::Base).lightness() < 128) c = c.lighter(150);
  return c;
}

QString RunTableModel::localTime(const std::string& iso_utc, bool seconds) {
  const QDateTime t = parseUtc(iso_utc);
  if (!t.isValid()) return q(iso_utc);
  return t.toLocalTime().toString(seconds ? QStringLiteral("yyyy-MM-dd HH:mm:ss") : QStringLiteral("yyyy-MM-dd HH:mm"));
}

double RunTableModel::durationSeconds(const RunInfo& r) {
  const QDateTime start = parseUtc(r.started_at);
  if (!start.isValid()) return -1;
  QDateTime end = parseUtc(r.ended_at);
  if (!end.isValid()) {
    if (r.status != RunStatus::kRunning) return -1;
    end = QDateTime::currentDateTimeUtc();
  }
  return std::max<qint64>(0, start.secsTo(end));
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const RunInfo& r = runs_[static_cast<std::size_t>(index.row())];
  const int col = index.column();
  if (role == IdRole) return QVariant::fromValue<qint64>(r.id);
  if (role == Qt::DisplayRole || role == Qt::EditRole) {
    switch (col) {
      case Id:
        return QVariant::fromValue<qint64>(r.id);
      case Name:
        return q(r.name);
      case Status:
        return QString::fromLatin1(run_status_name(r.status));
      case Corpus:
        return r.corpus_path == StudioState::kDemoPath ? tr("demo corpus") : QFileInfo(q(r.corpus_path)).fileName();
      case Direction:
        return q(r.direction);
      case Preset:
        return q(r.preset);
      case Steps:
        return QVariant::fromValue<qint64>(r.steps);
      case BestBleu:
        return r.best_bleu ? QString::number(*r.best_bleu, 'f', 2) : QStringLiteral("–");
      case Started:
        return localTime(r.started_at);
      case Duration: {
        const double s = durationSeconds(r);
        return s < 0 ? QString() : format_duration(s);
      }
      case Device:
        return q(r.device);
      case Tags:
        return tagsText(r);
      default:
        return {};
    }
  }
  if (role == SortRole) {
    switch (col) {
      case Id:
        return QVariant::fromValue<double>(static_cast<double>(r.id));
      case Steps:
        return QVariant::fromValue<double>(static_cast<double>(r.steps));
      case BestBleu:
        return QVariant::fromValue<double>(r.best_bleu ? *r.best_bleu : -1.0);
      case Duration:
        return QVariant::fromValue<double>(durationSeconds(r));
      case Started:
        return q(r.started_at);  // ISO 8601 UTC sorts as text
      default:
        return data(index, Qt::DisplayRole).toString().toLower();
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (col) {
      case Name:
        return tr("Run #%1 \"%2\" (double-click to rename)").arg(r.id).arg(isolated(q(r.name)));
      case Status: {
        QString tip = statusTip(r.status);
        if (!r.message.empty()) tip += (tip.isEmpty() ? QString() : QStringLiteral("\n")) + q(r.message);
        return tip;
      }
      case Corpus:
        return tr("%1\n%2 pairs, %3")
            .arg(q(r.corpus_path))
            .arg(r.corpus_pairs)
            .arg(format_bytes(static_cast<double>(r.corpus_bytes)));
      case Started:
        return tr("%1 local time (%2)").arg(localTime(r.started_at, true), q(r.started_at));
      case Duration:
        if (r.status == RunStatus::kRunning) return tr("Still running: time since the start");
        return r.ended_at.empty() ? QVariant() : tr("Ended %1").arg(localTime(r.ended_at, true));
      case Device:
        return r.machine.empty() ? QVariant() : tr("on %1").arg(q(r.machine));
      case BestBleu:
        return tr("Best BLEU on the dev set (0–100)");
      default:
        return {};
    }
  }
  if (role == Qt::ForegroundRole && col == Status) return statusColor(r.status);
  if (role == Qt::FontRole && col == Status && r.status == RunStatus::kRunning) {
    QFont f;
    f.setBold(true);
    return f;
  }
  if (role == Qt::FontRole && col == Duration && r.status == RunStatus::kRunning) {
    QFont f;
    f.setItalic(true);
    return f;
  }
  if (role == Qt::TextAlignmentRole) {
    switch (col) {
      case Id:
      case Steps:
      case BestBleu:
      case Duration:
        return int(Qt::AlignRight | Qt::AlignVCenter);
      default:
        return int(Qt::AlignLeft | Qt::AlignVCenter);
    }
  }
  return {};
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::DisplayRole) {
    switch (section) {
      case Id:
        return tr("#");
      case Name:
        return tr("Name");
      case Status:
        return tr("Status");
      case Corpus:
        return tr("Corpus");
      case Direction:
        return tr("Direction");
      case Preset:
        return tr("Preset");
      case Steps:
        return tr("Steps");
      case BestBleu:
        return tr("Best BLEU");
      case Started:
        return tr("Started");
      case Duration:
        return tr("Duration");
      case Device:
        return tr("Device");
      case Tags:
        return tr("Tags");
      default:
        return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case Id:
        return tr("Run id (as in `transformer-studio-cli runs list`)");
      case Started:
        return tr("Start time, local");
      case Duration:
        return tr("Wall-clock time from start to end");
      default:
        return {};
    }
  }
  return {};
}

Qt::ItemFlags RunTableModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.isValid() && index.column() == Name) f |= Qt::ItemIsEditable;
  return f;
}

bool RunTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || index.column() != Name || role != Qt::EditRole) return false;
  const RunInfo& r = runs_[static_cast<std::size_t>(index.row())];
  const QString name = value.toString().trimmed();
  if (name.isEmpty() || name == q(r.name)) return false;
  Q_EMIT renameRequested(r.id, name);  // the panel writes it and refreshes
  return false;
}

RunFilterProxy::RunFilterProxy(QObject* parent)
    : WordFilterProxy(
          RunTableModel::SortRole, RunTableModel::IdRole,
          [this](int row) {
            const auto* model = qobject_cast<const RunTableModel*>(sourceModel());
            return model ? model->searchText(row) : QString();
          },
          parent) {}

}  // namespace ts::ui
