// SPDX-License-Identifier: GPL-3.0-or-later
// ProbePanel, part: frames in and out. Loading the frames a past run recorded in the run store (on
// a worker thread), and writing frames as JSON (framesJson, writeFrames and the Export button).
// The rest of the panel is in probe_panel.cpp.
#include "attention_over_training/probe_panel.h"

#include <algorithm>

#include <QFile>
#include <QFileDialog>
#include <QLabel>
#include <QMessageBox>
#include <QSaveFile>
#include <QtConcurrent/QtConcurrentRun>

#include "ts/store/run_store.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

void ProbePanel::loadRun(const QString& db_path, qint64 run_id) {
  pause();
  empty_->setText(tr("Reading the probe frames of run %1…").arg(run_id));
  load_watcher_->setFuture(QtConcurrent::run([db_path, run_id] {
    LoadResult r;
    r.run_id = run_id;
    try {
      RunStore store(QFile::encodeName(db_path).toStdString(), RunStore::kReaderBusyTimeoutMs, StoreAccess::kReadOnly);
      for (const auto& row : store.probes(run_id)) {
        Frame f;
        if (parseFrame(row.probe, row.step, &f)) r.frames.push_back(std::move(f));
      }
      std::stable_sort(r.frames.begin(), r.frames.end(),
                       [](const Frame& a, const Frame& b) { return a.step < b.step; });
    } catch (const std::exception& e) {
      r.error = QString::fromStdString(e.what());
    }
    return r;
  }));
}

void ProbePanel::onRunLoaded() {
  const LoadResult r = load_watcher_->result();
  if (!r.error.isEmpty()) {
    empty_->setText(tr("The probe frames of run %1 could not be read: %2").arg(r.run_id).arg(r.error));
    setFrames({}, -1);
    Q_EMIT loadFailed(r.error);
    return;
  }
  empty_->setText(
      r.frames.isEmpty()
          ? tr("Run %1 recorded no probe frames: it was trained without a probe sentence (train.probe).").arg(r.run_id)
          : empty_text_);
  replay_note_ = r.frames.isEmpty()
                     ? QString()
                     : tr("Replaying run %1: “%2”, %Ln validation(s) from step %3 to %4.", nullptr, r.frames.size())
                           .arg(r.run_id)
                           .arg(isolated(r.frames.front().source))
                           .arg(r.frames.front().step)
                           .arg(r.frames.back().step);
  setFrames(r.frames, static_cast<int>(r.frames.size()) - 1);
  updateStatus();
  Q_EMIT runLoaded(r.run_id, static_cast<int>(r.frames.size()));
}

bool ProbePanel::isLoading() const { return load_watcher_->isRunning(); }

nlohmann::json ProbePanel::framesJson(const QVector<Frame>& frames) {
  auto out = nlohmann::json::array();
  for (const auto& f : frames) {
    nlohmann::json j = f.probe.is_object() ? f.probe : nlohmann::json::object();
    j["step"] = f.step;
    out.push_back(std::move(j));
  }
  return {{"frames", std::move(out)}};
}

bool ProbePanel::writeFrames(const QVector<Frame>& frames, const QString& path, QString* error) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  const std::string text = framesJson(frames).dump();
  file.write(text.data(), static_cast<qint64>(text.size()));
  file.write("\n");
  if (!file.commit()) {
    if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

void ProbePanel::exportClicked() {
  if (frames_.isEmpty()) return;
  const QString path = QFileDialog::getSaveFileName(this, tr("Export probe frames"),
                                                    QStringLiteral("probe-attention.json"), tr("JSON (*.json)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportFrames(path, &error)) QMessageBox::warning(this, tr("Export failed"), error);
}

}  // namespace ts::ui
