// SPDX-License-Identifier: GPL-3.0-or-later
// The run list of the history panel as a Qt item model, and the proxy that sorts it (numbers as
// numbers, dates as ISO text) and filters it by free text over name, corpus, direction, preset,
// tags and status.
#pragma once

#include <vector>

#include <QAbstractTableModel>
#include <QColor>
#include <QStringList>

#include "ts/store/run_store.h"
#include "widgets/word_filter_proxy.h"

namespace ts::ui {

class RunTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  // Tags right after the name: they label the run and stay visible in a narrow dock.
  enum Column {
    Id,
    Name,
    Tags,
    Status,
    Corpus,
    Direction,
    Preset,
    Steps,
    BestBleu,
    Started,
    Duration,
    Device,
    ColumnCount
  };
  /// The value the proxy sorts on: numbers for numeric columns, text otherwise.
  static constexpr int SortRole = Qt::UserRole + 1;
  /// The run id of the row (any column).
  static constexpr int IdRole = Qt::UserRole + 2;

  explicit RunTableModel(QObject* parent = nullptr);

  /// Replaces the runs. When the ids are the same as before (the common case while polling a
  /// live run) the rows are updated in place, so selection and scroll position stay.
  void setRuns(std::vector<RunInfo> runs);
  const std::vector<RunInfo>& runs() const { return runs_; }
  /// Row of `id`, or -1.
  int rowOf(qint64 id) const;
  const RunInfo* run(qint64 id) const;
  /// Lower-case text the filter matches against.
  QString searchText(int row) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  /// Editing the name cell asks for a rename (the panel writes it to the store).
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

  /// Colour of a status ("failed" red, "finished" green, ...) readable on the current palette.
  static QColor statusColor(RunStatus status);
  /// Local-time text of an ISO 8601 UTC timestamp ("2024-05-01 14:03").
  static QString localTime(const std::string& iso_utc, bool seconds = false);
  /// Seconds from start to end (or to now while running); -1 when unknown.
  static double durationSeconds(const RunInfo& run);

 Q_SIGNALS:
  void renameRequested(qint64 id, const QString& name);

 private:
  std::vector<RunInfo> runs_;
};

/// Sorts on RunTableModel::SortRole (ties: the older run first); every whitespace-separated word of
/// the filter must occur in the row's name, corpus, direction, preset, tags or status.
class RunFilterProxy : public WordFilterProxy {
  Q_OBJECT
 public:
  explicit RunFilterProxy(QObject* parent = nullptr);
};

}  // namespace ts::ui
