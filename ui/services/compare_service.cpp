// SPDX-License-Identifier: GPL-3.0-or-later
// CompareService (see compare_service.h): compare_input_from_models and compare_systems on the
// service's thread pool, progress posted to the GUI thread, results delivered there.
#include "services/compare_service.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include <QFile>
#include <QMetaObject>
#include <QtConcurrent/QtConcurrent>

#include "ts/model/errors.h"
#include "ts/train/model_comparison.h"
#include "widgets/qt_text.h"

namespace ts::ui {

namespace {

// The error as the person should read it: naming the model it concerns when the message does not
// already name it or its file.
QString message_naming(const std::string& what, const QList<ModelChoice>& models, int current) {
  QString message = q(what);
  if (current < 0 || current >= models.size()) return message;
  const auto& m = models[current];
  if (message.contains(m.path) || (!m.name.isEmpty() && message.contains(m.name))) return message;
  return QObject::tr("%1 (%2): %3").arg(m.name, m.path, message);
}

}  // namespace

CompareService::CompareService(QObject* parent) : QObject(parent) {
  static const bool registered = [] {
    qRegisterMetaType<ts::ui::ModelChoice>();
    qRegisterMetaType<ts::ui::CompareResult>();
    return true;
  }();
  (void)registered;
  // A superseded request may still be finishing its model while the newer one starts.
  pool_.setMaxThreadCount(2);
}

CompareService::~CompareService() {
  if (stop_) *stop_ = true;
  ++serial_;
  pool_.waitForDone();  // workers post to this object: they end before it does
  for (auto* watcher : pending_) watcher->waitForFinished();
}

void CompareService::setBusy(bool busy) {
  if (busy == busy_) return;
  busy_ = busy;
  Q_EMIT busyChanged(busy);
}

quint64 CompareService::compare(const QList<ModelChoice>& models, const CompareOptions& options) {
  if (stop_) *stop_ = true;  // the older request ends before its next model; its result is dropped
  const quint64 serial = ++serial_;
  if (models.isEmpty()) {
    stop_.reset();
    setBusy(false);
    Q_EMIT failed(tr("Choose at least one model to compare."));
    return serial;
  }
  auto stop = std::make_shared<std::atomic<bool>>(false);
  stop_ = stop;
  setBusy(true);

  std::vector<ModelToCompare> list;
  for (const auto& m : models) list.push_back({m.name.toStdString(), QFile::encodeName(m.path).toStdString()});

  auto* watcher = new QFutureWatcher<Delivery>(this);
  pending_ << watcher;
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
    pending_.removeOne(watcher);
    watcher->deleteLater();
    if (const auto deliver = watcher->result()) deliver(this);
  });
  watcher->setFuture(QtConcurrent::run(&pool_, [this, list, models, options, serial, stop]() -> Delivery {
    const auto started = std::chrono::steady_clock::now();
    int current = -1;
    try {
      CompareResult result;
      result.id = serial;
      result.models = models;
      result.input = compare_input_from_models(
          list,
          [&](const CompareProgressInfo& p) {
            current = static_cast<int>(p.model);
            QMetaObject::invokeMethod(
                this,
                [this, serial, index = static_cast<int>(p.model), count = static_cast<int>(p.models), name = q(p.name),
                 done = static_cast<int>(p.done), sentences = static_cast<int>(p.sentences)] {
                  if (serial == serial_) Q_EMIT progress(index, count, name, done, sentences);
                },
                Qt::QueuedConnection);
          },
          [stop] { return stop->load(); });
      current = -1;
      result.comparison = compare_systems(result.input, options);
      result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      return [result = std::move(result)](CompareService* s) {
        if (result.id != s->serial_) return;  // superseded or stopped
        s->stop_.reset();
        s->setBusy(false);
        Q_EMIT s->finished(result);
      };
    } catch (const std::exception& e) {
      if (stop->load()) return {};  // stopped or superseded: nobody waits for this one
      return [serial, m = message_naming(error_message(e), models, current)](CompareService* s) {
        if (serial != s->serial_) return;
        s->stop_.reset();
        s->setBusy(false);
        Q_EMIT s->failed(m);
      };
    }
  }));
  return serial;
}

void CompareService::stop() {
  if (!busy_) return;
  if (stop_) *stop_ = true;
  stop_.reset();
  ++serial_;  // whatever the worker still delivers is dropped
  setBusy(false);
  Q_EMIT stopped();
}

}  // namespace ts::ui
