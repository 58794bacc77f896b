// SPDX-License-Identifier: GPL-3.0-or-later
// Comparing models off the GUI thread: translates every chosen model's test split
// (ts/train/model_comparison.h) and compares the outputs (ts/analysis/compare.h: BLEU and chrF with
// intervals and paired-bootstrap p-values, word accuracy, buckets, n-grams, sentence scores) on the
// service's own thread pool. Results come back as a plain struct; a newer request supersedes an older one.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include <QFutureWatcher>
#include <QList>
#include <QMetaType>
#include <QObject>
#include <QString>
#include <QThreadPool>

#include "ts/analysis/compare.h"

namespace ts::ui {

/// One system to compare: the name shown for it, and a checkpoint file or exported model folder.
struct ModelChoice {
  QString name;
  QString path;
  bool operator==(const ModelChoice& o) const { return name == o.name && path == o.path; }
};

/// What a comparison gives the panels: the texts it compared and what compare_systems made of them.
struct CompareResult {
  quint64 id = 0;             // CompareService::compare's return value
  QList<ModelChoice> models;  // one per system, in order (the first is the baseline)
  CompareInput input;         // sources, references and each system's outputs of the shared test split
  Comparison comparison;      // scores, intervals, p-values, buckets, n-grams, sentence scores
  double seconds = 0;         // translating and comparing
};

class CompareService : public QObject {
  Q_OBJECT
 public:
  explicit CompareService(QObject* parent = nullptr);
  /// Stops a running comparison and waits for every worker.
  ~CompareService() override;

  /// Translates the test split of each model and compares them (the first is the baseline); one
  /// model gives its scores and sentence scores alone. `progress` signals come before each model
  /// and after each batch of sentences it translates, then `finished` or `failed`. A request
  /// still running is superseded: it stops within a batch and its result is dropped. Returns the
  /// request's id.
  quint64 compare(const QList<ModelChoice>& models, const CompareOptions& options = {});
  /// Drops the running request (its worker stops within a batch of sentences); `stopped` follows at once.
  void stop();
  /// True from compare() until its `finished`, `failed` or `stopped`.
  bool isBusy() const { return busy_; }

 Q_SIGNALS:
  /// The model `index` (0-based) of `count`, named `name`, has translated `done` of the test
  /// split's `sentences` (`done` 0 as it starts; `sentences` 0 until the first model's split is read).
  void progress(int index, int count, const QString& name, int done, int sentences);
  void finished(const ts::ui::CompareResult& result);
  /// What went wrong, naming the model or file (e.g. a model tested on other sentences).
  void failed(const QString& message);
  void stopped();
  void busyChanged(bool busy);

 private:
  using Delivery = std::function<void(CompareService*)>;
  void setBusy(bool busy);

  QThreadPool pool_;  // its own: a comparison can take minutes, and must not hold the global pool's threads
  QList<QFutureWatcher<Delivery>*> pending_;
  std::shared_ptr<std::atomic<bool>> stop_;  // of the latest request
  quint64 serial_ = 0;                       // the latest request; older deliveries are dropped
  bool busy_ = false;
};

}  // namespace ts::ui

Q_DECLARE_METATYPE(ts::ui::ModelChoice)
Q_DECLARE_METATYPE(ts::ui::CompareResult)
