// SPDX-License-Identifier: GPL-3.0-or-later
// ProbePanel, part: the probe sentence. The box that edits train.probe and follows it, the status
// line saying what training will capture (or whose frames are replayed), and the button that picks
// a medium-length sentence of the dev split. The rest of the panel is in probe_panel.cpp.
#include "attention_over_training/probe_panel.h"

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QtConcurrent/QtConcurrentRun>

#include "shell/studio_state.h"
#include "ts/text/probe_sentence.h"
#include "ts/train/data.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

void ProbePanel::applyProbe() {
  if (!state_) return;
  const QString text = sentence_->text().trimmed();
  if (text == QString::fromStdString(state_->config().train.probe)) {
    updateStatus();
    return;
  }
  // JSON-quoted so that a sentence such as "42" or "true" stays a string.
  const QString assignment =
      QStringLiteral("train.probe=") + QString::fromStdString(nlohmann::json(text.toStdString()).dump());
  QString error;
  if (!state_->applySetting(assignment, &error)) {
    status_->setForegroundRole(QPalette::WindowText);
    status_->setText(tr("The probe sentence was not applied: %1").arg(error));
    return;
  }
  updateStatus();
}

void ProbePanel::followConfig() {
  if (!state_) return;
  const QString probe = QString::fromStdString(state_->config().train.probe);
  // Show the value in force, unless the person is typing a new one.
  if (sentence_->text().trimmed() != probe && !(sentence_->hasFocus() && sentence_->isModified()))
    sentence_->setText(probe);
  updateStatus();
}

void ProbePanel::updateStatus() {
  if (!state_) return;
  status_->setForegroundRole(QPalette::PlaceholderText);
  const auto& train = state_->config().train;
  const QString probe = QString::fromStdString(train.probe);
  const QString when = train.validate_every > 0 ? tr("every validation (every %L1 steps)").arg(train.validate_every)
                                                : tr("every validation (once per epoch)");
  if (!replay_note_.isEmpty() && !running_) {
    status_->setText(replay_note_);
  } else if (running_ && probe != running_probe_) {
    status_->setText(
        running_probe_.isEmpty()
            ? tr("Applies from the next training run: the current run captures a sentence it picked from the dev split.")
            : tr("Applies from the next training run: the current run captures “%1”.").arg(isolated(running_probe_)));
  } else if (probe.isEmpty() && !running_ && !frames_.isEmpty() && !frames_.last().source.isEmpty()) {
    status_->setText(tr("The last run recorded “%1”, a sentence it picked from the dev split. The next run picks one "
                        "again (the same for the same corpus and split) unless you type another.")
                         .arg(isolated(frames_.last().source)));
  } else if (probe.isEmpty()) {
    status_->setText(running_ ? tr("This run translates a sentence picked from the dev split at %1 and records its "
                                   "cross-attention (it shows above from the first validation).")
                                    .arg(when)
                              : tr("No probe sentence set: the next training run picks one from the dev split (6 to 12 "
                                   "words) and records its cross-attention at %1. Type one to choose it.")
                                    .arg(when));
  } else {
    status_->setText(
        running_ ? tr("This run translates the probe at %1 and records its cross-attention.").arg(when)
                 : tr("The next training run will translate it at %1 and record its cross-attention.").arg(when));
  }
}

QString ProbePanel::pickProbeSentence(const Corpus& corpus, const Direction& direction, const DataConfig& data) {
  const auto pairs = oriented_pairs(corpus, direction);
  if (pairs.empty()) return {};
  std::vector<SentencePair> dev;
  try {
    dev = split_corpus(corpus, direction, data).dev;
  } catch (const std::exception&) {
    // A corpus too small to split: any sentence will do.
  }
  // The rule the training session uses when no probe is set (ts/text/probe_sentence.h).
  return QString::fromStdString(pick_probe_sentence(dev.empty() ? pairs : dev));
}

void ProbePanel::pickDevSentence() {
  if (!state_ || !state_->corpus()) {
    status_->setText(tr("Load a corpus first: the sentence is picked from its dev split."));
    return;
  }
  pick_->setEnabled(false);
  auto* watcher = new QFutureWatcher<QString>(this);
  connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher] {
    watcher->deleteLater();
    pick_->setEnabled(true);
    const QString sentence = watcher->result();
    if (sentence.isEmpty()) {
      status_->setText(tr("The corpus has no sentence to pick."));
      return;
    }
    sentence_->setText(sentence);
    applyProbe();
  });
  // Splitting a large corpus takes a moment: off the GUI thread.
  watcher->setFuture(
      QtConcurrent::run([corpus = state_->corpus(), direction = state_->direction(), data = state_->config().data] {
        return pickProbeSentence(*corpus, direction, data);
      }));
}

}  // namespace ts::ui
